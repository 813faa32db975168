"""Writing a file so that a reader never sees half of it.

Benchmarks, exports, the votes' columnar copies and the Hub mirror's manifest are all
replaced whole: written to a hidden temporary file in the same folder (so the rename
stays on one file system and folder scans skip it), then renamed over the target.
"""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, Iterator


@contextmanager
def atomic_output(path: str | os.PathLike[str], mode: str = "w", *, permissions: int = 0o644) -> Iterator[IO[Any]]:
    """A handle on a temporary file that replaces ``path`` when the block ends without an error.

    On an error the temporary file is removed and ``path`` is left as it was. ``permissions``
    because mkstemp makes files private, and what we write (votes, benchmarks) is not."""
    target = Path(path)
    fd, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, mode, **({} if "b" in mode else {"encoding": "utf-8"})) as handle:
            yield handle
        os.chmod(temporary, permissions)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise

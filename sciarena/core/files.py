"""Files written so that nothing is half-done: replaced whole, or appended a line at a time.

Benchmarks, exports, the votes' columnar copies and the Hub mirror's manifest are
replaced whole (``atomic_output``): written to a hidden temporary file in the same folder
(so the rename stays on one file system and folder scans skip it), then renamed over the
target. Results of long model runs are appended one line each (``ResumeLog``), so a rerun
picks up where an interrupted one stopped.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, Callable, Generic, Iterator, Mapping, Protocol, TypeVar

log = logging.getLogger(__name__)


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


class JsonItem(Protocol):
    def to_json(self) -> dict[str, Any]: ...


T = TypeVar("T")


class ResumeLog(Generic[T]):
    """A JSON-lines file of results, appended one at a time and read back to resume a run.

    The judge runs of SciArena-Eval and the labelling commands keep their results this way, so an
    interruption loses at most the calls in flight. A line that is not JSON at all (a write torn by
    a crash, possibly followed by later runs' lines) is skipped; JSON that ``parse`` rejects means
    the file is something else, and is an error.
    """

    def __init__(self, path: str | os.PathLike[str], parse: Callable[[Mapping[str, Any]], T], *,
                 noun: str, error: type[Exception], hint: str = "") -> None:
        self.path = Path(path)
        self._parse, self._noun, self._error, self._hint = parse, noun, error, hint

    def read(self) -> list[T]:
        """Every result in file order."""
        try:
            lines = self.path.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return []
        except (OSError, UnicodeDecodeError) as err:
            raise self._error(f"{self.path}: cannot read the {self._noun}s ({err})") from None
        out: list[T] = []
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except ValueError:
                log.warning("%s: ignoring line %d, an incomplete write", self.path, number)
                continue
            try:
                out.append(self._parse(record))
            except (ValueError, KeyError, TypeError, AttributeError):
                raise self._error(f"{self.path}: line {number} is not {_article(self._noun)} {self._noun}"
                                  f"{self._hint}") from None
        return out

    def appender(self) -> "LineAppender":
        return LineAppender(self.path)


class LineAppender:
    """Appends items as JSON lines, each flushed at once; starts on a fresh line after a torn write."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        torn = False
        if path.exists() and path.stat().st_size > 0:
            with path.open("rb") as existing:
                existing.seek(-1, 2)
                torn = existing.read(1) != b"\n"
        self._handle = path.open("a", encoding="utf-8")
        if torn:  # rather than glue onto a half-written line
            self._handle.write("\n")

    def __call__(self, item: JsonItem | Mapping[str, Any]) -> None:
        record = item if isinstance(item, Mapping) else item.to_json()
        self._handle.write(json.dumps(record, ensure_ascii=False) + "\n")
        self._handle.flush()

    def close(self) -> None:
        self._handle.close()

    def __enter__(self) -> "LineAppender":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _article(noun: str) -> str:
    return "an" if noun[:1] in "aeiou" else "a"

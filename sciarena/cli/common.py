"""What every command shares: the settings (read from the environment once per run), the Hub token
for a dataset id, and the one wrapper that turns a failure into a sentence on stderr and an exit code.

Exit codes: 0 done, 1 done with items left for a rerun (the labelling commands say which), 2 refused
(unusable input, unwritable output, no votes to rank), 130 interrupted. Never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterable, Iterator, NoReturn, TextIO

from sciarena.core.errors import CommandRefused, SciArenaError
from sciarena.core.settings import Settings

REFUSED = 2
INTERRUPTED = 130


class OneLineParser(argparse.ArgumentParser):
    """argparse that refuses a bad command line as every command refuses: one line on stderr, exit 2
    (argparse's own prints the whole usage first). Sub-command parsers inherit the class."""

    def error(self, message: str) -> NoReturn:
        self.exit(REFUSED, f"{self.prog}: {' '.join(message.split())} (see {self.prog} --help)\n")


def settings_of(args: argparse.Namespace) -> Settings:
    """The run's settings: built from the environment on first use and kept on ``args``."""
    settings = getattr(args, "_settings", None)
    if settings is None:
        settings = Settings.from_env()
        args._settings = settings
    return settings


def hub_token(args: argparse.Namespace, sources: str | Iterable[str]) -> str | None:
    """HF_TOKEN when a source is a Hub dataset id (a public dataset needs none; a private one does)."""
    from sciarena.votes.read import is_hub_id  # start-up time: the readers pull in pyarrow and the Hub client

    items = [sources] if isinstance(sources, str) else list(sources)
    if any(is_hub_id(str(s)) and not Path(s).exists() for s in items):
        return settings_of(args).secret("HF_TOKEN")
    return None


@contextmanager
def os_errors_said(what: str, *, brief: bool = False) -> Iterator[None]:
    """Inside the block an OSError becomes CommandRefused("cannot WHAT (why)"), which ``guarded`` prints
    (exit 2); why is the whole OSError (with its file), or with ``brief`` the OS's words only (when WHAT
    names the file). For a step the command can name better than "cannot read or write", e.g. "cannot read
    the votes" when the Hub cannot be reached (a ConnectionError is an OSError without a file name)."""
    try:
        yield
    except BrokenPipeError:  # the output's reader left: guarded's to handle, not a failure of this step
        raise
    except OSError as error:
        raise CommandRefused(f"cannot {what} ({error.strerror or error if brief else error})") from error


def guarded(command: str, body: Callable[[], int], err: TextIO | None = None) -> int:
    """``body()``'s exit code; a failure becomes one line ``sciarena COMMAND: why`` and exit code 2."""
    err = err or sys.stderr
    try:
        return body()
    except BrokenPipeError:  # e.g. piped into `head`: the reader has what it wanted
        return 0
    except KeyboardInterrupt:
        print(f"sciarena {command}: interrupted", file=err)
        return INTERRUPTED
    except (SciArenaError, ValueError) as error:
        print(f"sciarena {command}: {error}", file=err)
    except OSError as error:
        where = f" {error.filename}" if error.filename else ""
        print(f"sciarena {command}: cannot read or write{where} ({error.strerror or error})", file=err)
    except MemoryError:
        print(f"sciarena {command}: out of memory reading the votes", file=err)
    return REFUSED

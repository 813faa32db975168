"""Votes as columns (``read_columns``): what the leaderboard, the checks and the statistics read.

Sources are found by ``sources.vote_files`` (files, folders, Hub dataset ids). Formats: JSON lines,
JSON arrays, Parquet; layouts: see ``fields``. Records repeated across files or sources are dropped by
``id`` (the first kept; records without an id are all kept) and counted under "duplicate id".
Consumers that want whole records use ``records.load`` (same files, same rule).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from sciarena.core.errors import LeaderboardInputError
from sciarena.votes.read.arrow_io import read_parquet
from sciarena.votes.read.copy import read_jsonl
from sciarena.votes.read.parse import parse_bytes
from sciarena.votes.read.raw import RawColumns, concat_raw, drop_duplicates, empty_raw
from sciarena.votes.read.sources import LINE_SUFFIXES, PathLike, vote_files

log = logging.getLogger(__name__)

def read_file(path: Path, *, copy: bool = True, texts: bool = False) -> RawColumns:
    """One file's raw columns, whatever its format (JSON lines through the columnar copy)."""
    suffix = path.suffix.lower()
    try:
        if suffix in LINE_SUFFIXES:
            raw = read_jsonl(path, cache=copy, texts=texts)
            if not raw.has_voters:
                # A columnar copy that does not hold the voter and redaction columns cannot say which
                # votes count: parse the file itself (correct, slower) rather than guess.
                log.info("%s: its columnar copy has no voter columns; parsing the file", path.name)
                raw = read_jsonl(path, cache=False, texts=texts)
            return raw
        if suffix == ".parquet":
            return read_parquet(path, texts=texts)
        return parse_bytes(path.read_bytes(), str(path), texts=texts, whole_file=path)
    except UnicodeDecodeError:
        raise LeaderboardInputError(f"{path}: not UTF-8 text") from None
    except OSError as err:
        raise LeaderboardInputError(f"{path}: cannot read ({err.strerror or err})") from None


@dataclass(frozen=True, eq=False)
class Read:
    columns: RawColumns  # duplicates dropped, unreadable files counted in columns.skipped
    sources: tuple[str, ...]  # the files read


def read_columns(sources: PathLike | Iterable[PathLike], *, copy: bool = True, strict: bool = True,
                 texts: bool = False, token: str | None = None, endpoint: str | None = None,
                 cache_dir: PathLike | None = None) -> Read:
    """Every vote behind ``sources`` (files, folders, Hub dataset ids) as columns.

    ``copy``: read JSON lines through their columnar copy (``copy.py``). ``texts``: count lengths
    and citations a record does not store from its answers (only style control needs them).
    A file named explicitly that cannot be read raises LeaderboardInputError; a file found in a
    folder that is not a vote file (other JSON, a broken file) is counted under ``skipped``
    instead, so one stray file does not take the leaderboard down. With ``strict=False`` every
    file is treated that way (the app passes the shard list it found itself)."""
    files = vote_files(sources, token=token, endpoint=endpoint, cache_dir=cache_dir)
    parts = []
    for path, explicit in files:
        try:
            parts.append(read_file(path, copy=copy, texts=texts))
        except LeaderboardInputError as err:
            if explicit and strict:
                raise
            # The file's name, not its server path, goes into reports shown on the page.
            parts.append(empty_raw({f"unreadable file ({str(err).replace(str(path), path.name)})": 1}))
    return Read(drop_duplicates(concat_raw(parts)), tuple(str(path) for path, _ in files))



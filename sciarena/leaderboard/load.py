"""Find vote files and load them into one :class:`VoteTable` (the loading entry point)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable

from sciarena.errors import LeaderboardInputError
from sciarena.leaderboard.cache import read_jsonl
from sciarena.leaderboard.data import RawColumns, VoteTable, build_table, concat_raw, empty_raw
from sciarena.leaderboard.arrow_io import read_parquet
from sciarena.leaderboard.parse import parse_bytes

LINE_SUFFIXES = (".jsonl", ".ndjson")
SUFFIXES = LINE_SUFFIXES + (".json", ".parquet")

PathLike = str | os.PathLike[str]


def vote_files(paths: PathLike | Iterable[PathLike]) -> list[tuple[Path, bool]]:
    """(file, named explicitly) for the vote files named by ``paths``: files as given,
    folders searched recursively.

    Hidden files and folders (the cache among them) are ignored; files are returned
    in path order so a load is deterministic.
    """
    items = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    if not items:
        raise LeaderboardInputError("no vote file or folder given")
    found: dict[Path, bool] = {}
    for item in items:
        path = Path(item)
        if path.is_dir():
            inside = sorted(
                p for p in path.rglob("*")
                if p.suffix.lower() in SUFFIXES and p.is_file()
                and not any(part.startswith(".") for part in p.relative_to(path).parts)
            )
            if not inside:
                raise LeaderboardInputError(
                    f"{path}: no vote files (*.jsonl, *.json, *.parquet) in this folder")
            for p in inside:
                found.setdefault(p, False)
        elif path.is_file():
            found[path] = True
        else:
            raise LeaderboardInputError(f"{path}: no such file or folder")
    return list(found.items())


def read_votes_file(path: Path, *, cache: bool = True) -> RawColumns:
    """One file's raw columns, whatever its format."""
    suffix = path.suffix.lower()
    try:
        if suffix in LINE_SUFFIXES:
            return read_jsonl(path, cache=cache)
        if suffix == ".parquet":
            return read_parquet(path)
        return parse_bytes(path.read_bytes(), str(path))
    except UnicodeDecodeError:
        raise LeaderboardInputError(f"{path}: not UTF-8 text") from None
    except OSError as err:
        raise LeaderboardInputError(f"{path}: cannot read ({err.strerror or err})") from None


def load_votes(path_or_paths: PathLike | Iterable[PathLike], cache: bool = True, *,
               strict: bool = True) -> VoteTable:
    """Load every vote under ``path_or_paths`` (files and/or folders) into a VoteTable.

    JSON lines files are read through the incremental cache (see ``cache.py``)
    unless ``cache`` is False. Raises LeaderboardInputError with a readable
    message for a missing or unusable file named explicitly, missing fields, no
    usable votes or a single model. A file found inside a folder that is not a vote
    file (other JSON, a broken file) is reported under ``skipped`` instead, so one
    stray file does not take the leaderboard down. With ``strict=False`` every file is
    treated that way (the app passes the shard list it found itself).
    """
    files = vote_files(path_or_paths)
    parts = []
    for path, explicit in files:
        try:
            parts.append(read_votes_file(path, cache=cache))
        except LeaderboardInputError as err:
            if explicit and strict:
                raise
            # The file's name, not its server path, goes into reports shown on the page.
            parts.append(_skipped_file(f"unreadable file ({str(err).replace(str(path), path.name)})"))
    return build_table(concat_raw(parts), sources=[str(path) for path, _ in files])


def _skipped_file(reason: str) -> RawColumns:
    raw = empty_raw()
    return RawColumns(raw.models, raw.model_a, raw.model_b, raw.labels, raw.vote, raw.subjects,
                      raw.subject, raw.question_types, raw.question_type, raw.numeric,
                      raw.timestamp, {reason: 1})

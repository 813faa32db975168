"""The one vote reader: files, folders and Hub dataset ids → columns (``read_columns``).

A source is a file, a folder (searched recursively; hidden files and folders, the columnar
copy among them, are skipped) or a Hub dataset id (``owner/name``: its vote files are
downloaded — only when new or changed — and read like a folder). Formats: JSON lines, JSON
arrays, Parquet; layouts: see ``fields``. Records repeated across files or sources are
dropped by ``id`` (the first kept; records without an id are all kept) and counted under
"duplicate id". Consumers that want whole records use ``load.load`` (same files, same rule).
"""

from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from sciarena.core.errors import LeaderboardInputError, VoteStoreError
from sciarena.votes.read.arrow_io import read_parquet
from sciarena.votes.read.raw import RawColumns, concat_raw, drop_duplicates, empty_raw
from sciarena.votes.read.copy import read_jsonl
from sciarena.votes.read.parse import parse_bytes

LINE_SUFFIXES = (".jsonl", ".ndjson")
SUFFIXES = LINE_SUFFIXES + (".json", ".parquet")
DATA_DIR_IN_REPO = "data"
_REPO_ID = re.compile(r"^[\w.-]+/[\w.-]+$")

PathLike = str | os.PathLike[str]
log = logging.getLogger(__name__)


def is_hub_id(source: PathLike) -> bool:
    """``owner/name`` that is not a path on this machine."""
    return not Path(source).exists() and bool(_REPO_ID.match(str(source).strip()))


def local_vote_files(path: Path) -> list[Path]:
    """``path`` itself, or the vote files under the folder ``path`` in path order (hidden parts skipped)."""
    if path.is_file():
        return [path]
    return sorted(p for p in path.rglob("*") if p.suffix.lower() in SUFFIXES and p.is_file()
                  and not any(part.startswith(".") for part in p.relative_to(path).parts))


def hub_files(repo_id: str, *, token: str | None = None, endpoint: str | None = None,
              cache_dir: PathLike | None = None) -> list[Path]:
    """The vote files of a Hub dataset (under ``data/``, else anywhere in it), downloaded when changed."""
    from huggingface_hub import HfApi

    from sciarena.votes.read.records import mirror_hub_votes

    target = Path(cache_dir) if cache_dir else _default_cache() / repo_id.replace("/", "--")
    api = HfApi(endpoint=endpoint, token=token)
    try:
        files = mirror_hub_votes(repo_id, target, api=api) or mirror_hub_votes(repo_id, target, api=api,
                                                                               path_in_repo="")
    except VoteStoreError:
        raise
    except Exception as err:  # network, auth, missing repo: one clear line instead of a trace
        raise VoteStoreError(f"{repo_id}: could not read the dataset from the Hub ({first_line(err)})") from None
    if not files:
        raise VoteStoreError(f"{repo_id}: the dataset has no vote files (*.jsonl, *.json, *.parquet)")
    return files


def vote_files(sources: PathLike | Iterable[PathLike], *, token: str | None = None,
               endpoint: str | None = None, cache_dir: PathLike | None = None) -> list[tuple[Path, bool]]:
    """(file, named explicitly) for every vote file behind ``sources``, each file once, in order."""
    items = [sources] if isinstance(sources, (str, os.PathLike)) else list(sources)
    if not items:
        raise LeaderboardInputError("no vote file or folder given")
    found: dict[Path, bool] = {}
    for item in items:
        path = Path(item)
        if path.is_dir():
            inside = local_vote_files(path)
            if not inside:
                raise LeaderboardInputError(f"{path}: no vote files (*.jsonl, *.json, *.parquet) in this folder")
            for p in inside:
                found.setdefault(p, False)
        elif path.is_file():
            found[path] = True
        elif is_hub_id(item):
            cache = Path(cache_dir) / str(item).replace("/", "--") if cache_dir and len(items) > 1 else cache_dir
            for p in hub_files(str(item).strip(), token=token, endpoint=endpoint, cache_dir=cache):
                found.setdefault(p, False)
        else:
            raise LeaderboardInputError(f"{path}: no such file or folder")
    return list(found.items())


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


def _default_cache() -> Path:
    from huggingface_hub import constants

    return Path(constants.HF_HOME) / "sciarena-votes"


def first_line(err: BaseException) -> str:
    text = str(err).strip()
    return (text.splitlines()[0] if text else type(err).__name__)[:200]

"""Where votes are: files, folders and Hub dataset ids → the vote files behind them.

A source is a file, a folder (searched recursively; hidden files and folders, the columnar copy among
them, are skipped) or a Hub dataset id (``owner/name``: its vote files are mirrored — downloaded only
when new or changed — and read like a folder). Both readers (``columns`` and ``records``) and the
app's live source (``live``) find files here, so they agree on what a source holds.
"""

from __future__ import annotations

import json
import logging
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

from sciarena.core.errors import LeaderboardInputError, VoteStoreError
from sciarena.core.files import atomic_output

if TYPE_CHECKING:
    from huggingface_hub import HfApi

log = logging.getLogger(__name__)
_MANIFEST = ".manifest.json"

LINE_SUFFIXES = (".jsonl", ".ndjson")
SUFFIXES = LINE_SUFFIXES + (".json", ".parquet")
DATA_DIR_IN_REPO = "data"
_REPO_ID = re.compile(r"^[\w.-]+/[\w.-]+$")

PathLike = str | os.PathLike[str]
log = logging.getLogger(__name__)


def is_hub_id(source: PathLike) -> bool:
    """``owner/name`` that is not a path on this machine, nor looks like one: a name ending as a vote file does
    (``review-sets/second-votes.jsonl``) is a local file that is missing, said at once rather than asked of
    the Hub (whose retries took 26 s to end in a screen of errors)."""
    text = str(source).strip()
    return not Path(source).exists() and bool(_REPO_ID.match(text)) and not text.lower().endswith(SUFFIXES)


def local_vote_files(path: Path) -> list[Path]:
    """``path`` itself, or the vote files under the folder ``path`` in path order (hidden parts skipped)."""
    if path.is_file():
        return [path]
    return sorted(p for p in path.rglob("*") if p.suffix.lower() in SUFFIXES and p.is_file()
                  and not any(part.startswith(".") for part in p.relative_to(path).parts))


def hub_files(repo_id: str, *, token: str | None = None, endpoint: str | None = None,
              cache_dir: PathLike | None = None) -> list[Path]:
    """The vote files of a Hub dataset (under ``data/``, else anywhere in it), downloaded when changed."""
    from huggingface_hub import HfApi  # start-up time: the Hub client is needed only for a dataset id

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


def mirror_hub_votes(repo_id: str, cache_dir: Path, *, api: "HfApi",
                     path_in_repo: str = DATA_DIR_IN_REPO) -> list[Path]:
    """Download the repo's vote files that are new or changed since the last call; return all their local paths.

    One tree listing per call; a file is fetched only when its blob id differs from the one
    recorded in ``cache_dir/.manifest.json``. Files removed from the repo are not returned.
    """
    from huggingface_hub.errors import EntryNotFoundError, RemoteEntryNotFoundError  # start-up time: the Hub client

    try:
        entries = [e for e in api.list_repo_tree(repo_id, path_in_repo=path_in_repo, recursive=True,
                                                 repo_type="dataset")
                   if hasattr(e, "blob_id") and e.path.lower().endswith(SUFFIXES)]
    except (EntryNotFoundError, RemoteEntryNotFoundError):
        return []
    cache_dir.mkdir(parents=True, exist_ok=True)
    manifest_path = cache_dir / _MANIFEST
    try:
        manifest: dict[str, str] = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        manifest = {}
    fetched = 0
    for entry in entries:
        if manifest.get(entry.path) == entry.blob_id and (cache_dir / entry.path).is_file():
            continue
        api.hf_hub_download(repo_id, entry.path, repo_type="dataset", local_dir=cache_dir)
        manifest[entry.path] = entry.blob_id
        fetched += 1
    if fetched:
        with atomic_output(manifest_path) as handle:
            handle.write(json.dumps(manifest, sort_keys=True))
        log.info("downloaded %d changed vote file(s) from %s", fetched, repo_id)
    return [cache_dir / entry.path for entry in entries]


def _default_cache() -> Path:
    from huggingface_hub import constants  # start-up time, as above

    return Path(constants.HF_HOME) / "sciarena-votes"


def first_line(err: BaseException) -> str:
    text = str(err).strip()
    return (text.splitlines()[0] if text else type(err).__name__)[:200]

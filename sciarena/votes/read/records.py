"""Votes as whole records for consumers (``load``), and the Hub mirror behind ``VoteSource``.

``load(source)`` returns a list of dicts — one per vote, duplicates removed by ``id``, every
field of the current schema present (``None`` where an older record lacks it; FastChat's
``model_a``/``model_b``/``winner`` also filled in as ``modelA``/``modelB``/``vote``). It finds
files exactly as the columnar reader does (``read.vote_files``: files, folders, Hub dataset
ids) and shares its JSON-lines loop (``parse.json_lines``). A list of plain dicts needs nothing
but the standard library and turns into a DataFrame with ``pandas.DataFrame(load(...))``.

``VoteSource`` gives the leaderboard the files to read: the Hub copies of the
dataset's shards (downloaded only when new or changed) plus this machine's shards.
A shard has the same name locally and on the Hub, and the Hub copy is always a
prefix of the local file, so each shard is handed over once — the longer copy.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable

from sciarena.core.errors import LeaderboardInputError, VoteStoreError
from sciarena.core.files import atomic_output
from sciarena.votes.read.fields import ALIASES
from sciarena.votes.store.hub import VOTE_GLOB
from sciarena.votes.read.parse import UNREADABLE, json_lines
from sciarena.votes.read.columns import DATA_DIR_IN_REPO, SUFFIXES, first_line, is_hub_id, local_vote_files, vote_files
from sciarena.votes.schema import SCHEMA_VERSION, VOTE_FIELDS

if TYPE_CHECKING:
    from huggingface_hub import HfApi

    from sciarena.core.settings import Settings

log = logging.getLogger(__name__)

_MANIFEST = ".manifest.json"


# --- consumers -------------------------------------------------------------------------------------
def load(repo_or_path: str | os.PathLike[str], *, token: str | None = None, endpoint: str | None = None,
         cache_dir: str | os.PathLike[str] | None = None) -> list[dict[str, Any]]:
    """All votes in a local file/folder or a Hub dataset repo ("owner/name"), one dict per ``id``.

    Files: JSON lines (``.jsonl``/``.ndjson``), JSON arrays (``.json``, as the released SciArena
    data) and Parquet. Folders are searched recursively (hidden folders skipped). Records of
    older schema versions are accepted; absent fields become ``None``. A Hub repo's vote files are
    downloaded into ``cache_dir`` (default: under the Hugging Face cache) and only
    re-downloaded when changed. Raises VoteStoreError with a readable message on bad input.
    """
    text = str(repo_or_path).strip()
    if not Path(repo_or_path).exists() and not is_hub_id(text):
        raise VoteStoreError(f"{text}: no such file or folder, and not a Hub dataset id (owner/name)")
    if Path(repo_or_path).is_dir() and not local_vote_files(Path(repo_or_path)):
        return []
    try:
        files = [path for path, _ in vote_files(repo_or_path, token=token, endpoint=endpoint, cache_dir=cache_dir)]
    except LeaderboardInputError as err:
        raise VoteStoreError(str(err)) from None
    return read_records(files)


def read_records(files: Iterable[Path]) -> list[dict[str, Any]]:
    """Records from ``files`` in order, the first of each ``id`` kept, normalised to the current schema."""
    seen: set[Any] = set()
    out: list[dict[str, Any]] = []
    duplicates = newer = 0
    for path in files:
        for record in _file_records(path):
            record = normalise(record)
            key = record.get("id")
            if key is not None:
                if key in seen:
                    duplicates += 1
                    continue
                seen.add(key)
            version = record.get("schema_version")
            newer += isinstance(version, int) and version > SCHEMA_VERSION
            out.append(record)
    if duplicates:
        log.info("skipped %d duplicate vote record(s) (same id)", duplicates)
    if newer:
        log.warning("%d record(s) have a newer schema than %d; unknown fields are kept as they are",
                    newer, SCHEMA_VERSION)
    return out


def normalise(record: dict[str, Any]) -> dict[str, Any]:
    """Every field of VOTE_FIELDS in order (None when absent; taken from a battle file's key when
    that is where the record holds it), then any extra fields unchanged."""
    out = {name: record.get(name) for name in VOTE_FIELDS}
    for name, keys in ALIASES.items():
        if out.get(name) is None:
            out[name] = next((record[k] for k in keys[1:] if record.get(k) is not None), None)
    out.update((k, v) for k, v in record.items() if k not in out)
    return out


def _file_records(path: Path) -> Iterable[dict[str, Any]]:
    suffix = path.suffix.lower()
    try:
        if suffix == ".parquet":
            import pyarrow.parquet as pq

            rows: list[Any] = pq.read_table(path).to_pylist()
        elif suffix == ".json" and path.read_bytes().lstrip()[:1] == b"[":
            rows = json.loads(path.read_bytes())
        else:
            rows = _json_lines(path)
    except (OSError, UnicodeDecodeError) as err:
        raise VoteStoreError(f"{path}: cannot read ({first_line(err)})") from None
    except ValueError as err:
        raise VoteStoreError(f"{path}: not valid JSON ({first_line(err)})") from None
    except Exception as err:  # pyarrow's errors (not a Parquet file…)
        raise VoteStoreError(f"{path}: cannot read ({first_line(err)})") from None
    for k, row in enumerate(rows):
        if not isinstance(row, dict):
            raise VoteStoreError(f"{path}: record {k + 1} is not a JSON object")
        yield row


def _json_lines(path: Path) -> list[Any]:
    data = path.read_bytes()
    last = data.count(b"\n") + 1
    rows = []
    for number, value in json_lines(data):
        if value is UNREADABLE:
            if number == last:  # a last line without its newline: a writer mid-append, or a crash
                log.warning("%s: ignoring an incomplete last line", path)
                break
            raise ValueError(f"line {number} is not valid JSON")
        rows.append(value)
    return rows


# --- the Hub mirror ----------------------------------------------------------------------------------
def mirror_hub_votes(repo_id: str, cache_dir: Path, *, api: "HfApi",
                     path_in_repo: str = DATA_DIR_IN_REPO) -> list[Path]:
    """Download the repo's vote files that are new or changed since the last call; return all their local paths.

    One tree listing per call; a file is fetched only when its blob id differs from the one
    recorded in ``cache_dir/.manifest.json``. Files removed from the repo are not returned.
    """
    from huggingface_hub.errors import EntryNotFoundError, RemoteEntryNotFoundError

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


class VoteSource:
    """The vote files for the leaderboard: Hub shards (refreshed at most every ``refresh_s``) + local shards.

    The first ``files()`` call reads the Hub (after a restart on an ephemeral disk the Hub holds
    every vote); later calls start a refresh in the background when one is due and answer at
    once from the copies already downloaded, so a slow or failing Hub never delays a page load.
    A failed refresh is logged and kept in ``last_error``.
    """

    def __init__(self, local_root: Path, *, repo_id: str | None = None, api: "HfApi | None" = None,
                 cache_dir: Path | None = None, refresh_s: float = 300.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if repo_id and (api is None or cache_dir is None):
            raise ValueError("a Hub-backed VoteSource needs an api and a cache_dir")
        self.local_root = Path(local_root)
        self.repo_id = repo_id
        self.api = api
        self.cache_dir = cache_dir
        self.refresh_s = refresh_s
        self.last_error = ""
        self._clock = clock
        self._lock = threading.Lock()
        self._hub_files: dict[str, Path] = {}
        self._refreshed_at: float | None = None
        self._background: threading.Thread | None = None

    def refresh(self) -> bool:
        """Fetch new/changed Hub shards now; False (and ``last_error`` set) when the Hub could not be read."""
        if not self.repo_id or self.api is None or self.cache_dir is None:
            return True
        with self._lock:
            self._refreshed_at = self._clock()
            try:
                paths = mirror_hub_votes(self.repo_id, self.cache_dir, api=self.api)
            except Exception as err:  # an outage must not break the leaderboard: use what we have
                self.last_error = first_line(err)
                log.warning("could not refresh votes from %s: %s", self.repo_id, self.last_error)
                return False
            data = self.cache_dir / DATA_DIR_IN_REPO
            self._hub_files = {p.relative_to(data).as_posix(): p for p in paths if p.is_relative_to(data)}
            self.last_error = ""
            return True

    def refresh_in_background(self) -> threading.Thread:
        """Start a refresh unless one is running; returns its thread (join it to wait)."""
        with self._lock:
            if self._background is None or not self._background.is_alive():
                self._refreshed_at = self._clock()  # due again only refresh_s from now, whatever happens
                self._background = threading.Thread(target=self.refresh, name="vote-source", daemon=True)
                self._background.start()
            return self._background

    def files(self, *, refresh: bool = True) -> list[Path]:
        """Every shard once — the local copy when it is at least as long as the Hub's — in name order.

        ``refresh=False`` lists what is here without reading the Hub (background upkeep, exit)."""
        if self.repo_id and refresh:
            if self._refreshed_at is None:
                self.refresh()
            elif self._clock() - self._refreshed_at >= self.refresh_s:
                self.refresh_in_background()
        chosen = dict(self._hub_files)
        if self.local_root.is_dir():
            for path in self.local_root.glob(VOTE_GLOB):
                shard = path.relative_to(self.local_root).as_posix()
                hub_copy = chosen.get(shard)
                if hub_copy is None or not hub_copy.is_file() or path.stat().st_size >= hub_copy.stat().st_size:
                    chosen[shard] = path
        return [chosen[shard] for shard in sorted(chosen)]


def open_vote_source(settings: "Settings", local_root: Path, *, endpoint: str | None = None) -> VoteSource:
    """The app's VoteSource: local only, or local + the votes repo when SCIARENA_VOTES_REPO is set.

    A public repo is read even without HF_TOKEN. The Hub copies go to ``<data_dir>/.hub-votes/``:
    outside the pushed folder (never pushed back) and hidden, so a folder scan of ``<data_dir>``
    (``sciarena leaderboard --votes data``) does not read the same votes twice.
    """
    repo_id = settings.votes_repo
    if not repo_id:
        return VoteSource(local_root)
    from huggingface_hub import HfApi

    cache = Path(settings.data_dir) / ".hub-votes" / repo_id.replace("/", "--")
    return VoteSource(local_root, repo_id=repo_id, api=HfApi(endpoint=endpoint, token=settings.secret("HF_TOKEN")),
                      cache_dir=cache, refresh_s=settings.push_every_minutes * 60.0)

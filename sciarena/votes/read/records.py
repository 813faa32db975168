"""Votes as whole records for consumers (``load``, ``read_records``).

``load(source)`` returns a list of dicts — one per vote, duplicates removed by ``id``, every
field of the current schema present (``None`` where an older record lacks it; FastChat's
``model_a``/``model_b``/``winner`` also filled in as ``modelA``/``modelB``/``vote``). It finds
files exactly as the columnar reader does (``read.vote_files``: files, folders, Hub dataset
ids) and shares its JSON-lines loop (``parse.json_lines``). A list of plain dicts needs nothing
but the standard library and turns into a DataFrame with ``pandas.DataFrame(load(...))``.

The app's live source of vote files (Hub copies + local shards) is ``live.VoteSource``.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from sciarena.core.errors import LeaderboardInputError, VoteStoreError
from sciarena.votes.read.fields import ALIASES
from sciarena.votes.read.parse import UNREADABLE, json_lines
from sciarena.votes.read.sources import first_line, is_hub_id, local_vote_files, vote_files
from sciarena.votes.schema import SCHEMA_VERSION, VOTE_FIELDS

if TYPE_CHECKING:

    pass

log = logging.getLogger(__name__)



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



"""The columnar copy of append-only JSON-lines vote files: what makes a reload fast.

Why this design. The vote store appends one JSON line per vote to one file per
process, and never rewrites a line. Parsing a million JSON records costs seconds
however it is done (the records carry answers and citations the leaderboard never
reads), while the leaderboard itself needs a few small arrays. So next to each
``votes-*.jsonl`` we keep ``.leaderboard-cache/<name>.npz``: the parsed columns of
the file's first ``consumed`` bytes plus a fingerprint of those bytes. On reload:

* same size and mtime as recorded → the arrays are used as they are;
* the file grew and the fingerprint (SHA-1 of the first and last 64 KiB of the
  consumed prefix) still matches → only the appended bytes are parsed and the cache
  is extended (append-only means the prefix is unchanged);
* anything else (truncated, rewritten, cache unreadable or from another version)
  → a full parse, and the cache is rewritten.

The file is memory-mapped: small appends are parsed from the page cache without a copy, and a
first read hands the file itself to the fast reader.
A trailing line without its newline (a writer mid-append) is not cached: it is
used for this call when it parses, else counted as "incomplete last line", and
read again once complete.

The copy also holds each record's id fingerprint (for deduplication) and whether lengths
that had to be counted from answer texts were counted (``RawColumns.complete``): a reader that
needs them (style control on released-schema files) parses such a file again, with texts.

The cache is plain numpy ``.npz`` (no pickle; vocabularies in a JSON header):
a million votes load in about 0.1 s with numpy alone, and appending needs no
schema handling (a Parquet or SQLite sidecar would add both for no gain). It is
written to a temporary file and renamed, so concurrent readers never see half a
cache; a read-only folder only means no cache. Only ``.jsonl``/``.ndjson`` files
are cached: JSON arrays and Parquet are not appended to by the store (and Parquet
is already columnar).

The cache folder is hidden and holds derived data only; a Hub upload of the votes
folder should exclude it (e.g. ``allow_patterns="*.jsonl"``).
"""

from __future__ import annotations

import hashlib
import json
import logging
import mmap
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from sciarena.core.files import atomic_output
from sciarena.votes.read.parse import parse_lines, records_to_raw
from sciarena.votes.read.raw import NUMERIC_COLUMNS, RawColumns, concat_raw

log = logging.getLogger(__name__)

CACHE_DIRNAME = ".leaderboard-cache"
CACHE_VERSION = 4  # 2: id fingerprints and the "complete" flag; 3: voter ids and redaction flags; 4: turns
_PRINT_BYTES = 1 << 16


def cache_path(path: Path) -> Path:
    """Where the cache of a JSON-lines file lives."""
    return path.parent / CACHE_DIRNAME / (path.name + ".npz")


@dataclass(frozen=True, eq=False)
class _Cached:
    raw: RawColumns
    consumed: int
    size: int
    mtime_ns: int
    fingerprint: str


def _fingerprint(handle: Any, consumed: int) -> str:
    digest = hashlib.sha1(str(consumed).encode())
    handle.seek(0)
    digest.update(handle.read(min(consumed, _PRINT_BYTES)))
    tail = max(0, consumed - _PRINT_BYTES)
    handle.seek(tail)
    digest.update(handle.read(consumed - tail))
    return digest.hexdigest()


def _load(path: Path, source: Path) -> _Cached | None:
    try:
        with np.load(path, allow_pickle=False) as npz:
            meta = json.loads(str(npz["meta"]))
            if meta.get("version") != CACHE_VERSION or meta.get("source") != source.name:
                return None
            n = int(meta["rows"])
            numeric = np.full((n, len(NUMERIC_COLUMNS)), np.nan, dtype=np.float32)
            for k, name in enumerate(NUMERIC_COLUMNS):
                if name in meta["numeric"]:
                    numeric[:, k] = npz[name]
            raw = RawColumns(
                models=tuple(meta["models"]), model_a=npz["model_a"], model_b=npz["model_b"],
                labels=tuple(meta["labels"]), vote=npz["vote"],
                subjects=tuple(meta["subjects"]), subject=npz["subject"],
                question_types=tuple(meta["question_types"]), question_type=npz["question_type"],
                numeric=numeric, timestamp=npz["timestamp"], ids=npz["ids"],
                skipped=dict(meta["skipped"]), complete=bool(meta["complete"]),
                voters=tuple(meta["voters"]), voter=npz["voter"], redacted=npz["redacted"],
                asker=npz["asker"],  # a copy written before it was read lacks it: parsed again (KeyError)
            )
            return _Cached(raw, int(meta["consumed"]), int(meta["size"]), int(meta["mtime_ns"]),
                           str(meta["fingerprint"]))
    except (OSError, ValueError, KeyError, TypeError, json.JSONDecodeError):
        return None


def _save(path: Path, source: Path, cached: _Cached) -> None:
    raw = cached.raw
    present = [name for k, name in enumerate(NUMERIC_COLUMNS)
               if np.isfinite(raw.numeric[:, k]).any()]
    meta = {
        "version": CACHE_VERSION, "source": source.name, "rows": len(raw),
        "consumed": cached.consumed, "size": cached.size, "mtime_ns": cached.mtime_ns,
        "fingerprint": cached.fingerprint, "models": raw.models, "labels": raw.labels,
        "subjects": raw.subjects, "question_types": raw.question_types,
        "skipped": dict(raw.skipped), "numeric": present, "complete": raw.complete,
        "voters": raw.voters,
    }
    arrays = {name: raw.numeric[:, NUMERIC_COLUMNS.index(name)] for name in present}
    try:
        path.parent.mkdir(exist_ok=True)
        with atomic_output(path, "wb") as out:
            np.savez(out, meta=np.array(json.dumps(meta)), model_a=raw.model_a,
                     model_b=raw.model_b, vote=raw.vote, subject=raw.subject,
                     question_type=raw.question_type, timestamp=raw.timestamp, ids=raw.ids,
                     voter=raw.voter, redacted=raw.redacted, asker=raw.asker, **arrays)
    except OSError as err:  # read-only folder, full disk: work without a cache
        log.warning("could not write the leaderboard cache %s: %s", path, err)


def read_jsonl(path: Path, *, cache: bool = True, texts: bool = False) -> RawColumns:
    """The raw columns of a JSON-lines file, through the incremental cache when ``cache``.

    ``texts``: lengths a record does not store are counted from its answers (a copy made
    without them is then rebuilt)."""
    origin = str(path)
    with open(path, "rb") as handle:
        stat = os.fstat(handle.fileno())
        cached = _load(cache_path(path), path) if cache else None
        if cached and texts and not cached.raw.complete:
            cached = None
        if cached and (cached.size, cached.mtime_ns) == (stat.st_size, stat.st_mtime_ns) \
                and cached.consumed == stat.st_size:
            return cached.raw
        prefix: RawColumns | None = None
        start = 0
        if cached and stat.st_size >= cached.consumed \
                and _fingerprint(handle, cached.consumed) == cached.fingerprint:
            prefix, start = cached.raw, cached.consumed
        # A memory map hands the page cache to the parser without copying the file.
        mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) if stat.st_size else b""
    end = max(start, mapped.rfind(b"\n", start) + 1) if len(mapped) > start else start
    partial = mapped[end:]
    parts = [prefix] if prefix is not None else []
    if end > start:
        whole = path if start == 0 and end == stat.st_size else None
        parts.append(parse_lines(memoryview(mapped)[start:end], origin, texts=texts, whole_file=whole))
    raw = concat_raw(parts)
    if cache and (prefix is None or end > start):
        with open(path, "rb") as handle:
            fingerprint = _fingerprint(handle, end)
        _save(cache_path(path), path, _Cached(raw, end, stat.st_size, stat.st_mtime_ns,
                                              fingerprint))
    if partial.strip():
        raw = concat_raw([raw, _partial_line(partial, origin, texts)])
    return raw


def _partial_line(data: bytes, origin: str, texts: bool) -> RawColumns:
    """A last line without its newline: a vote when it parses, else counted as incomplete."""
    try:
        record = json.loads(data)
    except ValueError:
        record = None
    if isinstance(record, dict):
        return records_to_raw([record], origin, texts=texts)
    return records_to_raw([], origin, {"incomplete last line": 1})

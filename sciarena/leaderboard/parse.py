"""Vote files → :class:`RawColumns`, reading only the fields the leaderboard uses.

Two record schemas are understood: ours (``sciarena/votes/schema.py``, which
stores per-side ``length_*`` and ``num_citations_*``) and the released SciArena
one (no length fields: lengths are counted from ``responseA/B`` characters and
citation counts from ``len(citations_a/b)``). Formats: JSON array, JSON lines,
Parquet. JSON lines of our schema go through pyarrow's C++ reader with an
explicit schema (only the needed columns are materialised; blocks are parsed on
all cores). The standard-library path (``parse_lines_python``) defines the
result; the pyarrow path reproduces it exactly or declines — it rejects any line
it cannot type (bare ``NaN``, a string where a number belongs, duplicate keys,
invalid UTF-8, …) and gives up when a length would have to be counted from an
answer it did not read — and the standard library then reads the file, counting
malformed lines.
"""

from __future__ import annotations

import json
import math
from typing import Any, Mapping, Sequence

import numpy as np

from sciarena.errors import LeaderboardInputError
from sciarena.leaderboard.arrow_io import fast_schema, read_lines
from sciarena.leaderboard.data import NUMERIC_COLUMNS, RawColumns, empty_raw, encode
from sciarena.leaderboard.fields import (
    DERIVED, NUMERIC_SOURCES, SEEN_RECORDS, STRING_FIELDS, check_fields, derived_of, number_of,
    timestamp_of,
)


def records_to_raw(records: Sequence[Mapping[str, Any]], origin: str = "votes",
                   skipped: Mapping[str, int] | None = None) -> RawColumns:
    """Python-side conversion of vote records (dicts) to raw columns.

    Which alternative numeric keys are read is decided by the keys of the first
    SEEN_RECORDS records."""
    if not records:
        return empty_raw() if not skipped else _with_skipped(empty_raw(), skipped)
    seen: set[str] = set()
    for record in records[:SEEN_RECORDS]:
        seen.update(record)
    check_fields(seen, origin)
    strings = {f: encode([r.get(f) for r in records]) for f in STRING_FIELDS}
    numeric = np.full((len(records), len(NUMERIC_COLUMNS)), np.nan, dtype=np.float32)
    for col, name in enumerate(NUMERIC_COLUMNS):
        keys = [k for k in NUMERIC_SOURCES[name] if k in seen]
        derived = DERIVED.get(name)
        if not keys and derived is None:
            continue
        values = numeric[:, col]
        for row, record in enumerate(records):
            value = math.nan
            for key in keys:
                value = number_of(record.get(key))
                if not math.isnan(value):
                    break
            if math.isnan(value) and derived is not None:
                value = derived_of(record.get(derived))
            values[row] = value
    (models_a, a), (models_b, b) = strings["modelA"], strings["modelB"]
    models = tuple(dict.fromkeys(models_a + models_b))
    index = {m: i for i, m in enumerate(models)}
    remap_b = np.array([index[m] for m in models_b] + [-1], dtype=np.int32)
    return RawColumns(
        models=models, model_a=a, model_b=remap_b[b],
        labels=tuple(w.lower() for w in strings["vote"][0]), vote=strings["vote"][1],
        subjects=strings["subject"][0], subject=strings["subject"][1],
        question_types=strings["question_type"][0], question_type=strings["question_type"][1],
        numeric=numeric, timestamp=np.array([timestamp_of(r.get("timestamp")) for r in records]),
        skipped=dict(skipped or {}),
    )


def _with_skipped(raw: RawColumns, skipped: Mapping[str, int]) -> RawColumns:
    return RawColumns(raw.models, raw.model_a, raw.model_b, raw.labels, raw.vote, raw.subjects,
                      raw.subject, raw.question_types, raw.question_type, raw.numeric,
                      raw.timestamp, dict(skipped))


def parse_lines_python(data: bytes, origin: str) -> RawColumns:
    """JSON lines with the standard library: NaN tokens accepted, bad lines counted."""
    records: list[dict[str, Any]] = []
    malformed = 0
    for line in data.splitlines():
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            malformed += 1
            continue
        if isinstance(record, dict):
            records.append(record)
        else:
            malformed += 1
    if malformed and not records:
        raise LeaderboardInputError(f"{origin}: not JSON lines ({malformed} unreadable line(s))")
    return records_to_raw(records, origin, {"malformed JSON line": malformed} if malformed else None)


def _leading_keys(data: memoryview) -> set[str] | None:
    """The keys of the first SEEN_RECORDS records, as parse_lines_python gathers them
    (None when one of those lines is not a JSON object: then that path decides)."""
    keys: set[str] = set()
    records, pending, pos = 0, b"", 0
    while records < SEEN_RECORDS and (pos < len(data) or pending):
        chunk = bytes(data[pos: pos + (1 << 20)])
        pos += len(chunk)
        pieces = (pending + chunk).split(b"\n")
        pending = pieces.pop() if pos < len(data) else b""
        for line in (sub for piece in pieces for sub in piece.splitlines()):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except ValueError:
                return None
            if not isinstance(record, dict):
                return None
            keys.update(record)
            records += 1
            if records == SEEN_RECORDS:
                break
        if not chunk:
            break
    return keys if records else None


# Below this many bytes the standard library is quicker than importing pyarrow (~0.2 s):
# the usual case of the incremental cache, which parses the last minute of votes.
SMALL_INPUT_BYTES = 2 << 20


def parse_lines(data: bytes | memoryview, origin: str) -> RawColumns:
    """Parse complete JSON lines (any buffer holding whole lines, e.g. a memory map)."""
    view = memoryview(data)
    if len(view) < SMALL_INPUT_BYTES:
        return parse_lines_python(bytes(view), origin)
    seen = _leading_keys(view)
    schema = fast_schema(seen) if seen is not None else None
    parsed = read_lines(view, schema, origin) if schema is not None else None
    return parsed if parsed is not None else parse_lines_python(bytes(view), origin)


def parse_json_array(text: bytes, origin: str) -> RawColumns:
    """A JSON document holding an array of vote records (NaN tokens accepted)."""
    try:
        records = json.loads(text)
    except ValueError as err:
        raise LeaderboardInputError(f"{origin}: not valid JSON ({err})") from None
    if not isinstance(records, list):
        raise LeaderboardInputError(f"{origin}: expected a JSON array of vote records")
    usable = [r for r in records if isinstance(r, dict)]
    malformed = len(records) - len(usable)
    return records_to_raw(usable, origin, {"non-object JSON element": malformed} if malformed else None)


def parse_bytes(data: bytes, origin: str) -> RawColumns:
    """A .json file's content: a JSON array, or JSON lines when it is not one."""
    head = data[:4096].lstrip()
    if head.startswith(b"["):
        return parse_json_array(data, origin)
    if head.startswith(b"{"):
        return parse_lines(data, origin)
    if not head:
        return empty_raw()
    raise LeaderboardInputError(f"{origin}: not a JSON array or JSON lines file")

"""Vote files → :class:`RawColumns`, reading only the fields the leaderboard uses.

Two record schemas are understood: ours (``sciarena/votes/schema.py``, which
stores per-side ``length_*`` and ``num_citations_*``) and the released SciArena
one (no length fields: lengths are counted from ``responseA/B`` characters and
citation counts from ``len(citations_a/b)``). Formats: JSON array, JSON lines,
Parquet. JSON lines of our schema go through pyarrow's C++ reader with an
explicit schema (only the needed columns are materialised; blocks are parsed on
all cores); anything that reader rejects falls back to the standard library,
which accepts bare ``NaN`` tokens and counts malformed lines.
"""

from __future__ import annotations

import json
import math
from datetime import datetime, timezone
from typing import Any, Mapping, Sequence

import numpy as np

from sciarena.errors import LeaderboardInputError
from sciarena.leaderboard.arrow_io import fast_schema, read_lines
from sciarena.leaderboard.data import NUMERIC_COLUMNS, RawColumns, empty_raw, encode
from sciarena.leaderboard.fields import DERIVED, NUMERIC_SOURCES, STRING_FIELDS, check_fields


def _number(value: Any) -> float:
    if isinstance(value, bool) or value is None:
        return math.nan
    if isinstance(value, (int, float)):
        return float(value)
    return math.nan


def _timestamp(value: Any) -> float:
    if isinstance(value, str) and value:
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            return math.nan
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=timezone.utc)
        return moment.timestamp()
    return _number(value)


def _derived(value: Any) -> float:
    if isinstance(value, (str, list)):
        return float(len(value))
    return math.nan


def records_to_raw(records: Sequence[Mapping[str, Any]], origin: str = "votes",
                   skipped: Mapping[str, int] | None = None) -> RawColumns:
    """Python-side conversion of vote records (dicts) to raw columns."""
    if not records:
        return empty_raw() if not skipped else _with_skipped(empty_raw(), skipped)
    seen: set[str] = set()
    for record in records[:1000]:
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
                value = _number(record.get(key))
                if not math.isnan(value):
                    break
            if math.isnan(value) and derived is not None:
                value = _derived(record.get(derived))
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
        numeric=numeric, timestamp=np.array([_timestamp(r.get("timestamp")) for r in records]),
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


def _first_record(data: memoryview) -> Mapping[str, Any] | None:
    """The first non-blank line as a record (None when it is not a JSON object)."""
    pending, pos = b"", 0
    while pos < len(data) or pending:
        chunk = bytes(data[pos: pos + (1 << 16)])
        pos += len(chunk)
        lines = (pending + chunk).split(b"\n")
        pending = lines.pop() if pos < len(data) else b""
        for line in lines:
            if line.strip():
                try:
                    record = json.loads(line)
                except ValueError:
                    return None
                return record if isinstance(record, dict) else None
        if not chunk:
            break
    return None


def parse_lines(data: bytes | memoryview, origin: str) -> RawColumns:
    """Parse complete JSON lines (any buffer holding whole lines, e.g. a memory map)."""
    view = memoryview(data)
    first = _first_record(view)
    schema = fast_schema(first) if first is not None else None
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

"""Vote files → :class:`RawColumns`, reading only the fields the leaderboard uses.

Formats: JSON array, JSON lines (``.json`` may hold either), Parquet (``arrow_io``). Large JSON
lines go through DuckDB's reader (``duck``), which materialises only the requested fields and
never builds Python objects for the rest; answer texts are read only when ``texts`` asks for
lengths or citation counts that a record does not store (the released schema). The
standard-library path here (:func:`records_to_raw`) defines the result: the fast reader gives
the same columns or declines (a malformed line, a value of the wrong type), and this path then
reads the file, counting the lines it cannot use. :func:`json_lines` is the one JSON-lines loop,
shared with ``load`` (records for consumers).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

import numpy as np

from sciarena.core.errors import LeaderboardInputError
from sciarena.votes.read.fields import (
    DERIVED,
    FLAG_FIELDS,
    NUMERIC_SOURCES,
    SEEN_RECORDS,
    STRING_FIELDS,
    SUBJECT_SOURCE_FIELD,
    check_fields,
    derived_of,
    key_of,
    number_of,
    timestamp_of,
)
from sciarena.votes.read.raw import NUMERIC_COLUMNS, RawColumns, empty_raw, encode, fingerprints_of, flags, is_asker

UNREADABLE = object()  # what json_lines yields for a line that is not JSON


def json_lines(data: bytes) -> Iterator[tuple[int, Any]]:
    """(line number, value) for each non-blank line; ``UNREADABLE`` as the value of a broken line."""
    for number, line in enumerate(data.split(b"\n"), start=1):
        if not line.strip():
            continue
        try:
            yield number, json.loads(line)
        except ValueError:
            yield number, UNREADABLE


def id_text(value: Any) -> str | None:
    """An id as the fingerprint reads it: its JSON text (None when the record has no id)."""
    return None if value is None else json.dumps(value, ensure_ascii=False)


def records_to_raw(records: Sequence[Mapping[str, Any]], origin: str = "votes",
                   skipped: Mapping[str, int] | None = None, *, texts: bool = False) -> RawColumns:
    """Vote records (dicts) → raw columns.

    Which alternative keys are read is decided by the keys of the first SEEN_RECORDS records.
    ``texts``: count a length or citation count a record does not store from its answer text
    or citation list; without it such values stay NaN and the result is marked incomplete."""
    if not records:
        return empty_raw(skipped)
    seen: set[str] = set()
    for record in records[:SEEN_RECORDS]:
        seen.update(record)
    check_fields(seen, origin)
    keys = {name: key_of(name, seen) for name in ("id", "timestamp", *STRING_FIELDS)}
    strings = {f: encode([r.get(keys[f]) for r in records] if keys[f] else [None] * len(records))
               for f in STRING_FIELDS}
    numeric = np.full((len(records), len(NUMERIC_COLUMNS)), np.nan, dtype=np.float32)
    complete = True
    for col, name in enumerate(NUMERIC_COLUMNS):
        sources = [k for k in NUMERIC_SOURCES[name] if k in seen]
        derived = DERIVED.get(name)
        if not sources and derived is None:
            continue
        values = numeric[:, col]
        for row, record in enumerate(records):
            value = math.nan
            for key in sources:
                value = number_of(record.get(key))
                if not math.isnan(value):
                    break
            if math.isnan(value) and derived is not None:
                if texts:
                    value = derived_of(record.get(derived))
                elif derived in record:
                    complete = False
            values[row] = value
    (models_a, a), (models_b, b) = strings["modelA"], strings["modelB"]
    models = tuple(dict.fromkeys(models_a + models_b))
    index = {m: i for i, m in enumerate(models)}
    remap_b = np.array([index[m] for m in models_b] + [-1], dtype=np.int32)
    stamp, ident = keys["timestamp"], keys["id"]
    return RawColumns(
        models=models, model_a=a, model_b=remap_b[b],
        labels=tuple(w.lower() for w in strings["vote"][0]), vote=strings["vote"][1],
        subjects=strings["subject"][0], subject=strings["subject"][1],
        question_types=strings["question_type"][0], question_type=strings["question_type"][1],
        numeric=numeric,
        timestamp=np.array([timestamp_of(r.get(stamp)) if stamp else math.nan for r in records]),
        ids=fingerprints_of([id_text(r.get(ident)) if ident else None for r in records]),
        skipped=dict(skipped or {}), complete=complete,
        voters=strings["voter_id"][0], voter=strings["voter_id"][1],
        redacted=flags(*([r.get(f) is True for r in records] if f in seen else np.zeros(len(records), bool)
                         for f in FLAG_FIELDS)),
        asker=is_asker(encode([r.get(SUBJECT_SOURCE_FIELD) for r in records])),
    )



def parse_lines_python(data: bytes, origin: str, *, texts: bool = False) -> RawColumns:
    """JSON lines with the standard library: NaN tokens accepted, bad lines counted."""
    records: list[dict[str, Any]] = []
    malformed = 0
    for _, record in json_lines(data):
        if isinstance(record, dict):
            records.append(record)
        else:
            malformed += 1
    if malformed and not records:
        raise LeaderboardInputError(f"{origin}: not JSON lines ({malformed} unreadable line(s))")
    return records_to_raw(records, origin, {"malformed JSON line": malformed} if malformed else None,
                          texts=texts)


def leading_keys(data: memoryview) -> set[str] | None:
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


# Below this many bytes the standard library is quicker than starting DuckDB and pyarrow:
# the usual case of the columnar copy, which parses the last minute of votes.
SMALL_INPUT_BYTES = 2 << 20


def parse_lines(data: bytes | memoryview, origin: str, *, texts: bool = False,
                whole_file: Path | None = None) -> RawColumns:
    """Parse complete JSON lines (any buffer holding whole lines, e.g. a memory map).

    ``whole_file``: a file whose content is exactly ``data`` (the fast reader then reads it
    itself instead of a temporary copy)."""
    view = memoryview(data)
    if len(view) < SMALL_INPUT_BYTES:
        return parse_lines_python(bytes(view), origin, texts=texts)
    from sciarena.votes.read.duck import read_lines  # start-up time: DuckDB loads only for large files

    seen = leading_keys(view)
    parsed = read_lines(view, seen, origin, texts=texts, whole_file=whole_file) if seen else None
    return parsed if parsed is not None else parse_lines_python(bytes(view), origin, texts=texts)


def parse_json_array(text: bytes, origin: str, *, texts: bool = False) -> RawColumns:
    """A JSON document holding an array of vote records (NaN tokens accepted)."""
    try:
        records = json.loads(text)
    except ValueError as err:
        raise LeaderboardInputError(f"{origin}: not valid JSON ({err})") from None
    if not isinstance(records, list):
        raise LeaderboardInputError(f"{origin}: expected a JSON array of vote records")
    usable = [r for r in records if isinstance(r, dict)]
    malformed = len(records) - len(usable)
    return records_to_raw(usable, origin, {"non-object JSON element": malformed} if malformed else None,
                          texts=texts)


def parse_bytes(data: bytes, origin: str, *, texts: bool = False, whole_file: Path | None = None) -> RawColumns:
    """A .json file's content: a JSON array, or JSON lines when it is not one."""
    head = data[:4096].lstrip()
    if head.startswith(b"["):
        return parse_json_array(data, origin, texts=texts)
    if head.startswith(b"{"):
        return parse_lines(data, origin, texts=texts, whole_file=whole_file)
    if not head:
        return empty_raw()
    raise LeaderboardInputError(f"{origin}: not a JSON array or JSON lines file")

"""Arrow tables → :class:`RawColumns`: the columnar half of the vote readers.

Two kinds of table arrive here: Parquet files (native types, read column-projected), and
DuckDB's read of JSON lines (``duck.py``), where every field comes as its JSON text so that a
value's JSON type decides how it is read, exactly as the standard-library path
(``parse.records_to_raw``) decides: strings are decoded and stripped in Python on the (small)
vocabularies, a number is a JSON number and nothing else, timestamps are read like
``fields.timestamp_of`` (common ISO 8601 forms vectorised by ``fields.iso_seconds``), ids become
``raw.id_fingerprints`` of their JSON text. pyarrow is imported inside the functions,
keeping it off the import path of everything else.
"""

from __future__ import annotations

import json
import math
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Collection

import numpy as np

from sciarena.core.errors import LeaderboardInputError
from sciarena.votes.read.fields import (
    ALIASES,
    DERIVED,
    FLAG_FIELDS,
    NUMERIC_SOURCES,
    STRING_FIELDS,
    SUBJECT_SOURCE_FIELD,
    check_fields,
    iso_seconds,
    key_of,
    timestamp_of,
)
from sciarena.votes.read.raw import NUMERIC_COLUMNS, RawColumns, fingerprints_of, flags, id_fingerprints, is_asker


def _values(array: Any, dtype: Any, fill: float) -> np.ndarray:
    """A primitive pyarrow array's values as numpy, ``fill`` where null.

    Read from the buffers: pyarrow's own to_numpy imports pandas (half a second)
    as soon as an array has nulls."""
    n = len(array)
    data = array.buffers()[1]
    values = np.frombuffer(data, dtype=dtype)[array.offset:array.offset + n] if data is not None \
        else np.zeros(n, dtype=dtype)
    values = values.astype(np.result_type(dtype, type(fill)))
    if array.null_count:
        values[~_valid(array)] = fill
    return values


def _valid(array: Any) -> np.ndarray:
    n = len(array)
    if not array.null_count:
        return np.ones(n, dtype=bool)
    bits = np.frombuffer(array.buffers()[0], dtype=np.uint8)
    return np.unpackbits(bits, bitorder="little")[array.offset:array.offset + n].astype(bool)


def _flags(array: Any) -> np.ndarray:
    """A boolean pyarrow array as numpy, False where null."""
    import pyarrow as pa

    return _values(_chunk(array).cast(pa.uint8()), np.uint8, 0).astype(bool)


def _indices(rows: np.ndarray) -> Any:
    """Row numbers as an Arrow array, built from the buffer (pa.array of numpy imports pandas)."""
    import pyarrow as pa

    rows = np.ascontiguousarray(rows, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), len(rows), [None, pa.py_buffer(rows)])


def _chunk(col: Any) -> Any:
    import pyarrow as pa

    col = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    if pa.types.is_dictionary(col.type):  # pandas categoricals in Parquet
        col = col.cast(col.type.value_type)
    return col


def _floats(col: Any) -> np.ndarray:
    """A numeric (or null) column as float64 with NaN for nulls."""
    import pyarrow as pa
    import pyarrow.compute as pc

    return _values(_chunk(pc.cast(col, pa.float64())), np.float64, np.nan)


def _is_text(kind: Any) -> bool:
    import pyarrow as pa

    return bool(pa.types.is_string(kind) or pa.types.is_large_string(kind))


def _text_buffers(array: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(offsets, bytes, valid) of a string array, as numpy views."""
    import pyarrow as pa

    text = array if pa.types.is_string(array.type) else array.cast(pa.large_string())
    n = len(text)
    buffers = text.buffers()
    width = np.int32 if pa.types.is_string(text.type) else np.int64
    offsets = np.frombuffer(buffers[1], dtype=width)[text.offset:text.offset + n + 1].astype(np.int64)
    data = np.frombuffer(buffers[2], dtype=np.uint8) if buffers[2] is not None else np.empty(0, np.uint8)
    return offsets, data, _valid(text)


def _first_bytes(offsets: np.ndarray, data: np.ndarray) -> np.ndarray:
    """Each text's first byte (0 for an empty text)."""
    if not len(data):
        return np.zeros(len(offsets) - 1, dtype=np.uint8)
    first = data[np.minimum(offsets[:-1], len(data) - 1)]
    return np.where(np.diff(offsets) > 0, first, np.uint8(0))


def _strings(col: Any, n: int, decode: bool, lower: bool = False) -> tuple[tuple[str, ...], np.ndarray]:
    """Codes as ``raw.encode`` gives them: str.strip(), blanks and non-strings → -1."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if col is None or not _is_text(_chunk(col).type):
        return (), np.full(n, -1, dtype=np.int32)
    encoded = pc.dictionary_encode(_chunk(col))
    index: dict[str, int] = {}
    remap = []
    for word in encoded.dictionary.to_pylist():
        value = _json_value(word) if decode else word
        text = value.strip() if isinstance(value, str) else ""
        remap.append(index.setdefault(text, len(index)) if text else -1)
    table_map = np.array(remap + [-1], dtype=np.int32)
    codes = _values(encoded.indices.cast(pa.int64()), np.int64, -1)
    words = tuple(w.lower() for w in index) if lower else tuple(index)
    return words, table_map[codes]


def _json_value(text: str) -> object:
    try:
        return json.loads(text)
    except ValueError:  # DuckDB writes a NaN token as nan: not a string, as NaN is not for json.loads
        return None


def _number(col: Any, decode: bool) -> np.ndarray | None:
    """Floats where the value is a number, NaN elsewhere (as fields.number_of reads values)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    col = _chunk(col)
    if decode and _is_text(col.type):
        offsets, data, valid = _text_buffers(col)
        first = _first_bytes(offsets, data)
        # a JSON number's text starts with a digit or "-" (true, "12", [1], nan are not numbers)
        rows = np.flatnonzero(valid & (((first >= 48) & (first <= 57)) | (first == 45)))
        values = np.full(len(col), np.nan)
        values[rows] = _floats(pc.cast(col.take(_indices(rows)), pa.float64()))
        return values
    if pa.types.is_integer(col.type) or pa.types.is_floating(col.type) or pa.types.is_null(col.type):
        return _floats(col)
    return None  # booleans, text, …: NaN, as fields.number_of reads them


def _derived(col: Any) -> np.ndarray | None:
    import pyarrow as pa
    import pyarrow.compute as pc

    col = _chunk(col)
    if _is_text(col.type):
        return _floats(pc.utf8_length(col))
    if pa.types.is_list(col.type) or pa.types.is_large_list(col.type):
        return _floats(pc.list_value_length(col))
    if pa.types.is_integer(col.type) or pa.types.is_null(col.type):  # counted by the reader already
        return _floats(col)
    return None


def _timestamps(col: Any, decode: bool) -> np.ndarray | None:
    """Seconds since the epoch, NaN where ``fields.timestamp_of`` gives NaN."""
    import pyarrow as pa
    import pyarrow.compute as pc

    col = _chunk(col)
    if decode and _is_text(col.type):
        numbers = _number(col, decode=True)
        offsets, data, valid = _text_buffers(col)
        seconds, rest = iso_seconds(offsets, data, valid, quoted=True)
        rest = rest[_first_bytes(offsets, data)[rest] == ord('"')]  # numbers are done
        for row in rest:  # other forms, escapes: one by one
            value = _json_value(col[int(row)].as_py())
            seconds[row] = timestamp_of(value) if isinstance(value, str) else math.nan
        return np.where(np.isnan(seconds), numbers, seconds)
    if _is_text(col.type):
        return _texts_to_seconds(col)
    if pa.types.is_timestamp(col.type):
        return _floats(pc.cast(pc.cast(col, pa.timestamp("us")), pa.int64())) / 1e6
    return _number(col, decode=False)


def _texts_to_seconds(array: Any) -> np.ndarray:
    offsets, data, valid = _text_buffers(array)
    seconds, rest = iso_seconds(offsets, data, valid)
    if len(rest):  # forms the vectorised reader does not take: one by one
        seconds[rest] = [timestamp_of(array[int(row)].as_py()) for row in rest]
    return seconds


def _true(col: Any, n: int, decode: bool) -> np.ndarray:
    """True where the value is the boolean true (as ``value is True`` reads a record); else False."""
    import pyarrow as pa

    if col is None:
        return np.zeros(n, dtype=bool)
    col = _chunk(col)
    if decode and _is_text(col.type):
        offsets, data, valid = _text_buffers(col)
        # JSON text exactly "true": four bytes starting with "t" (DuckDB writes JSON minified)
        return valid & (np.diff(offsets) == 4) & (_first_bytes(offsets, data) == ord("t"))
    if pa.types.is_boolean(col.type):
        return _flags(col)
    return np.zeros(n, dtype=bool)


def _ids(col: Any, n: int, decode: bool) -> np.ndarray:
    col = _chunk(col) if col is not None else None
    if col is None:
        return np.zeros(n, dtype=np.uint64)
    if decode and _is_text(col.type):
        return id_fingerprints(*_text_buffers(col))
    return fingerprints_of([None if v is None else json.dumps(v, ensure_ascii=False, default=str)
                            for v in col.to_pylist()])


def _numeric(table: Any, name: str, decode: bool, unread: Collection[str]) -> tuple[np.ndarray | None, bool]:
    """(values of one numeric column or None, whether nothing was left underived for want of texts)."""
    names = set(table.column_names)
    values: np.ndarray | None = None
    for key in NUMERIC_SOURCES[name]:  # first recorded key per row, as the Python path
        if key in names and (found := _number(table.column(key), decode)) is not None:
            values = found if values is None else np.where(np.isnan(values), found, values)
    source = DERIVED.get(name)
    if source is None or (values is not None and not np.isnan(values).any()):
        return values, True
    fallback = _derived(table.column(source)) if source in names else None
    if fallback is not None:
        values = fallback if values is None else np.where(np.isnan(values), fallback, values)
    return values, source not in unread


def arrow_to_raw(table: Any, origin: str, *, decode: bool = False,
                 unread: Collection[str] = ()) -> RawColumns:
    """A pyarrow Table → raw columns.

    ``decode``: the columns hold each value's JSON text (DuckDB's read of JSON lines); else
    native types (Parquet). ``unread``: derivation sources (answers, citation lists) the file has
    but the reader skipped; a value that would be derived from one stays NaN and the result is
    marked incomplete. Columns are converted on a thread each (numpy and Arrow release the GIL)."""
    names = set(table.column_names)
    check_fields(names, origin)
    n = table.num_rows
    keys = {name: key_of(name, names) for name in ALIASES}
    column = lambda name: table.column(keys[name]) if keys[name] else None  # noqa: E731
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        numbers = [pool.submit(_numeric, table, name, decode, unread) for name in NUMERIC_COLUMNS]
        strings = {f: pool.submit(_strings, column(f), n, decode, f == "vote") for f in STRING_FIELDS}
        stamps = pool.submit(_timestamps, column("timestamp"), decode) if keys["timestamp"] else None
        ids = pool.submit(_ids, column("id"), n, decode)
        redacted = [pool.submit(_true, table.column(f) if f in names else None, n, decode) for f in FLAG_FIELDS]
        sources = pool.submit(_strings, table.column(SUBJECT_SOURCE_FIELD) if SUBJECT_SOURCE_FIELD in names
                              else None, n, decode)
        numeric = np.full((n, len(NUMERIC_COLUMNS)), np.nan, dtype=np.float32)
        complete = True
        for k, future in enumerate(numbers):
            values, done = future.result()
            complete &= done
            if values is not None:
                numeric[:, k] = values
        text = {f: future.result() for f, future in strings.items()}
        timestamp = np.full(n, np.nan) if stamps is None or (got := stamps.result()) is None else got
        fingerprints = ids.result()
        either = flags(*(future.result() for future in redacted))
        asker = is_asker(sources.result())
    (models_a, a), (models_b, b) = text["modelA"], text["modelB"]
    models = tuple(dict.fromkeys(models_a + models_b))
    index = {m: i for i, m in enumerate(models)}
    remap_b = np.array([index[m] for m in models_b] + [-1], dtype=np.int32)
    return RawColumns(
        models=models, model_a=a, model_b=remap_b[b], labels=text["vote"][0], vote=text["vote"][1],
        subjects=text["subject"][0], subject=text["subject"][1],
        question_types=text["question_type"][0], question_type=text["question_type"][1],
        numeric=numeric, timestamp=timestamp, ids=fingerprints, complete=complete,
        voters=text["voter_id"][0], voter=text["voter_id"][1], redacted=either, asker=asker)


def read_parquet(path: Path, *, texts: bool = False) -> RawColumns:
    """A Parquet file, reading only the columns needed (answer texts only with ``texts``)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        available = set(pq.read_schema(path).names)
        wanted = {k for keys in ALIASES.values() for k in keys}
        wanted |= {k for keys in NUMERIC_SOURCES.values() for k in keys} | set(FLAG_FIELDS) | {SUBJECT_SOURCE_FIELD}
        wanted |= set(DERIVED.values()) if texts else set()
        table = pq.read_table(path, columns=sorted(wanted & available))
    except (OSError, pa.ArrowException) as err:
        raise LeaderboardInputError(f"{path}: unreadable Parquet file ({err})") from None
    return arrow_to_raw(table, str(path), unread=set(DERIVED.values()) & available - wanted)

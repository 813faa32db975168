"""The pyarrow side of reading votes: JSON lines of our schema and Parquet.

pyarrow's C++ JSON reader is given an explicit schema naming only the fields the
leaderboard uses, so nothing else is materialised. The result must equal the
standard-library path's (``parse.records_to_raw``): strings are stripped and
lower-cased in Python on the (small) vocabularies, timestamps are read exactly
like ``fields.timestamp_of`` (common ISO 8601 forms vectorised by
``fields.iso_seconds``, the rest one by one), and when a value cannot be
reproduced from the columns read (a length to derive from an answer text that was
not read) the reader returns None so the caller uses the standard library.
pyarrow is imported inside the functions, keeping it off the import path of
everything else.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Collection

import numpy as np

from sciarena.errors import LeaderboardInputError
from sciarena.leaderboard.data import NUMERIC_COLUMNS, RawColumns
from sciarena.leaderboard.fields import (
    DERIVED, NUMERIC_SOURCES, REQUIRED, STRING_FIELDS, check_fields, iso_seconds, timestamp_of,
)


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
        bits = np.frombuffer(array.buffers()[0], dtype=np.uint8)
        valid = np.unpackbits(bits, bitorder="little")[array.offset:array.offset + n].astype(bool)
        values[~valid] = fill
    return values


def _floats(col: Any) -> np.ndarray:
    """A numeric (or null) column as float64 with NaN for nulls."""
    import pyarrow as pa
    import pyarrow.compute as pc

    array = pc.cast(col, pa.float64())
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    return _values(array, np.float64, np.nan)


def _is_text(kind: Any) -> bool:
    import pyarrow as pa

    return bool(pa.types.is_string(kind) or pa.types.is_large_string(kind))


def _undictionary(col: Any) -> Any:
    """Dictionary-encoded columns (pandas categoricals in Parquet) as plain values."""
    import pyarrow as pa

    if pa.types.is_dictionary(col.type):
        return col.cast(col.type.value_type)
    return col


def _strings(table: Any, name: str, lower: bool) -> tuple[tuple[str, ...], np.ndarray]:
    """Codes as ``data.encode`` gives them: str.strip(), blanks and non-strings → -1."""
    import pyarrow as pa
    import pyarrow.compute as pc

    n = table.num_rows
    col = _undictionary(table.column(name)) if name in table.column_names else None
    if col is None or not _is_text(col.type):
        return (), np.full(n, -1, dtype=np.int32)
    encoded = pc.dictionary_encode(col).combine_chunks()
    index: dict[str, int] = {}
    remap = []
    for word in encoded.dictionary.to_pylist():
        text = word.strip()
        remap.append(index.setdefault(text, len(index)) if text else -1)
    table_map = np.array(remap + [-1], dtype=np.int32)
    codes = _values(encoded.indices.cast(pa.int64()), np.int64, -1)
    words = tuple(w.lower() for w in index) if lower else tuple(index)
    return words, table_map[codes]


def _number(col: Any) -> np.ndarray | None:
    import pyarrow as pa

    if pa.types.is_integer(col.type) or pa.types.is_floating(col.type) or pa.types.is_null(col.type):
        return _floats(col)
    return None  # booleans, text, …: NaN, as fields.number_of reads them


def _derived(col: Any) -> np.ndarray | None:
    import pyarrow as pa
    import pyarrow.compute as pc

    if _is_text(col.type):
        return _floats(pc.utf8_length(col))
    if pa.types.is_list(col.type) or pa.types.is_large_list(col.type):
        return _floats(pc.list_value_length(col))
    return None


def _timestamps(col: Any) -> np.ndarray | None:
    """Seconds since the epoch, NaN where ``fields.timestamp_of`` gives NaN."""
    import pyarrow as pa
    import pyarrow.compute as pc

    col = _undictionary(col)
    if _is_text(col.type):
        array = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
        text = array.cast(pa.large_string())
        n = len(text)
        buffers = text.buffers()
        offsets = np.frombuffer(buffers[1], dtype=np.int64)[text.offset:text.offset + n + 1]
        data = np.frombuffer(buffers[2], dtype=np.uint8) if buffers[2] is not None \
            else np.empty(0, dtype=np.uint8)
        valid = _values(text.is_valid().cast(pa.uint8()), np.uint8, 0).astype(bool)
        seconds, rest = iso_seconds(offsets, data, valid)
        if len(rest):  # forms the vectorised reader does not take: one by one
            texts = [array[int(row)].as_py() for row in rest]
            seconds[rest] = [timestamp_of(text) for text in texts]
        return seconds
    if pa.types.is_timestamp(col.type):
        return _floats(pc.cast(pc.cast(col, pa.timestamp("us")), pa.int64())) / 1e6
    return _number(col)


def arrow_to_raw(table: Any, origin: str, unread: Collection[str] = ()) -> RawColumns | None:
    """A pyarrow Table (from JSON lines or Parquet) → raw columns.

    ``unread`` names record fields that may exist but were not read: when a value
    would have to be derived from one of them, None is returned (use the
    standard-library path)."""
    names = set(table.column_names)
    check_fields(names, origin)
    n = table.num_rows
    numeric = np.full((n, len(NUMERIC_COLUMNS)), np.nan, dtype=np.float32)
    for k, name in enumerate(NUMERIC_COLUMNS):
        values: np.ndarray | None = None
        for key in NUMERIC_SOURCES[name]:  # first recorded key per row, as the Python path
            if key in names and (found := _number(table.column(key))) is not None:
                values = found if values is None else np.where(np.isnan(values), found, values)
        source = DERIVED.get(name)
        if source is not None and (values is None or np.isnan(values).any()):
            if source in unread:
                return None
            fallback = _derived(table.column(source)) if source in names else None
            if fallback is not None:
                values = fallback if values is None else np.where(np.isnan(values), fallback, values)
        if values is not None:
            numeric[:, k] = values
    stamps = _timestamps(table.column("timestamp")) if "timestamp" in names else None
    models_a, a = _strings(table, "modelA", lower=False)
    models_b, b = _strings(table, "modelB", lower=False)
    models = tuple(dict.fromkeys(models_a + models_b))
    index = {m: i for i, m in enumerate(models)}
    remap_b = np.array([index[m] for m in models_b] + [-1], dtype=np.int32)
    labels, vote = _strings(table, "vote", lower=True)
    subjects, subject = _strings(table, "subject", lower=False)
    qtypes, qtype = _strings(table, "question_type", lower=False)
    return RawColumns(models, a, remap_b[b], labels, vote, subjects, subject, qtypes, qtype,
                      numeric, np.full(n, np.nan) if stamps is None else stamps, {})


def fast_schema(seen: Collection[str]) -> Any | None:
    """The pyarrow schema for JSON lines of our schema, or None to use the Python path.

    ``seen``: the keys of the first records, which decide (as in the Python path)
    which alternative numeric keys are read."""
    import pyarrow as pa

    keys = set(seen)
    has_counts = all(any(k in keys for k in NUMERIC_SOURCES[name]) for name in DERIVED)
    if not set(REQUIRED) <= keys or not has_counts:
        return None  # released schema: lengths come from the texts, read in Python
    fields = [pa.field(f, pa.string()) for f in STRING_FIELDS]
    for sources in NUMERIC_SOURCES.values():
        fields += [pa.field(key, pa.float64()) for key in sources if key in keys]
    fields.append(pa.field("timestamp", pa.string()))
    return pa.schema(fields)


def read_lines(data: memoryview, schema: Any, origin: str) -> RawColumns | None:
    """JSON lines through pyarrow's reader; None when it rejects them or cannot give the
    standard library's result (then use the Python path)."""
    import pyarrow as pa
    import pyarrow.json as pj

    try:
        table = pj.read_json(
            pa.BufferReader(pa.py_buffer(data)),
            read_options=pj.ReadOptions(use_threads=True, block_size=1 << 24),
            parse_options=pj.ParseOptions(explicit_schema=schema,
                                          unexpected_field_behavior="ignore"),
        )
    except (pa.ArrowException, ValueError):  # ValueError: invalid UTF-8 surfaces as one
        return None
    return arrow_to_raw(table, origin, unread=set(DERIVED.values()))


def read_parquet(path: Path) -> RawColumns:
    """A Parquet file, reading only the columns the leaderboard needs."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        available = set(pq.read_schema(path).names)
        wanted = set(STRING_FIELDS) | set(DERIVED.values()) | {"timestamp"}
        wanted |= {k for keys in NUMERIC_SOURCES.values() for k in keys}
        table = pq.read_table(path, columns=sorted(wanted & available))
    except (OSError, pa.ArrowException) as err:
        raise LeaderboardInputError(f"{path}: unreadable Parquet file ({err})") from None
    raw = arrow_to_raw(table, str(path))
    assert raw is not None  # every derivation source present in the file was read
    return raw

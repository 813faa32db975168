"""The pyarrow side of reading votes: JSON lines of our schema and Parquet.

pyarrow's C++ JSON reader is given an explicit schema naming only the fields the
leaderboard uses, so nothing else is materialised; pyarrow is imported inside the
functions, keeping it off the import path of everything else.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

import numpy as np

from sciarena.errors import LeaderboardInputError
from sciarena.leaderboard.data import NUMERIC_COLUMNS, RawColumns
from sciarena.leaderboard.fields import DERIVED, NUMERIC_SOURCES, REQUIRED, STRING_FIELDS, check_fields


def arrow_to_raw(table: Any, origin: str) -> RawColumns:
    """A pyarrow Table (from JSON lines or Parquet) → raw columns."""
    import pyarrow as pa
    import pyarrow.compute as pc

    names = set(table.column_names)
    check_fields(names, origin)

    def strings(name: str, lower: bool = False) -> tuple[tuple[str, ...], np.ndarray]:
        if name not in names:
            return (), np.full(table.num_rows, -1, dtype=np.int32)
        col = table.column(name)
        if not pa.types.is_string(col.type) and not pa.types.is_large_string(col.type):
            col = pc.cast(col, pa.string())
        col = pc.utf8_trim_whitespace(col)
        if lower:
            col = pc.utf8_lower(col)
        col = pc.if_else(pc.equal(col, ""), pa.scalar(None, pa.string()), col)
        encoded = pc.dictionary_encode(col).combine_chunks()
        codes = encoded.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int32)
        return tuple(encoded.dictionary.to_pylist()), codes

    def derived(name: str) -> np.ndarray | None:
        source = DERIVED.get(name)
        if source not in names:
            return None
        col = table.column(source)
        if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
            return _floats(pc.utf8_length(col))
        if pa.types.is_list(col.type) or pa.types.is_large_list(col.type):
            return _floats(pc.list_value_length(col))
        return None

    def number(name: str) -> np.ndarray | None:
        """First recorded key per row (as in the Python path), else the derived value."""
        values: np.ndarray | None = None
        for key in NUMERIC_SOURCES[name]:
            if key in names and (found := _arrow_number(table.column(key))) is not None:
                values = found if values is None else np.where(np.isnan(values), found, values)
        if values is None or np.isnan(values).any():
            fallback = derived(name)
            if fallback is not None:
                values = fallback if values is None else np.where(np.isnan(values), fallback, values)
        return values

    numeric = np.full((table.num_rows, len(NUMERIC_COLUMNS)), np.nan, dtype=np.float32)
    for k, name in enumerate(NUMERIC_COLUMNS):
        values = number(name)
        if values is not None:
            numeric[:, k] = values
    stamps = None
    if "timestamp" in names:
        stamps = _arrow_timestamp(table.column("timestamp"))
    (models_a, a), (models_b, b) = strings("modelA"), strings("modelB")
    models = tuple(dict.fromkeys(models_a + models_b))
    index = {m: i for i, m in enumerate(models)}
    remap_b = np.array([index[m] for m in models_b] + [-1], dtype=np.int32)
    labels, vote = strings("vote", lower=True)
    subjects, subject = strings("subject")
    qtypes, qtype = strings("question_type")
    return RawColumns(models, a, remap_b[b], labels, vote, subjects, subject, qtypes, qtype,
                      numeric, np.full(table.num_rows, np.nan) if stamps is None else stamps, {})


def _floats(col: Any) -> np.ndarray:
    import pyarrow as pa
    import pyarrow.compute as pc

    return pc.cast(col, pa.float64()).to_numpy(zero_copy_only=False).astype(np.float64)


def _arrow_timestamp(col: Any) -> np.ndarray | None:
    """ISO 8601 strings (UTC when no offset), timestamps or epoch seconds → float seconds."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
        for target in (pa.timestamp("us", tz="UTC"), pa.timestamp("us")):
            try:
                col = pc.cast(col, target)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                continue
            break
        else:
            return None
    if pa.types.is_timestamp(col.type):
        return _floats(pc.cast(pc.cast(col, pa.timestamp("us")), pa.int64())) / 1e6
    return _arrow_number(col)


def _arrow_number(col: Any) -> np.ndarray | None:
    import pyarrow as pa

    if pa.types.is_integer(col.type) or pa.types.is_floating(col.type) or pa.types.is_null(col.type):
        return _floats(col)
    return None


def fast_schema(first: Mapping[str, Any]) -> Any | None:
    """The pyarrow schema for JSON lines of our schema, or None to use the Python path."""
    import pyarrow as pa

    needed = set(REQUIRED) | {"length_a", "length_b", "num_citations_a", "num_citations_b"}
    if not needed <= set(first):
        return None  # released schema: lengths come from the texts, read in Python
    fields = [pa.field(f, pa.string()) for f in STRING_FIELDS]
    for keys in NUMERIC_SOURCES.values():
        fields += [pa.field(key, pa.float64()) for key in keys if key in first]
    if "timestamp" in first:
        fields.append(pa.field("timestamp", pa.string()))
    return pa.schema(fields)


def read_lines(data: memoryview, schema: Any, origin: str) -> RawColumns | None:
    """JSON lines through pyarrow's reader; None when it rejects them (use the Python path)."""
    import pyarrow as pa
    import pyarrow.json as pj

    try:
        table = pj.read_json(
            pa.BufferReader(pa.py_buffer(data)),
            read_options=pj.ReadOptions(use_threads=True, block_size=1 << 24),
            parse_options=pj.ParseOptions(explicit_schema=schema,
                                          unexpected_field_behavior="ignore"),
        )
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    return arrow_to_raw(table, origin)


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
    return arrow_to_raw(table, str(path))

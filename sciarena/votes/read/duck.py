"""Large JSON-lines vote files through DuckDB's JSON reader, reading only the fields needed.

Why DuckDB. Parsing a million votes is dominated by the bytes of answers and citations the
leaderboard never reads. DuckDB's reader, given the columns to keep, skips the rest without
materialising it and runs on every core: on the benchmark's 972 MB file it parses and converts
in about half the time pyarrow's JSON reader needs just to parse (``benchmarks/bench_leaderboard.py``,
section 4: 1.8 s against 3.1 s on 2 shared cores).
Every field is requested as JSON, so a value's JSON type still decides how it is read
(``arrow_io.arrow_to_raw(decode=True)``) and the result equals the standard-library path's;
answer texts are requested only when ``texts`` asks for lengths (as ``length(...)``, counted by
DuckDB without building Python strings) and citation lists only as their lengths. Any line
DuckDB rejects (malformed JSON, invalid UTF-8, a citation field that is not a list, a repeated
key) makes this reader decline, and the standard library reads the file, counting bad lines.
"""

from __future__ import annotations

import logging
import os
import tempfile
from pathlib import Path
from typing import Any, Collection

from sciarena.votes.read.arrow_io import arrow_to_raw
from sciarena.votes.read.fields import (
    ALIASES,
    DERIVED,
    FLAG_FIELDS,
    NUMERIC_SOURCES,
    REQUIRED,
    SUBJECT_SOURCE_FIELD,
    key_of,
)
from sciarena.votes.read.raw import RawColumns

log = logging.getLogger(__name__)

_LISTS = {"citations_a", "citations_b"}


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def query(path: Path, seen: Collection[str], texts: bool) -> tuple[str, set[str]]:
    """(SQL selecting the needed fields of ``path``, derivation sources present but not read)."""
    keys = set(seen)
    wanted = {k for name in ALIASES if (k := key_of(name, keys))}
    wanted |= {k for sources in NUMERIC_SOURCES.values() for k in sources if k in keys}
    wanted |= {k for k in FLAG_FIELDS + (SUBJECT_SOURCE_FIELD,) if k in keys}
    derived = {source for source in DERIVED.values() if source in keys}
    columns = {k: "JSON" for k in sorted(wanted)}
    select = [f"{_quoted(k)}::VARCHAR AS {_quoted(k)}" for k in sorted(wanted)]
    if texts:
        for source in sorted(derived):
            columns[source] = "JSON[]" if source in _LISTS else "VARCHAR"
            select.append(f"length({_quoted(source)}) AS {_quoted(source)}")
    spec = "{" + ", ".join(f"{_literal(k)}: {_literal(v)}" for k, v in columns.items()) + "}"
    sql = (f"SELECT {', '.join(select)} FROM read_json({_literal(str(path))}, "
           f"format='newline_delimited', columns={spec})")
    return sql, set() if texts else derived


def read_lines(data: memoryview, seen: Collection[str], origin: str, *, texts: bool = False,
               whole_file: Path | None = None) -> RawColumns | None:
    """Raw columns of complete JSON lines, or None when DuckDB rejects them (use the Python path).

    ``whole_file`` holds exactly ``data``; otherwise the bytes go to a temporary file first."""
    if not all(key_of(name, seen) for name in REQUIRED):
        return None  # the Python path raises the message naming the missing fields
    if whole_file is not None:
        size = whole_file.stat().st_size
        table = _run(whole_file, seen, texts)
        if whole_file.stat().st_size == size:  # else a writer appended while DuckDB read: read the bytes given
            return None if table is None else arrow_to_raw(table[0], origin, decode=True, unread=table[1])
    fd, temporary = tempfile.mkstemp(prefix="sciarena-votes-", suffix=".jsonl")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        table = _run(Path(temporary), seen, texts)
    finally:
        Path(temporary).unlink(missing_ok=True)
    return None if table is None else arrow_to_raw(table[0], origin, decode=True, unread=table[1])


def _run(path: Path, seen: Collection[str], texts: bool) -> tuple[Any, set[str]] | None:
    import duckdb

    sql, unread = query(path, seen, texts)
    with duckdb.connect() as connection:
        connection.execute("SET enable_progress_bar = false")  # it would write to stdout, into the CLI's JSON
        try:
            return connection.sql(sql).to_arrow_table(), unread
        except duckdb.Error as err:  # a line it cannot take: the standard library reads the file and counts it
            log.info("%s: fast reader declined (%s); reading it line by line", path.name, str(err)[:200])
            return None

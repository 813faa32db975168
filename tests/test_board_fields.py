"""The per-discipline views say how their fields were decided: the share of votes whose field the asker
set (``subject_source`` "asker", read by every vote reader) and the labeller's measured accuracy."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from sciarena.arena.labels.discipline_text import FRESH_ACCURACY, FRESH_QUESTIONS
from sciarena.board.fields import fields_by_discipline, fields_line
from sciarena.board.table import read_table, table_from_arrays, vote_table
from sciarena.votes.read import read_columns
from sciarena.votes.read.arrow_io import read_parquet
from sciarena.votes.read.duck import read_lines
from sciarena.votes.read.parse import SMALL_INPUT_BYTES, leading_keys, parse_lines_python

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ["asker", "labeller", " asker ", None, "model", 3, "Asker"]  # only "asker" (stripped) counts


def _rows(n: int) -> list[dict]:
    return [{"id": f"v{k}", "modelA": "Alpha", "modelB": "Beta", "vote": "AB"[k % 2], "padding": "x" * 400,
             "subject": "Healthcare" if k % 3 else "Engineering", "subject_source": SOURCES[k % len(SOURCES)]}
            for k in range(n)]


def _expected(rows: list[dict]) -> list[bool]:
    return [isinstance(r["subject_source"], str) and r["subject_source"].strip() == "asker" for r in rows]


def test_every_reader_gives_the_same_asker_column(tmp_path):
    rows = _rows(6000)
    data = "".join(json.dumps(r) + "\n" for r in rows).encode()
    assert len(data) > SMALL_INPUT_BYTES
    view = memoryview(data)
    fast, slow = read_lines(view, leading_keys(view), "f"), parse_lines_python(data, "f")
    assert fast is not None, "DuckDB should take these lines"
    assert fast.asker.tolist() == slow.asker.tolist() == _expected(rows)
    path = tmp_path / "votes.jsonl"
    path.write_bytes(data)
    first, again = read_columns(path).columns, read_columns(path).columns  # the second through the copy
    assert first.asker.tolist() == again.asker.tolist() == _expected(rows)
    parquet = tmp_path / "votes.parquet"
    pq.write_table(pa.table({k: [r[k] if k != "subject_source" or isinstance(r[k], (str, type(None))) else None
                                 for r in rows[:50]] for k in ("id", "modelA", "modelB", "vote", "subject_source")}),
                   parquet)
    assert read_parquet(parquet).asker.tolist() == _expected(rows[:50])


def test_a_discipline_view_says_its_asker_set_share_and_the_labellers_fresh_accuracy(tmp_path):
    rows = _rows(30)  # Engineering: every third vote (10), Healthcare the other 20
    table = vote_table(rows)
    healthcare = table.subset(table.subject == table.subjects.index("Healthcare"))
    set_by_asker = sum(e for r, e in zip(rows, _expected(rows)) if r["subject"] == "Healthcare")
    labeller = f"the labeller is {100 * FRESH_ACCURACY:.1f}% accurate on {FRESH_QUESTIONS} fresh questions"
    assert fields_line(healthcare) == (f"Fields: {round(100 * set_by_asker / 20)}% of 20 votes in this view set by "
                                       f"the asker (the rest kept the labeller's proposal); {labeller} (written after it was frozen).")
    by = fields_by_discipline(table)
    engineering = sum(e for r, e in zip(rows, _expected(rows)) if r["subject"] == "Engineering")
    assert f"Engineering {round(100 * engineering / 10)}% of 10 votes, Healthcare" in by and labeller in by
    unknown = table_from_arrays(["A", "B"], [0], [1], [0])  # votes that never say who chose the field
    assert "do not record whether the asker set the field" in fields_line(unknown)


def test_the_leaderboard_command_prints_each_disciplines_asker_set_share(tmp_path):
    rows = _rows(30)
    path = tmp_path / "votes.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    done = subprocess.run([sys.executable, "-m", "sciarena", "leaderboard", "--votes", str(path), "--bootstrap", "0"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert fields_by_discipline(read_table(path)) in done.stdout.splitlines()
    assert "Fields set by the asker (the rest kept the labeller's proposal): Engineering" in done.stdout

"""Small things a user saw on the Leaderboard tab and in `stats` (issue 23, finding 9)."""

from __future__ import annotations

import dataclasses
import io
import json
from argparse import ArgumentParser

import numpy as np

from sciarena.board import table_from_arrays
from sciarena.board.board import build_board
from sciarena.cli import stats as stats_cli
from sciarena.core.text import counted
from sciarena.science.stats.stats import compute_stats
from sciarena.ui.board_data import bars_html, data_html
from sciarena.ui.board_parts import charts

LONG = "Llama-4-Maverick-17B-128E-Instruct-FP8-with-a-very-long-suffix"


def _dated(stamps):
    table = table_from_arrays(["x", "y", "z"], a=[0, 1, 2, 0], b=[1, 2, 0, 2], outcome=[0, 1, 0, 2])
    return dataclasses.replace(table, timestamp=np.asarray(stamps, dtype=float))


def test_over_time_says_why_it_is_empty_when_every_vote_is_from_one_day():
    day = 1_764_547_200.0  # 2025-12-01 00:00 UTC
    history = charts(build_board(_dated([day + 60 * k for k in range(4)]), bootstrap=0))["history"]
    assert "<svg" not in history and "cast in one day (up to 2025-12-01, UTC)" in history
    assert "at least two" in history
    undated = charts(build_board(_dated([np.nan] * 4), bootstrap=0))["history"]
    assert "No vote in this view carries a timestamp" in undated
    two_days = charts(build_board(_dated([day, day, day + 86_400, day + 86_400]), bootstrap=0))["history"]
    assert "<svg" in two_days


def test_counts_take_the_right_number():
    assert (counted(1, "day"), counted(2, "day"), counted(1_000, "vote")) == ("1 day", "2 days", "1,000 votes")


def test_stats_says_1_day_and_the_data_section_keeps_model_names_whole(tmp_path):
    records = [{"id": f"v{k}", "question": "q", "responseA": "a", "responseB": "b", "modelA": LONG,
                "modelB": "gpt-4.1-mini", "vote": "A", "citations_a": [], "citations_b": [],
                "question_type": None, "subject": None, "schema_version": 1,
                "timestamp": "2025-06-01T10:00:00Z"} for k in range(3)]
    path = tmp_path / "votes-1.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    out = io.StringIO()
    args = stats_cli.configure(ArgumentParser()).parse_args(["--votes", str(path), "--bootstrap", "0"])
    assert stats_cli.run(args, out, io.StringIO()) == 0
    assert "Votes per day (UTC; 1 day with votes," in out.getvalue() and "1 days" not in out.getvalue()
    html = data_html(compute_stats(records, bootstrap=0, min_battles=0))
    assert f">{LONG}</span>" in html and "…" not in html
    assert f">{LONG}</span>" in bars_html([LONG], [1.0], ["1"])

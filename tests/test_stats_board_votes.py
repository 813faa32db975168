"""The data statistics count the board's votes (issue 23, finding 2): the `stats` command, its JSON and the
Leaderboard tab's Data section leave out what the board leaves out, and say how many and why."""

from __future__ import annotations

import io
import json
from functools import partial
from pathlib import Path

import pytest

from sciarena import wiring
from sciarena.board import compute_leaderboard
from sciarena.board.service import BoardService
from sciarena.cli import stats as stats_cli
from sciarena.core.errors import LeaderboardInputError
from sciarena.science.quality.synthetic import planted_history, records_from_arrays
from sciarena.science.quality.vouch import load_votes, vouch_mask
from sciarena.science.stats.stats import compute_stats, to_dict
from sciarena.ui.board_data import data_html


@pytest.fixture(scope="module")
def votes(tmp_path_factory) -> tuple[Path, list[dict]]:
    planted = planted_history(honest_voters=40, planted_per_kind=3, kinds=("contrarian", "position_a"), seed=5)
    records = records_from_arrays(planted.votes)
    path = tmp_path_factory.mktemp("votes") / "votes-1.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path, records


def _board(path: Path):
    table = load_votes(str(path))
    return table, compute_leaderboard(table, bootstrap=0, by=())


def test_stats_count_the_votes_and_battles_the_board_counts(votes):
    path, records = votes
    table, board = _board(path)
    assert table.excluded.left_out > 0  # the planted voters are flagged: something to leave out
    stats = compute_stats(records, bootstrap=0)
    assert stats.records == len(records) and stats.votes == board.total_votes
    assert stats.left_out == table.excluded.left_out and stats.usable == len(records)
    assert {m.model: m.battles for m in stats.models} == {r.model: r.battles for r in board.rows}
    assert sum(stats.outcomes.values()) == board.total_votes
    assert stats.left_out_why == table.excluded.describe() and "flagged voter" in stats.left_out_why
    out = to_dict(stats)
    assert (out["counted_votes"], out["left_out_votes"], out["usable_votes"]) == (
        board.total_votes, table.excluded.left_out, len(records))
    counted = compute_stats(records, bootstrap=0, include_flagged=True, include_redacted=True)
    assert counted.votes == len(records) and counted.left_out == 0


def test_the_stats_command_says_which_votes_it_counts(votes, tmp_path):
    path, records = votes
    table, board = _board(path)
    out, err = io.StringIO(), io.StringIO()
    parser = stats_cli.configure(__import__("argparse").ArgumentParser())
    assert stats_cli.run(parser.parse_args(["--votes", str(path), "--bootstrap", "0"]), out, err) == 0
    text = out.getvalue()
    assert (f"Votes counted (the board's votes; every figure counts these): {board.total_votes:,} of "
            f"{len(records):,} records read") in text
    assert f"Usable votes left out, as on the board: {table.excluded.left_out:,}." in text
    assert "flagged voter" in text


def test_the_data_section_counts_the_boards_votes(votes):
    path, _ = votes
    service = BoardService(lambda: [path], vouch=vouch_mask, facts=dict, data_stats=wiring.data_stats,
                           data_min_battles=0, warm_style=False)
    snap = service.snapshot()
    shown = service.shown(snap)
    stats = service.data(snap)
    assert stats.votes == shown.table.n_votes and stats.left_out == shown.table.excluded.left_out > 0
    assert {m.model: m.battles for m in stats.models} == {r["model"]: r["battles"] for r in shown.rows}
    html = data_html(stats)
    assert (f"{stats.records:,} records, {stats.votes:,} of them votes counted on the board "
            f"({stats.left_out:,} usable votes left out)") in html
    anonymous = BoardService(lambda: [path], vouch=partial(vouch_mask, count_anonymous=False), facts=dict,
                             data_stats=wiring.data_stats, warm_style=False)  # SCIARENA_COUNT_ANONYMOUS=0
    with pytest.raises(LeaderboardInputError, match="without sign-in"):  # no voter here is signed in
        anonymous.data(anonymous.snapshot())

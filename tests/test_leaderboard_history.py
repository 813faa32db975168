"""The board as it stood (--as-of), the rating history and --rating, on synthetic votes whose
first model jumps from 800 to 1300 at the start of 2025-06-11."""

from __future__ import annotations

import json

import numpy as np
import pytest

from sciarena.board import table_from_arrays
from sciarena.board.history import as_of, boundary_label, parse_cutoff, rating_history
from sciarena.board.synthetic import simulate, write_jsonl
from sciarena.cli.leaderboard import main
from sciarena.core.errors import LeaderboardInputError
from sciarena.science.quality.vouch import load_votes

PER_PHASE = 3000


@pytest.fixture(scope="module")
def votes(tmp_path_factory):
    before = simulate([800, 1000, 1000], PER_PHASE, seed=1)
    after = simulate([1300, 1000, 1000], PER_PHASE, seed=2)
    table = table_from_arrays(before.models, np.r_[before.a, after.a], np.r_[before.b, after.b],
                              np.r_[before.outcome, after.outcome])
    days = [f"2025-06-{1 + i * 10 // PER_PHASE:02d}" for i in range(PER_PHASE)]
    days += [f"2025-06-{11 + i * 10 // PER_PHASE:02d}" for i in range(PER_PHASE)]
    path = tmp_path_factory.mktemp("votes") / "votes.jsonl"
    write_jsonl(table, path, day_of=days)
    return path


def board(capsys, votes, *extra):
    assert main(["--votes", str(votes), "--format", "json", "--min-battles", "0", "--bootstrap", "20",
                 "--by", "none", *extra]) == 0
    out = json.loads(capsys.readouterr().out)
    return out, {m["model"]: m for m in out["models"]}


def test_as_of_shows_the_change_after_its_day_and_not_before(capsys, votes):
    for day in ("2025-06-05", "2025-06-10"):
        out, models = board(capsys, votes, "--as-of", day)
        assert models["model-00"]["rank"] == 3 and models["model-00"]["rating"] < 900, day
    out, models = board(capsys, votes, "--as-of", "2025-06-10")
    assert out["total_votes"] == PER_PHASE
    out, models = board(capsys, votes, "--as-of", "2025-06-20")
    assert out["total_votes"] == 2 * PER_PHASE
    assert models["model-00"]["rating"] > 1000  # the later, stronger votes now outweigh the early ones
    out, models = board(capsys, votes, "--as-of", "2025-06-11T00:00:00Z")  # an instant: nothing of the 11th
    assert out["total_votes"] == PER_PHASE


def test_as_of_before_any_vote_or_garbage_is_a_clear_error(capsys, votes):
    assert main(["--votes", str(votes), "--as-of", "2025-05-01"]) == 2
    assert "no votes before 2025-05-02" in capsys.readouterr().err
    assert main(["--votes", str(votes), "--as-of", "June"]) == 2
    assert "expected a date" in capsys.readouterr().err


def test_history_steps_at_the_known_day(votes):
    hist = rating_history(load_votes(votes))
    assert hist.step == "day" and len(hist.boundaries) == 20
    labels = [boundary_label(t) for t in hist.boundaries]
    i = hist.models.index("model-00")
    on_10 = labels.index("2025-06-10")  # steps[on_10] is the change into 2025-06-11
    assert np.all(hist.ratings[: on_10 + 1, i] < 920)
    steps = np.diff(hist.ratings[:, i])  # steps[k]: change from boundary k to k + 1
    assert steps[on_10] > 20 and steps[on_10] > 3 * np.abs(steps[1:on_10]).max()
    assert hist.ratings[-1, i] > 1000
    assert hist.votes[on_10] == PER_PHASE and hist.votes[-1] == 2 * PER_PHASE


def test_history_matches_the_as_of_board(votes):
    table = load_votes(votes)
    hist = rating_history(table)
    from sciarena.board import compute_leaderboard

    cut = as_of(table, parse_cutoff("2025-06-13"))
    lb = compute_leaderboard(cut.table, bootstrap=0, by=())
    t = [boundary_label(b) for b in hist.boundaries].index("2025-06-13")
    for row in lb.rows:
        assert hist.ratings[t, hist.models.index(row.model)] == pytest.approx(row.rating, abs=1e-6)


def test_rating_point_shows_the_fitted_coefficient_with_the_same_interval(capsys, votes):
    _, mean = board(capsys, votes, "--rating", "bootstrap-mean")
    out, point = board(capsys, votes, "--rating", "point")
    assert out["rating"] == "point estimate"
    for name, row in point.items():
        assert row["rating"] == row["point_estimate"] == mean[name]["point_estimate"]
        assert (row["ci_lower"], row["ci_upper"]) == (mean[name]["ci_lower"], mean[name]["ci_upper"])
    assert any(point[n]["rating"] != mean[n]["rating"] for n in point)


def test_undated_votes_are_left_out_of_a_cutoff():
    table = simulate([900, 1100], 50)  # no timestamps
    with pytest.raises(LeaderboardInputError, match="no votes before"):
        as_of(table, parse_cutoff("2030-01-01"))
    assert rating_history(table) is None


def test_as_of_says_how_many_undated_votes_it_left_out(capsys, votes, tmp_path):
    lines = votes.read_text(encoding="utf-8").splitlines()
    undated = [json.loads(line) for line in lines[:7]]
    for k, record in enumerate(undated):
        record.update(id=f"undated-{k}", timestamp=None)
    path = tmp_path / "mixed.jsonl"
    path.write_text("\n".join(lines + [json.dumps(r) for r in undated]) + "\n", encoding="utf-8")
    assert main(["--votes", str(path), "--format", "json", "--min-battles", "0", "--bootstrap", "0",
                 "--as-of", "2025-06-30"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["total_votes"] == 2 * PER_PHASE
    assert "left out 7 vote(s) without a timestamp" in captured.err

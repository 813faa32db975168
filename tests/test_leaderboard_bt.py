"""Bradley–Terry fit, bootstrap, ranks, breakdowns and online Elo on synthetic votes."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import expit, log_expit
from scipy.stats import spearmanr

from sciarena.board import bradley_terry as bt
from sciarena.board import compute_leaderboard, elo, table_from_arrays, to_dict
from sciarena.board.synthetic import simulate
from sciarena.core.errors import LeaderboardInputError
from sciarena.votes.schema import score_of_a

ELO = 400.0 / math.log(10.0)


def per_vote_reference(table) -> np.ndarray:
    """The paper's recipe, written out: duplicate every vote; a tie or both-bad vote
    becomes one win for each side; unpenalised logistic regression on ±1 features."""
    a, b, o = table.a, table.b, table.outcome
    first = np.where(o == 1, 0.0, 1.0)  # copy 1: A wins unless B won
    second = np.where(o == 0, 1.0, 0.0)  # copy 2: A wins only if A won
    aa, bb, y = np.r_[a, a], np.r_[b, b], np.r_[first, second]
    m = len(table.models)

    def loss(x):
        d = x[aa] - x[bb]
        value = -(y * log_expit(d) + (1 - y) * log_expit(-d)).sum()
        g = y - expit(d)
        return value, np.bincount(bb, g, m) - np.bincount(aa, g, m)

    res = minimize(loss, np.zeros(m), jac=True, method="L-BFGS-B",
                   options={"gtol": 1e-10, "ftol": 1e-16, "maxiter": 5000})
    return 1000.0 + ELO * (res.x - res.x.mean())


def test_counts_fit_equals_per_vote_logistic_regression():
    table = simulate(np.linspace(-250, 250, 12), 6000, seed=3)
    reference = per_vote_reference(table)
    lb = compute_leaderboard(table, bootstrap=0, by=())
    fitted = {row.model: row.point for row in lb.rows}
    ours = np.array([fitted[m] for m in table.models])
    assert np.abs(ours - reference).max() < 0.01
    assert abs(ours.mean() - 1000.0) < 1e-6


def test_rank_correlation_with_ties_and_both_bad():
    truth = np.linspace(-200, 200, 40)
    table = simulate(truth, 20_000, seed=1, tie_rate=0.1, bad_rate=0.04)
    assert set(np.unique(table.outcome)) == {0, 1, 2, 3}
    lb = compute_leaderboard(table, bootstrap=20)
    est = {row.model: row.rating for row in lb.rows}
    rho = spearmanr([est[m] for m in table.models], truth).statistic
    assert rho >= 0.98


def test_bootstrap_interval_coverage():
    hits = total = 0
    for dataset in range(8):
        truth = np.random.default_rng(100 + dataset).normal(0, 120, 16)
        table = simulate(truth, 4000, seed=dataset)
        lb = compute_leaderboard(table, bootstrap=100, seed=dataset, by=())
        centred = dict(zip(table.models, 1000.0 + truth - truth.mean()))
        for row in lb.rows:
            hits += row.ci_lower <= centred[row.model] <= row.ci_upper
            total += 1
    assert 0.85 <= hits / total <= 0.99


def test_bootstrap_is_deterministic_and_seeded():
    table = simulate(np.linspace(-100, 100, 8), 3000, seed=5)
    one = to_dict(compute_leaderboard(table, bootstrap=30, seed=7))
    two = to_dict(compute_leaderboard(table, bootstrap=30, seed=7))
    other = to_dict(compute_leaderboard(table, bootstrap=30, seed=8))
    assert one == two
    assert one != other


def test_bootstrap_resampling_matches_vote_level_resampling():
    # multinomial over counted rows must behave like resampling individual votes
    table = simulate(np.linspace(-150, 150, 6), 3000, seed=11)
    counts = bt.table_counts(table)
    theta, _ = bt.fit_counts(counts)
    boot, _ = bt.bootstrap_counts(counts, 200, seed=1)
    rng = np.random.default_rng(2)
    vote_level = []
    for _ in range(200):
        pick = rng.integers(0, table.n_votes, table.n_votes)
        th, _ = bt.fit_counts(bt.aggregate(table.a[pick], table.b[pick], table.outcome[pick], 6))
        vote_level.append(th)
    sd_rows, sd_votes = boot.std(axis=0), np.std(vote_level, axis=0)
    assert np.allclose(sd_rows, sd_votes, rtol=0.25)
    assert np.allclose(boot.mean(axis=0), theta, atol=3 * sd_rows.max() / math.sqrt(200) + 0.01)


def test_rank_rule_and_sorting():
    table = simulate([300, 0, -5, -300], 4000, seed=2)
    lb = compute_leaderboard(table, bootstrap=50, by=())
    ratings = [row.rating for row in lb.rows]
    assert ratings == sorted(ratings, reverse=True)
    for row in lb.rows:
        expected = 1 + sum(other.ci_lower > row.ci_upper for other in lb.rows)
        assert row.rank == expected
    assert lb.rows[0].rank == 1 and lb.rows[-1].rank == 4
    assert lb.rows[1].rank == lb.rows[2].rank == 2  # overlapping intervals share a rank
    assert lb.rating == "bootstrap mean"
    assert all(row.ci_lower <= row.rating <= row.ci_upper for row in lb.rows)


def test_anchor_shifts_without_widening_intervals():
    table = simulate(np.linspace(-100, 100, 6), 3000, seed=4)
    plain = compute_leaderboard(table, bootstrap=40, by=("subject",))
    anchored = compute_leaderboard(table, bootstrap=40, by=("subject",), anchor=("model-02", 1500.0))
    row = {r.model: r for r in anchored.rows}
    assert row["model-02"].rating == pytest.approx(1500.0)
    shift = 1500.0 - {r.model: r for r in plain.rows}["model-02"].rating
    for before in plain.rows:
        after = row[before.model]
        assert after.rating == pytest.approx(before.rating + shift)
        assert after.ci_upper - after.ci_lower == pytest.approx(before.ci_upper - before.ci_lower)
    for group, rating in row["model-02"].groups["subject"].items():
        assert rating == pytest.approx(1500.0), group


def test_model_that_never_loses_gets_a_finite_rating_and_a_note():
    a = [0] * 30 + [1] * 20 + [2] * 20
    b = [1] * 15 + [2] * 15 + [2] * 20 + [1] * 20
    outcome = [0] * 30 + [0] * 12 + [1] * 8 + [0] * 9 + [1] * 11
    table = table_from_arrays(["champ", "x", "y"], a, b, outcome)
    lb = compute_leaderboard(table, bootstrap=20, by=())
    top = lb.rows[0]
    assert top.model == "champ" and math.isfinite(top.rating) and top.rating < 3000
    assert any("prior" in note for note in lb.notes)
    table_ok = simulate([50, 0, -50], 2000, seed=0)
    assert not compute_leaderboard(table_ok, bootstrap=0, by=()).notes


def test_breakdowns_battles_and_min_battles():
    truth = np.linspace(-150, 150, 10)
    table = simulate(truth, 5000, seed=6)
    keep = ~((table.a == 9) | (table.b == 9)) | (np.arange(table.n_votes) % 10 == 0)
    table = table.subset(keep)  # model-09 keeps only a few battles
    lb = compute_leaderboard(table, bootstrap=10, by=("subject", "question_type"), min_battles=100)
    assert "model-09" in lb.hidden and all(r.model != "model-09" for r in lb.rows)
    battles = table.battles()
    for row in lb.rows:
        i = table.models.index(row.model)
        assert row.battles == battles[i] == row.wins + row.losses + row.ties + row.both_bad
        assert set(row.groups) == {"subject", "question_type"}
        assert set(row.groups["subject"]) <= set(table.subjects)
    # a group rating is the plain fit of that group's votes
    g = table.subjects.index("Healthcare")
    alone = compute_leaderboard(table.subset(table.subject == g), bootstrap=0, by=())
    point = {r.model: r.point for r in alone.rows}
    for row in lb.rows:
        assert row.groups["subject"]["Healthcare"] == pytest.approx(point[row.model], abs=1e-6)
    low = compute_leaderboard(table, bootstrap=0, by=(), min_battles=0)
    flagged = {r.model: r.provisional for r in low.rows}
    assert flagged["model-09"] and not flagged["model-00"]


def test_bad_arguments_are_input_errors():
    table = simulate([0, 10, 20], 300)
    for kwargs in ({"method": "glicko"}, {"by": ("voter",)}, {"anchor": ("nobody", 1000.0)},
                   {"bootstrap": -1}, {"method": "elo", "style": ("length",)}):
        with pytest.raises(LeaderboardInputError):
            compute_leaderboard(table, **kwargs)


def test_online_elo_update_rule_by_hand():
    # first vote: equal ratings, A wins → ±K/2; second: tie with a 2-point gap
    ratings = elo.online_elo(np.array([0, 0]), np.array([1, 1]), np.array([1.0, 0.5]), 2, k=4.0)
    e = 1.0 / (1.0 + 10.0 ** ((998.0 - 1002.0) / 400.0))
    assert ratings[0] == pytest.approx(1002.0 + 4.0 * (0.5 - e))
    assert ratings.sum() == pytest.approx(2000.0)


def test_online_elo_depends_on_order_and_batch_matches_loop():
    table = simulate(np.linspace(-100, 100, 5), 800, seed=9)
    shuffled = elo.order_sensitivity(table, rounds=6, seed=0, k=16.0)
    assert shuffled.shape == (6, 5)
    assert np.ptp(shuffled, axis=0).max() > 1.0  # different orders, different ratings
    orders = np.tile(np.arange(table.n_votes, dtype=np.int32), (6, 1))
    np.random.default_rng(0).permuted(orders, axis=1, out=orders)
    order = orders[2]
    loop = elo.online_elo(table.a[order], table.b[order], score_of_a(table.outcome[order]), 5, k=16.0)
    assert np.allclose(loop, shuffled[2])
    lb = compute_leaderboard(table, method="elo", bootstrap=20, k=16.0)
    assert lb.method == "elo" and lb.k == 16.0 and len(lb.rows) == 5
    assert sum(r.point for r in lb.rows) == pytest.approx(5000.0)

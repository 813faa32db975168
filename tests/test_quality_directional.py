"""Position and consensus tests, the leave-one-voter-out fits, and Holm's correction."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.stats import binom, binomtest

from sciarena.board.bradley_terry import aggregate, fit_counts
from sciarena.board.synthetic import simulate
from sciarena.science.quality.directional import (
    consensus_test,
    holm,
    leave_out_strengths,
    poisson_binomial_lower_tail,
    position_test,
)

A, B, TIE, BAD = 0, 1, 2, 3


def test_position_test_is_the_exact_two_sided_binomial():
    cases = [(30, 2), (12, 10), (0, 7), (5, 5), (1, 0), (40, 25)]
    voter = np.concatenate([np.full(na + nb + 3, v) for v, (na, nb) in enumerate(cases)])
    outcome = np.concatenate([np.r_[np.full(na, A), np.full(nb, B), [TIE, BAD, TIE]]
                              for na, nb in cases])
    result = position_test(np.r_[voter, -1], np.r_[outcome, A], len(cases) + 1)
    for v, (na, nb) in enumerate(cases):
        assert result.votes_a[v] == na and result.votes_b[v] == nb  # ties and both-bad aside
        assert result.p_value[v] == pytest.approx(binomtest(na, na + nb, 0.5).pvalue)
    assert result.p_value[len(cases)] == 1.0 and np.isnan(result.share_a[len(cases)])  # no votes


def test_holm_by_hand():
    # sorted 0.01, 0.03, 0.04 → ×3, ×2, ×1 = 0.03, 0.06, 0.04 → running max 0.03, 0.06, 0.06
    assert holm(np.array([[0.01, 0.04, 0.03]]))[0].tolist() == pytest.approx([0.03, 0.06, 0.06])
    assert holm(np.array([[0.5, 0.9, 0.8], [0.2, 0.01, 0.3]])).tolist() == [[1.0, 1.0, 1.0], [0.4, 0.03, 0.4]]


def test_poisson_binomial_tail_against_enumeration():
    rng = np.random.default_rng(1)
    q = rng.uniform(0.5, 0.9, 9)
    group = np.r_[np.zeros(6, dtype=int), np.ones(3, dtype=int)]
    observed = np.array([2, 1])
    got = poisson_binomial_lower_tail(group, q, observed, 3)
    for g in (0, 1):
        qs = q[group == g]
        brute = sum(np.prod(np.where(bits, qs, 1 - qs))
                    for bits in itertools.product([0, 1], repeat=qs.size) if sum(bits) <= observed[g])
        assert got[g] == pytest.approx(brute)
    assert got[2] == 1.0  # a group without rows


def test_poisson_binomial_long_groups_use_a_close_normal_approximation():
    q = np.full(1000, 0.6)
    got = poisson_binomial_lower_tail(np.zeros(1000, dtype=int), q, np.array([570]), 1)
    assert got[0] == pytest.approx(binom.cdf(570, 1000, 0.6), abs=2e-3)


def _voters(n_votes: int, n_voters: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    table = simulate(np.linspace(-150, 150, 8), n_votes, seed=seed)
    voter = np.random.default_rng(seed).integers(-1, n_voters, n_votes)  # −1: no voter id
    return voter, table.a.astype(np.int64), table.b.astype(np.int64), table.outcome.astype(np.int64)


def test_leave_out_fits_equal_fresh_fits_without_the_voter():
    voter, a, b, outcome = _voters(3000, 300, seed=5)  # 300 voters: two batches of fits
    theta, known = leave_out_strengths(voter, a, b, outcome, 8, 300)
    for v in (0, 17, 255, 256, 299):
        keep = (voter != v) & (outcome < TIE)
        fresh, _ = fit_counts(aggregate(a[keep], b[keep], outcome[keep], 8))
        assert np.abs(theta[v] - fresh).max() < 1e-6
        assert known[v].all()


def test_a_model_only_one_voter_saw_is_unknown_to_its_leave_out_fit():
    voter, a, b, outcome = _voters(2000, 30, seed=6)
    extra = 8  # a ninth model, compared by voter 3 alone
    voter = np.r_[voter, [3, 3, 3]]
    a, b, outcome = np.r_[a, [extra, extra, 0]], np.r_[b, [1, 2, extra]], np.r_[outcome, [A, A, B]]
    theta, known = leave_out_strengths(voter, a, b, outcome, 9, 30)
    assert not known[3, extra] and known[4, extra]
    result = consensus_test(voter, a, b, outcome, 9, 30)
    assert result.compared[3] == ((voter[:-3] == 3) & (outcome[:-3] < TIE)).sum()


def test_consensus_catches_a_contrarian_and_passes_honest_voters():
    ratings = np.linspace(-150, 150, 8)
    voter, a, b, outcome = _voters(6000, 60, seed=7)
    rng = np.random.default_rng(8)
    ca = rng.integers(0, 8, 40)
    cb = (ca + rng.integers(1, 8, 40)) % 8
    contrarian = np.where(ratings[ca] < ratings[cb], A, B)
    voter, a, b = np.r_[voter, np.full(40, 60)], np.r_[a, ca], np.r_[b, cb]
    outcome = np.r_[outcome, contrarian]
    result = consensus_test(voter, a, b, outcome, 8, 61)
    assert result.p_value[60] < 1e-6 and result.agreements[60] < 0.2 * result.compared[60]
    assert (result.p_value[:60] > 0.01).mean() > 0.95
    assert (result.expected[:60] <= result.compared[:60]).all()

"""The paper's A.5 anomaly test, checked by hand on tiny examples."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import chi2

from sciarena.science.quality.anomaly import (
    a5_test,
    canonical_pairs,
    checkpoints,
    fisher_test,
    leave_out_history,
    rarity_pvalues,
)

A, B, TIE, BAD = 0, 1, 2, 3


def test_rarity_pvalue_by_hand():
    # History of one pair: lower model won 5, higher won 3, 1 tie, no both-bad (9 votes).
    history = np.array([[5, 3, 1, 0]] * 4)
    p = rarity_pvalues(history, np.array([A, B, TIE, BAD]))
    # With the new vote counted, a vote is "at least as rare" when its outcome's count is ≤ the
    # new one's:  A → counts (6,3,1,0): all 9 are, p = (9+1)/10;  B → (5,4,1,0): B and tie, 4+1;
    # tie → (5,3,2,0): only the tie, 1+1;  both bad → (5,3,1,1): tie and bad tie at 1, 1+1.
    assert p.tolist() == pytest.approx([1.0, 0.5, 0.2, 0.2])


def test_empty_history_gives_p_one():
    assert rarity_pvalues(np.zeros((2, 4), dtype=int), np.array([A, BAD])).tolist() == [1.0, 1.0]


def test_pairs_are_unordered_and_outcomes_follow_the_lower_model():
    pair, pairs, coded = canonical_pairs(np.array([0, 2, 2]), np.array([2, 0, 1]),
                                         np.array([A, A, TIE]), n_models=3)
    assert pairs.tolist() == [[0, 2], [1, 2]]
    assert pair.tolist() == [0, 0, 1]
    # (0 vs 2, A) is "model 0 won"; (2 vs 0, A) is "model 2 won" = the higher one won
    assert coded.tolist() == [A, B, TIE]


def test_a_voter_is_left_out_of_its_own_history():
    voter = np.array([0, 0, 1, 1, 1, -1])
    pair = np.zeros(6, dtype=int)
    outcome = np.array([BAD, BAD, A, A, B, A])
    history = leave_out_history(voter, pair, outcome, n_pairs=1)
    # voter 0 sees voter 1's and the anonymous vote: A 3, B 1; voter 1 sees BAD 2 and A 1
    assert history[0].tolist() == [3, 1, 0, 0] and history[1].tolist() == [3, 1, 0, 0]
    assert history[2].tolist() == [1, 0, 0, 2]


def test_fisher_combination_by_hand():
    # p = 0.5, 0.2, 0.1: three votes, so all three are checkpoints.
    # M_1 = −2 ln .5 = 1.386, M_2 = M_1 − 2 ln .2 = 4.605, M_3 = M_2 − 2 ln .1 = 9.210.
    # χ² tails with even df 2j have the closed form e^{−x/2} Σ_{k<j} (x/2)^k / k!:
    # 0.5, 0.1·(1 + 2.303) = 0.330, 0.01·(1 + 4.605 + 4.605²/2) = 0.162 → decisive j = 3.
    result = fisher_test(np.array([0, 0, 0]), np.array([0.5, 0.2, 0.1]), 1, seed=0)
    m3 = -2 * math.log(0.5 * 0.2 * 0.1)
    tail = math.exp(-m3 / 2) * (1 + m3 / 2 + (m3 / 2) ** 2 / 2)
    assert result.statistic[0] == pytest.approx(m3) and m3 == pytest.approx(9.2103, abs=1e-4)
    assert result.checkpoint[0] == 3
    assert result.p_value[0] == pytest.approx(5 * tail) and 5 * tail == pytest.approx(0.8104, abs=1e-4)


def test_fisher_follows_each_voters_order_and_ignores_unvoiced_votes():
    voter = np.array([1, 0, -1, 1, 0])
    p = np.array([0.01, 0.9, 0.001, 0.02, 0.8])
    result = fisher_test(voter, p, 2, seed=0)
    m_voter1 = -2 * math.log(0.01 * 0.02)
    assert result.statistic[1] == pytest.approx(m_voter1)
    assert result.p_value[1] == pytest.approx(min(1, 5 * chi2.sf(m_voter1, 4)))
    assert result.p_value[0] == 1.0  # large p-values: the tail is capped at 1


def test_flagged_exactly_when_the_papers_threshold_is_crossed():
    rng = np.random.default_rng(4)
    n_voters, alpha = 300, 0.05
    sizes = rng.integers(1, 60, n_voters)
    voter = np.repeat(np.arange(n_voters), sizes)
    p = rng.beta(0.6, 1.0, voter.size)  # tilted towards 0, so some voters cross
    result = fisher_test(voter, p, n_voters, seed=11)
    paper = []
    for v in range(n_voters):
        cums = np.cumsum(-2 * np.log(p[voter == v]))
        js = checkpoints(int(sizes[v]), 11, v)
        paper.append(bool((cums[js - 1] >= chi2.ppf(1 - alpha / 5, 2 * js)).any()))
    assert 0 < sum(paper) < n_voters
    assert ((result.p_value <= alpha) == np.array(paper)).all()


def test_checkpoints_are_seeded_and_per_voter():
    assert checkpoints(3, seed=0, key=9).tolist() == [1, 2, 3]
    first = checkpoints(100, seed=7, key=3)
    assert first.tolist() == checkpoints(100, seed=7, key=3).tolist()
    assert len(first) == 5 and len(set(first.tolist())) == 5 and first.min() >= 1 and first.max() <= 100
    others = {tuple(checkpoints(100, seed=s, key=k).tolist()) for s, k in [(8, 3), (7, 4), (9, 9)]}
    assert tuple(first.tolist()) not in others


def test_a5_end_to_end_flags_a_both_bad_spammer_only():
    rng = np.random.default_rng(0)
    n = 600
    a = rng.integers(0, 4, n)
    b = (a + rng.integers(1, 4, n)) % 4
    outcome = rng.choice([A, B, TIE], n, p=[0.45, 0.45, 0.10])
    voter = rng.integers(0, 20, n)
    spam = np.arange(40)  # voter 20: forty "both bad" votes
    voter = np.r_[voter, np.full(40, 20)]
    a, b = np.r_[a, a[spam]], np.r_[b, b[spam]]
    outcome = np.r_[outcome, np.full(40, BAD)]
    result = a5_test(voter, a, b, outcome, 4, 21, seed=0)
    assert result.p_value[20] < 1e-6
    assert (result.p_value[:20] > 0.05).all()
    # the seed only moves the checkpoints
    again = a5_test(voter, a, b, outcome, 4, 21, seed=0)
    assert (again.statistic == result.statistic).all()

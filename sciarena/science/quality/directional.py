"""Directional tests the A.5 check cannot replace, and Holm's correction over a voter's tests.

On a leaderboard as compressed as SciArena's (most pairs within 100 Elo) a vote for the
weaker model, or for whatever sits on the left, is not a *rare* outcome, so the A.5
p-values of such voters stay near 0.4–0.6. Two tests look for a direction instead:

- **position**: among a voter's decisive votes (A or B; ties and both-bad aside), the
  number for A is Binomial(n, ½) when the app randomises the screen order, whatever the
  models — an exact two-sided binomial test.
- **consensus**: the Bradley–Terry strengths fitted to everybody else's decisive votes
  predict, for each of the voter's decisive votes, the favoured side and the probability
  q_i = max(π_i, 1 − π_i) that a voter like the others picks it. The number of agreements
  is then Poisson-binomial(q); the test is its exact lower tail (a contrarian agrees too
  seldom; agreeing *too* often is no fault).

The leave-one-voter-out fits use the project's fitter on aggregated pair totals: all
voters' totals minus one voter's, a batch of voters at a time, warm-started from the fit
to everyone — a voter moves the optimum so little that Newton needs two or three steps.

Multiple testing: a voter is flagged when any of its tests rejects after **Holm's**
step-down correction at α over that voter's tests. Holm controls the chance that an honest
voter is flagged (the family-wise error per voter) at α under any dependence between the
tests — they read the same votes, so independence cannot be assumed — and it is uniformly
more powerful than Bonferroni. Benjamini–Hochberg would control a different quantity (the
share of false flags among flags) and needs positive dependence; what an honest voter risks
is exclusion, so the per-voter error is the one to bound.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit
from scipy.stats import binom, norm

from sciarena.board.bradley_terry import RIDGE, fit_pairs, needs_ridge
from sciarena.science.quality.anomaly import canonical_pairs
from sciarena.votes.schema import OUTCOME_A, OUTCOME_B, OUTCOME_TIE

_BATCH = 256  # voters per batched leave-out fit: (batch, M, M) Hessians stay small
_EXACT_MAX = 400  # above this many votes the normal approximation of the tail is used


@dataclass(frozen=True, eq=False)
class PositionResult:
    """Per voter: decisive votes for A and for B, share of A, exact two-sided p-value."""

    votes_a: np.ndarray
    votes_b: np.ndarray
    share_a: np.ndarray
    p_value: np.ndarray


@dataclass(frozen=True, eq=False)
class ConsensusResult:
    """Per voter: decisive votes compared, agreements observed and expected, lower-tail p-value."""

    compared: np.ndarray
    agreements: np.ndarray
    expected: np.ndarray
    p_value: np.ndarray


def position_test(voter: np.ndarray, outcome: np.ndarray, n_voters: int) -> PositionResult:
    """Binomial test of A against B per voter (ties and both-bad left aside)."""
    voter = np.asarray(voter, dtype=np.int64)
    tested = voter >= 0
    v, o = voter[tested], np.asarray(outcome)[tested]
    n_a = np.bincount(v[o == OUTCOME_A], minlength=n_voters)
    n_b = np.bincount(v[o == OUTCOME_B], minlength=n_voters)
    n = n_a + n_b
    # Binomial(n, ½) is symmetric: two-sided p = 2·P(X ≤ min(k, n − k)), capped at 1
    p = np.minimum(1.0, 2.0 * binom.cdf(np.minimum(n_a, n_b), n, 0.5))
    share = np.divide(n_a, n, out=np.full(n_voters, np.nan), where=n > 0)
    return PositionResult(n_a, n_b, share, np.where(n > 0, p, 1.0))


def leave_out_strengths(voter: np.ndarray, a: np.ndarray, b: np.ndarray, outcome: np.ndarray,
                        n_models: int, n_voters: int) -> tuple[np.ndarray, np.ndarray]:
    """Bradley–Terry θ fitted without each voter's votes → (θ (V, M), known (V, M)).

    Only decisive votes enter (the test asks which side a voter picks, not whether it
    calls a tie). ``known[v, m]`` is False when nobody but v has a decisive vote on model m:
    the fit says nothing about it there.
    """
    voter = np.asarray(voter, dtype=np.int64)
    decisive = np.asarray(outcome) < OUTCOME_TIE
    v = voter[decisive]
    pair, pairs, coded = canonical_pairs(np.asarray(a)[decisive], np.asarray(b)[decisive],
                                         np.asarray(outcome)[decisive], n_models)
    n_pairs = len(pairs)
    theta = np.zeros((n_voters, n_models))
    known = np.zeros((n_voters, n_models), dtype=bool)
    if n_pairs == 0 or n_voters == 0:
        return theta, known
    pi, pj = pairs[:, 0], pairs[:, 1]
    lower_won = (coded == OUTCOME_A).astype(np.float64)
    wins = np.bincount(pair, lower_won, n_pairs)
    battles = np.bincount(pair, minlength=n_pairs).astype(np.float64)
    full = fit_pairs(pi, pj, wins[None], battles[None], n_models,
                     np.where(needs_ridge(pi, pj, wins[None], battles[None], n_models), RIDGE, 0.0))
    mine = v >= 0
    group_key = v[mine] * n_pairs + pair[mine]  # one row per (voter, pair) the voter voted on
    keys, group = np.unique(group_key, return_inverse=True)
    own_wins = np.bincount(group, lower_won[mine], len(keys))
    own_battles = np.bincount(group, minlength=len(keys)).astype(np.float64)
    key_voter, key_pair = keys // n_pairs, keys % n_pairs
    incidence = np.zeros((n_pairs, n_models))  # pair → its two models, to count battles per model
    incidence[np.arange(n_pairs), pi] = incidence[np.arange(n_pairs), pj] = 1.0
    for start in range(0, n_voters, _BATCH):
        stop = min(n_voters, start + _BATCH)
        rows = slice(np.searchsorted(key_voter, start), np.searchsorted(key_voter, stop))
        w = np.repeat(wins[None], stop - start, axis=0)
        n = np.repeat(battles[None], stop - start, axis=0)
        w[key_voter[rows] - start, key_pair[rows]] -= own_wins[rows]
        n[key_voter[rows] - start, key_pair[rows]] -= own_battles[rows]
        ridge = np.where(needs_ridge(pi, pj, w, n, n_models), RIDGE, 0.0)
        start_theta = np.repeat(full, stop - start, axis=0)
        theta[start:stop] = fit_pairs(pi, pj, w, n, n_models, ridge, start_theta)
        known[start:stop] = n @ incidence > 0
    return theta, known


def consensus_test(voter: np.ndarray, a: np.ndarray, b: np.ndarray, outcome: np.ndarray,
                   n_models: int, n_voters: int) -> ConsensusResult:
    """Agreement of each voter's decisive votes with the Bradley–Terry fit of everybody else's."""
    voter = np.asarray(voter, dtype=np.int64)
    a, b, outcome = np.asarray(a), np.asarray(b), np.asarray(outcome)
    theta, known = leave_out_strengths(voter, a, b, outcome, n_models, n_voters)
    use = (voter >= 0) & (outcome < OUTCOME_TIE)
    v, va, vb = voter[use], a[use], b[use]
    ok = known[v, va] & known[v, vb]
    v, va, vb, picked_a = v[ok], va[ok], vb[ok], outcome[use][ok] == OUTCOME_A
    p_a = expit(theta[v, va] - theta[v, vb])
    favour_a = p_a >= 0.5
    q = np.where(favour_a, p_a, 1.0 - p_a)
    agreed = (picked_a == favour_a).astype(np.int64)
    compared = np.bincount(v, minlength=n_voters)
    agreements = np.bincount(v, agreed, n_voters).astype(np.int64)
    expected = np.bincount(v, q, n_voters)
    p = poisson_binomial_lower_tail(v, q, agreements, n_voters)
    return ConsensusResult(compared, agreements, expected, p)


def poisson_binomial_lower_tail(group: np.ndarray, q: np.ndarray, observed: np.ndarray,
                                n_groups: int) -> np.ndarray:
    """P(K ≤ observed[g]) for K a sum of independent Bernoulli(q_i) over the rows of group g.

    Exact (dynamic programming, groups padded in batches of similar size) up to
    ``_EXACT_MAX`` rows; the normal approximation with continuity correction beyond.
    """
    order = np.argsort(group, kind="stable")
    g, q = group[order], q[order]
    counts = np.bincount(g, minlength=n_groups)
    starts = np.r_[0, np.cumsum(counts)[:-1]]
    p = np.ones(n_groups)
    small = np.flatnonzero((counts > 0) & (counts <= _EXACT_MAX))
    small = small[np.argsort(counts[small], kind="stable")]
    for chunk in np.array_split(small, max(1, -(-small.size // _BATCH))):
        if chunk.size == 0:
            continue
        width = int(counts[chunk].max())
        padded = np.zeros((chunk.size, width))  # q = 0 past a group's end: no change
        offsets = np.arange(width)[None, :]
        inside = offsets < counts[chunk][:, None]
        padded[inside] = q[(starts[chunk][:, None] + offsets)[inside]]
        dist = np.zeros((chunk.size, width + 1))
        dist[:, 0] = 1.0
        for t in range(width):
            step = padded[:, t:t + 1]
            new = dist * (1.0 - step)
            new[:, 1:] += dist[:, :-1] * step
            dist = new
        cdf = np.cumsum(dist, axis=1)
        p[chunk] = np.minimum(1.0, cdf[np.arange(chunk.size), observed[chunk]])
    large = np.flatnonzero(counts > _EXACT_MAX)
    for code in large:
        qs = q[starts[code]:starts[code] + counts[code]]
        mean, sd = qs.sum(), np.sqrt((qs * (1.0 - qs)).sum())
        p[code] = norm.cdf((observed[code] + 0.5 - mean) / sd) if sd > 0 else 1.0
    return p


def holm(p_values: np.ndarray) -> np.ndarray:
    """Holm-adjusted p-values along the last axis (each row one voter's tests)."""
    p = np.asarray(p_values, dtype=np.float64)
    k = p.shape[-1]
    order = np.argsort(p, axis=-1, kind="stable")
    ranked = np.take_along_axis(p, order, axis=-1) * (k - np.arange(k))
    adjusted_sorted = np.minimum(1.0, np.maximum.accumulate(ranked, axis=-1))
    adjusted = np.empty_like(p)
    np.put_along_axis(adjusted, order, adjusted_sorted, axis=-1)
    return adjusted

"""The paper's anomalous-user test (appendix A.5, after Chatbot Arena).

An *action* is an unordered model pair. A vote's rating is coded relative to the pair's
lower-indexed model (it wins, the other wins, tie, both bad), so the two screen orders
share one history; a position preference is the position test's business.

The p-value of a rating y' against the history Y of the same action (every other voter's
votes on that pair — the voter is left out of the history it is tested against) is

    p = (#{y ∈ Y : y at least as extreme as y'} + 1) / (|Y| + 1).

The paper's formula needs an order on ratings ("y ≥ y'"); outcome categories have none, so
a rating is as extreme as another when its outcome is **at least as rare**: its count in the
history plus the new vote is no larger. The counts include the new vote so that the score
is a symmetric function of the pooled votes — the conformal construction — and p is then a
valid (super-uniform) p-value whenever the voter's ratings are exchangeable with the
history's. Only rare outcomes get small p-values: "both bad" on a pair where nobody says
that, or an upset where everybody agrees. A voter who always picks A, or the weaker of two
close models, gets p ≈ 0.4–0.6 per vote and passes (see ``directional``).

Fisher's combination ``M_j = −2 Σ_{i≤j} log p_i`` over the voter's first j votes (in the
order they were cast) is checked at five checkpoints drawn at random from 1..n (seeded per
voter); the voter is flagged when ``M_j ≥ χ²_{2j, 1−α/5}`` at any of them. The reported
p-value is the Bonferroni one, ``min(1, 5 · min_j P(χ²_{2j} ≥ M_j))``: it is ≤ α exactly
when the paper's rule fires.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import chi2

from sciarena.votes.schema import OUTCOME_A, OUTCOME_B

N_CHECKPOINTS = 5
N_OUTCOMES = 4


@dataclass(frozen=True, eq=False)
class FisherResult:
    """Per voter (arrays indexed by voter code): the A.5 statistic at its decisive checkpoint."""

    statistic: np.ndarray  # M_j at the checkpoint with the smallest χ² tail
    checkpoint: np.ndarray  # that j (0 for a voter without votes)
    p_value: np.ndarray  # Bonferroni over the checkpoints, capped at 1


def canonical_pairs(a: np.ndarray, b: np.ndarray, outcome: np.ndarray,
                    n_models: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(pair index, pair models (P, 2) lower first, outcome relative to the lower model).

    Outcomes 0/1 become "lower-indexed model wins" / "higher wins"; ties and both-bad stay.
    """
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    outcome = np.asarray(outcome, dtype=np.int64)
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    keys, pair = np.unique(lo * n_models + hi, return_inverse=True)
    swapped = a > b
    coded = outcome.copy()
    coded[swapped & (outcome == OUTCOME_A)] = OUTCOME_B
    coded[swapped & (outcome == OUTCOME_B)] = OUTCOME_A
    return pair.astype(np.int64), np.c_[keys // n_models, keys % n_models], coded


def leave_out_history(voter: np.ndarray, pair: np.ndarray, outcome: np.ndarray,
                      n_pairs: int) -> np.ndarray:
    """Per vote, outcome counts (n, 4) of the same pair's votes by everybody but its voter.

    Votes without a voter (code −1) count in everyone's history; their own rows (which
    leave all anonymous votes out) are never tested.
    """
    total = np.bincount(pair * N_OUTCOMES + outcome, minlength=n_pairs * N_OUTCOMES)
    total = total.reshape(n_pairs, N_OUTCOMES)
    # one group per (voter, pair): the voter's own counts, subtracted from the pair's total
    _, group = np.unique(voter.astype(np.int64) * n_pairs + pair, return_inverse=True)
    own = np.bincount(group * N_OUTCOMES + outcome, minlength=(group.max(initial=-1) + 1) * N_OUTCOMES)
    own = own.reshape(-1, N_OUTCOMES)
    return total[pair] - own[group]


def rarity_pvalues(history: np.ndarray, outcome: np.ndarray) -> np.ndarray:
    """The A.5 p-value of each vote's outcome against its history counts (n, 4)."""
    rows = np.arange(outcome.shape[0])
    pooled = history.copy()
    pooled[rows, outcome] += 1
    own_count = pooled[rows, outcome][:, None]
    at_least_as_rare = (history * (pooled <= own_count)).sum(axis=1)
    return (at_least_as_rare + 1.0) / (history.sum(axis=1) + 1.0)


def checkpoints(n_votes: int, seed: int, key: int, n_checkpoints: int = N_CHECKPOINTS) -> np.ndarray:
    """The j's (1-based, sorted) at which a voter with ``n_votes`` votes is checked.

    Drawn without replacement from 1..n (all of them when n ≤ 5) by a generator seeded with
    (seed, key): a voter's checkpoints depend on nobody else, so adding voters or votes by
    others never moves them.
    """
    if n_votes <= n_checkpoints:
        return np.arange(1, n_votes + 1)
    rng = np.random.default_rng([seed, key])
    return np.sort(rng.choice(n_votes, size=n_checkpoints, replace=False)) + 1


def fisher_test(voter: np.ndarray, p_values: np.ndarray, n_voters: int, *, seed: int,
                keys: np.ndarray | None = None, n_checkpoints: int = N_CHECKPOINTS) -> FisherResult:
    """Fisher's combination of each voter's p-values (given in the order the votes were cast).

    ``keys`` (one non-negative int per voter code, default the code) seed the checkpoints.
    """
    keys = np.arange(n_voters) if keys is None else np.asarray(keys)
    voter = np.asarray(voter, dtype=np.int64)
    tested = voter >= 0
    order = np.argsort(voter[tested], kind="stable")  # stable: keeps each voter's sequence
    logs = -2.0 * np.log(np.asarray(p_values, dtype=np.float64)[tested][order])
    cumulative = np.cumsum(logs)
    counts = np.bincount(voter[tested], minlength=n_voters)
    starts = np.r_[0, np.cumsum(counts)[:-1]]
    before = np.r_[0.0, cumulative][starts]  # running total before each voter's first vote
    voters = np.flatnonzero(counts)
    drawn = [checkpoints(int(counts[code]), seed, int(keys[code]), n_checkpoints) for code in voters]
    owner = np.repeat(voters, [len(js) for js in drawn])
    js = np.concatenate(drawn) if drawn else np.zeros(0, dtype=np.int64)
    m = cumulative[starts[owner] + js - 1] - before[owner]
    tail = chi2.sf(m, 2 * js)
    # per voter, the checkpoint with the smallest tail: sort by (voter, tail), take each first
    first = np.lexsort((tail, owner))
    first = first[np.r_[True, owner[first][1:] != owner[first][:-1]]] if first.size else first
    statistic = np.zeros(n_voters)
    checkpoint = np.zeros(n_voters, dtype=np.int64)
    p_value = np.ones(n_voters)
    statistic[owner[first]], checkpoint[owner[first]] = m[first], js[first]
    p_value[owner[first]] = np.minimum(1.0, n_checkpoints * tail[first])
    return FisherResult(statistic, checkpoint, p_value)


def a5_test(voter: np.ndarray, a: np.ndarray, b: np.ndarray, outcome: np.ndarray, n_models: int,
            n_voters: int, *, seed: int, keys: np.ndarray | None = None) -> FisherResult:
    """The whole A.5 check: canonical pairs → leave-voter-out histories → p-values → Fisher."""
    pair, pairs, coded = canonical_pairs(a, b, outcome, n_models)
    history = leave_out_history(np.asarray(voter), pair, coded, len(pairs))
    return fisher_test(voter, rarity_pvalues(history, coded), n_voters, seed=seed, keys=keys)

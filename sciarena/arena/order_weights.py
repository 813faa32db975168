"""The ``order`` sampler's weights: pairs drawn for what readers read off a board, its order.

A reader asks who is first, which five lead, whether two neighbours are really apart, and where a new
model lands. For each such question the board's answer rests on contrasts θ_a − θ_b (a ranked above b
on the current fit):

* first: the top model against every other model;
* top set: each of the top ``TOP_K`` against each model below them;
* neighbours ordered: each pair of neighbours, is their order right;
* neighbours separated: each pair of neighbours, does their 95 % interval exclude a tie.

With the fit's Fisher covariance Σ, the chance a contrast's sign is right is Φ(z), z = |d|/sd (and
separated at 95 %: Φ(z − 1.96)). One more vote on pair e = (i, j) shrinks Var(cᵀθ) by
w_e·(cᵀΣe)² / (1 + w_e·eᵀΣe) (Sherman–Morrison, w_e = p(1−p)), which raises that chance by about
φ(z)·z/(2·Var)·ΔVar. For each question the rises are summed over its contrasts and normalised, and
the questions share the order draws by ``QUESTION_SHARES`` times how open each still is (the chance
its answer is wrong: for the leader and the top set the summed chances of a wrong sign, at most 1;
for neighbours their mean), so a board whose leader is open but whose middle is crowded (Table 2)
still spends a fixed part of them on the leader, and a settled question hands its part on.
z is floored at ``Z_FLOOR`` because an estimated gap of zero is not a known tie: a vote there still
tells the reader something, and without the floor the sampler would ignore the most open pairs.

A model still short of the listing threshold gets ``NEWCOMER_SHARE`` of the targeted draws (split by how far
each is from it), spent on the opponents that narrow its own interval most. The rest of the draws
follow the order weights, after ``floor`` of them is spread uniformly over every pair, so every pair
is still met and the Bradley–Terry fit stays identified.

Pure numpy; the same state gives the same weights (no randomness, ties broken by position).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import ndtr

TOP_K = 5  # the top set a reader looks at (the paper's figures name the leading five)
Z_FLOOR = 0.5  # see the module doc: an estimated tie still deserves votes
NEWCOMER_SHARE = 0.1  # of the targeted draws, for models below the listing threshold (when there are any)
ORDER_FLOOR = 0.45  # the sampler's default uniform share (sampling.SAMPLER_FLOORS says why)
_PRIOR = 1.0 / math.log(10.0) ** 2  # precision of a N(0, 400²) prior on Elo, in natural units
_SQRT_2PI = math.sqrt(2.0 * math.pi)


def _covariance(theta: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Fisher covariance of θ at ``theta`` (with the board's prior) and the win chances p_ij."""
    p = 1.0 / (1.0 + np.exp(-(theta[:, None] - theta[None, :])))
    info = counts * p * (1.0 - p)
    hess = -info
    np.fill_diagonal(hess, info.sum(axis=1) + _PRIOR)
    return np.linalg.inv(hess), p


QUESTIONS = ("first", "top set", "neighbours ordered", "neighbours separated")
# Of the order draws, per question: the leader and the top set are what a board is read for first.
QUESTION_SHARES = (0.45, 0.45, 0.05, 0.05)


def _contrasts(rank: np.ndarray, top_k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(upper, lower, question) of every contrast a reader's question rests on (indices into QUESTIONS)."""
    m = rank.size
    first = [(0, b, 0) for b in range(1, m)]
    top_set = [(a, b, 1) for a in range(top_k) for b in range(top_k, m)]
    neighbours = [(a, a + 1, q) for q in (2, 3) for a in range(m - 1)]
    rows = np.array(first + top_set + neighbours, dtype=np.int64)
    return rank[rows[:, 0]], rank[rows[:, 1]], rows[:, 2]


def order_gain(theta: np.ndarray, counts: np.ndarray, top_k: int = TOP_K) -> np.ndarray:
    """Per pair (i < j, ``np.triu_indices`` order): how much one vote raises the chances that the board
    answers the reader's questions right (module doc), each question given its share.
    ``theta`` natural units, ``counts`` (M, M) battles."""
    m = theta.size
    cov, p = _covariance(theta, counts)
    rank = np.lexsort((np.arange(m), -theta))  # highest first; equal ratings by position
    hi, lo, question = _contrasts(rank, min(top_k, m - 1))
    var = np.maximum(cov[hi, hi] + cov[lo, lo] - 2.0 * cov[hi, lo], 1e-12)
    z = np.maximum((theta[hi] - theta[lo]) / np.sqrt(var), Z_FLOOR)
    # d(chance right)/d(−Var): sign right is Φ(z); separated at 95 % is Φ(z − 1.96).
    shift = np.where(question == 3, 1.959964, 0.0)
    value = np.exp(-0.5 * (z - shift) ** 2) / _SQRT_2PI * z / (2.0 * var)
    i, j = np.triu_indices(m, 1)
    c_sigma = cov[hi] - cov[lo]  # (contrasts, M): cᵀΣ
    reach = (c_sigma[:, i] - c_sigma[:, j]) ** 2  # (cᵀΣe)² for every contrast and pair
    w = p[i, j] * (1.0 - p[i, j])
    per_vote = w / (1.0 + w * (cov[i, i] + cov[j, j] - 2.0 * cov[i, j]))  # Sherman–Morrison
    # A question's share shrinks with the chance the board already answers it right, so a settled
    # question (a clear leader) hands its draws to the open ones.
    wrong = ndtr(-(np.abs(theta[hi] - theta[lo]) / np.sqrt(var) - shift))
    gain = np.zeros(i.size)
    for q in range(len(QUESTIONS)):
        ask = question == q
        g = per_vote * (value[ask] @ reach[ask])
        total = g.sum()
        open_q = min(1.0, float(wrong[ask].sum())) if q < 2 else float(wrong[ask].mean())
        if total > 0 and np.isfinite(total):
            gain += QUESTION_SHARES[q] * open_q * g / total
    return gain


def newcomer_gain(theta: np.ndarray, counts: np.ndarray, battles: np.ndarray, threshold: int) -> np.ndarray:
    """Per pair: the share of a vote each model short of ``threshold`` battles should get, spent on the
    opponents that narrow its interval most; zeros when no model is short."""
    m = theta.size
    short = np.clip(1.0 - battles / max(threshold, 1), 0.0, 1.0)
    gain = np.zeros(m * (m - 1) // 2)
    if not short.any():
        return gain
    cov, p = _covariance(theta, counts)
    i, j = np.triu_indices(m, 1)
    w = p[i, j] * (1.0 - p[i, j])
    own = cov[i, i] + cov[j, j] - 2.0 * cov[i, j]
    for k in np.flatnonzero(short):
        drop = w * (cov[k, i] - cov[k, j]) ** 2 / (1.0 + w * own)
        drop[(i != k) & (j != k)] = 0.0  # its battles, not other pairs' indirect help
        total = drop.sum()
        if total > 0:
            gain += short[k] * drop / total
    return gain / short.sum()


def order_probabilities(theta: np.ndarray, counts: np.ndarray, battles: np.ndarray, threshold: int,
                        floor: float) -> np.ndarray:
    """The ``order`` sampler's probability of each pair (sums to 1, each ≥ floor / #pairs)."""
    m = theta.size
    n_pairs = m * (m - 1) // 2
    uniform = np.full(n_pairs, 1.0 / n_pairs)
    parts = [(order_gain(theta, counts), 1.0 - NEWCOMER_SHARE),
             (newcomer_gain(theta, counts, battles, threshold), NEWCOMER_SHARE)]
    mix, share = np.zeros(n_pairs), 0.0
    for gain, weight in parts:
        total = gain.sum()
        if total > 0 and np.isfinite(total):
            mix += weight * gain / total
            share += weight
    targeted = mix / share if share > 0 else uniform
    return (1.0 - floor) * targeted + floor * uniform

"""The board each stretch of time is tested against: the reference votes *outside* that stretch.

Why leave the window out. A campaign tested against a reference it is part of moves the reference
with it: ids that vote honestly for weeks and then only for a target are "established" when they
attack, so their votes lift the target in the reference itself and honest newcomers' votes on it
then look like a campaign the other way (measured: the filter doubled such an attack). Fitting the
reference without the window's votes makes the window's votes — new and established alike —
independent of what they are compared with, so the test's variance (the votes' plus the fitted
ratings', their inverse Fisher information) is the right one.

Why a prior. A model with no reference votes (new this week) has no rating to compare with; a
ridge without a matching variance puts it at 1000 with zero variance and any result is
"significant". Every fit here carries the same weak N(0, 400²) prior on Elo ratings
(``bradley_terry.RIDGE``) in its estimate *and* in its covariance: a model without reference votes
gets a 400-Elo standard deviation, so its votes cannot be a campaign against nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sciarena.board.bradley_terry import RIDGE, fit_pairs
from sciarena.votes.schema import score_of_a


@dataclass(frozen=True, eq=False)
class References:
    """Per window (start, stop]: θ of the reference votes outside it (W, M) and their covariance (W, M, M).
    ``usable``: the window leaves at least ``share`` of the reference votes outside it."""

    theta: np.ndarray
    cov: np.ndarray
    usable: np.ndarray
    battles: np.ndarray  # (W, M): each model's reference battles outside the window


def pair_index(a: np.ndarray, b: np.ndarray, n_models: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(every unordered pair's i < j, and each vote's pair number) over all M·(M−1)/2 pairs."""
    i, j = np.triu_indices(n_models, 1)
    number = np.full((n_models, n_models), -1, dtype=np.int64)
    number[i, j] = number[j, i] = np.arange(i.size)
    return i, j, number[a, b]


def _fit(i: np.ndarray, j: np.ndarray, wins: np.ndarray, battles: np.ndarray, n_models: int
         ) -> tuple[np.ndarray, np.ndarray]:
    """θ (R, M) and covariance (R, M, M) of ridged fits (one per row of wins/battles)."""
    rounds = wins.shape[0]
    theta = fit_pairs(i, j, wins, battles, n_models, np.full(rounds, RIDGE))
    mu = 1.0 / (1.0 + np.exp(theta[:, j] - theta[:, i]))
    w = battles * mu * (1.0 - mu)
    info = np.zeros((rounds, n_models, n_models))
    info[:, i, j] = -w
    info[:, j, i] = -w
    offsets = (np.arange(rounds) * n_models)[:, None]
    degree = (np.bincount((offsets + i).ravel(), w.ravel(), rounds * n_models)
              + np.bincount((offsets + j).ravel(), w.ravel(), rounds * n_models))
    diag = np.arange(n_models)
    info[:, diag, diag] = degree.reshape(rounds, n_models) + RIDGE
    return theta, np.linalg.inv(info)


def ridged_fit(n_models: int, a: np.ndarray, b: np.ndarray, outcome: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:
    """θ (M,) and covariance (M, M) of the votes under the weak prior."""
    i, j, pair = pair_index(a, b, n_models)
    lower = a < b
    score = np.where(lower, score_of_a(outcome), 1.0 - score_of_a(outcome))
    wins = np.bincount(pair, score, i.size)[None, :]
    battles = np.bincount(pair, minlength=i.size).astype(np.float64)[None, :]
    theta, cov = _fit(i, j, wins, battles, n_models)
    return theta[0], cov[0]


def leave_window_out(n_models: int, a: np.ndarray, b: np.ndarray, outcome: np.ndarray, pos: np.ndarray,
                     reference: np.ndarray, starts: np.ndarray, stops: np.ndarray, share: float) -> References:
    """The reference votes (mask ``reference``) fitted once per window without the window's votes.

    ``pos`` is each vote's place in time (seconds, or its number when untimed), ascending."""
    i, j, pair = pair_index(a, b, n_models)
    rows = np.flatnonzero(reference)
    score = np.where(a[rows] < b[rows], score_of_a(outcome[rows]), 1.0 - score_of_a(outcome[rows]))
    pair = pair[rows]
    total_w = np.bincount(pair, score, i.size)
    total_n = np.bincount(pair, minlength=i.size).astype(np.float64)
    lo = np.searchsorted(pos[rows], starts, side="right")
    hi = np.searchsorted(pos[rows], stops, side="right")
    usable = (rows.size - (hi - lo)) >= share * rows.size
    wins = np.tile(total_w, (starts.size, 1))
    battles = np.tile(total_n, (starts.size, 1))
    for w in np.flatnonzero(usable & (hi > lo)):
        inside = pair[lo[w]:hi[w]]
        wins[w] -= np.bincount(inside, score[lo[w]:hi[w]], i.size)
        battles[w] -= np.bincount(inside, minlength=i.size)
    theta = np.zeros((starts.size, n_models))
    cov = np.zeros((starts.size, n_models, n_models))
    if usable.any():
        theta[usable], cov[usable] = _fit(i, j, wins[usable], battles[usable], n_models)
    per_model = np.zeros((starts.size, n_models))
    for side in (i, j):
        np.add.at(per_model.T, side, battles.T)
    return References(theta, cov, usable, per_model)

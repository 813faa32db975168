"""Online Elo (paper appendix A.2), kept to show why the leaderboard uses Bradley–Terry.

After each vote, with E = 1/(1 + 10^((R_b − R_a)/400)) and S = 1 (a wins), 0.5 (tie
or both bad) or 0 (b wins): R_a += K(S − E), R_b −= K(S − E). K defaults to 4 as
in FastChat. The result depends on the order of the votes; :func:`order_sensitivity`
replays the same votes in shuffled orders to show by how much.

Speed: the update is sequential, so it is a Python loop over votes (about a second
per million votes for one order); bootstrap rounds and shuffled orders run together,
vectorised over rounds, at about 10 µs per vote whatever the number of rounds.
"""

from __future__ import annotations

import numpy as np

from sciarena.board.table import VoteTable
from sciarena.votes.schema import score_of_a

DEFAULT_K = 4.0
INITIAL = 1000.0
_BLOCK = 20_000  # votes replayed per block in the batched replays


def online_elo(a: np.ndarray, b: np.ndarray, score: np.ndarray, n_models: int, *,
               k: float = DEFAULT_K, initial: float = INITIAL) -> np.ndarray:
    """Ratings after replaying the votes in the given order."""
    ratings = [initial] * n_models
    for ia, ib, s in zip(a.tolist(), b.tolist(), score.tolist()):
        ra, rb = ratings[ia], ratings[ib]
        delta = k * (s - 1.0 / (1.0 + 10.0 ** ((rb - ra) / 400.0)))
        ratings[ia] = ra + delta
        ratings[ib] = rb - delta
    return np.array(ratings)


def online_elo_batch(a: np.ndarray, b: np.ndarray, score: np.ndarray, n_models: int, *,
                     k: float = DEFAULT_K, initial: float = INITIAL,
                     ratings: np.ndarray | None = None) -> np.ndarray:
    """Several replays at once: a, b, score are (rounds, votes). Returns (rounds, M).

    ``ratings`` continues from earlier ratings (so long replays can run in blocks).
    """
    rounds = a.shape[0]
    ratings = np.full((rounds, n_models), initial) if ratings is None else ratings.copy()
    rows = np.arange(rounds)
    for t in range(a.shape[1]):
        ia, ib = a[:, t], b[:, t]
        ra, rb = ratings[rows, ia], ratings[rows, ib]
        delta = k * (score[:, t] - 1.0 / (1.0 + 10.0 ** ((rb - ra) / 400.0)))
        ratings[rows, ia] = ra + delta
        ratings[rows, ib] = rb - delta
    return ratings


def vote_order(table: VoteTable) -> np.ndarray:
    """Chronological order when every vote has a timestamp, else the stored order."""
    if table.n_votes and np.isfinite(table.timestamp).all():
        return np.argsort(table.timestamp, kind="stable")
    return np.arange(table.n_votes)


def table_elo(table: VoteTable, *, k: float = DEFAULT_K,
              mask: np.ndarray | None = None) -> np.ndarray:
    """Online Elo of a table's votes (optionally a subset) in chronological order."""
    order = vote_order(table)
    if mask is not None:
        order = order[mask[order]]
    return online_elo(table.a[order], table.b[order], score_of_a(table.outcome[order]),
                      len(table.models), k=k)


def bootstrap_elo(table: VoteTable, rounds: int, seed: int, *,
                  k: float = DEFAULT_K) -> np.ndarray:
    """Online Elo on ``rounds`` resamples (with replacement, random order) → (rounds, M).

    Resampled votes are drawn block by block so memory stays bounded.
    """
    rng = np.random.default_rng(seed)
    n, m = table.n_votes, len(table.models)
    score = score_of_a(table.outcome)
    ratings = np.full((rounds, m), INITIAL)
    for start in range(0, n, _BLOCK):
        picks = rng.integers(0, n, size=(rounds, min(_BLOCK, n - start)))
        ratings = online_elo_batch(table.a[picks], table.b[picks], score[picks], m, k=k,
                                   ratings=ratings)
    return ratings


def order_sensitivity(table: VoteTable, rounds: int = 20, seed: int = 0, *,
                      k: float = DEFAULT_K) -> np.ndarray:
    """Online Elo of the same votes replayed in ``rounds`` random orders → (rounds, M)."""
    rng = np.random.default_rng(seed)
    n, m = table.n_votes, len(table.models)
    orders = np.tile(np.arange(n, dtype=np.int32), (rounds, 1))
    rng.permuted(orders, axis=1, out=orders)
    score = score_of_a(table.outcome)
    ratings = np.full((rounds, m), INITIAL)
    for start in range(0, n, _BLOCK):
        block = orders[:, start: start + _BLOCK]
        ratings = online_elo_batch(table.a[block], table.b[block], score[block], m, k=k,
                                   ratings=ratings)
    return ratings

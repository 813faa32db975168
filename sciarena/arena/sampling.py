"""Which pair battles next: the uniform, inverse-square-root, adaptive and order pair samplers.

A sampler turns the usable models and a :class:`SamplerState` (ratings, pair battle counts and
battles per model, as the board last computed them) into one probability per unordered pair.
``draw_pair`` then draws a pair, lets a drawn pipeline meet its base (pairing.PIPELINE_MEETS_BASE,
as before) and shuffles A/B.

The adaptive sampler (after Chiang et al. 2024, Chatbot Arena §5) weighs each pair by how much one
more vote on it is expected to shrink the uncertainty that decides what the board shows:

* the variance of the difference between models adjacent in rating, weighted by the chance their
  order is wrong (adjacent ranks whose intervals overlap matter; a settled order does not);
* the variance of each model still below the listing threshold (it must get votes to be listed).

Uncertainty is the Bradley–Terry Fisher information at the state's ratings (the Laplacian of
n_ij·p_ij·(1−p_ij), plus the board's N(0, 400²) prior so a model without votes has a finite, wide
variance). One vote on (i, j) adds w·e·eᵀ to it, so by Sherman–Morrison the variance of a contrast c
drops by w·(cᵀΣe)² / (1 + w·eᵀΣe): one matrix inverse per state, not a refit. The result is mixed
with a uniform floor, so every pair keeps at least ``floor / #pairs`` of the draws and the
Bradley–Terry fit always sees every pair.

The order sampler (arena/order_weights.py) weighs pairs instead by how much a vote raises the chance
that the board's order answers are right: who is first, the top five, each pair of neighbours, and
where a model short of the listing threshold lands; same floor, same Fisher covariance.

Pure numpy over records; the probabilities of one (state, usable pool) are computed once and kept
by the :class:`PairSampler` so a battle only draws (measured in benchmarks/bench_sampling.py).
"""

from __future__ import annotations

import math
import random
import threading
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np

from sciarena.arena.order_weights import ORDER_FLOOR, order_probabilities
from sciarena.core.errors import SciArenaError

SAMPLERS = ("adaptive", "inverse_sqrt", "order", "uniform")
DEFAULT_FLOOR = 0.2  # share of draws spread uniformly over all pairs, whatever the adaptive weights say
# The order sampler spends its targeted draws on few pairs (the leaders, the top-five boundary), so it
# keeps more of them uniform: at 0.45 the mean interval width stays within 5 % of uniform sampling's
# (benchmarks/bench_sampling.py), which a 0.2 floor does not.
SAMPLER_FLOORS = {"adaptive": DEFAULT_FLOOR, "order": ORDER_FLOOR}
LISTING_THRESHOLD = 100  # the paper lists a model from 100 battles on (board.PROVISIONAL_BATTLES)
BOARD_SAMPLERS = ("adaptive", "order")  # samplers whose weights are recomputed per board state
_NATURAL_PER_ELO = math.log(10.0) / 400.0
_PRIOR = 1.0 / math.log(10.0) ** 2  # precision of a N(0, 400²) prior on Elo, in natural units


@dataclass(frozen=True, eq=False)
class SamplerState:
    """What the board knows, as the sampler needs it; ``models`` index every array.

    ``ratings`` are Elo (NaN when the fit could not rate a model); ``pair_battles`` (M, M) symmetric
    battle counts; ``battles`` per model. ``version`` names the votes the state was computed from
    (the board's vote count), so a sampler recomputes its weights only when it changes."""

    models: tuple[str, ...]
    ratings: np.ndarray
    pair_battles: np.ndarray
    battles: np.ndarray
    listing_threshold: int = LISTING_THRESHOLD
    version: int = 0
    computed_at: float = 0.0  # epoch seconds

    @classmethod
    def empty(cls) -> "SamplerState":
        """No votes yet: every model unrated, every pair unplayed."""
        return cls((), np.zeros(0), np.zeros((0, 0)), np.zeros(0))


@dataclass(frozen=True, eq=False)
class PairWeights:
    """One probability per unordered pair (i < j) of ``models``; they sum to 1."""

    models: tuple[str, ...]
    pair_i: np.ndarray
    pair_j: np.ndarray
    probability: np.ndarray
    cumulative: np.ndarray = field(repr=False)

    def per_model(self) -> dict[str, float]:
        """Each model's share of the battles these weights draw (the shares sum to 2: two per battle)."""
        share = np.bincount(self.pair_i, self.probability, len(self.models)) \
            + np.bincount(self.pair_j, self.probability, len(self.models))
        return dict(zip(self.models, share.tolist()))

    def pairs(self) -> list[tuple[str, str, float]]:
        """(model, model, probability) for every pair, the likeliest first."""
        order = np.argsort(-self.probability, kind="stable")
        return [(self.models[self.pair_i[k]], self.models[self.pair_j[k]], float(self.probability[k]))
                for k in order]

    def pair(self, a: str, b: str) -> float:
        i, j = sorted((self.models.index(a), self.models.index(b)))
        k = np.flatnonzero((self.pair_i == i) & (self.pair_j == j))
        return float(self.probability[k[0]])


def _pairs(m: int) -> tuple[np.ndarray, np.ndarray]:
    i, j = np.triu_indices(m, 1)
    return i, j


def _weights(models: tuple[str, ...], raw: np.ndarray) -> PairWeights:
    i, j = _pairs(len(models))
    p = raw / raw.sum()
    return PairWeights(models, i, j, p, np.cumsum(p))


def _aligned(state: SamplerState, names: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The state's ratings (natural units, 0 when unknown), pair counts and battles for ``names``."""
    where = {name: k for k, name in enumerate(state.models)}
    idx = np.array([where.get(n, -1) for n in names], dtype=np.int64)
    known = idx >= 0
    theta = np.zeros(len(names))
    rated = known.copy()
    rated[known] = np.isfinite(state.ratings[idx[known]])
    theta[rated] = (state.ratings[idx[rated]] - 1000.0) * _NATURAL_PER_ELO
    counts = np.zeros((len(names), len(names)))
    sub = np.flatnonzero(known)
    counts[np.ix_(sub, sub)] = state.pair_battles[np.ix_(idx[sub], idx[sub])]
    battles = np.zeros(len(names))
    battles[known] = state.battles[idx[known]]
    return theta, counts, battles


def adaptive_raw(theta: np.ndarray, counts: np.ndarray, battles: np.ndarray, threshold: int) -> np.ndarray:
    """Expected drop, per pair (i < j), of the uncertainty that decides the shown ranks (module doc)."""
    m = theta.size
    i, j = _pairs(m)
    p_all = 1.0 / (1.0 + np.exp(-(theta[:, None] - theta[None, :])))
    info = counts * p_all * (1.0 - p_all)
    hess = -info
    np.fill_diagonal(hess, info.sum(axis=1) + _PRIOR)
    cov = np.linalg.inv(hess)
    # Contrasts: adjacent models in rating order, each weighted by the chance their order is wrong.
    order = np.argsort(-theta, kind="stable")
    hi, lo = order[:-1], order[1:]
    diff = theta[hi] - theta[lo]
    sd = np.sqrt(np.maximum(cov[hi, hi] + cov[lo, lo] - 2 * cov[hi, lo], 1e-12))
    wrong = np.array([math.erfc(abs(d) / s / math.sqrt(2.0)) for d, s in zip(diff, sd)])  # 2·Φ(−|d|/sd)
    contrast_cov = cov[hi] - cov[lo]  # (M−1, M): cᵀΣ
    # Models below the listing threshold: their own variance, weighted by how far they are from it.
    short = np.clip(1.0 - battles / max(threshold, 1), 0.0, 1.0)
    gain_c = contrast_cov[:, i] - contrast_cov[:, j]  # cᵀΣe_ij for every contrast and pair
    gain_m = cov[:, i] - cov[:, j]  # e_kᵀΣe_ij
    g = (wrong[:, None] * gain_c ** 2).sum(axis=0) + (short[:, None] * gain_m ** 2).sum(axis=0)
    w = p_all[i, j] * (1.0 - p_all[i, j])
    s = cov[i, i] + cov[j, j] - 2 * cov[i, j]
    return w * g / (1.0 + w * s)


def pair_weights(sampler: str, names: Sequence[str], state: SamplerState | None,
                 battle_counts: Mapping[str, int] | None = None, floor: float | None = None) -> PairWeights:
    """The probability of each pair of ``names`` being drawn by ``sampler``.

    ``battle_counts`` (battles per model, kept current by every vote) override the state's for the
    inverse-square-root weights and the listing term, which must not wait for the next board."""
    models = tuple(names)
    m = len(models)
    if m < 2:
        raise SciArenaError("Fewer than two models are available right now; please try again later.")
    i, j = _pairs(m)
    floor = SAMPLER_FLOORS.get(sampler, DEFAULT_FLOOR) if floor is None else floor
    if sampler == "uniform":
        return _weights(models, np.ones(i.size))
    state = state or SamplerState.empty()
    theta, counts, battles = _aligned(state, models)
    if battle_counts is not None:
        battles = np.array([float(battle_counts.get(n, 0)) for n in models])
    if sampler == "inverse_sqrt":
        # Today's draw: each side independently with weight 1/sqrt(1+battles), distinct.
        side = 1.0 / np.sqrt(1.0 + battles)
        total = side.sum()
        both = side[i] * side[j] * (1.0 / (total - side[i]) + 1.0 / (total - side[j]))
        return _weights(models, both)
    if sampler == "order":
        return _weights(models, order_probabilities(theta, counts, battles, state.listing_threshold, floor))
    if sampler != "adaptive":
        raise SciArenaError(f"unknown sampler {sampler!r}; use {', '.join(SAMPLERS)}")
    raw = adaptive_raw(theta, counts, battles, state.listing_threshold)
    total = raw.sum()
    adaptive = raw / total if total > 0 and np.isfinite(total) else np.full(i.size, 1.0 / i.size)
    return _weights(models, (1.0 - floor) * adaptive + floor / i.size)


class PairSampler:
    """Draws pairs with one sampler, keeping the weights of the last (state, pool, counts) seen.

    Thread-safe; the cache holds one entry, so a new board or a change of the usable pool costs one
    computation (a few ms for 38 models) and every other battle a draw (tens of µs)."""

    def __init__(self, sampler: str = "adaptive", floor: float | None = None) -> None:
        if sampler not in SAMPLERS:
            raise SciArenaError(f"unknown sampler {sampler!r}; use {', '.join(SAMPLERS)}")
        floor = SAMPLER_FLOORS.get(sampler, DEFAULT_FLOOR) if floor is None else floor
        if not 0.0 < floor <= 1.0:
            raise SciArenaError(f"the sampler's uniform floor must be in (0, 1], got {floor}")
        self.sampler = sampler
        self.floor = floor
        self._lock = threading.Lock()
        self._key: tuple | None = None
        self._weights: PairWeights | None = None

    def weights(self, names: Sequence[str], state: SamplerState | None,
                battle_counts: Mapping[str, int] | None = None) -> PairWeights:
        # The adaptive weights follow the board (its state); the listing term's counts move with every
        # vote, but recomputing per vote would be a computation per battle, so they are read per state.
        # The inverse-square-root weights are cheap and follow the live counts exactly.
        live = tuple(sorted((battle_counts or {}).items())) if self.sampler == "inverse_sqrt" else ()
        version = (id(state), state.version) if state is not None and self.sampler in BOARD_SAMPLERS else None
        key = (tuple(names), version, live)
        with self._lock:
            if key == self._key and self._weights is not None:
                return self._weights
        fresh = pair_weights(self.sampler, names, state, battle_counts, self.floor)
        with self._lock:
            self._key, self._weights = key, fresh
        return fresh

    def draw(self, names: Sequence[str], rng: random.Random, state: SamplerState | None,
             battle_counts: Mapping[str, int] | None = None) -> tuple[str, str]:
        """One unordered pair of ``names`` (the lower-indexed first)."""
        w = self.weights(names, state, battle_counts)
        k = int(np.searchsorted(w.cumulative, rng.random() * w.cumulative[-1], side="right"))
        k = min(k, w.pair_i.size - 1)
        return w.models[int(w.pair_i[k])], w.models[int(w.pair_j[k])]

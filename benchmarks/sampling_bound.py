"""The best fixed pair design for each target (bench_sampling.py's "bound"): it knows the true ratings,
so it is a floor to aim at, not a sampler.

For a design π (a share of the votes per pair) and n votes the fit's estimate is, to first order,
θ̂ ~ N(θ, H(π)⁺/n) with H(π) = Σ_e π_e·p_e(1−p_e)·(e_i − e_j)(e_i − e_j)ᵀ. Each target is scored
under that law: the top model / the top-5 set by Monte Carlo (common draws, so the score only rises
with n), the adjacent shares and the mean CI width exactly. The design is searched by exponentiated
gradient on a smooth stand-in (the sum of the chances that a deciding contrast has the wrong sign, or
the widths themselves); the votes it needs are found by bisection on n. The level to reach is uniform
sampling's own score at ``target`` votes under the same law, so the ratio is self-consistent; the
static board has no model joining or leaving (the simulation has one of each).

The newcomer targets have closed forms: 100 battles need 100 votes (it is in every battle), and its
half-width reaches 50 Elo soonest against the opponent nearest in rating, taken as exactly known.
"""

from __future__ import annotations

import math

import numpy as np
from sampling_sim import ELO, SEPARATED_GAP, Z95
from scipy.special import ndtr

DRAWS = 20_000
ITERATIONS = 400


class Design:
    def __init__(self, ratings_elo: np.ndarray, seed: int = 0) -> None:
        order = np.argsort(-ratings_elo, kind="stable")
        self.elo = ratings_elo[order]
        self.theta = (self.elo - 1000.0) / ELO
        m = self.m = self.theta.size
        self.i, self.j = np.triu_indices(m, 1)
        p = 1 / (1 + np.exp(-(self.theta[self.i] - self.theta[self.j])))
        self.w = p * (1 - p)
        self.noise = np.random.default_rng(seed).standard_normal((DRAWS, m))
        eye = np.eye(m)
        adjacent = [(k, k + 1) for k in range(m - 1) if self.elo[k] != self.elo[k + 1]]
        apart = [(a, b) for a, b in adjacent if self.elo[a] - self.elo[b] >= SEPARATED_GAP]
        top = [(0, k) for k in range(1, m)]
        top5 = [(a, b) for a in range(5) for b in range(5, m)]
        self.contrasts = {name: (np.array([eye[a] - eye[b] for a, b in pairs]), pairs)
                          for name, pairs in (("top", top), ("top5", top5), ("adjacent", adjacent),
                                              ("separated", apart))}
        self.contrasts["ci"] = (eye - 1.0 / m, [])

    def covariance(self, pi: np.ndarray, n: float) -> np.ndarray:
        h = np.zeros((self.m, self.m))
        h[self.i, self.j] = h[self.j, self.i] = -n * pi * self.w
        np.fill_diagonal(h, -h.sum(axis=1))
        return np.linalg.pinv(h)

    def score(self, target: str, pi: np.ndarray, n: float) -> float:
        """The target's value under design ``pi`` with ``n`` votes (higher is better; CI: minus width)."""
        cov = self.covariance(pi, n)
        if target == "ci":
            return -float((2 * Z95 * ELO * np.sqrt(np.maximum(np.diag(cov), 0))).mean())
        if target in ("top", "top5"):
            vals, vecs = np.linalg.eigh(cov)
            draws = self.theta + (self.noise * np.sqrt(np.maximum(vals, 0))) @ vecs.T
            if target == "top":
                return float((draws.argmax(axis=1) == 0).mean())
            fifth = np.partition(draws, -5, axis=1)[:, -5]
            return float((draws[:, :5].min(axis=1) >= fifth).mean())
        c, _ = self.contrasts[target]
        z = (c @ self.theta) / np.sqrt(np.einsum("km,mn,kn->k", c, cov, c))
        return float(ndtr(z - (Z95 if target == "separated" else 0.0)).mean())

    def votes_for(self, target: str, pi: np.ndarray, level: float, hi: float = 1e6) -> float:
        lo_n, hi_n = 10.0, hi
        if self.score(target, pi, hi_n) < level:
            return math.inf
        for _ in range(40):
            mid = math.sqrt(lo_n * hi_n)
            lo_n, hi_n = (mid, hi_n) if self.score(target, pi, mid) < level else (lo_n, mid)
        return hi_n

    def gradient(self, target: str, pi: np.ndarray, n: float) -> np.ndarray:
        """d(stand-in loss)/dπ: the stand-in falls as the target rises."""
        c, _ = self.contrasts[target]
        cov = self.covariance(pi, n)
        uc = c @ cov
        var = np.maximum(np.einsum("km,km->k", uc, c), 1e-18)
        reach = (uc[:, self.i] - uc[:, self.j]) ** 2 * (n * self.w)  # −dVar_c/dπ_e
        if target == "ci":
            per_var = 1.0 / (2 * np.sqrt(var))
        else:
            z = (c @ self.theta) / np.sqrt(var)
            shift = Z95 if target == "separated" else 0.0
            per_var = np.exp(-0.5 * (z - shift) ** 2) * z / (2 * var)  # d(chance wrong)/dVar, up to 1/√2π
        return -(per_var @ reach)


def best_design(design: Design, target: str, target_votes: int) -> float:
    """Votes the best design found needs for uniform's score at ``target_votes``, as a share of those."""
    uniform = np.full(design.i.size, 1.0 / design.i.size)
    level = design.score(target, uniform, target_votes)
    pi, n = uniform.copy(), float(target_votes)
    best = design.votes_for(target, uniform, level)
    for step in range(ITERATIONS):
        g = design.gradient(target, pi, n)
        pi = pi * np.exp(-0.1 * g / (np.abs(g).mean() + 1e-300))
        pi /= pi.sum()
        if step % 50 == 49:
            need = design.votes_for(target, pi, level, hi=4 * target_votes)
            if need < best:
                best, n = need, need
    return best / target_votes


def newcomer_bounds(ratings_elo: np.ndarray, added: int, listed_uniform: float, half_uniform: float,
                    half_width: float) -> tuple[float, float]:
    """Shares of uniform's mean votes: 100 battles in 100 votes, and the half-width against the nearest
    rated opponent taken as known (one vote adds p(1−p) to its Fisher information)."""
    others = np.delete(ratings_elo, added)
    gap = np.abs(others - ratings_elo[added]).min() / ELO
    p = 1 / (1 + math.exp(-gap))
    votes = (Z95 * ELO / half_width) ** 2 / (p * (1 - p))
    return 100.0 / listed_uniform, votes / half_uniform

"""Votes each sampler needs for uniform sampling's certainty, with intervals over seeds (bench_sampling.py).

A certainty target (top model right, top-5 set right, share of adjacent pairs ordered, share of
adjacent ≥ 10 Elo pairs separated) is a share of runs, or of pairs, that rises with the votes; with 20
seeds a share of runs moves in steps of 0.05, so reading the first checkpoint that reaches a level is
mostly noise. Each sampler's curve (mean over seeds, from ``fit_from`` votes on) is instead fitted by
P(v) = Φ(α + β·√v) (a contrast's z grows with √v; fractional-probit likelihood, a half-run of
shrinkage so an all-right curve stays finite), and the mean CI width by log w = a + b·log v. Uniform's
fitted value at the target vote count is the level; a sampler's votes are where its own fit meets it,
so uniform needs the target votes by construction. A crossing before ``fit_from`` is extrapolated and
marked. The newcomer targets (votes after it joins until 100 battles, until its 95 % half-width
≤ 50 Elo) are per seed; their mean is compared with uniform's. Intervals: 95 % percentile bootstrap
over seeds, paired (a seed's battle outcomes are shared by every sampler, sampling_sim.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from sampling_sim import Curves
from scipy.optimize import minimize
from scipy.special import ndtr, ndtri

TARGETS = ("top", "top5", "adjacent", "separated", "ci", "listed", "half50")
LABELS = {
    "top": "top model right",
    "top5": "top-5 set right",
    "adjacent": "adjacent pairs ordered (share)",
    "separated": "adjacent >=10 Elo separated (share)",
    "ci": "mean 95% CI width",
    "listed": "new model: votes to 100 battles",
    "half50": "new model: votes to CI half <= 50",
}
HALF_WIDTH = 50.0
BOOTSTRAP = 400


def _probit_fit(votes: np.ndarray, share: np.ndarray, runs: int) -> tuple[float, float]:
    """(α, β) of P(v) = Φ(α + β·√v) maximising the fractional-probit likelihood of ``share``."""
    y = (share * runs + 0.5) / (runs + 1.0)  # half a run of shrinkage: an all-right curve keeps a finite fit
    x = np.sqrt(votes / votes.max())

    def loss(ab: np.ndarray) -> float:
        q = np.clip(ndtr(ab[0] + ab[1] * x), 1e-12, 1 - 1e-12)
        return -float((y * np.log(q) + (1 - y) * np.log(1 - q)).sum())

    start = np.polyfit(x, ndtri(np.clip(y, 0.01, 0.99)), 1)[::-1]
    ab = minimize(loss, start, method="Nelder-Mead", options={"xatol": 1e-6, "fatol": 1e-9}).x
    return float(ab[0]), float(ab[1]) / math.sqrt(votes.max())


def _curve_fit(target: str, votes: np.ndarray, rows: np.ndarray) -> tuple[float, float]:
    if target == "ci":
        b, a = np.polyfit(np.log(votes), np.log(rows.mean(axis=0)), 1)
        return float(a), float(b)
    return _probit_fit(votes, rows.mean(axis=0), rows.shape[0])


def _value(target: str, ab: tuple[float, float], v: float) -> float:
    return math.exp(ab[0] + ab[1] * math.log(v)) if target == "ci" else float(ndtr(ab[0] + ab[1] * math.sqrt(v)))


def _crossing(target: str, ab: tuple[float, float], level: float) -> float:
    a, b = ab
    if target == "ci":
        return math.exp((math.log(level) - a) / b) if b < 0 else math.inf
    gap = float(ndtri(level)) - a  # what √v·β must make up
    if gap <= 0:
        return 0.0
    return (gap / b) ** 2 if b > 0 else math.inf


def half_width_votes(c: Curves) -> np.ndarray:
    """Per seed: votes after the new model joined until its half-width first falls to HALF_WIDTH."""
    out = np.full(c.newcomer_half.shape[0], math.inf)
    for r, row in enumerate(c.newcomer_half):
        below = np.flatnonzero(row <= HALF_WIDTH)
        if not below.size:
            continue
        k = int(below[0])
        if k == 0 or not np.isfinite(row[k - 1]):
            out[r] = c.votes[k] - c.join
        else:
            v0, v1, w0, w1 = c.votes[k - 1], c.votes[k], row[k - 1], row[k]
            out[r] = v0 + (v1 - v0) * (w0 - HALF_WIDTH) / (w0 - w1) - c.join
    return out


def _ratio(votes: np.ndarray, own_rows: np.ndarray, uni_rows: np.ndarray, target: str,
           target_votes: int) -> tuple[float, float]:
    """Uniform's fitted certainty at ``target_votes``, and the votes ``own_rows`` need for it / target_votes."""
    level = _value(target, _curve_fit(target, votes, uni_rows), target_votes)
    return level, _crossing(target, _curve_fit(target, votes, own_rows), level) / target_votes


@dataclass(frozen=True)
class Need:
    level: float  # uniform's certainty at the target (per-seed targets: uniform's mean votes)
    votes: float  # this sampler's votes (mean over seeds for per-seed targets)
    ratio: float
    low: float
    high: float
    extrapolated: bool = False  # the crossing lies before the first fitted checkpoint


def needs(curves: Curves, uniform: Curves, target_votes: int, rng: np.random.Generator,
          fit_from: dict[str, int]) -> dict[str, Need]:
    """For every target: this sampler's votes to uniform's certainty at ``target_votes``, as a ratio;
    each certainty curve is fitted from ``fit_from[target]`` votes on."""
    out = {}
    s_own, s_uni = curves.top.shape[0], uniform.top.shape[0]
    # Paired: the same seeds for the sampler and uniform (they share each seed's battle outcomes).
    draws = [(pick, pick) for pick in (rng.integers(0, s_own, s_own) for _ in range(BOOTSTRAP))]
    assert s_own == s_uni
    for target in TARGETS:
        if target in ("listed", "half50"):
            own = curves.newcomer_listed if target == "listed" else half_width_votes(curves)
            ref = uniform.newcomer_listed if target == "listed" else half_width_votes(uniform)
            boot = [own[a].mean() / ref[b].mean() for a, b in draws]
            out[target] = Need(float(ref.mean()), float(own.mean()), float(own.mean() / ref.mean()),
                               *np.percentile(boot, [2.5, 97.5]))
            continue
        window = curves.votes >= fit_from[target]
        votes = curves.votes[window].astype(float)
        rows, ref_rows = getattr(curves, target)[:, window], getattr(uniform, target)[:, window]
        level, point = _ratio(votes, rows, ref_rows, target, target_votes)
        boot = [_ratio(votes, rows[a], ref_rows[b], target, target_votes)[1] for a, b in draws]
        out[target] = Need(level, point * target_votes, point, *np.percentile(boot, [2.5, 97.5]),
                           extrapolated=point * target_votes < fit_from[target])
    return out

"""Votes each sampler needs for uniform sampling's certainty, with intervals over seeds (bench_sampling.py).

A certainty target (top model right, top-5 set right, share of adjacent pairs ordered, share of
adjacent ≥ 10 Elo pairs separated, mean CI width) is a curve over checkpoints, averaged over seeds.
Each averaged curve is made monotone (isotonic regression: on average more votes never make the
board less right) from ``fit_from`` votes on; uniform's monotone value at the target vote count is
the level, and a sampler needs the votes at which its own monotone curve first reaches it (linear
between checkpoints). A curve already at the level at ``fit_from`` is marked: the crossing is at or
before it. With 20 seeds a share of runs moves in steps of 0.05 and a seed that is right early tends
to stay right, so uniform's own ratio can differ from 1 (its flat stretches reach the level early);
the intervals show how far. The newcomer targets (votes after it joins until 100 battles, until its
95 % half-width ≤ 50 Elo) are per seed; their mean is compared with uniform's. Intervals: 95 %
percentile bootstrap over seeds, paired (a seed's battle outcomes are shared by every sampler,
sampling_sim.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from sampling_sim import Curves

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


def isotonic_increasing(y: np.ndarray) -> np.ndarray:
    """Least-squares non-decreasing fit (pool adjacent violators)."""
    blocks: list[list[float]] = []  # [mean, count]
    for value in y.tolist():
        blocks.append([value, 1.0])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            (m2, n2), (m1, n1) = blocks.pop(), blocks.pop()
            blocks.append([(m1 * n1 + m2 * n2) / (n1 + n2), n1 + n2])
    return np.concatenate([np.full(int(n), m) for m, n in blocks])


def _monotone(target: str, rows: np.ndarray) -> np.ndarray:
    """The seeds' mean curve made non-decreasing in "better" (minus the width for the CI target)."""
    sign = -1.0 if target == "ci" else 1.0
    return isotonic_increasing(sign * rows.mean(axis=0))


def _crossing(votes: np.ndarray, curve: np.ndarray, level: float) -> float:
    """First vote count at which the non-decreasing ``curve`` reaches ``level`` (linear between
    checkpoints; the first checkpoint if it starts above); inf if it never does."""
    above = np.flatnonzero(curve >= level - 1e-12)
    if not above.size:
        return math.inf
    k = int(above[0])
    if k == 0 or curve[k] == curve[k - 1]:
        return float(votes[k])
    return float(votes[k - 1] + (votes[k] - votes[k - 1]) * (level - curve[k - 1]) / (curve[k] - curve[k - 1]))


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
    """Uniform's certainty at ``target_votes``, and the votes ``own_rows`` need for it / target_votes."""
    at = int(np.flatnonzero(votes == target_votes)[0])
    level = float(_monotone(target, uni_rows)[at])
    reached = _crossing(votes, _monotone(target, own_rows), level)
    return (-level if target == "ci" else level), reached / target_votes


@dataclass(frozen=True)
class Need:
    level: float  # uniform's certainty at the target (per-seed targets: uniform's mean votes)
    votes: float  # this sampler's votes (mean over seeds for per-seed targets)
    ratio: float
    low: float
    high: float
    extrapolated: bool = False  # already at the level at the first checkpoint read: "at or before"


def needs(curves: Curves, uniform: Curves, target_votes: int, rng: np.random.Generator,
          fit_from: dict[str, int]) -> dict[str, Need]:
    """For every target: this sampler's votes to uniform's certainty at ``target_votes``, as a ratio;
    each certainty curve is read from ``fit_from[target]`` votes on."""
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
                               *np.percentile(boot, [2.5, 97.5], method="nearest"))
            continue
        window = curves.votes >= fit_from[target]
        votes = curves.votes[window].astype(float)
        rows, ref_rows = getattr(curves, target)[:, window], getattr(uniform, target)[:, window]
        level, point = _ratio(votes, rows, ref_rows, target, target_votes)
        boot = [_ratio(votes, rows[a], ref_rows[b], target, target_votes)[1] for a, b in draws]
        out[target] = Need(level, point * target_votes, point, *np.percentile(boot, [2.5, 97.5], method="nearest"),
                           extrapolated=point * target_votes <= votes[0])
    return out

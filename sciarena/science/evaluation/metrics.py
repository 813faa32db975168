"""Scoring a judge against human votes: pure functions over predictions.

Accuracy follows the paper: agreements / valid predictions. Because a judge that
refuses to answer hard items would look better by that measure, agreements / all
items (no verdict counted as wrong) is reported beside it. The 95% interval is a
seeded percentile bootstrap over items (Wilson's score interval is offered too).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

import numpy as np

from sciarena.core.types import DISCIPLINES


class Scorable(Protocol):
    """What scoring needs from a prediction (runner.Prediction has it)."""

    @property
    def subject(self) -> str: ...
    @property
    def human(self) -> str: ...
    @property
    def verdict(self) -> str | None: ...
    @property
    def status(self) -> str: ...
    @property
    def positions(self) -> tuple[str | None, ...]: ...


@dataclass(frozen=True)
class GroupScore:
    items: int
    valid: int
    agreements: int
    accuracy: float  # agreements / valid (nan when nothing is valid)
    accuracy_all: float  # agreements / items


@dataclass(frozen=True)
class PositionStats:
    """Where the judge's letters point, whatever the answers' quality.

    ``said_a_rate`` is over every parsed letter as shown (both orders with swap); on a benchmark
    balanced between A and B, a judge without position bias stays near 0.5. A large gap between
    ``accuracy_human_a`` and ``accuracy_human_b`` says the same thing from the other side.
    """

    letters: int
    said_a: int
    said_a_rate: float
    accuracy_human_a: float
    accuracy_human_b: float
    swap_pairs: int = 0  # items asked in both orders with both replies parsed
    swap_consistent: int = 0  # … of which the two orders named the same answer
    swap_consistency: float = math.nan


@dataclass(frozen=True)
class EvalScore:
    items: int
    valid: int
    invalid: int  # unparseable replies
    inconsistent: int  # with swap: the two orders disagreed
    failed: int  # calls that failed (timeouts, provider errors)
    agreements: int
    accuracy: float
    accuracy_all: float
    ci_low: float
    ci_high: float
    ci_method: str
    per_discipline: Mapping[str, GroupScore] = field(default_factory=dict)
    position: PositionStats | None = None


def accuracy(predictions: Sequence[Scorable]) -> float:
    """Agreements / valid predictions (the paper's measure); nan when none is valid."""
    valid = [p for p in predictions if p.verdict is not None]
    return _ratio(sum(p.verdict == p.human for p in valid), len(valid))


def accuracy_all(predictions: Sequence[Scorable]) -> float:
    """Agreements / all predictions: a missing or unparseable verdict counts as wrong."""
    return _ratio(sum(p.verdict is not None and p.verdict == p.human for p in predictions), len(predictions))


def group_score(predictions: Sequence[Scorable]) -> GroupScore:
    valid = sum(p.verdict is not None for p in predictions)
    agree = sum(p.verdict is not None and p.verdict == p.human for p in predictions)
    return GroupScore(items=len(predictions), valid=valid, agreements=agree,
                      accuracy=_ratio(agree, valid), accuracy_all=_ratio(agree, len(predictions)))


def per_discipline(predictions: Sequence[Scorable], order: Sequence[str] = DISCIPLINES) -> dict[str, GroupScore]:
    """GroupScore per subject: ``order`` first (those present), then any other subject alphabetically."""
    subjects = [s for s in order if any(p.subject == s for p in predictions)]
    subjects += sorted({p.subject for p in predictions} - set(subjects))
    return {s: group_score([p for p in predictions if p.subject == s]) for s in subjects}


def bootstrap_interval(agree: Sequence[bool], valid: Sequence[bool], *, rounds: int = 1000, seed: int = 0,
                       level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap of agreements/valid, resampling items with replacement (seeded)."""
    agree_arr = np.asarray(agree, dtype=bool)
    valid_arr = np.asarray(valid, dtype=bool)
    n = agree_arr.size
    if n == 0 or not valid_arr.any() or rounds < 1:
        return math.nan, math.nan
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, n, size=(rounds, n))
    hits = (agree_arr & valid_arr)[picks].sum(axis=1)
    counted = valid_arr[picks].sum(axis=1)
    ratios = hits[counted > 0] / counted[counted > 0]
    tail = (1.0 - level) / 2.0 * 100.0
    low, high = np.percentile(ratios, [tail, 100.0 - tail])
    return float(low), float(high)


def wilson_interval(successes: int, trials: int, *, z: float = 1.959964) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (95% by default)."""
    if trials <= 0:
        return math.nan, math.nan
    p = successes / trials
    centre = p + z * z / (2 * trials)
    spread = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials))
    denominator = 1 + z * z / trials
    return (centre - spread) / denominator, (centre + spread) / denominator


def position_stats(predictions: Sequence[Scorable]) -> PositionStats:
    """How often the judge said "A" as shown, accuracy by the human's side, and swap consistency."""
    letters = [x for p in predictions for x in p.positions if x is not None]
    said_a = sum(x == "A" for x in letters)
    pairs = [p for p in predictions if len(p.positions) == 2 and None not in p.positions]
    # In a swapped pair, the same answer named twice shows up as two different letters.
    consistent = sum(p.positions[0] != p.positions[1] for p in pairs)
    return PositionStats(
        letters=len(letters), said_a=said_a, said_a_rate=_ratio(said_a, len(letters)),
        accuracy_human_a=accuracy([p for p in predictions if p.human == "A"]),
        accuracy_human_b=accuracy([p for p in predictions if p.human == "B"]),
        swap_pairs=len(pairs), swap_consistent=consistent, swap_consistency=_ratio(consistent, len(pairs)))


def score(predictions: Sequence[Scorable], *, ci: str = "bootstrap", rounds: int = 1000,
          seed: int = 0) -> EvalScore:
    """Every figure of the report; ``ci`` is "bootstrap" (over items, seeded) or "wilson"."""
    overall = group_score(predictions)
    if ci == "bootstrap":
        low, high = bootstrap_interval([p.verdict is not None and p.verdict == p.human for p in predictions],
                                       [p.verdict is not None for p in predictions], rounds=rounds, seed=seed)
        method = f"bootstrap over items, {rounds} rounds, seed {seed}"
    elif ci == "wilson":
        low, high = wilson_interval(overall.agreements, overall.valid)
        method = "Wilson score interval"
    else:
        raise ValueError(f"unknown interval method {ci!r}")
    statuses = [p.status for p in predictions]
    return EvalScore(
        items=overall.items, valid=overall.valid, invalid=statuses.count("invalid"),
        inconsistent=statuses.count("inconsistent"), failed=statuses.count("error"),
        agreements=overall.agreements, accuracy=overall.accuracy, accuracy_all=overall.accuracy_all,
        ci_low=low, ci_high=high, ci_method=method, per_discipline=per_discipline(predictions),
        position=position_stats(predictions))


def score_to_json(result: EvalScore) -> dict[str, Any]:
    """A JSON-ready dict (nan becomes null)."""
    return _clean(asdict(result))


def _clean(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, Mapping):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def _ratio(numerator: int, denominator: int) -> float:
    return numerator / denominator if denominator else math.nan

"""Agreement between two sets of votes on the same battles: accuracy and Cohen's κ, with bootstrap CIs.

Votes are matched by ``id``; each outcome is one of the leaderboard's four (A, B, tie, bad). Two κ
are reported: the plain one (every mismatch counts fully) and a weighted one whose disagreement
weights follow what a vote means for the ratings:

            A    B    tie  bad
    A       0    1    ½    ½
    B       1    0    ½    ½
    tie     ½    ½    0    ½
    bad     ½    ½    ½    0

A against B is a full disagreement: opposite preferences. Every other mismatch is half of one:
one vote prefers a side and the other prefers neither (tie and both-bad are both "no preference",
and both count as half a win in the Bradley–Terry fit), or both prefer neither but disagree on
whether the answers are any good. Restricted to A, tie and B these are exactly linear weights on
the order A < tie < B, so on votes without "bad" the weighted κ equals scikit-learn's
``cohen_kappa_score(weights="linear")`` with that label order (tests/test_agreement.py checks it).

The bootstrap resamples matched votes with replacement: the cell counts of a resample are a
multinomial draw with the observed cell proportions, which is what is drawn here (seeded), so a
round costs sixteen numbers, not one pass over the votes. CI = 2.5th and 97.5th percentiles.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from sciarena.votes.schema import OUTCOMES, VOTE_LABELS

K = len(OUTCOMES)  # A, B, tie, bad: the outcome codes of the vote schema
_HALF = 0.5
DISAGREEMENT = np.array([
    [0.0, 1.0, _HALF, _HALF],
    [1.0, 0.0, _HALF, _HALF],
    [_HALF, _HALF, 0.0, _HALF],
    [_HALF, _HALF, _HALF, 0.0],
])
UNWEIGHTED = 1.0 - np.eye(K)
for _weights in (DISAGREEMENT, UNWEIGHTED):
    _weights.setflags(write=False)  # shared constants: nobody may change them in place
UNKNOWN_DISCIPLINE = "(no discipline)"


def outcome_code(label: object) -> int | None:
    """The leaderboard's outcome code of a vote label ("A", "model_b", "Tie", "both bad" …), else None."""
    return VOTE_LABELS.get(label.strip().lower()) if isinstance(label, str) else None


@dataclass(frozen=True)
class Matched:
    """Outcome codes of the votes found in both sets, in the first set's order."""

    first: np.ndarray  # int codes
    second: np.ndarray
    disciplines: tuple[str, ...]
    only_first: int = 0  # ids found in one set only
    only_second: int = 0
    without_id: int = 0  # records that cannot be matched
    unreadable: int = 0  # matched ids whose vote label is not an outcome in one of the sets

    def __len__(self) -> int:
        return int(self.first.shape[0])


def match_votes(first: Sequence[Mapping[str, Any]], second: Sequence[Mapping[str, Any]]) -> Matched:
    """Pair the votes of two sets by ``id`` (the discipline is the first set's ``subject``, else the second's)."""
    def by_id(records: Sequence[Mapping[str, Any]]) -> tuple[dict[str, Mapping[str, Any]], int]:
        out: dict[str, Mapping[str, Any]] = {}
        missing = 0
        for record in records:
            key = record.get("id")
            if key in (None, ""):
                missing += 1
            else:
                out.setdefault(str(key), record)
        return out, missing

    left, missing_left = by_id(first)
    right, missing_right = by_id(second)
    codes_a, codes_b, disciplines = [], [], []
    unreadable = 0
    for key, record in left.items():
        other = right.get(key)
        if other is None:
            continue
        a, b = outcome_code(record.get("vote")), outcome_code(other.get("vote"))
        if a is None or b is None:
            unreadable += 1
            continue
        codes_a.append(a)
        codes_b.append(b)
        subject = record.get("subject") or other.get("subject")
        disciplines.append(subject.strip() if isinstance(subject, str) and subject.strip() else UNKNOWN_DISCIPLINE)
    both = len(left.keys() & right.keys())
    return Matched(np.array(codes_a, dtype=np.int64), np.array(codes_b, dtype=np.int64), tuple(disciplines),
                   only_first=len(left) - both, only_second=len(right) - both,
                   without_id=missing_left + missing_right, unreadable=unreadable)


def confusion_counts(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """(K, K) counts: rows are the first set's outcomes, columns the second's."""
    return np.bincount(first * K + second, minlength=K * K).reshape(K, K)


def accuracy(counts: np.ndarray) -> np.ndarray:
    """Share of identical outcomes; ``counts`` is (..., K, K)."""
    total = counts.sum(axis=(-2, -1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.trace(counts, axis1=-2, axis2=-1) / total


def kappa(counts: np.ndarray, weights: np.ndarray = DISAGREEMENT) -> np.ndarray:
    """Cohen's κ with disagreement ``weights``: 1 − Σ w·observed / Σ w·expected (chance from the
    margins). NaN where chance disagreement is zero (both sets use one and the same outcome)."""
    counts = np.asarray(counts, dtype=np.float64)
    total = counts.sum(axis=(-2, -1), keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        observed = counts / total
        expected = observed.sum(axis=-1, keepdims=True) * observed.sum(axis=-2, keepdims=True)
        chance = (weights * expected).sum(axis=(-2, -1))
        value = 1.0 - (weights * observed).sum(axis=(-2, -1)) / chance
    return np.where(chance > 1e-12, value, np.nan)


@dataclass(frozen=True)
class Estimate:
    value: float
    lower: float
    upper: float

    def to_json(self) -> dict[str, float | None]:
        def clean(x: float) -> float | None:
            return None if math.isnan(x) else round(x, 4)

        return {"value": clean(self.value), "ci_lower": clean(self.lower), "ci_upper": clean(self.upper)}


@dataclass(frozen=True, eq=False)  # holds an array: compare ``to_json()``
class Agreement:
    scope: str  # "overall" or a discipline
    n: int
    accuracy: Estimate
    kappa_weighted: Estimate
    kappa: Estimate
    counts: np.ndarray  # (K, K)

    def to_json(self) -> dict[str, Any]:
        return {"scope": self.scope, "votes": self.n, "accuracy": self.accuracy.to_json(),
                "kappa_weighted": self.kappa_weighted.to_json(), "kappa": self.kappa.to_json(),
                "confusion": {"outcomes": list(OUTCOMES), "counts": self.counts.tolist()}}


def _estimate(point: float, draws: np.ndarray) -> Estimate:
    draws = draws[np.isfinite(draws)]
    if math.isnan(point) or draws.size == 0:
        return Estimate(point, math.nan, math.nan)
    low, high = np.percentile(draws, [2.5, 97.5])
    return Estimate(point, float(low), float(high))


def agreement(first: np.ndarray, second: np.ndarray, *, scope: str = "overall", rounds: int = 1000,
              rng: np.random.Generator | None = None) -> Agreement:
    """Accuracy, weighted and plain κ of two aligned outcome arrays, each with a bootstrap CI."""
    counts = confusion_counts(first, second)
    n = int(counts.sum())
    if n == 0:
        raise ValueError("no votes to compare")
    rng = rng if rng is not None else np.random.default_rng(0)
    if rounds > 0:
        draws = rng.multinomial(n, counts.ravel() / n, size=rounds).reshape(rounds, K, K)
    else:
        draws = np.empty((0, K, K))
    return Agreement(scope=scope, n=n, counts=counts,
                     accuracy=_estimate(float(accuracy(counts)), accuracy(draws)),
                     kappa_weighted=_estimate(float(kappa(counts)), kappa(draws)),
                     kappa=_estimate(float(kappa(counts, UNWEIGHTED)), kappa(draws, UNWEIGHTED)))


def agreement_report(matched: Matched, *, rounds: int = 1000, seed: int = 0,
                     min_votes: int = 1) -> list[Agreement]:
    """Overall, then each discipline with at least ``min_votes`` matched votes (alphabetical).
    One generator seeded once serves every scope, so the report is reproducible as a whole."""
    rng = np.random.default_rng(seed)
    out = [agreement(matched.first, matched.second, rounds=rounds, rng=rng)]
    names = np.array(matched.disciplines, dtype=object)
    for discipline in sorted(set(matched.disciplines)):
        mask = names == discipline
        if mask.sum() >= min_votes:
            out.append(agreement(matched.first[mask], matched.second[mask], scope=discipline,
                                 rounds=rounds, rng=rng))
    return out

"""The typed result of a quality check, and its JSON and table forms."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, Mapping

# Here, not in check.py, so that callers that only may check (the leaderboard) need not import scipy.stats.
DEFAULT_ALPHA = 0.05


@dataclass(frozen=True)
class TestResult:
    """One test of one voter.

    ``p_value`` is the test's own; ``adjusted_p`` the Holm-adjusted one over the voter's
    tests, and ``fired`` is ``adjusted_p ≤ α``. ``statistic`` is NaN when the voter has no
    vote the test can use (then p = 1). ``details`` holds the counts behind the statistic.
    """

    __test__ = False  # not a pytest test class, despite the name

    name: str
    statistic: float
    p_value: float
    adjusted_p: float
    fired: bool
    details: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class VoterReport:
    voter_id: str
    votes: int
    flagged: bool
    tests: tuple[TestResult, ...]

    @property
    def fired(self) -> tuple[str, ...]:
        """Names of the tests that fired."""
        return tuple(t.name for t in self.tests if t.fired)


@dataclass(frozen=True)
class QualityReport:
    """Every voter with an id, checked; votes without one are counted in ``unchecked_votes``."""

    voters: tuple[VoterReport, ...]
    alpha: float
    seed: int
    tests: tuple[str, ...]
    correction: str
    total_votes: int
    unchecked_votes: int
    skipped: Mapping[str, int] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    campaigns: tuple[Any, ...] = ()  # campaign.Campaign records (detected over all voters, not per voter)
    voter_correction: str = "none"  # over voters ("benjamini-hochberg": check.over_voters); within a voter: correction

    @property
    def flagged(self) -> tuple[str, ...]:
        return tuple(v.voter_id for v in self.voters if v.flagged)


def _number(x: float) -> float | None:
    return None if isinstance(x, float) and not math.isfinite(x) else x


def to_dict(report: QualityReport) -> dict[str, Any]:
    """JSON-ready: ``{"voters": [{"voter_id", "votes", "flagged", "tests": [...]}], ...}``."""
    return {
        "voters": [
            {"voter_id": v.voter_id, "votes": v.votes, "flagged": v.flagged,
             "tests": [{"name": t.name, "statistic": _number(t.statistic), "p_value": t.p_value,
                        "adjusted_p": t.adjusted_p, "fired": t.fired,
                        "details": {k: _number(x) for k, x in t.details.items()}}
                       for t in v.tests]}
            for v in report.voters],
        "flagged": len(report.flagged),
        "alpha": report.alpha,
        "seed": report.seed,
        "tests": list(report.tests),
        "correction": report.correction,
        "voter_correction": report.voter_correction,
        "total_votes": report.total_votes,
        "unchecked_votes": report.unchecked_votes,
        "skipped": dict(report.skipped),
        "notes": list(report.notes),
        "campaigns": [c.to_dict() for c in report.campaigns],
    }


def to_json(report: QualityReport) -> str:
    return json.dumps(to_dict(report), indent=2, ensure_ascii=False)


def format_table(report: QualityReport) -> str:
    """One line per voter, flagged voters first, then a footer with the totals."""
    head = ["Voter", "Votes", "Flagged"] + [f"p {name}" for name in report.tests]
    ordered = sorted(report.voters, key=lambda v: (not v.flagged, v.voter_id))
    body = [[v.voter_id, str(v.votes), ", ".join(v.fired) if v.flagged else "-"]
            + [f"{t.adjusted_p:.3g}" for t in v.tests] for v in ordered]
    widths = [max(len(r[c]) for r in [head] + body) for c in range(len(head))]

    def line(cells: list[str]) -> str:
        return "  ".join(c.rjust(w) if k == 1 or k > 2 else c.ljust(w)
                         for k, (c, w) in enumerate(zip(cells, widths))).rstrip()

    out = [line(head), line(["-" * w for w in widths])] + [line(r) for r in body] if body else []
    out.append("")
    out.append(f"{len(report.flagged)} of {len(report.voters)} voters flagged "
               f"(α = {report.alpha:g}, {report.correction} over {', '.join(report.tests)}, "
               f"{report.voter_correction} over voters; "
               f"seed {report.seed}); p columns are adjusted")
    out.append(f"{report.total_votes} votes, {report.unchecked_votes} without a voter id (kept, unchecked)")
    if report.skipped:
        out.append("skipped: " + ", ".join(f"{k}: {n}" for k, n in report.skipped.items()))
    for c in report.campaigns:
        out.append(f"campaign: {c.votes} vote(s) from {c.voter_ids} {c.cohort} voter id(s) "
                   f"{c.direction} {c.model} from {c.since or 'an unknown time'} to {c.until or 'an unknown time'} "
                   f"({c.test} test, adjusted p = {c.p:.3g}); "
                   + (c.warning or "left out of the default board"))
    if not report.campaigns and report.voters:
        out.append("no campaign detected (new voter ids' results per model, in every stretch of time, match the ratings of the established voters')")
    out.extend(report.notes)
    return "\n".join(out).lstrip("\n")

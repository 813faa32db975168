"""Vote records → arrays → a :class:`QualityReport` for every voter with an id.

``arrays_from_records`` is the only place that knows the record layout, so the source of
the votes can change (a columnar table) without touching the statistics.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from sciarena.science.quality.anomaly import a5_test
from sciarena.science.quality.directional import consensus_test, holm, position_test
from sciarena.science.quality.report import DEFAULT_ALPHA, QualityReport, TestResult, VoterReport
from sciarena.votes.schema import VOTE_LABELS

A5, POSITION, CONSENSUS = "a5_fisher", "position", "consensus"
# No voter is flagged (excluded) — or, by the same rule, readmitted — on a small history: on fewer than
# MIN_VOTER_VOTES of its own votes, or fewer than MIN_HISTORY votes by everybody else, the consensus
# fit rests on a handful of votes and one other person's vote can swing it (p 1e-21 → 0.07 in
# tests/test_stable_flags.py). Such a voter's votes count; the campaign check sees them in aggregate.
MIN_VOTER_VOTES = 20
MIN_HISTORY = 200
TESTS: tuple[str, ...] = (A5, POSITION, CONSENSUS)
VOTER_CORRECTION = "benjamini-hochberg"  # over the voters with enough votes to be decided (over_voters)
NO_VOTER_IDS = ("the votes carry no voter ids (the released SciArena data has none): "
                "nothing to check")


@dataclass(frozen=True, eq=False)
class VoteArrays:
    """Usable votes as arrays, each voter's votes in the order they were cast.

    ``voter`` indexes ``voters`` (−1: the vote has no voter id); ``a``/``b`` index
    ``models``; ``outcome`` is 0 = A, 1 = B, 2 = tie, 3 = both bad.
    """

    models: tuple[str, ...]
    voters: tuple[str, ...]
    voter: np.ndarray
    a: np.ndarray
    b: np.ndarray
    outcome: np.ndarray
    skipped: Mapping[str, int] = field(default_factory=dict)
    times: np.ndarray | None = None  # epoch seconds per vote (NaN: untimed); None when unknown

    def __post_init__(self) -> None:
        n = self.voter.shape[0]
        if any(x.shape != (n,) for x in (self.a, self.b, self.outcome)):
            raise ValueError("voter, a, b and outcome must be 1-D arrays of the same length")
        if n and (min(self.a.min(), self.b.min()) < 0
                  or max(self.a.max(), self.b.max()) >= len(self.models) or (self.a == self.b).any()):
            raise ValueError("model indices out of range or equal on both sides")
        if n and (self.outcome.min() < 0 or self.outcome.max() > 3
                  or self.voter.min() < -1 or self.voter.max() >= len(self.voters)):
            raise ValueError("outcome codes must be 0–3 and voter codes −1 or index voters")

    @property
    def n_votes(self) -> int:
        return int(self.voter.shape[0])

    def subset(self, keep: np.ndarray) -> "VoteArrays":
        """The votes ``keep`` marks, in the same order (voters and models kept as they are)."""
        return VoteArrays(self.models, self.voters, self.voter[keep], self.a[keep], self.b[keep],
                          self.outcome[keep], self.skipped, None if self.times is None else self.times[keep])

    def keys(self) -> np.ndarray:
        """Per voter, a seed key that depends on its id alone (stable checkpoints)."""
        return np.array([voter_key(v) for v in self.voters], dtype=np.uint64)


def voter_key(voter_id: str) -> int:
    """A 63-bit integer from the voter id (for seeding; not secret, ids are already hashed)."""
    return int.from_bytes(hashlib.sha256(voter_id.encode("utf-8")).digest()[:8], "big") >> 1


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def arrays_from_records(records: Iterable[Mapping[str, Any]]) -> VoteArrays:
    """Arrays from vote dicts (``voter_id``, ``modelA``, ``modelB``, ``vote``, optional ``timestamp``).

    Votes are put in time order (ISO timestamps sort as text; votes without one keep their
    place after the timed ones). Unusable votes are counted in ``skipped`` by reason.
    """
    rows = list(records)
    order = sorted(range(len(rows)), key=lambda k: (not _text(rows[k].get("timestamp")),
                                                      _text(rows[k].get("timestamp")), k))
    models: dict[str, int] = {}
    voters: dict[str, int] = {}
    voter, a, b, outcome, times = [], [], [], [], []
    skipped: Counter[str] = Counter()
    for k in order:
        row = rows[k]
        model_a, model_b = _text(row.get("modelA")), _text(row.get("modelB"))
        label = VOTE_LABELS.get(_text(row.get("vote")).lower())
        if not model_a or not model_b:
            skipped["no model name"] += 1
        elif model_a == model_b:
            skipped["same model on both sides"] += 1
        elif label is None:
            skipped["unknown vote label"] += 1
        else:
            who = _text(row.get("voter_id"))
            voter.append(voters.setdefault(who, len(voters)) if who else -1)
            a.append(models.setdefault(model_a, len(models)))
            b.append(models.setdefault(model_b, len(models)))
            outcome.append(label)
            times.append(_epoch(_text(row.get("timestamp"))))
    return VoteArrays(tuple(models), tuple(voters), np.array(voter, dtype=np.int64),
                      np.array(a, dtype=np.int64), np.array(b, dtype=np.int64),
                      np.array(outcome, dtype=np.int64), dict(skipped), np.array(times, dtype=np.float64))


def _epoch(stamp: str) -> float:
    """Seconds since the epoch of an ISO time (naive = UTC); NaN when missing or unreadable."""
    try:
        moment = datetime.fromisoformat(stamp)
    except ValueError:
        return float("nan")
    return (moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)).timestamp()


def raw_pvalues(votes: VoteArrays, *, seed: int, tests: Sequence[str] = TESTS
                 ) -> tuple[np.ndarray, np.ndarray, list[dict[str, np.ndarray]]]:
    """Raw p-values (V, len(tests)), statistics (V, len(tests)) and per-test detail columns."""
    n_voters, n_models = len(votes.voters), len(votes.models)
    p = np.ones((n_voters, len(tests)))
    stat = np.full((n_voters, len(tests)), np.nan)
    details: list[dict[str, np.ndarray]] = []
    for column, name in enumerate(tests):
        if name == A5:
            r = a5_test(votes.voter, votes.a, votes.b, votes.outcome, n_models, n_voters,
                        seed=seed, keys=votes.keys())
            p[:, column], stat[:, column] = r.p_value, r.statistic
            details.append({"checkpoint": r.checkpoint, "df": 2 * r.checkpoint})
        elif name == POSITION:
            pos = position_test(votes.voter, votes.outcome, n_voters)
            p[:, column], stat[:, column] = pos.p_value, pos.share_a
            details.append({"votes_a": pos.votes_a, "votes_b": pos.votes_b})
        elif name == CONSENSUS:
            c = consensus_test(votes.voter, votes.a, votes.b, votes.outcome, n_models, n_voters)
            p[:, column] = c.p_value
            stat[:, column] = np.divide(c.agreements, c.compared, out=np.full(n_voters, np.nan),
                                        where=c.compared > 0)
            details.append({"compared": c.compared, "agreements": c.agreements,
                            "expected_share": np.divide(c.expected, c.compared,
                                                        out=np.full(n_voters, np.nan),
                                                        where=c.compared > 0)})
        else:
            raise ValueError(f"unknown test {name!r}; known: {', '.join(TESTS)}")
    return p, stat, details


def check_votes(votes: VoteArrays, *, alpha: float = DEFAULT_ALPHA, seed: int = 0,
                tests: Sequence[str] = TESTS) -> QualityReport:
    """Run ``tests`` on every voter with an id; flag when any fires after Holm at ``alpha``."""
    tests = tuple(tests)
    n_voters = len(votes.voters)
    unchecked = int((votes.voter < 0).sum())
    notes: list[str] = []
    if n_voters == 0:
        notes.append(NO_VOTER_IDS if votes.n_votes else "no usable votes: nothing to check")
        return QualityReport((), alpha, seed, tests, "holm", votes.n_votes, unchecked,
                             dict(votes.skipped), tuple(notes))
    if n_voters == 1 and unchecked == 0:
        notes.append("only one voter: there is no history to compare it with")
    raw, stat, details = raw_pvalues(votes, seed=seed, tests=tests)
    counts = np.bincount(votes.voter[votes.voter >= 0], minlength=n_voters)
    # Stable decisions: a test that fires on a small history is not yet a decision (see MIN_VOTER_VOTES).
    decided = (counts >= MIN_VOTER_VOTES) & (votes.n_votes - counts >= MIN_HISTORY)
    adjusted = over_voters(holm(raw), decided)
    fired = adjusted <= alpha
    if ((~decided) & fired.any(axis=1) & (counts > 0)).any():
        notes.append(f"a test fired for {int(((~decided) & fired.any(axis=1) & (counts > 0)).sum())} voter(s) with "
                     f"fewer than {MIN_VOTER_VOTES} votes or fewer than {MIN_HISTORY} votes by others to compare "
                     "with: not flagged until the history is large enough")
    reports = []
    for code in np.flatnonzero(counts):  # a voter without usable votes has nothing to report
        results = tuple(
            TestResult(name, float(stat[code, c]), float(raw[code, c]), float(adjusted[code, c]),
                       bool(fired[code, c]),
                       {key: _scalar(col[code]) for key, col in details[c].items()})
            for c, name in enumerate(tests))
        reports.append(VoterReport(votes.voters[code], int(counts[code]), bool(fired[code].any() and decided[code]),
                                   results))
    if unchecked:
        notes.append(f"{unchecked} vote(s) without a voter id: kept as history, not checked")
    reports.sort(key=lambda r: r.voter_id)
    return QualityReport(tuple(reports), alpha, seed, tests, "holm", votes.n_votes, unchecked,
                         dict(votes.skipped), tuple(notes), voter_correction=VOTER_CORRECTION)


def over_voters(adjusted: np.ndarray, family: np.ndarray) -> np.ndarray:
    """Holm-adjusted p-values (voters × tests) adjusted once more over the ``family`` of voters by
    Benjamini–Hochberg: each voter's smallest p is its p for "some test fires"; the step-up makes the
    expected share of honest voters among those flagged at most α, where a per-voter α would flag about
    α of every honest arena (issue 33: 2.2 %, and their votes moved a model 15 Elo). A voter's other
    tests are scaled by the same factor, so "fired" stays the voter's decision test by test."""
    out = adjusted.copy()
    rows = np.flatnonzero(family)
    if rows.size == 0 or adjusted.shape[1] == 0:
        return out
    p = adjusted[rows].min(axis=1)
    order = np.argsort(p, kind="stable")
    stepped = p[order] * rows.size / np.arange(1, rows.size + 1)
    q = np.empty_like(p)
    q[order] = np.minimum(1.0, np.minimum.accumulate(stepped[::-1])[::-1])
    factor = np.divide(q, p, out=np.ones_like(p), where=p > 0)
    out[rows] = np.minimum(1.0, adjusted[rows] * factor[:, None])
    return out


def _scalar(x: Any) -> float:
    return x.item() if hasattr(x, "item") else x  # numpy scalar → int/float for JSON

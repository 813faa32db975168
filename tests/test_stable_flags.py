"""Stable voter decisions (science/quality/check.py MIN_VOTER_VOTES, MIN_HISTORY): the issue's flip —
a scripted voter left out, then readmitted by one other person's vote — reproduced on the statistic,
and measured: how often one added vote by someone else flips a decision on a history large enough."""

from __future__ import annotations

import numpy as np

from sciarena.science.quality.check import MIN_HISTORY, MIN_VOTER_VOTES, VoteArrays, check_votes
from sciarena.science.quality.synthetic import planted_history

MODELS = ("Alpha", "Beta", "Gamma")


def tiny_board(extra: tuple[int, int, int] | None) -> VoteArrays:
    """The issue's shape: 24 scripted (contrarian) votes and 7 by others on three models (seed 71 of a
    search for a flip), plus optionally one more vote by a new voter."""
    rng = np.random.default_rng(71)
    oa = rng.integers(0, 3, 7)
    ob = (oa + rng.integers(1, 3, 7)) % 3
    oo = np.where(np.minimum(oa, ob) == oa, 0, 1)  # others: the lower-indexed model wins
    sa = rng.integers(0, 3, 24)
    sb = (sa + rng.integers(1, 3, 24)) % 3
    so = np.where(np.minimum(sa, sb) == sa, 1, 0)  # scripted: the other one
    a, b, o = np.r_[oa, sa], np.r_[ob, sb], np.r_[oo, so]
    v = np.r_[np.arange(1, 8), np.zeros(24, dtype=int)]
    voters = ("scripted",) + tuple(f"other-{k}" for k in range(7))
    if extra is not None:
        a, b, o, v = np.r_[a, extra[0]], np.r_[b, extra[1]], np.r_[o, extra[2]], np.r_[v, 8]
        voters += ("newcomer",)
    return VoteArrays(MODELS, voters, v.astype(np.int64), a.astype(np.int64), b.astype(np.int64),
                      o.astype(np.int64))


def scripted(report):
    return next(v for v in report.voters if v.voter_id == "scripted")


def test_one_other_vote_swings_the_consensus_test_on_a_tiny_history_but_not_the_decision():
    before = scripted(check_votes(tiny_board(None)))
    after = scripted(check_votes(tiny_board((0, 1, 1))))  # Alpha v Beta, one vote for Beta
    consensus = [next(t for t in r.tests if t.name == "consensus") for r in (before, after)]
    assert consensus[0].fired and consensus[0].adjusted_p < 1e-10  # the test fires …
    assert not consensus[1].fired and consensus[1].adjusted_p > 0.05  # … and one vote later it does not
    # 31 votes in all: too few to decide on, so neither run excludes the voter — nothing flips
    assert before.votes >= MIN_VOTER_VOTES and 8 < MIN_HISTORY
    assert not before.flagged and not after.flagged


def test_one_added_vote_by_someone_else_rarely_flips_a_decision_on_a_large_history():
    history = planted_history(honest_voters=60, planted_per_kind=3, seed=2).votes
    base = check_votes(history)
    flags = {v.voter_id: v.flagged for v in base.voters}
    assert sum(flags.values()) >= 5  # there are decisions to flip
    rng = np.random.default_rng(0)
    flips = decisions = 0
    for trial in range(12):
        a = int(rng.integers(0, len(history.models)))
        b = (a + int(rng.integers(1, len(history.models)))) % len(history.models)
        plus = VoteArrays(history.models, history.voters + (f"newcomer-{trial}",),
                          np.r_[history.voter, len(history.voters)], np.r_[history.a, a], np.r_[history.b, b],
                          np.r_[history.outcome, int(rng.integers(0, 4))])
        after = {v.voter_id: v.flagged for v in check_votes(plus).voters}
        flips += sum(after[k] != flagged for k, flagged in flags.items())
        decisions += len(flags)
    assert flips <= 0.01 * decisions, f"{flips} of {decisions} decisions flipped"

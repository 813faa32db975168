"""Records → arrays → report: planted voters are caught, honest ones pass, bad input is a note."""

from __future__ import annotations

import numpy as np
import pytest

from sciarena.science.quality.check import (
    A5,
    CONSENSUS,
    NO_VOTER_IDS,
    POSITION,
    TESTS,
    VoteArrays,
    arrays_from_records,
    check_votes,
)
from sciarena.science.quality.report import to_dict
from sciarena.science.quality.synthetic import HONEST, planted_history, records_from_arrays


def _record(voter, a, b, vote, ts=None):
    return {"voter_id": voter, "modelA": a, "modelB": b, "vote": vote, "timestamp": ts}


def test_arrays_from_records_codes_labels_orders_by_time_and_counts_skips():
    records = [
        _record("u1", "m1", "m2", "Both Bad", "2026-01-02T00:00:00Z"),
        _record("u1", "m2", "m1", "A", "2026-01-01T00:00:00Z"),
        _record(None, "m1", "m3", "tie"),
        _record("  ", "m1", "m3", "b"),
        _record("u2", "m1", "", "A"),
        _record("u2", "m1", "m1", "A"),
        _record("u2", "m1", "m2", "maybe"),
    ]
    votes = arrays_from_records(records)
    assert votes.voters == ("u1",)
    assert votes.models == ("m2", "m1", "m3")  # first seen in time order
    assert votes.voter.tolist() == [0, 0, -1, -1]
    assert votes.outcome.tolist() == [0, 3, 2, 1]  # the earlier vote of u1 comes first
    assert votes.skipped == {"no model name": 1, "same model on both sides": 1, "unknown vote label": 1}


@pytest.fixture(scope="module")
def planted():
    history = planted_history(honest_voters=300, planted_per_kind=10, seed=3)
    return history, check_votes(history.votes, alpha=0.05, seed=0)


def test_planted_voters_are_caught_by_the_test_meant_for_them(planted):
    history, report = planted
    by_id = {v.voter_id: v for v in report.voters}
    kind = dict(zip(history.votes.voters, history.kind))
    expected_test = {"both_bad": A5, "contrarian": CONSENSUS, "position_a": POSITION}
    for voter_id, test in ((i, expected_test[k]) for i, k in kind.items() if k in expected_test):
        voter = by_id[voter_id]
        assert voter.flagged and test in voter.fired, voter
        result = next(t for t in voter.tests if t.name == test)
        assert result.adjusted_p <= 0.05 and result.p_value <= result.adjusted_p
    honest = [by_id[i] for i, k in kind.items() if k == HONEST]
    assert np.mean([v.flagged for v in honest]) <= 0.05


def test_the_report_records_each_test_and_its_statistic(planted):
    history, report = planted
    assert report.tests == TESTS and report.correction == "holm"
    assert report.total_votes == history.votes.n_votes and report.unchecked_votes == 0
    bot = next(v for v in report.voters if v.voter_id.startswith("position_a"))
    position = next(t for t in bot.tests if t.name == POSITION)
    assert position.statistic == 1.0 and position.details["votes_b"] == 0
    assert position.details["votes_a"] == bot.votes
    out = to_dict(report)
    row = out["voters"][0]
    assert set(row) == {"voter_id", "votes", "flagged", "tests"}
    assert {"name", "statistic", "p_value", "fired"} <= set(row["tests"][0])
    assert out["flagged"] == len(report.flagged)


def test_a5_alone_misses_position_bots_and_contrarians(planted):
    history, _ = planted
    alone = check_votes(history.votes, tests=(A5,))
    kind = dict(zip(history.votes.voters, history.kind))
    missed = [v for v in alone.voters if kind[v.voter_id] in ("position_a", "contrarian")]
    assert missed and not any(v.flagged for v in missed)


def test_votes_without_voter_ids_are_an_empty_result_with_a_note():
    records = [_record(None, "m1", "m2", "A"), _record(None, "m2", "m3", "bad")]
    report = check_votes(arrays_from_records(records))
    assert report.voters == () and report.unchecked_votes == 2 and report.notes == (NO_VOTER_IDS,)
    empty = check_votes(arrays_from_records([]))
    assert empty.voters == () and empty.total_votes == 0 and "no usable votes" in empty.notes[0]


def test_one_voter_and_one_vote_per_voter_run_without_error():
    single = check_votes(arrays_from_records([_record("u", "m1", "m2", "A"),
                                              _record("u", "m2", "m3", "bad")]))
    assert [v.voter_id for v in single.voters] == ["u"] and not single.voters[0].flagged
    assert "only one voter" in single.notes[0]
    one_each = [_record(f"u{k}", f"m{k % 5}", f"m{(k + 1) % 5}", "AB"[k % 2]) for k in range(30)]
    report = check_votes(arrays_from_records(one_each))
    assert len(report.voters) == 30 and all(v.votes == 1 and not v.flagged for v in report.voters)


def test_unknown_models_are_votes_others_cannot_vouch_for():
    records = [_record(f"u{k % 6}", f"m{k % 4}", f"m{(k + 1) % 4}", "AB"[k % 3 == 0]) for k in range(120)]
    records += [_record("u9", "new-1", "new-2", "A"), _record("u9", "new-2", "new-1", "A")]
    report = check_votes(arrays_from_records(records))
    newcomer = next(v for v in report.voters if v.voter_id == "u9")
    consensus = next(t for t in newcomer.tests if t.name == CONSENSUS)
    assert consensus.details["compared"] == 0 and consensus.p_value == 1.0
    assert np.isnan(consensus.statistic)


def test_records_round_trip_gives_the_same_report():
    history = planted_history(honest_voters=40, planted_per_kind=3, seed=9)
    direct = check_votes(history.votes, seed=4)
    via_records = check_votes(arrays_from_records(records_from_arrays(history.votes)), seed=4)
    assert [(v.voter_id, v.flagged) for v in direct.voters] == [(v.voter_id, v.flagged)
                                                                for v in via_records.voters]
    assert [t.p_value for v in direct.voters for t in v.tests] == pytest.approx(
        [t.p_value for v in via_records.voters for t in v.tests])


def test_the_seed_moves_only_the_checkpoints():
    history = planted_history(honest_voters=60, planted_per_kind=2, seed=5)
    runs = [check_votes(history.votes, seed=s, tests=(A5,)) for s in (1, 1, 2)]
    checkpoints = [[v.tests[0].details["checkpoint"] for v in r.voters] for r in runs]
    assert checkpoints[0] == checkpoints[1] and checkpoints[0] != checkpoints[2]
    # the per-vote p-values do not depend on the seed: a voter checked at the same j agrees
    same = [k for k, (x, y) in enumerate(zip(checkpoints[0], checkpoints[2])) if x == y]
    assert same and all(runs[0].voters[k].tests[0].statistic == runs[2].voters[k].tests[0].statistic
                        for k in same)


def test_vote_arrays_reject_inconsistent_columns():
    with pytest.raises(ValueError, match="same length"):
        VoteArrays((), (), np.zeros(2, int), np.zeros(1, int), np.zeros(1, int), np.zeros(1, int))
    with pytest.raises(ValueError, match="out of range"):
        VoteArrays(("m",), ("u",), np.zeros(1, int), np.zeros(1, int), np.ones(1, int), np.zeros(1, int))


def test_votes_without_ids_are_history_but_unchecked():
    history = planted_history(honest_voters=40, planted_per_kind=0, seed=8)
    v = history.votes
    anonymous = np.where(v.voter < 10, -1, v.voter)  # the first ten voters' votes lose their ids
    report = check_votes(VoteArrays(v.models, v.voters, anonymous, v.a, v.b, v.outcome))
    assert report.unchecked_votes == int((v.voter < 10).sum()) > 0
    assert any("without a voter id" in note for note in report.notes)
    assert {r.voter_id for r in report.voters} == set(v.voters[10:])  # voters without votes: not listed

"""The local append-only vote store and the vote record schema."""

from __future__ import annotations

import json
import threading

import pytest

from sciarena.core.errors import VoteRejected, VoteStoreError
from sciarena.core.types import Vote
from sciarena.votes.schema import RELEASED_FIELDS, VOTE_FIELDS, vote_record
from sciarena.votes.store.local import LocalVoteStore


def test_record_has_every_field_in_order_and_released_names(finished_battle):
    record = vote_record(Vote(finished_battle(), "A", voter_id="anon-1", timestamp="2026-11-30T06:00:00.000Z"))
    assert tuple(record) == VOTE_FIELDS
    assert set(RELEASED_FIELDS) <= set(record)
    assert record["modelA"] == "Alpha" and record["modelB"] == "Beta" and record["vote"] == "A"
    assert [c["number"] for c in record["citations_b"]] == [1, 2]  # by number, as the page lists them
    assert record["citations_a"][0]["concise_authors"] == "Lovelace et al. 2001"
    assert record["citations_a"][0]["url"] == "https://doi.org/10.1/1"
    assert json.loads(record["retrieval_filters"]) == {"year": "2000-2010"}
    assert record["redacted_b"] is True and record["reason"] is None
    json.dumps(record, allow_nan=False)  # must be plain JSON


def test_labels_and_their_labellers_are_recorded_and_older_records_load_with_nulls(finished_battle):
    from sciarena.arena.labels.at_vote import QuestionLabels
    from sciarena.votes.read import normalise

    labels = QuestionLabels("Others", "Model X", "", "offline:rules:discipline")
    record = vote_record(Vote(finished_battle(), "A", timestamp="2026-11-30T06:00:00.000Z"), labels)
    assert (record["question_type"], record["question_type_labeller"]) == ("Others", "Model X")
    assert (record["subject"], record["subject_labeller"]) == (None, "offline:rules:discipline")  # the rules found none
    unlabelled = vote_record(Vote(finished_battle(), "A", timestamp="2026-11-30T06:00:00.000Z"))
    assert unlabelled["question_type_labeller"] is None and unlabelled["subject_labeller"] is None
    older = {k: v for k, v in record.items() if not k.endswith("_labeller")}  # written before the fields existed
    loaded = normalise(older)
    assert tuple(loaded) == VOTE_FIELDS and loaded["question_type_labeller"] is None
    assert loaded["question_type"] == "Others"


def test_unfinished_battle_cannot_be_recorded(finished_battle):
    battle = finished_battle()
    from dataclasses import replace
    with pytest.raises(ValueError):
        vote_record(Vote(replace(battle, side_b=None), "A"))


def test_append_is_durable_one_file_per_process_and_day(tmp_path, finished_battle):
    store = LocalVoteStore(tmp_path)
    record = vote_record(Vote(finished_battle("x1"), "tie", timestamp="2026-11-30T06:00:00.000Z"))
    path = store.append(record)
    assert path.parent.name == "2026-11-30" and path.name.startswith("votes-") and path.suffix == ".jsonl"
    assert [r["id"] for r in store.records()] == ["x1"]
    other = LocalVoteStore(tmp_path)
    other.append(vote_record(Vote(finished_battle("x2"), "B", timestamp="2026-11-30T07:00:00.000Z")))
    assert len(store.files()) == 2  # processes never share a file


def test_second_record_for_a_battle_is_refused(tmp_path, finished_battle):
    store = LocalVoteStore(tmp_path)
    record = vote_record(Vote(finished_battle("dup"), "A", timestamp="2026-11-30T06:00:00.000Z"))
    store.append(record)
    with pytest.raises(VoteRejected):
        store.append(record)
    assert len(list(store.records())) == 1


def test_concurrent_appends_of_the_same_battle_store_it_once(tmp_path, finished_battle):
    store = LocalVoteStore(tmp_path)
    record = vote_record(Vote(finished_battle("race"), "A", timestamp="2026-11-30T06:00:00.000Z"))
    outcomes = []

    def vote() -> None:
        try:
            store.append(record)
            outcomes.append("ok")
        except VoteRejected:
            outcomes.append("refused")

    threads = [threading.Thread(target=vote) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert outcomes.count("ok") == 1 and outcomes.count("refused") == 15
    assert len(list(store.records())) == 1


def test_incomplete_record_is_refused(tmp_path):
    with pytest.raises(VoteStoreError, match="missing fields"):
        LocalVoteStore(tmp_path).append({"id": "x"})


def test_unwritable_store_gives_a_clear_error(tmp_path, finished_battle):
    blocker = tmp_path / "votes"
    blocker.write_text("not a folder")
    record = vote_record(Vote(finished_battle("y"), "A", timestamp="2026-11-30T06:00:00.000Z"))
    with pytest.raises(VoteStoreError, match="could not be saved"):
        LocalVoteStore(tmp_path).append(record)

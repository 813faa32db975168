"""The Review tab's rules (review.py), its store (votes/reviews.py) and its handlers (ui/review_tab.py)."""

from __future__ import annotations

import io
import json
from datetime import datetime, timedelta, timezone
from pathlib import Path
from types import SimpleNamespace

import gradio as gr
import pytest

from sciarena.cli.agreement import add_parser
from sciarena.core.errors import ReviewRefused
from sciarena.core.settings import Settings
from sciarena.science.review import ReviewDesk
from sciarena.ui import review_tab
from sciarena.votes.store.reviews import REVIEW_FIELDS, LocalReviewStore
from sciarena.votes.voter import Visitor, voter_id

SALT = "test-salt"
T0 = datetime(2026, 1, 1, 12, tzinfo=timezone.utc)


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now


def vote(i: int, **extra: object) -> dict:
    record = {"id": f"battle-{i}", "question": f"Question {i}?", "responseA": f"Answer A{i} [1]",
              "responseB": f"Answer B{i}", "modelA": "secret-model-x", "modelB": "secret-model-y", "vote": "A",
              "citations_a": [{"number": 1, "id": "p1", "concise_authors": "Doe 2020", "title": "A paper",
                               "authors": "J. Doe", "year": 2020, "venue": None, "url": None,
                               "content": "The passage both models read."}],
              "citations_b": [], "subject": "Engineering", "question_type": None, "voter_id": "anon-x",
              "redacted_a": False, "redacted_b": False}
    record.update(extra)
    return record


def desk(tmp_path: Path, votes: list[dict], clock: Clock, repeat_days: float = 14.0) -> ReviewDesk:
    return ReviewDesk(reviewers=frozenset({"alice", "bob"}), salt=SALT, store=LocalReviewStore(tmp_path),
                      votes=lambda: votes, repeat_days=repeat_days, seed=7, clock=clock)


def review_all(d: ReviewDesk, who: str, choice: str = "B") -> list[dict]:
    saved = []
    while True:
        try:
            session = d.next_battle(who)
        except ReviewRefused:
            return saved
        saved.append(d.save(d.blind_vote(session, who, choice), who, "vague"))


def test_sampling_is_seeded_skips_unreviewable_and_own_votes_and_never_repeats_early(tmp_path):
    clock = Clock()
    alice = voter_id(Visitor(username="alice"), SALT)
    votes = [vote(i) for i in range(5)] + [vote(5, redacted_b=True), vote(6, responseB=""), vote(7, vote="?"),
                                           vote(8, voter_id=alice)]
    first = [r["id"] for r in review_all(desk(tmp_path / "one", votes, clock), "alice")]
    again = [r["id"] for r in review_all(desk(tmp_path / "two", votes, clock), "alice")]
    assert sorted(first) == [f"battle-{i}" for i in range(5)]  # each once; none of the four unreviewable
    assert first == again  # same seed, same order
    bob = [r["id"] for r in review_all(desk(tmp_path / "one", votes, clock), "bob")]
    assert sorted(bob) == sorted(first + ["battle-8"])  # alice's own vote is bob's to review
    assert [b for b in bob if b != "battle-8"] != first  # another reviewer, another seeded order


def test_repeat_after_the_interval_once_then_never(tmp_path):
    clock = Clock()
    d = desk(tmp_path, [vote(1), vote(2)], clock, repeat_days=14)
    assert len(review_all(d, "alice")) == 2
    clock.now = T0 + timedelta(days=13, hours=23)
    with pytest.raises(ReviewRefused, match="no battle to review"):
        d.next_battle("alice")
    clock.now = T0 + timedelta(days=14)
    repeats = review_all(d, "alice", choice="A")
    assert sorted(r["id"] for r in repeats) == ["battle-1", "battle-2"] and {r["round"] for r in repeats} == {2}
    clock.now = T0 + timedelta(days=100)
    with pytest.raises(ReviewRefused):
        d.next_battle("alice")
    assert len(review_all(desk(tmp_path / "never", [vote(1)], clock, repeat_days=0), "alice")) == 1


def test_a_review_is_recorded_with_every_field(tmp_path):
    clock = Clock()
    d = desk(tmp_path, [vote(1, vote="tie")], clock)
    session = d.next_battle("alice")
    clock.now = T0 + timedelta(minutes=3)
    with pytest.raises(ReviewRefused, match="own vote first"):
        d.save(session, "alice", "wrong")
    d.save(d.blind_vote(session, "alice", "B"), "alice", "wrong")
    [stored] = list(d.store.records())
    assert tuple(stored) == REVIEW_FIELDS
    assert stored["id"] == "battle-1" and stored["vote"] == "B" and stored["audit"] == "wrong"
    assert stored["original_vote"] == "tie" and stored["subject"] == "Engineering" and stored["round"] == 1
    assert stored["reviewer_id"] == voter_id(Visitor(username="alice"), SALT) and "alice" not in json.dumps(stored)
    assert stored["shown_at"] == "2026-01-01T12:00:00.000Z" and stored["timestamp"] == "2026-01-01T12:03:00.000Z"
    assert d.store.files()[0].relative_to(tmp_path).parts[:2] == ("reviews", "2026-01-01")


def test_cant_judge_without_a_vote_and_bad_input_writes_nothing(tmp_path):
    d = desk(tmp_path, [vote(1)], Clock())
    session = d.next_battle("alice")
    for action in (lambda: d.save(None, "alice", "vague"), lambda: d.save(session, "bob", "cant_judge"),
                   lambda: d.save(session, "alice", "great"), lambda: d.blind_vote(session, "alice", "C"),
                   lambda: d.blind_vote(session, "mallory", "A")):
        with pytest.raises(ReviewRefused):
            action()
    assert d.store.files() == []
    record = d.save(session, "alice", "cant_judge")
    assert record["vote"] is None and record["audit"] == "cant_judge"


@pytest.mark.parametrize("who", [None, "", "mallory"])
def test_unlisted_or_signed_out_user_refused(tmp_path, who):
    with pytest.raises(ReviewRefused, match="sign in|not on the list"):
        desk(tmp_path, [vote(1)], Clock()).next_battle(who)


def test_settings_block():
    s = Settings.from_env({"SCIARENA_REVIEWERS": " alice, bob ,", "SCIARENA_REVIEW_REPEAT_DAYS": "3.5"})
    assert s.reviewers == frozenset({"alice", "bob"}) and s.review_repeat_days == 3.5
    assert Settings.from_env({}).reviewers == frozenset() and Settings.from_env({}).review_repeat_days == 14.0
    with pytest.raises(ValueError, match="SCIARENA_REVIEW_REPEAT_DAYS"):
        Settings.from_env({"SCIARENA_REVIEW_REPEAT_DAYS": "-1"})


def _tab(tmp_path: Path, votes: list[dict]) -> review_tab.ReviewHandlers:
    services = SimpleNamespace(settings=Settings(data_dir=tmp_path, reviewers=frozenset({"alice"}), id_salt=SALT))
    with gr.Blocks():
        return review_tab.build(services, desk(tmp_path, votes, Clock()))


def _sent(updates: dict) -> str:
    """Everything the browser would receive, as text (the session State stays on the server)."""
    return json.dumps([repr(v) for k, v in updates.items() if not isinstance(k, gr.State)])


def test_tab_shows_the_battle_blind_then_reveals_the_original_vote(tmp_path):
    handlers = _tab(tmp_path, [vote(1, vote="bad")])
    v, alice = handlers.view, SimpleNamespace(username="alice")
    shown = handlers.next_battle(alice)
    text = _sent(shown)
    assert "Answer A1" in text and "The passage both models read." in text and "Question 1?" in text
    for hidden in ("secret-model", "battle-1", "both are bad", "anon-x"):
        assert hidden not in text
    session = shown[v.session]
    voted = handlers.vote("A", session, alice)
    assert "both are bad" in voted[v.original] and "secret-model" not in _sent(voted)
    saved = handlers.audit("reasonable", voted[v.session], alice)
    assert "Review saved" in saved[v.message] and saved[v.session] is None
    assert [r["audit"] for r in handlers.desk.store.records()] == ["reasonable"]


def test_tab_messages_for_no_battle_and_unlisted_user(tmp_path):
    handlers = _tab(tmp_path, [])
    v = handlers.view
    assert "no battle to review" in handlers.next_battle(SimpleNamespace(username="alice"))[v.message]
    assert "not on the list" in handlers.next_battle(SimpleNamespace(username="mallory"))[v.message]
    assert "sign in" in handlers.next_battle(None)[v.message].lower()
    assert "Next battle" in handlers.audit("vague", None, SimpleNamespace(username="alice"))[v.message]
    assert handlers.desk.store.files() == []


def test_agreement_command_reads_the_review_file(tmp_path):
    import argparse

    votes = [vote(i, vote=("A", "B")[i % 2]) for i in range(6)]
    (tmp_path / "votes.jsonl").write_text("".join(json.dumps(r) + "\n" for r in votes))
    d = desk(tmp_path, votes, Clock())
    while True:
        try:
            session = d.next_battle("alice")
        except ReviewRefused:
            break
        choice = "A" if session.battle.vote_id != "battle-1" else "B"
        d.save(d.blind_vote(session, "alice", choice), "alice", "reasonable")
    parser = argparse.ArgumentParser()
    add_parser(parser.add_subparsers())
    args = parser.parse_args(["agreement", str(tmp_path / "votes.jsonl"), str(tmp_path / "reviews"),
                              "--format", "json", "--bootstrap", "0"])
    out = io.StringIO()
    assert args.run(args, out=out, err=io.StringIO(), token="") == 0
    doc = json.loads(out.getvalue())
    # originals: A B A B A B; reviews: A B A A A A → agree on 0, 1, 2, 4 of 6
    assert doc["matched"] == 6 and doc["scopes"][0]["accuracy"]["value"] == round(4 / 6, 4)
    assert [s["scope"] for s in doc["scopes"]] == ["overall", "Engineering"]


def _cli(*argv: str) -> tuple[int, str, str]:
    import argparse

    from sciarena.cli import reviews as review_cli

    parser = argparse.ArgumentParser()
    commands = parser.add_subparsers()
    add_parser(commands)
    review_cli.add_parser(commands)
    args = parser.parse_args(list(argv))
    out, err = io.StringIO(), io.StringIO()
    code = args.run(args, out=out, err=err) if argv[0] == "reviews" else args.run(args, out=out, err=err, token="")
    return code, out.getvalue(), err.getvalue()


def test_reviews_command_gives_the_inter_annotator_and_self_consistency_sets(tmp_path):
    clock = Clock()
    votes = [vote(i, vote="A") for i in range(4)]
    (tmp_path / "votes.jsonl").write_text("".join(json.dumps(r) + "\n" for r in votes))
    d = desk(tmp_path, votes, clock)
    first = {r["id"]: r for r in review_all(d, "alice", choice="A")}  # agrees with every original
    review_all(d, "bob", choice="B")  # disagrees with every original; later, so not the "second" vote
    clock.now = T0 + timedelta(days=15)
    session = d.next_battle("alice")
    d.save(d.blind_vote(session, "alice", "tie"), "alice", "wrong")  # one repeat, changed its mind
    session = d.next_battle("alice")
    d.save(session, "alice", "cant_judge")  # a repeat without a vote: no pair
    code, out, err = _cli("reviews", str(tmp_path / "reviews"), "--out", str(tmp_path / "sets"))
    assert code == 0, err
    assert "4 battle(s) with a second vote; 1 repeat pair(s)" in out and "Vague (other votes defensible): 8 (100.0%" in out
    code, out, _ = _cli("agreement", str(tmp_path / "votes.jsonl"), str(tmp_path / "sets" / "second-votes.jsonl"),
                        "--format", "json", "--bootstrap", "0")
    assert code == 0 and json.loads(out)["scopes"][0]["accuracy"]["value"] == 1.0  # alice's, the earliest
    code, out, _ = _cli("agreement", str(tmp_path / "sets" / "round1.jsonl"), str(tmp_path / "sets" / "round2.jsonl"),
                        "--format", "json", "--bootstrap", "0")
    doc = json.loads(out)
    assert code == 0 and doc["matched"] == 1 and doc["scopes"][0]["accuracy"]["value"] == 0.0
    assert session.battle.vote_id in first


def test_reviews_command_refuses_bad_input_in_one_line(tmp_path):
    code, _, err = _cli("reviews", str(tmp_path / "missing"), "--out", str(tmp_path / "sets"))
    assert code == 2 and "no such file" in err
    (tmp_path / "votes.jsonl").write_text(json.dumps(vote(1)) + "\n")
    code, _, err = _cli("reviews", str(tmp_path / "votes.jsonl"), "--out", str(tmp_path / "sets"))
    assert code == 2 and "not review records" in err and not (tmp_path / "sets").exists()


def test_votes_and_reviews_share_the_dataset_in_their_own_folders(tmp_path):
    from fake_hub import FakeHub, make_record

    from sciarena.votes.store.hub import open_hub_sync
    from sciarena.votes.store.local import LocalVoteStore
    from sciarena.votes.store.reviews import open_review_sync

    with FakeHub() as hub:
        settings = Settings(data_dir=tmp_path, votes_repo="org/votes", secrets={"HF_TOKEN": "hf_x"})
        assert open_review_sync(Settings(data_dir=tmp_path)) is None
        votes_sync = open_hub_sync(settings, LocalVoteStore.folder_for(tmp_path), endpoint=hub.endpoint)
        reviews_sync = open_review_sync(settings, endpoint=hub.endpoint)
        LocalVoteStore(tmp_path, external_lock=votes_sync.lock).append(make_record(1))
        d = ReviewDesk(reviewers=frozenset({"alice"}), salt=SALT, votes=lambda: [vote(1)], clock=Clock(),
                       store=LocalReviewStore(tmp_path, external_lock=reviews_sync.lock))
        d.save(d.blind_vote(d.next_battle("alice"), "alice", "A"), "alice", "reasonable")
        assert votes_sync.push_now() and reviews_sync.push_now()
        files = hub.files("org/votes")
        assert sorted(name.split("/")[0] for name in files if name.endswith(".jsonl")) == ["data", "reviews"]
        [review_file] = [name for name in files if name.startswith("reviews/")]
        assert review_file.startswith("reviews/2026-01-01/reviews-")
        assert tuple(json.loads(files[review_file])) == REVIEW_FIELDS
        assert reviews_sync.push_now() and len(hub.files("org/votes")) == len(files)  # nothing resent


def test_a_review_that_cannot_be_written_is_a_message_and_the_battle_stays_open(tmp_path):
    (tmp_path / "reviews").write_text("a file where the folder should be")
    handlers = _tab(tmp_path, [vote(1)])
    alice = SimpleNamespace(username="alice")
    voted = handlers.vote("tie", handlers.next_battle(alice)[handlers.view.session], alice)
    failed = handlers.audit("vague", voted[handlers.view.session], alice)
    assert failed == {handlers.view.message: "⚠ Your review could not be saved; please try again."}
    (tmp_path / "reviews").unlink()
    assert "Review saved" in handlers.audit("vague", voted[handlers.view.session], alice)[handlers.view.message]
    assert [r["vote"] for r in handlers.desk.store.records()] == ["tie"]

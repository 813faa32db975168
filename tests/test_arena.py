"""The arena's rules (arena.py), without Gradio: each refusal has its own error type, and nothing
refused is stored."""

from __future__ import annotations

import threading

import pytest

from sciarena.arena.rules import ArenaSession, Ballot, validate_question
from sciarena.core.errors import (
    AlreadyVoted,
    BattleExpired,
    BattleNotFinished,
    BattleNotVotable,
    ConsentMissing,
    InvalidChoice,
    InvalidQuestion,
    NoBattle,
    ProviderError,
    RetrievalError,
    VoteRejected,
)

YES = Ballot(choice="A", reason="  grounded  ", consent=True, session_hash="s1")


@pytest.fixture
def finished(scripted, make_arena):
    """An arena and a session holding one finished, votable battle."""
    scripted.add("a", "Alpha answer [1].")
    scripted.add("b", "Beta answer [1].")
    arena = make_arena()
    last = list(arena.start_battle("How does attention work?"))[-1]
    return arena, ArenaSession(battle=last.battle)


def stored(arena) -> list[dict]:
    return list(arena.store.records())


@pytest.mark.parametrize("text", ["", "   \n\t ", None])
def test_empty_questions_are_refused(text):
    with pytest.raises(InvalidQuestion, match="type a question"):
        validate_question(text, 4000)


def test_overlong_question_is_refused_with_its_length():
    with pytest.raises(InvalidQuestion, match="4,001 characters"):
        validate_question("x" * 4001, 4000)
    assert validate_question("  ok  ", 4000) == "ok"


def test_a_battle_is_drawn_from_the_pool_with_the_retrieval_and_labelled_when_voted_on(finished, clock,
                                                                                      discipline_classifier):
    arena, session = finished
    battle = session.battle
    assert {battle.model_a.name, battle.model_b.name} == {"A", "B"}
    assert battle.retrieval.backend == "test" and battle.created_at == clock.now
    assert battle.subject == "" and battle.question_type == ""  # labelled at vote time, not before the answers
    voted = arena.vote(session, YES).vote.battle
    # The offline discipline classifier's own field for this question (it needs no corpus hit).
    field = discipline_classifier.label(battle.question).value
    assert (voted.question_type, voted.subject) == ("Conceptual Explanation", field)
    [record] = stored(arena)
    assert (record["question_type"], record["question_type_labeller"]) == ("Conceptual Explanation",
                                                                           "offline:rules:category")
    assert (record["subject"], record["subject_labeller"], record["subject_source"]) == \
        (field, "offline:classifier:discipline", "labeller")


def test_no_papers_and_backend_bugs_are_retrieval_errors(scripted, make_arena):
    scripted.add("a", "x")
    scripted.add("b", "y")
    arena = make_arena()
    arena.retriever.references = ()
    with pytest.raises(RetrievalError, match="No papers matched"):
        arena.start_battle("anything")
    arena.retriever.error = RuntimeError("index corrupted")  # not ours: becomes a short message
    with pytest.raises(RetrievalError, match="failed unexpectedly"):
        arena.start_battle("anything")


def test_one_consented_vote_is_stored_and_counted(finished):
    arena, session = finished
    voted = arena.vote(session, YES)
    assert voted.voted and not voted.open_for_vote and voted.battle == session.battle
    [record] = stored(arena)
    assert record["vote"] == "A" and record["reason"] == "grounded" and record["consent"] is True
    assert record["voter_id"].startswith("anon-")
    assert sum(arena.counts.snapshot().values()) == 2


@pytest.mark.parametrize("choice, normalised", [("a", "A"), (" Tie ", "tie"), ("BAD", "bad")])
def test_choices_are_normalised(finished, choice, normalised):
    arena, session = finished
    assert arena.vote(session, Ballot(choice=choice, consent=True)).vote.choice == normalised


def test_each_rule_has_its_own_error_and_nothing_is_stored(finished, clock, scripted, make_arena):
    arena, session = finished
    refusals = [
        (InvalidChoice, session, Ballot(choice="C", consent=True)),
        (NoBattle, None, YES),
        (NoBattle, ArenaSession(), YES),
        (ConsentMissing, session, Ballot(choice="A", consent=False)),
        (ConsentMissing, session, Ballot(choice="A", consent=None)),
    ]
    for error, state, ballot in refusals:
        with pytest.raises(error):
            arena.vote(state, ballot)
    assert stored(arena) == []
    voted = arena.vote(session, YES)
    with pytest.raises(AlreadyVoted, match="already voted"):
        arena.vote(voted, YES)
    with pytest.raises(VoteRejected):  # the store refuses a second record even from a stale session
        arena.vote(session, YES)
    assert len(stored(arena)) == 1


def test_a_battle_still_answering_cannot_be_voted_on(scripted, make_arena):
    gate = threading.Event()
    scripted.add("a", "Alpha [1].")
    scripted.add("b", "Beta [1].", gate=gate)
    arena = make_arena()
    progress = arena.start_battle("How does attention work?")
    running = ArenaSession(battle=next(progress).battle)
    with pytest.raises(BattleNotFinished):
        arena.vote(running, YES)
    gate.set()
    list(progress)


def test_a_battle_with_a_failed_side_cannot_be_voted_on(scripted, make_arena):
    scripted.add("a", "Alpha [1].")
    scripted.add("b", "Beta", fail_at=0, error=ProviderError("boom"))
    arena = make_arena()
    battle = list(arena.start_battle("How does attention work?"))[-1].battle
    with pytest.raises(BattleNotVotable):
        arena.vote(ArenaSession(battle=battle), YES)


def test_an_old_battle_expires(finished, clock):
    arena, session = finished
    clock.advance(arena.settings.battle_ttl_s + 1)
    with pytest.raises(BattleExpired):
        arena.vote(session, YES)
    assert stored(arena) == []


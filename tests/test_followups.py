"""Follow-up turns through the real Arena: the offline pool over the bundled corpus, scripted contestants for
the refusals, and a loopback OpenAI-compatible server for what each side is sent."""

from __future__ import annotations

import json
import re
import threading
from dataclasses import replace
from types import SimpleNamespace

import gradio as gr
import pytest
from fake_openai import FakeOpenAI, loop_settings
from test_openscholar import StepScript

from sciarena.arena.rules import ArenaSession, Ballot
from sciarena.core.errors import (
    BattleExpired,
    BattleNotVotable,
    FollowUpRefused,
    ProviderTimeout,
    RateLimitedVisitor,
)
from sciarena.core.settings import Settings
from sciarena.ui.app import arena_tab
from sciarena.ui.handlers import ArenaHandlers
from sciarena.votes.schema import RELEASED_FIELDS, SCHEMA_VERSION, TURN_FIELDS
from sciarena.votes.voter import Visitor

CRISPR = "How does CRISPR-Cas9 achieve targeted genome editing, and what limits its precision?"
ON_TOPIC = "How are its off-target effects measured?"  # the same papers: nothing new to add
NEW_TOPIC = "What did the first direct detection of gravitational waves observe?"  # papers the first search lacked
ME = Visitor(session_hash="visitor-1")
YES = Ballot(choice="A", consent=True, session_hash="visitor-1")


def last(stream):
    return list(stream)[-1]


@pytest.fixture
def offline(tmp_path, wire):
    """The app's own arena: offline contestants, the bundled corpus, a vote store under tmp_path."""
    return wire(Settings(data_dir=tmp_path / "data", seed=0)).arena


def converse(arena, *followups: str, visitor: Visitor = ME) -> ArenaSession:
    session = ArenaSession(battle=last(arena.start_battle(CRISPR, visitor=visitor)).battle)
    for question in followups:
        session = replace(session, battle=last(arena.follow_up(session, question, visitor=visitor)).battle)
    return session


def test_two_follow_ups_keep_the_first_references_and_number_new_papers_after_them(offline):
    first = ArenaSession(battle=last(offline.start_battle(CRISPR, visitor=ME)).battle)
    k = len(first.battle.references)
    session = converse(offline, ON_TOPIC, NEW_TOPIC)
    battle = session.battle
    assert [t.question for t in battle.turns] == [CRISPR, ON_TOPIC, NEW_TOPIC]
    assert battle.finished and battle.votable
    # refs 1..k are the first search's, unchanged; the on-topic follow-up found no paper not already listed
    assert [(r.number, r.paper.paper_id) for r in battle.references[:k]] == \
        [(r.number, r.paper.paper_id) for r in first.battle.references]
    assert battle.followups[0].added == ()
    added = battle.followups[1].added
    assert added and [r.number for r in added] == list(range(k + 1, k + 1 + len(added)))
    assert "Gravitational" in added[0].paper.title
    assert not {r.paper.paper_id for r in added} & {r.paper.paper_id for r in battle.references[:k]}
    # both sides were given the new papers, and an offline answer about them cites them
    for letter in "ab":
        answer = battle.turns[2].side(letter).answer
        assert set(answer.cited) & {r.number for r in added}, answer.text
        assert {r.number for r in battle.cited_in(letter, 2)} == set(answer.cited)


def test_the_vote_is_on_the_whole_conversation_and_the_record_keeps_the_first_turn_in_the_released_fields(offline):
    session = converse(offline, ON_TOPIC, NEW_TOPIC)
    voted = offline.vote(session, YES)
    record = list(offline.store.records())[-1]
    battle = voted.battle
    assert record["schema_version"] == SCHEMA_VERSION == 6 and record["num_turns"] == 3
    # the released fields are the first turn, exactly as a one-question battle records it
    assert record["question"] == CRISPR and record["responseA"] == battle.side_a.answer.text
    assert [c["number"] for c in record["citations_a"]] == [r.number for r in battle.side_a.cited_references(
        battle.retrieval)]
    turns = record["turns"]
    assert [tuple(t) for t in turns] == [TURN_FIELDS] * 3
    assert [t["question"] for t in turns] == [CRISPR, ON_TOPIC, NEW_TOPIC]
    assert turns[0]["responseA"] == record["responseA"] and turns[0]["references_added"] == []
    assert [c["number"] for c in turns[2]["references_added"]] == [r.number for r in battle.followups[1].added]
    assert turns[2]["responseB"] == battle.turns[2].side_b.answer.text
    assert all(isinstance(t["latency_s_a"], float) for t in turns)
    assert turns[2]["context_ids"] == [p.passage_id for r in battle.followups[1].added for p in r.passages]
    with pytest.raises(FollowUpRefused, match="voted"):  # the vote ends the battle
        offline.follow_up(voted, NEW_TOPIC, visitor=ME)


def test_a_battle_without_follow_ups_is_recorded_as_one_turn(offline):
    offline.vote(converse(offline), YES)
    record = list(offline.store.records())[-1]
    assert record["num_turns"] == 1 and len(record["turns"]) == 1
    assert {k: record["turns"][0][k] for k in ("question", "responseA", "responseB", "citations_a")} == \
        {k: record[k] for k in ("question", "responseA", "responseB", "citations_a")}


def test_follow_ups_are_refused_until_both_answers_are_there_and_after_the_last_allowed(scripted, make_arena, clock):
    gate = threading.Event()
    scripted.add("a", "Alpha [1].", gate=gate)
    scripted.add("b", "Beta [1].")
    arena = make_arena(max_followups=1)
    with pytest.raises(FollowUpRefused, match="no battle"):
        arena.follow_up(ArenaSession(), "why?", visitor=ME)
    stream = arena.start_battle("How does attention work?", visitor=ME)
    running = ArenaSession(battle=next(iter(stream)).battle)
    assert not running.battle.finished
    with pytest.raises(FollowUpRefused, match="wait"):
        arena.follow_up(running, "why?", visitor=ME)
    gate.set()
    session = ArenaSession(battle=last(stream).battle)
    with pytest.raises(FollowUpRefused, match="another browser"):
        arena.follow_up(session, "why?", visitor=Visitor(session_hash="someone-else"))
    session = replace(session, battle=last(arena.follow_up(session, "And why?", visitor=ME)).battle)
    with pytest.raises(FollowUpRefused, match="up to 1 follow-up question;"):
        arena.follow_up(session, "And then?", visitor=ME)
    clock.advance(arena.settings.battle_ttl_s + 1)
    with pytest.raises(BattleExpired):
        arena.follow_up(replace(session, battle=replace(session.battle, followups=())), "And then?", visitor=ME)
    off = make_arena(max_followups=0)
    with pytest.raises(FollowUpRefused, match="turned off"):
        off.follow_up(ArenaSession(battle=last(off.start_battle("How does attention work?", visitor=ME)).battle),
                      "why?", visitor=ME)


def test_a_failed_follow_up_closes_the_vote_as_a_failed_first_answer_does(scripted, make_arena):
    scripted.add("a", "Alpha [1].")
    scripted.add("b", "Beta [1].")
    arena = make_arena()
    session = ArenaSession(battle=last(arena.start_battle("How does attention work?", visitor=ME)).battle)
    scripted.scripts["b"] = replace(scripted.scripts["b"], fail_at=0)  # B fails on its next call
    battle = last(arena.follow_up(session, "And why?", visitor=ME)).battle
    turn = battle.followups[0]
    failed = turn.side_a if turn.side_a.model.model_id == "b" else turn.side_b
    assert battle.finished and not battle.votable and failed.error is not None
    with pytest.raises(BattleNotVotable):
        arena.vote(replace(session, battle=battle), YES)
    assert list(arena.store.records()) == []


def test_a_follow_up_counts_as_a_battle_for_the_limiter(scripted, make_arena):
    scripted.add("a", "Alpha [1].")
    scripted.add("b", "Beta [1].")
    arena = make_arena(limit_offline=True, battles_per_hour=2)  # scripted models count only with limit_offline
    session = ArenaSession(battle=last(arena.start_battle("How does attention work?", visitor=ME)).battle)
    session = replace(session, battle=last(arena.follow_up(session, "And why?", visitor=ME)).battle)
    with pytest.raises(RateLimitedVisitor):
        arena.follow_up(session, "And then?", visitor=ME)
    assert len(session.battle.followups) == 1  # the refused one left the battle as it was


# --- what each side is sent, on a loopback OpenAI-compatible server -----------------------------

def echo(label: str):
    """An answer naming the turn it was asked in (the number of user messages) and citing its newest reference."""
    def respond(body):
        users = [m["content"] for m in body["messages"] if m["role"] == "user"]
        numbers = [int(n) for n in re.findall(r"^\[(\d+)\] Title", "\n".join(users), flags=re.MULTILINE)]
        yield f"{label} answer to turn {len(users)}, from the papers given [{max(numbers or [1])}]."
    return respond


PRICED = ({"name": "Loop Alpha", "provider": "loop", "model_id": "alpha", "price_input_per_m": 1.0,
           "price_output_per_m": 2.0},
          {"name": "Loop Beta", "provider": "loop", "model_id": "beta", "price_input_per_m": 1.0,
           "price_output_per_m": 2.0})


@pytest.fixture
def loopback(tmp_path, wire):
    with FakeOpenAI() as server:
        for model_id in ("alpha", "beta"):
            server.add_script(model_id, respond=echo(model_id.title()))
        yield server, wire(loop_settings(server, tmp_path, PRICED)).arena


def test_each_side_is_sent_the_conversation_with_its_own_earlier_answers(loopback):
    server, arena = loopback
    session = converse(arena, NEW_TOPIC)
    battle = session.battle
    k = len(battle.retrieval.references)
    newest = max(r.number for r in battle.followups[0].added)
    assert newest > k
    for model_id in ("alpha", "beta"):
        letter = "a" if battle.model_a.model_id == model_id else "b"
        own, theirs = battle.turns[0].side(letter), battle.turns[0].side("b" if letter == "a" else "a")
        first, second = (r.body["messages"] for r in server.requests(model_id))
        # turn 1 unchanged, then this side's own answer, then the follow-up with only the new papers
        assert second[:2] == first
        assert [m["role"] for m in second] == ["system", "user", "assistant", "user"]
        assert second[2]["content"] == own.answer.text and theirs.answer.text not in json.dumps(second)
        follow = second[3]["content"]
        assert f"Follow-up question: {NEW_TOPIC}" in follow and f"[{k + 1}] Title:" in follow
        assert "[1] Title:" not in follow  # refs 1..k were listed once, in the first turn
        answer = battle.followups[0].side(letter).answer
        assert answer.text.startswith(f"{model_id.title()} answer to turn 2") and answer.cited == (newest,)
        assert battle.followups[0].side(letter).usage.input_tokens > own.usage.input_tokens  # the longer prompt


def test_the_follow_up_record_of_a_paid_pair_carries_each_turns_tokens_and_cost(loopback):
    _, arena = loopback
    arena.vote(converse(arena, NEW_TOPIC), YES)
    record = list(arena.store.records())[-1]
    second = record["turns"][1]
    assert second["input_tokens_a"] > record["input_tokens_a"] > 0
    assert second["cost_usd_a"] > record["cost_usd_a"] > 0
    assert record["turns"][0]["cost_usd_a"] == record["cost_usd_a"]
    assert set(RELEASED_FIELDS) <= set(record)


def test_the_timeout_and_the_anonymity_policy_apply_to_each_turn(scripted, make_arena):
    scripted.add("a", "Benchmarks of GPT-4o show attention helps [1].")
    scripted.add("b", "Beta [1].")
    arena = make_arena(timeout_s=5.0)
    session = ArenaSession(battle=last(arena.start_battle("How does attention work?", visitor=ME)).battle)
    first = next(s for s in (session.battle.side_a, session.battle.side_b) if s.model.model_id == "a").answer
    assert first.redacted and "GPT-4o" not in first.text  # not a topic of the first question: a self-identification
    # The follow-up names the model: now a topic, kept in the record, hidden from both answers until the vote.
    session = replace(session, battle=last(arena.follow_up(session, "Is GPT-4o better at attention than the Transformer?",
                                                           visitor=ME)).battle)
    turn = session.battle.followups[0]
    second = next(s for s in (turn.side_a, turn.side_b) if s.model.model_id == "a").answer
    assert second.masked and not second.redacted
    assert "GPT-4o" in second.text and "GPT-4o" not in second.before_vote
    # A follow-up that outlasts the generation timeout fails both sides of that turn, as a first turn would.
    scripted.scripts["b"] = replace(scripted.scripts["b"], gate=threading.Event())  # never opened
    slow = make_arena(timeout_s=0.3)
    battle = last(slow.follow_up(session, "And why?", visitor=ME)).battle
    assert battle.finished and not battle.votable
    assert all(isinstance(s.error, ProviderTimeout) for s in (battle.followups[1].side_a, battle.followups[1].side_b)
               if s.model.model_id == "b")


# --- the page's handlers ---------------------------------------------------------------------------

def test_the_page_shows_the_box_once_both_answers_are_there_and_each_panel_turn_by_turn(scripted, make_arena):
    scripted.add("a", "Alpha [1].")
    scripted.add("b", "Beta [1].")
    with gr.Blocks():
        view = arena_tab()
    handlers = ArenaHandlers(make_arena(max_followups=2), view)
    page = SimpleNamespace(session_hash="visitor-1", headers={}, client=None)
    refused = list(handlers.follow_up_in_page("why?", ArenaSession(), 1, None, page, None))
    assert refused == [{view.followup_error: "⚠ There is no battle to follow up yet — ask a question first."}]
    blank = handlers.clear(0)
    assert blank[view.followup_box]["visible"] is False  # nothing new while there is nothing to follow up
    first = list(handlers.battle("How does attention work?", None, 1, page))[-1]
    session = first[view.session]
    assert "Follow-up" not in first[view.answer_a] and "turn-question" not in first[view.answer_a]
    settled = handlers.settle(session, 1)
    assert settled[view.followup_box]["visible"] is True
    locked = handlers.follow_up_lock(session)
    assert locked[view.followup_box]["visible"] is False and not any(
        locked[c]["interactive"] for c in view.vote_buttons)
    updates = list(handlers.follow_up_in_page("And why?", settled[view.session], 1, None, page, None))
    assert updates[0][view.followup] == ""  # the asked question leaves the box
    final = updates[-1]
    assert "Follow-up 1:</b> And why?" in final[view.answer_a] and "Question:</b> How does attention" in final[view.answer_b]
    assert final[view.status].startswith("Follow-up: no new papers found")
    session = final[view.session]
    assert len(session.battle.followups) == 1 and session.suggested_subject == settled[view.session].suggested_subject
    settled = handlers.settle(session, 1)
    assert settled[view.followup_box]["visible"] is True and settled[view.followup]["info"].startswith("1 follow-up")
    voted = handlers.vote_button("A")("", True, session, None, None, page, None)
    assert voted[view.followup_box]["visible"] is False  # the vote ends the battle
    assert "Follow-up 1:</b> And why?" in voted[view.answer_a]


def test_an_openscholar_style_contestant_runs_its_loop_per_turn_with_the_conversation(tmp_path, wire):
    draft = "Transformers replace recurrence with self-attention over every position [1]."
    feedback = json.dumps({"feedback": [{"issue": "Say how positions are encoded.", "search": ""}]})
    script = StepScript(draft, feedback, (draft + " Positions are added to the embeddings [1].",))
    with FakeOpenAI() as server:
        server.add_script("base", respond=script, usage="always")
        arena = wire(loop_settings(server, tmp_path, [
            {"name": "Loop Base", "provider": "loop", "model_id": "base", "price_input_per_m": 1.0,
             "price_output_per_m": 4.0}, {"pipeline": "openscholar", "base": "Loop Base"}])).arena
        session = ArenaSession(battle=last(arena.start_battle(
            "How do transformers use self-attention instead of recurrence?", visitor=ME)).battle)
        asked = "How do they encode word order?"
        battle = last(arena.follow_up(session, asked, visitor=ME)).battle
    turn = battle.followups[0]
    pipe = turn.side_a if turn.side_a.model.pipeline else turn.side_b
    assert pipe.ok and pipe.report is not None and pipe.report.steps[:3] == ("draft", "feedback", "refine")
    # every step of the follow-up's loop reads the question in the light of the earlier turn
    for step in ("feedback", "refine"):
        assert "Earlier in this conversation" in script.seen[step][-1] and asked in script.seen[step][-1]
    drafts = [r.body["messages"] for r in server.requests("base") if len(r.body["messages"]) == 4]
    assert len(drafts) == 2  # the bare model's follow-up and the pipeline's follow-up draft
    first_pipe = battle.side_a if battle.side_a.model.pipeline else battle.side_b
    assert any(m[2]["content"] == first_pipe.answer.text for m in drafts)  # the pipeline's own first answer

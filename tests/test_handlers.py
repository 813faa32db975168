"""The Arena tab's handlers with scripted contestants: what each action shows, keyed by component.

No browser and no server: the components are built in a gr.Blocks, the handlers are called as
Gradio would call them, and the session / turn states are passed along by hand.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from types import SimpleNamespace

import gradio as gr
import pytest
from page import page_states

from sciarena.arena.rules import ArenaSession
from sciarena.core.errors import NeedsKey, ProviderTimeout
from sciarena.ui.app import arena_tab
from sciarena.ui.handlers import ArenaHandlers
from sciarena.votes.voter import Visitor

QUESTION = "How does attention work in transformers?"
VISITOR = SimpleNamespace(session_hash="visitor-1")  # what gr.Request gives the handler


@pytest.fixture
def ui(make_arena):
    """Handlers over an arena of the models the test scripted (script them before calling)."""

    def build(**settings) -> ArenaHandlers:
        with gr.Blocks():
            view = arena_tab()
        return ArenaHandlers(make_arena(**settings), view)

    return build


def run_battle(handlers: ArenaHandlers, turn: int = 0):
    """Send: the blank screen, every streamed update, then the settle step; returns the last states."""
    cleared = handlers.clear(turn)
    turn = cleared[handlers.view.turn]
    updates = list(handlers.battle(QUESTION, cleared[handlers.view.session], turn))
    session = updates[-1][handlers.view.session]
    settled = handlers.settle(session, turn)
    return updates, session, turn, settled


def interactive(update) -> bool:
    return update["interactive"]


def test_a_battle_streams_both_answers_then_opens_voting(scripted, ui):
    scripted.add("a", "Alpha ", "explains ", "attention [1].", pause_s=0.01)
    scripted.add("b", "Beta answer [1].")
    handlers = ui()
    v = handlers.view
    updates, session, _, settled = run_battle(handlers)
    assert all(set(u) == set(v.battle_outputs) for u in updates)  # every update names its components
    final = updates[-1]
    assert "Alpha explains attention" in final[v.answer_a] + final[v.answer_b]
    assert "References cited" in final[v.refs_a] and "Attention Is All You Need" in final[v.refs_b]
    assert final[v.status].endswith("Both answers are complete — which one is better?")
    assert all(u[v.status].endswith("Answering…") for u in updates[:-1])
    assert session.open_for_vote
    # Voting opens, and so does the one new input: the follow-up box (its hint says how many are left).
    assert set(settled) == {*v.controls, v.session, v.followup_box, v.followup}
    assert all(interactive(settled[c]) for c in v.controls) and settled[v.followup_box]["visible"] is True
    assert settled[v.followup]["info"].startswith("3 follow-up questions left")
    assert v.answer_a not in settled  # settling a current battle leaves its answers alone
    # The field choice shows the labeller's guess (attention in transformers: Engineering) once both are done.
    assert settled[v.subject_field]["value"] == "Engineering" == settled[v.session].suggested_subject


def test_a_changed_field_is_the_askers_and_an_unchanged_one_the_labellers(scripted, ui):
    scripted.add("a", "Alpha [1].")
    scripted.add("b", "Beta [1].")
    handlers = ui()
    v = handlers.view
    for chosen in ("Engineering", "Humanities & Social Sciences", "Other", "not a field"):
        _, _, turn, settled = run_battle(handlers)
        handlers.vote("A", "", True, settled[v.session], VISITOR, None, subject=chosen)
    kept, changed, other, unknown = list(handlers.arena.store.records())
    assert (kept["subject"], kept["subject_source"], kept["subject_labelled"]) == \
        ("Engineering", "labeller", "Engineering")
    assert kept["subject_labeller"] == "offline:classifier:discipline"
    assert (changed["subject"], changed["subject_source"], changed["subject_labelled"]) == \
        ("Humanities & Social Sciences", "asker", "Engineering")
    assert (other["subject"], other["subject_source"]) == ("Other", "asker")
    assert (unknown["subject"], unknown["subject_source"]) == ("Engineering", "labeller")  # bad input: ignored


def test_names_stay_hidden_until_the_vote_reveals_them_and_closes_voting(scripted, ui):
    scripted.add("model-one", "First answer [1].")
    scripted.add("model-two", "Second answer [1].")
    handlers = ui()
    v = handlers.view
    updates, session, _, _ = run_battle(handlers)
    shown = json.dumps([[value for key, value in u.items() if key is not v.session] for u in updates])
    assert "MODEL-ONE" not in shown and "MODEL-TWO" not in shown
    result = handlers.vote("B", "  clearer  ", True, session, VISITOR, None)
    assert "MODEL-ONE" in result[v.model_names] and "MODEL-TWO" in result[v.model_names]
    assert result[v.session].voted
    assert not any(interactive(result[c]) for c in v.controls)
    [record] = list(handlers.arena.store.records())
    assert record["vote"] == "B" and record["reason"] == "clearer" and record["voter_id"].startswith("anon-")


def test_the_public_vote_endpoint_returns_only_the_reveal_and_the_session(scripted, ui):
    scripted.add("a", "Alpha [1].")
    scripted.add("b", "Beta [1].")
    handlers = ui()
    _, session, _, _ = run_battle(handlers)
    result = handlers.vote_api("tie", "", True, session, VISITOR, None)
    assert list(result) == handlers.view.vote_outputs
    assert "You called it a tie." in result[handlers.view.model_names]


def test_a_signed_in_voter_gets_an_id(scripted, ui):
    scripted.add("a", "Alpha [1].")
    scripted.add("b", "Beta [1].")
    handlers = ui()
    _, session, _, _ = run_battle(handlers)
    handlers.vote("A", "", True, session, VISITOR, SimpleNamespace(username="ada"))
    assert list(handlers.arena.store.records())[-1]["voter_id"]


def test_no_stored_record_holds_a_raw_username(scripted, ui):
    scripted.add("a", "Alpha [1].")
    scripted.add("b", "Beta [1].")
    handlers = ui()
    _, session, _, _ = run_battle(handlers)
    handlers.vote("A", "", True, session, VISITOR, SimpleNamespace(username="ada-lovelace"))
    assert "ada-lovelace" not in json.dumps(list(handlers.arena.store.records()))


@pytest.mark.parametrize("question, message", [("   ", "type a question"), ("x" * 4001, "limit is 4,000")])
def test_a_refused_question_is_a_short_message(scripted, ui, question, message):
    scripted.add("a", "x")
    scripted.add("b", "y")
    handlers = ui()
    with pytest.raises(gr.Error, match=message):
        list(handlers.battle(question, ArenaSession(), 1))


def test_no_papers_is_a_short_message(scripted, ui):
    scripted.add("a", "x")
    scripted.add("b", "y")
    handlers = ui()
    handlers.arena.retriever.references = ()
    with pytest.raises(gr.Error, match="No papers matched"):
        list(handlers.battle(QUESTION, ArenaSession(), 1))


@pytest.mark.parametrize("choice, reason, consent, message", [
    ("C", "", True, "must be one of"),
    ("A", "", False, "agree to the terms"),
])
def test_refused_votes_are_short_messages_and_store_nothing(scripted, ui, choice, reason, consent, message):
    scripted.add("a", "Alpha [1].")
    scripted.add("b", "Beta [1].")
    handlers = ui()
    _, session, _, _ = run_battle(handlers)
    with pytest.raises(gr.Error, match=message):
        handlers.vote(choice, reason, consent, session, VISITOR, None)
    assert list(handlers.arena.store.records()) == []


def test_voting_twice_or_without_a_battle_is_refused(scripted, ui):
    scripted.add("a", "Alpha [1].")
    scripted.add("b", "Beta [1].")
    handlers = ui()
    with pytest.raises(gr.Error, match="no battle"):
        handlers.vote("A", "", True, ArenaSession(), VISITOR, None)
    _, session, _, _ = run_battle(handlers)
    voted = handlers.vote("A", "", True, session, VISITOR, None)[handlers.view.session]
    with pytest.raises(gr.Error, match="already voted"):
        handlers.vote("B", "", True, voted, VISITOR, None)
    assert len(list(handlers.arena.store.records())) == 1


def test_an_expired_battle_is_refused(scripted, ui, clock):
    scripted.add("a", "Alpha [1].")
    scripted.add("b", "Beta [1].")
    handlers = ui()
    _, session, _, _ = run_battle(handlers)
    clock.advance(handlers.arena.settings.battle_ttl_s + 1)
    with pytest.raises(gr.Error, match="expired"):
        handlers.vote("A", "", True, session, VISITOR, None)


def test_a_provider_timeout_is_shown_as_such_and_other_failures_generically(scripted, ui):
    # Decided by type, not wording: a provider's timeout names only the limit, while other provider
    # messages can name the vendor (here, its key's variable), which would break anonymity.
    scripted.add("a", "Partial", fail_at=0, error=ProviderTimeout("The model did not finish within 20 s.", model="A"))
    scripted.add("b", "Partial", fail_at=0, error=NeedsKey("Set VENDOR_API_KEY to use this model.", model="B"))
    handlers = ui()
    v = handlers.view
    updates, session, _, settled = run_battle(handlers)
    shown = updates[-1][v.answer_a] + updates[-1][v.answer_b]
    assert "The model did not finish within 20 s." in shown
    assert "This model could not complete its answer." in shown and "VENDOR" not in shown
    assert "cannot be voted on" in updates[-1][v.status]
    assert not session.open_for_vote and not any(interactive(settled[c]) for c in v.controls)


def test_every_battle_starts_with_an_empty_reason_box_open_while_the_answers_stream(scripted, ui):
    scripted.add("a", "Alpha [1].")
    scripted.add("b", "Beta [1].")
    handlers = ui()
    v = handlers.view
    sent, fresh = handlers.clear(3), handlers.new_battle(3)
    for start in (sent, fresh):
        assert start[v.reason]["value"] == ""
        assert start[v.turn] == 4 and start[v.session] == ArenaSession(turn=4)
        assert all(start[c] == "" for c in (v.answer_a, v.answer_b, v.refs_a, v.refs_b, v.status, v.model_names,
                                            v.question_error, v.vote_error))
        assert not any(interactive(start[b]) for b in v.vote_buttons)
    assert interactive(sent[v.reason]), "Send opens the reason box: it can be filled while reading"
    assert not interactive(fresh[v.reason]), "New battle has no battle to give a reason for"
    assert fresh[v.question] == "" and v.question not in sent


def test_new_battle_during_a_battle_never_brings_its_answers_back(scripted, ui):
    """Issue: New battle one second after Send sometimes brought the cancelled battle's answers back.

    Gradio cancels the stream, but an update it had already produced can land after the blank
    screen (and its session with it). The settle step that follows the cancelled stream must blank
    the page again, because that session belongs to an earlier turn."""
    gate = threading.Event()
    scripted.add("a", "Alpha ", "streams ", "on [1].")
    scripted.add("b", "Beta [1].", gate=gate)
    handlers = ui()
    v = handlers.view
    cleared = handlers.clear(0)
    turn = cleared[v.turn]
    stream = handlers.battle(QUESTION, cleared[v.session], turn)
    late = next(u for u in stream if "Alpha" in u[v.answer_a] + u[v.answer_b])  # produced before New battle was pressed
    fresh = handlers.new_battle(turn)
    stream.close()  # what Gradio's cancel does
    gate.set()
    stale_session = late[v.session]  # the late update overwrote the session after the blank screen
    settled = handlers.settle(stale_session, fresh[v.turn])
    assert all(settled[c] == "" for c in (v.answer_a, v.answer_b, v.refs_a, v.refs_b, v.status))
    assert settled[v.session].battle is None and settled[v.session].turn == fresh[v.turn]
    assert not any(interactive(settled[c]) for c in v.controls)
    with pytest.raises(gr.Error, match="no battle"):
        handlers.vote("A", "", True, settled[v.session], VISITOR, None)
    assert scripted.closed["a"].wait(timeout=10)  # the cancelled battle stopped generating


def test_settling_a_battle_of_the_current_turn_keeps_it(scripted, ui):
    scripted.add("a", "Alpha [1].")
    scripted.add("b", "Beta [1].")
    handlers = ui()
    _, session, turn, settled = run_battle(handlers, turn=7)
    assert session.turn == turn == 8
    assert handlers.view.answer_a not in settled
    # The session kept is this battle, now carrying the field the vote bar proposes.
    assert settled[handlers.view.session].battle is session.battle and settled[handlers.view.session].suggested_subject


class RecordingArena:
    """The real Arena, noting who each battle was started for."""

    def __init__(self, arena) -> None:
        self.arena, self.visitors = arena, []

    def start_battle(self, question, visitor=None):
        self.visitors.append(visitor)
        return self.arena.start_battle(question, visitor=visitor)

    def __getattr__(self, name):
        return getattr(self.arena, name)


def test_the_page_passes_who_is_asking_and_voting_to_the_arena(scripted, ui):
    scripted.add("a", "Alpha [1].")
    scripted.add("b", "Beta [1].")
    handlers = ui()
    handlers.arena = RecordingArena(handlers.arena)
    v = handlers.view
    key = "0123456789abcdef0123456789abcdef"
    cleared = handlers.clear(0)
    updates = list(handlers.battle_in_page(QUESTION, cleared[v.session], cleared[v.turn], key, VISITOR,
                                           SimpleNamespace(username="ada")))
    assert handlers.arena.visitors == [Visitor(username="ada", browser_key=key, session_hash="visitor-1")]
    session = updates[-1][v.session]
    shown = handlers.vote_button("A")("", True, session, key, None, VISITOR, None)
    assert shown[v.vote_error] == "" and shown[v.session].voted
    [record] = list(handlers.arena.store.records())
    assert key not in json.dumps(record), "the browser key is stored raw"


def test_a_battle_is_voted_on_only_from_the_browser_that_started_it(scripted, ui):
    scripted.add("a", "Alpha [1].")
    scripted.add("b", "Beta [1].")
    handlers = ui()
    v = handlers.view
    owner, other = "0123456789abcdef0123456789abcdef", "f" * 32
    cleared = handlers.clear(0)
    session = list(handlers.battle_in_page(QUESTION, cleared[v.session], cleared[v.turn], owner, VISITOR,
                                           None))[-1][v.session]
    # Another client presenting the owner's session (so Gradio hands it the owner's state): with its own
    # browser key, with none (the API), or signed in.
    for key, profile in ((other, None), (None, None), (None, SimpleNamespace(username="mallory"))):
        shown = handlers.vote_button("B")("", True, session, key, None, VISITOR, profile)
        assert "started in another browser" in shown[v.vote_error] and v.session not in shown
        with pytest.raises(gr.Error, match="started in another browser"):
            handlers.vote("B", "", True, session, VISITOR, profile, key)
    assert list(handlers.arena.store.records()) == []
    shown = handlers.vote_button("A")("Clear\x00er \x1b[2Jcites\u202e txet\u2066", True, session, owner, None,
                                      VISITOR, SimpleNamespace(username="ada"))
    assert shown[v.vote_error] == "" and shown[v.session].voted  # signing in meanwhile keeps it the owner's
    [record] = list(handlers.arena.store.records())
    assert record["vote"] == "A" and record["reason"] == "Clearer [2Jcites txet"  # no NUL, ESC, bidi override


def test_votes_from_one_browser_key_share_a_voter_id_and_other_keys_do_not(scripted, ui):
    scripted.add("a", "Alpha [1].")
    scripted.add("b", "Beta [1].")
    handlers = ui()
    ids = []
    # The same browser on two visits (new Gradio sessions), then another browser.
    for key, visit in (("a" * 32, "visit-1"), ("a" * 32, "visit-2"), ("b" * 32, "visit-3")):
        _, session, _, _ = run_battle(handlers)
        handlers.vote_button("tie")("", True, session, key, None, SimpleNamespace(session_hash=visit), None)
        ids.append(list(handlers.arena.store.records())[-1]["voter_id"])
    assert ids[0] and ids[2] != ids[0]
    assert not any(key in voter_id for voter_id in ids for key in ("a" * 32, "b" * 32))


def test_a_browser_key_keeps_its_voter_id_across_visits(scripted, ui):
    scripted.add("a", "Alpha [1].")
    scripted.add("b", "Beta [1].")
    handlers = ui()
    ids = []
    for visit in ("visit-1", "visit-2"):
        _, session, _, _ = run_battle(handlers)
        handlers.vote_button("tie")("", True, session, "c" * 32, None, SimpleNamespace(session_hash=visit), None)
        ids.append(list(handlers.arena.store.records())[-1]["voter_id"])
    assert ids[0] == ids[1]


@pytest.mark.parametrize("question, message", [("   ", "type a question"), ("x" * 4001, "limit is 4,000")])
def test_a_refused_send_in_the_page_is_written_under_the_question(scripted, ui, question, message):
    scripted.add("a", "x")
    scripted.add("b", "y")
    handlers = ui()
    v = handlers.view
    cleared = handlers.clear(0)
    [update] = list(handlers.battle_in_page(question, cleared[v.session], cleared[v.turn], "", VISITOR, None))
    assert list(update) == [v.question_error] and message in update[v.question_error]
    settled = handlers.settle(cleared[v.session], cleared[v.turn])
    assert v.question_error not in settled, "settling must leave the refusal on the page"
    assert not any(interactive(settled[c]) for c in v.controls)
    assert handlers.clear(cleared[v.turn])[v.question_error] == "", "the next Send clears it"


def test_a_refused_vote_in_the_page_is_written_by_the_buttons_until_the_next_vote(scripted, ui):
    scripted.add("a", "Alpha [1].")
    scripted.add("b", "Beta [1].")
    handlers = ui()
    v = handlers.view
    _, session, _, _ = run_battle(handlers)
    refused = handlers.vote_button("A")("", False, session, "", None, VISITOR, None)
    assert list(refused) == [v.vote_error] and "agree to the terms" in refused[v.vote_error]
    assert list(handlers.arena.store.records()) == []
    accepted = handlers.vote_button("A")("", True, session, "", None, VISITOR, None)
    assert accepted[v.vote_error] == "" and set(accepted) == set(v.page_vote_outputs)


def test_citations_are_links_with_a_preview_while_streaming_and_once_complete(scripted, ui):
    scripted.add("a", "Alpha ", "cites [1] ", "again [1].", pause_s=0.01)
    scripted.add("b", "Beta [1].")
    handlers = ui()
    v = handlers.view
    updates, _, _, _ = run_battle(handlers)
    streaming = [u[v.answer_a] + u[v.answer_b] for u in updates[:-1] if "[1]" in u[v.answer_a] + u[v.answer_b]]
    assert streaming, "no streamed update showed a citation"
    for shown in [*streaming, updates[-1][v.answer_a] + updates[-1][v.answer_b]]:
        assert '<a class="cite" href="#ref-1" title="&#91;1&#93; Attention Is All You Need: The Transformer' in shown


def test_consent_to_share_belongs_to_one_battle_and_locks_once_its_vote_is_stored(scripted, ui):
    scripted.add("a", "Alpha [1].")
    scripted.add("b", "Beta [1].")
    handlers = ui()
    v = handlers.view
    share, share_reason = v.takeaway.share, v.takeaway.share_reason
    for start in (handlers.clear(0), handlers.new_battle(0), handlers.settle(None, 2)):
        for box in (share, share_reason):  # Send, New battle and a screen blanked by settle all ask afresh
            assert start[box]["value"] is False and interactive(start[box])
    _, session, turn, _ = run_battle(handlers)
    voted = handlers.vote_button("A")("", True, session, None, None, VISITOR, None, True, True)
    assert not interactive(voted[share]) and not interactive(voted[share_reason])
    assert "this battle only" in voted[share]["info"]
    _, session, _, _ = run_battle(handlers, turn)
    handlers.vote_button("B")("", True, session, None, None, VISITOR, None, False, True)
    first, second = handlers.arena.store.records()
    assert (first["shared"], first["shared_reason"]) == (True, True)
    assert (second["shared"], second["shared_reason"]) == (False, False)  # the reason alone publishes nothing


def test_a_vote_on_a_battle_the_session_no_longer_holds_says_it_expired(scripted, ui):
    scripted.add("a", "Alpha [1].")
    scripted.add("b", "Beta [1].")
    handlers = ui()
    v = handlers.view
    cleared = handlers.clear(0)
    shown = [u[v.shown_battle] for u in handlers.battle_in_page(QUESTION, cleared[v.session], 1, "", VISITOR, None)
             if v.shown_battle in u]
    assert shown and len(set(shown)) == 1 and shown[0]  # the page knows which battle it shows
    assert cleared[v.shown_battle] == ""  # and a new screen shows none
    # Gradio forgot the session (SCIARENA_MAX_SESSIONS): its state is a fresh one, the page still shows the battle.
    forgotten = handlers.vote_button("A")("", True, ArenaSession(), None, None, VISITOR, None, False, False, shown[0])
    assert "expired" in forgotten[v.vote_error]
    never = handlers.vote_button("A")("", True, ArenaSession(), None, None, VISITOR, None, False, False, "")
    assert "no battle to vote on yet" in never[v.vote_error]
    assert list(handlers.arena.store.records()) == []


def test_after_the_vote_the_status_line_no_longer_asks_which_is_better(scripted, ui):
    scripted.add("a", "Alpha [1].")
    scripted.add("b", "Beta [1].")
    handlers = ui()
    v = handlers.view
    _, session, _, _ = run_battle(handlers)
    voted = handlers.vote_button("tie")("", True, session, None, None, VISITOR, None)
    assert "which one is better" not in voted[v.status] and "vote is recorded" in voted[v.status]


def test_gradio_draws_no_progress_timer_over_the_answers_while_a_battle_streams(make_arena):
    from sciarena.ui.app import wire_arena

    with gr.Blocks() as demo:
        view = arena_tab()
        wire_arena(ArenaHandlers(make_arena(), view))
    answers = {view.answer_a._id, view.answer_b._id}
    # The page's queued events that write the answers (the battle and follow-up streams, settle); the public
    # /battle endpoint draws nothing in the page, and a vote is one quick update.
    streaming = [d for d in demo.config["dependencies"] if answers & set(d["outputs"]) and d["queue"] is not False
                 and d["api_visibility"] == "private" and not any(b._id in d["targets"][0] for b in view.vote_buttons)]
    assert len(streaming) >= 3
    assert all(d["show_progress"] == "hidden" for d in streaming), [(d["id"], d["show_progress"]) for d in streaming]


def test_each_side_shows_the_answering_line_until_its_own_answer_is_complete_as_about_says(scripted, ui,
                                                                                           make_services):
    from sciarena.ui.about import about_markdown

    scripted.add("quick", "Quick answer [1].")
    scripted.add("slow", "Slow ", "answer ", "[1].", pause_s=0.2)
    handlers = ui()
    v = handlers.view
    updates, _, _, _ = run_battle(handlers)
    lines = {("step-status" in shown[v.answer_a], "step-status" in shown[v.answer_b]) for shown in page_states(updates)}
    assert {(True, False), (False, True)} & lines, lines  # one side done (no line), the other still answering
    about = " ".join(about_markdown(make_services()).split())
    assert "until that side's answer is complete" in about
    assert "both sides show the same" not in about
    readme = " ".join(Path(__file__).resolve().parent.parent.joinpath("README.md").read_text().split())
    assert "each revision replaces the text shown" not in readme and "Its status line tells a voter" not in readme

"""After the vote, without a browser: the share choice in the record, what a shared view and "My
battles" show (and never show), the take-away's Markdown and figures, and the page's views."""

from __future__ import annotations

import json
from types import SimpleNamespace

import gradio as gr
import pytest

from sciarena.core.types import Paper, Passage, Reference
from sciarena.retrieval.bibliography import bibtex
from sciarena.ui import battle_view
from sciarena.ui.app import arena_tab
from sciarena.ui.handlers import ArenaHandlers
from sciarena.ui.takeaway import (
    answer_as_markdown,
    references_from_citations,
    show,
    stats_line,
)
from sciarena.votes.read.battles import BattleArchive
from sciarena.votes.schema import citation_record

QUESTION = "How does attention work in transformers?"
KEY_1, KEY_2 = "1" * 32, "2" * 32


@pytest.fixture
def voted(scripted, make_arena):
    """Vote battles as given browsers; returns (handlers, archive, vote)."""
    scripted.add("a", "Alpha answer [1].")
    scripted.add("b", "Beta answer [1].")
    with gr.Blocks():
        view = arena_tab()
    handlers = ArenaHandlers(make_arena(), view)
    archive = BattleArchive(handlers.arena.store.files)

    def vote(key: str, choice: str = "A", reason: str = "", shared: bool = False, shared_reason: bool = False):
        cleared = handlers.clear(0)
        request = SimpleNamespace(session_hash=f"visit-{key[:4]}")
        updates = list(handlers.battle_in_page(QUESTION, cleared[view.session], cleared[view.turn], key, request,
                                               None))
        session = updates[-1][view.session]
        shown = handlers.vote_button(choice)(reason, True, session, key, None, request, None, shared, shared_reason)
        assert shown[view.vote_error] == "", shown[view.vote_error]
        return shown[view.session]

    return handlers, archive, vote


def test_the_share_choice_is_recorded_and_a_reason_is_shared_only_with_the_battle(voted):
    handlers, _, vote = voted
    vote(KEY_1, shared=True, shared_reason=True)
    vote(KEY_1, shared=False, shared_reason=True)  # a reason cannot be shared without the battle
    vote(KEY_1)
    flags = [(r["shared"], r["shared_reason"]) for r in handlers.arena.store.records()]
    assert flags == [(True, True), (False, False), (False, False)]


def test_a_shared_battle_shows_without_voter_id_and_an_unshared_one_is_not_found(voted):
    _, archive, vote = voted
    open_ = vote(KEY_1, choice="B", reason="clearer citations", shared=True).vote.battle.battle_id
    quiet = vote(KEY_1, reason="private thought", shared=True, shared_reason=False).vote.battle.battle_id
    hidden = vote(KEY_2, reason="not for anyone").vote.battle.battle_id
    shown = archive.shared(open_)
    assert shown is not None and "voter_id" not in shown and shown["vote"] == "B"
    assert shown["reason"] is None  # shared battle, reason not shared
    assert archive.shared(quiet)["reason"] is None
    assert archive.shared(hidden) is None and archive.shared("nope") is None and archive.shared("") is None


def test_my_battles_match_only_the_voters_own_ids(voted):
    handlers, archive, vote = voted
    vote(KEY_1)
    vote(KEY_2, reason="theirs")
    vote(KEY_1, choice="tie")
    salt = handlers.arena.settings.id_salt
    mine = archive.for_voter(battle_view.visitor_ids(salt, KEY_1, None, None))
    assert [m.vote for m in mine] == ["tie", "A"]  # newest first
    theirs = archive.for_voter(battle_view.visitor_ids(salt, KEY_2, None, None))
    assert len(theirs) == 1 and not {m.battle_id for m in mine} & {t.battle_id for t in theirs}
    assert archive.for_voter([]) == [] and archive.for_voter([""]) == []
    # One's own unshared battle opens for oneself (with the reason), for nobody else.
    own_id = theirs[0].battle_id
    assert archive.own(own_id, battle_view.visitor_ids(salt, KEY_2, None, None))["reason"] == "theirs"
    assert archive.own(own_id, battle_view.visitor_ids(salt, KEY_1, None, None)) is None
    listing = battle_view.my_battles_markdown(archive, battle_view.visitor_ids(salt, KEY_1, None, None))
    assert listing.count("?battle=") == 2 and own_id not in listing


def test_the_archive_sees_a_shard_that_grew(voted):
    _, archive, vote = voted
    vote(KEY_1)
    assert len(archive.summaries()) == 1
    vote(KEY_1)  # the same shard grows
    assert len(archive.summaries()) == 2


def test_the_battle_view_says_not_found_plainly(voted):
    handlers, archive, vote = voted
    with gr.Blocks():
        view = battle_view.build_view()
    hidden = vote(KEY_1, reason="mine").vote.battle.battle_id
    refused = battle_view.view_updates(view, archive, hidden, ["anon-someoneelse"])
    assert refused[view.head] == battle_view.NOT_FOUND and refused[view.a.answer] == ""
    ids = battle_view.visitor_ids(handlers.arena.settings.id_salt, KEY_1, None, None)
    own = battle_view.view_updates(view, archive, hidden, ids)
    assert QUESTION in own[view.head] and "mine" in own[view.head]
    assert "Alpha answer" in own[view.a.answer] + own[view.b.answer]
    assert "download-bib-a" in own[view.a.files]
    assert battle_view.view_updates(view, archive, "", ids)[view.box] == gr.update(visible=False)


def test_the_takeaway_appears_only_after_the_vote(voted):
    handlers, _, vote = voted
    taken = handlers.view.takeaway
    assert taken is not None
    assert show(taken, None)[taken.a.box] == gr.update(visible=False)
    session = vote(KEY_1, shared=True)
    updates = show(taken, session)
    assert updates[taken.a.box] == gr.update(visible=True)
    battle = session.vote.battle
    assert QUESTION in updates[taken.a.markdown] and battle.side_a.answer.text in updates[taken.a.markdown]
    assert f"**Answer by {battle.model_b.name}**" in updates[taken.b.markdown]
    assert "First token" in updates[taken.a.stats]
    assert f"?battle={session.vote.battle.battle_id}" in updates[taken.link]


PAPER = Paper("p1", "Attention Is All You Need", authors=("Ashish Vaswani", "Noam Shazeer", "Niki Parmar"),
              et_al=True, year=2017, venue="NeurIPS", doi="10.5555/3295222.3295349")
REFERENCE = Reference(3, PAPER, (Passage("p1#0", PAPER, "Self-attention relates positions."),))


def test_the_markdown_lists_the_references_it_cites():
    text = answer_as_markdown(QUESTION, "Model X", "Attention weighs tokens [3].", [REFERENCE])
    assert text.startswith(f"**Question:** {QUESTION}")
    assert "**Answer by Model X** (SciArena)" in text
    assert ("[3] Ashish Vaswani, Noam Shazeer, Niki Parmar, et al. (2017). Attention Is All You Need. *NeurIPS*. "
            "https://doi.org/10.5555/3295222.3295349") in text


def test_a_stored_citation_becomes_the_same_bibliography():
    stored = json.loads(json.dumps(citation_record(REFERENCE)))  # as it comes back from a vote file
    [back] = references_from_citations([stored])
    assert back.number == 3 and back.passages[0].text == "Self-attention relates positions."
    assert bibtex([back.paper]) == bibtex([PAPER])
    assert references_from_citations([{"number": 1}, "junk", None]) == []  # no title: nothing to cite


@pytest.mark.parametrize("figures, expected", [
    ({"first_token_s": 0.0312, "total_s": 2.5, "input_tokens": 1200, "output_tokens": 300, "cost_usd": 0.00123},
     "First token 0.031 s · total 2.5 s · 1,200 tokens in, 300 out · cost $0.0012"),
    ({"total_s": 42.4, "output_tokens": 10}, "Total 42 s · ? tokens in, 10 out"),
    ({"offline": True, "cost_usd": None}, "No cost (an offline baseline)"),
    ({}, ""),
])
def test_figures_say_what_is_known(figures, expected):
    assert stats_line(figures) == expected

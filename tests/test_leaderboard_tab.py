"""The Leaderboard tab's refresh with scripted contestants: updates keyed by its components."""

from __future__ import annotations

import gradio as gr

from sciarena.arena import ArenaSession, Ballot
from sciarena.ui.leaderboard_tab import LeaderboardTab


def built(services):
    tab = LeaderboardTab(services)
    with gr.Blocks():
        view = tab.build()
    return tab, view


def test_no_votes_is_a_friendly_empty_state(scripted, make_services):
    scripted.add("a", "A [1].")
    scripted.add("b", "B [1].")
    tab, view = built(make_services())
    updates = tab.refresh(view)
    assert set(updates) == set(view.outputs)
    assert "No votes yet" in updates[view.summary]
    assert updates[view.table].empty and updates[view.ratings_plot] is None


def test_stored_votes_fill_the_summary_table_and_plots(scripted, make_services):
    scripted.add("alpha", "Alpha [1].")
    scripted.add("beta", "Beta [1].")
    services = make_services()
    for choice in ("A", "B", "tie"):
        battle = list(services.arena.start_battle("How does attention work?"))[-1].battle
        services.arena.vote(ArenaSession(battle=battle), Ballot(choice=choice, consent=True))
    tab, view = built(services)
    updates = tab.refresh(view)
    assert updates[view.summary].startswith("**3 votes** over 2 models")
    assert sorted(updates[view.table]["Model"]) == ["ALPHA (provisional)", "BETA (provisional)"]
    assert updates[view.ratings_plot] is not None and updates[view.win_plot] is not None

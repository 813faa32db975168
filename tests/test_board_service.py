"""The board service's public endpoint bounds every knob a caller sets (design.md's contract for
/leaderboard) and keeps its own small memo, so fresh seeds cannot evict the page's boards."""

from __future__ import annotations

import gradio as gr
import pytest

from sciarena.arena.rules import ArenaSession, Ballot
from sciarena.board.service import API_MEMO_ENTRIES, MAX_BOOTSTRAP
from sciarena.core.errors import BoardRequestError
from sciarena.ui.leaderboard_tab import LeaderboardTab


def voted_services(scripted, make_services, n=4):
    scripted.add("alpha", "Alpha [1].")
    scripted.add("beta", "Beta [1].")
    services = make_services()
    for choice in ("A", "B", "tie", "A")[:n]:
        battle = list(services.arena.start_battle("How does attention work?"))[-1].battle
        services.arena.vote(ArenaSession(battle=battle), Ballot(choice=choice, consent=True))
    return services


@pytest.mark.parametrize(("options", "says"), [
    ({"bootstrap": 20_000}, "bootstrap must be from 1 to 1,000 (got 20,000)"),
    ({"bootstrap": "many"}, "bootstrap must be a whole number"),
    ({"min_battles": -1}, "min_battles must be from 0"),
    ({"seed": 2**40}, "seed must be from 0"),
    ({"method": "glicko"}, "method must be one of bt, elo"),
    ({"rating": "median"}, "rating must be one of bootstrap-mean, point"),
    ({"style": "emoji"}, "style must be one of length, citations, supporting, irrelevant"),
    ({"by": "colour"}, "by must be one of subject, question_type, turns, none"),
    ({"as_of": "yesterday"}, "as_of must be a date such as 2026-11-30"),
])
def test_an_out_of_bounds_request_is_refused_with_a_sentence_before_any_work(scripted, make_services, options,
                                                                             says):
    services = voted_services(scripted, make_services)
    with pytest.raises(BoardRequestError) as refused:
        services.board.api(**options)
    assert says in str(refused.value)
    assert services.board.api_memo.computed == 0 and services.board.memo.computed == 0  # nothing was fitted
    tab = LeaderboardTab(services.board)
    with pytest.raises(gr.Error, match=says.split(" (")[0]):
        tab.api(**options)


def test_the_largest_allowed_request_is_served_and_fresh_seeds_stay_in_a_memo_of_their_own(scripted, make_services):
    services = voted_services(scripted, make_services)
    board = services.board.api(min_battles=0, bootstrap=MAX_BOOTSTRAP, by="none")
    assert len(board["models"]) == 2 and board["bootstrap"] == MAX_BOOTSTRAP
    for seed in range(API_MEMO_ENTRIES + 5):
        services.board.api(min_battles=0, bootstrap=5, by="none", seed=seed)
    assert len(services.board.api_memo._slots) <= API_MEMO_ENTRIES  # bounded (LRU)
    assert services.board.memo.computed <= 1  # the page's memo holds only the table the endpoint read

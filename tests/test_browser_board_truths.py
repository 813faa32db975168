"""The Leaderboard and Arena tabs in Chromium at 1280 and 390 px on a small, fresh arena (issue 23, findings 1
and 9): the table fits its box with style control off and on, the legend names only the kinds of row shown, a
discipline view does not rank a model that never played in it, "Over time" says why it is empty when every
vote is from one day, and the question box states its limit before Send.

Screenshots land in test-artifacts/truths-*.png for a person to look at.
"""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest
from arena_server import running_arena
from browser_support import BOARD_SHOWS, WIDTHS, open_leaderboard, open_page, screenshot

from sciarena.board.synthetic import simulate, write_jsonl

pytestmark = [pytest.mark.slow, pytest.mark.browser]
# the bundled baselines and the catalogue's longest name (open weights): no proprietary row
MODELS = ("Extractive-MMR (offline)", "Per-Paper Digest (offline)", "Claim Clusters (offline)",
          "Qwen3 235B A22B Thinking (2507)")
BYSTANDER = MODELS[3]  # never plays in Engineering
FIT = """() => { const w = document.querySelector('#leaderboard-table .board-wrap');
                 return [w.scrollWidth, w.clientWidth]; }"""


@pytest.fixture(scope="module")
def arena(tmp_path_factory, wire):
    data = tmp_path_factory.mktemp("data")
    shard = data / "votes" / "2025-06-01" / "votes-fresh.jsonl"
    shard.parent.mkdir(parents=True)
    table = simulate(np.linspace(900, 1100, 4), 60, seed=7, length_effect=0.4)
    plays = (table.a == 3) | (table.b == 3)
    table = dataclasses.replace(table, models=MODELS, subjects=("Engineering", "Natural Science"),
                                subject=plays.astype(np.int16))
    write_jsonl(table, shard, day_of=["2025-06-01"] * table.n_votes)  # every vote on one day
    with running_arena(data, build=wire) as running:
        yield running


def _fits(page, what: str) -> None:
    scroll, client = page.evaluate(FIT)
    assert scroll <= client, f"{what}: the table is {scroll - client} px wider than its box"


@pytest.mark.parametrize("width, height", WIDTHS)
def test_the_board_table_fits_its_box(browser, arena, width, height):
    page = open_leaderboard(browser, arena.url, width, height)
    table = page.locator("#leaderboard-table")
    _fits(page, f"{width} px, style off")
    screenshot(page, f"truths-{width}-overall", full_page=True)

    page.locator("#board-style input").check()
    page.wait_for_function(BOARD_SHOWS, arg="SC rating", timeout=60_000)
    _fits(page, f"{width} px, style on")
    assert "95% CI" in table.inner_text()  # in a column, or said in the legend when under each rating
    page.locator("#leaderboard-table").scroll_into_view_if_needed()
    screenshot(page, f"truths-{width}-style", full_page=False)
    page.close()


@pytest.mark.parametrize("width, height", WIDTHS)
def test_the_board_says_only_what_is_true(browser, arena, width, height):
    page = open_leaderboard(browser, arena.url, width, height)
    table = page.locator("#leaderboard-table")
    legend = table.locator(".board-legend").first.inner_text()
    assert "open weights" in legend and "proprietary" not in legend

    page.locator("#board-view input").click()
    option = page.get_by_role("option", name=re.compile(r"^Discipline: Engineering \(\d+ votes?\)$"))
    option.first.click()
    page.wait_for_function("() => document.querySelector('#leaderboard-summary').innerText.includes('View: votes of')",
                           timeout=20_000)
    rows = table.locator("tbody tr")
    assert rows.count() == 3 and BYSTANDER not in " ".join(rows.all_inner_texts())
    assert f"Not ranked in this view (no battles in it): {BYSTANDER}." in table.inner_text()
    assert "1000.0–1000.0" not in table.inner_text()
    screenshot(page, f"truths-{width}-discipline", full_page=True)

    page.locator("#board-history button").first.click()
    history = page.locator("#history-plot")
    history.get_by_text("cast in one day").wait_for(timeout=20_000)
    assert "2025-06-01" in history.inner_text() and not history.locator("svg").count()
    history.scroll_into_view_if_needed()
    screenshot(page, f"truths-{width}-history", full_page=False)
    page.close()


@pytest.mark.parametrize("width, height", WIDTHS)
def test_the_question_box_states_its_limit(browser, arena, width, height):
    page = open_page(browser, arena.url, width, height, ready=None)
    hint = page.locator("#question").get_by_text("Up to 4,000 characters")
    hint.wait_for(timeout=20_000)
    assert hint.is_visible()
    screenshot(page, f"truths-{width}-question", full_page=False)
    page.close()

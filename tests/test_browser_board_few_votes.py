"""The Leaderboard tab in Chromium at 1280 and 390 px on a view of one vote: the table shows "—" for the
intervals a single vote cannot give and says why, the summary says the view rests on fewer than 100 votes
and names what its counts are, and the ratings plot shows each model's whole name.

Screenshots land in test-artifacts/few-votes-*.png for a person to look at.
"""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest
from arena_server import running_arena
from browser_support import WIDTHS, open_leaderboard, screenshot

from sciarena.board.synthetic import simulate, write_jsonl

pytestmark = [pytest.mark.slow, pytest.mark.browser]
MODELS = ("Extractive-MMR (offline)", "Per-Paper Digest (offline)", "Claim Clusters (offline)",
          "Qwen3 235B A22B Thinking (2507)")


@pytest.fixture(scope="module")
def arena(tmp_path_factory, wire):
    data = tmp_path_factory.mktemp("data")
    shard = data / "votes" / "2025-06-01" / "votes-few.jsonl"
    shard.parent.mkdir(parents=True)
    table = simulate(np.linspace(900, 1100, 4), 60, seed=7)
    subject = np.ones(table.n_votes, dtype=np.int16)
    subject[0] = 0  # Engineering: one vote
    table = dataclasses.replace(table, models=MODELS, subjects=("Engineering", "Natural Science"), subject=subject)
    write_jsonl(table, shard, day_of=["2025-06-01"] * table.n_votes)
    with running_arena(data, build=wire) as running:
        yield running


@pytest.mark.parametrize("width, height", WIDTHS)
def test_a_view_of_one_vote_says_it_has_no_interval(browser, arena, width, height):
    page = open_leaderboard(browser, arena.url, width, height)
    summary = page.locator("#leaderboard-summary")
    assert re.search(r"60 votes \(A better \d+, B better \d+, tie \d+, both bad \d+\) on 4 models", summary.inner_text())
    labels = page.locator("#ratings-plot text.label")
    shown = sorted("".join(labels.nth(k).locator("tspan").all_text_contents()).replace(" ", "")
                   for k in range(labels.count()))
    assert shown == sorted(m.replace(" ", "") for m in MODELS)
    page.locator("#board-ratings").scroll_into_view_if_needed()
    screenshot(page, f"few-votes-{width}-plot", full_page=False)

    page.locator("#board-view input").click()
    page.get_by_role("option", name="Discipline: Engineering (1 vote)").click()
    page.wait_for_function("() => document.querySelector('#leaderboard-summary').innerText.includes('View: votes of')",
                           timeout=20_000)
    assert "This view rests on 1 vote (fewer than 100)" in summary.inner_text()
    table = page.locator("#leaderboard-table")
    assert "too few votes in this view for an interval" in table.inner_text()
    cells = table.locator("tbody td.ci").all_inner_texts()
    assert cells and set(cells) == {"—"}
    screenshot(page, f"few-votes-{width}-discipline", full_page=True)
    page.close()

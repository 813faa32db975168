"""The arena through a real page: Debian's Chromium driven by Playwright.

Screenshots land in test-artifacts/ (wide and narrow windows) so a person can look at them.
"""

from __future__ import annotations

import pytest
from arena_server import running_arena
from browser_support import BOARD_SHOWS, REVEALED, VOTES_OPEN, WIDTHS, ask, battle, open_page, records, screenshot

QUESTION = "What are the main challenges of using deep learning for medical image diagnosis?"

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.mark.parametrize("width, height", WIDTHS)
def test_battle_vote_and_leaderboard_in_the_page(browser, arena, width, height):
    page = open_page(browser, arena.url, width, height)
    vote_a = page.locator("#vote-a")
    assert vote_a.is_disabled()

    battle(page, QUESTION, timeout_ms=30_000)
    text_a = page.locator("#answer-a").inner_text()
    text_b = page.locator("#answer-b").inner_text()
    assert "[1]" in text_a + text_b
    names = [m.name for m in arena.services.pool.active]
    page_text = page.locator("body").inner_text()
    assert not any(name in page_text for name in names), "a model name is visible before the vote"
    screenshot(page, f"arena-{width}-before-vote", full_page=True)

    records_before = len(records(arena))
    page.locator("#reason textarea").fill("Better grounded in the cited papers.")
    vote_a.click()
    page.wait_for_function("() => document.querySelector('#vote-error').innerText.includes('agree to the terms')",
                           timeout=10_000)
    assert len(records(arena)) == records_before, "voted without consent"
    page.locator("#consent input").check()
    vote_a.click()
    page.wait_for_function(REVEALED, timeout=15_000)
    reveal = page.locator("#model-names").inner_text()
    assert any(name in reveal for name in names)
    assert page.locator("#vote-b").is_disabled()
    assert len(records(arena)) == records_before + 1
    screenshot(page, f"arena-{width}-after-vote", full_page=True)

    page.reload(wait_until="domcontentloaded")
    page.get_by_role("tab", name="Leaderboard").click()
    table = page.locator("#leaderboard-table")
    record = records(arena)[-1]
    page.wait_for_function(BOARD_SHOWS, arg=record["modelA"], timeout=20_000)
    assert record["modelB"] in table.inner_text()
    page.locator("#ratings-plot").scroll_into_view_if_needed()
    screenshot(page, f"leaderboard-{width}", full_page=True)
    page.close()


def test_a_refused_question_leaves_nothing_to_vote_on(browser, arena):
    page = open_page(browser, arena.url)
    battle(page, QUESTION, timeout_ms=30_000)
    ask(page, "   ")  # refused: the previous battle must not stay votable
    page.wait_for_function("() => document.querySelector('#question-error').innerText.includes('type a question')",
                           timeout=10_000)
    page.wait_for_timeout(500)
    assert page.locator("#vote-a").is_disabled()
    assert "[1]" not in page.locator("#answer-a").inner_text()  # the old answer is gone
    page.close()


def test_a_reason_never_travels_to_the_next_battle(browser, arena):
    page = open_page(browser, arena.url)
    page.locator("#consent input").check()
    before = len(records(arena))

    battle(page, QUESTION, timeout_ms=30_000)
    page.locator("#reason textarea").fill("A reason for the first battle only.")
    page.locator("#vote-a").click()
    page.wait_for_function(REVEALED, timeout=15_000)

    for start_next in ("#send", "#new-battle"):  # a new question straight away, or New battle first
        if start_next == "#new-battle":
            page.locator("#new-battle").click()
            page.wait_for_function("() => !document.querySelector('#model-names').innerText.trim()")
            assert page.locator("#reason textarea").input_value() == ""
            page.locator("#question textarea").fill(QUESTION)
        page.locator("#send").click()
        page.wait_for_function(VOTES_OPEN, timeout=30_000)
        assert page.locator("#reason textarea").input_value() == ""
        page.locator("#vote-b").click()
        page.wait_for_function(REVEALED, timeout=15_000)
    voted = records(arena)[before:]
    assert [r["reason"] or "" for r in voted] == ["A reason for the first battle only.", "", ""]
    page.close()


def test_new_battle_or_send_during_a_battle_never_brings_the_old_answers_back(browser, scripted, make_services, tmp_path):
    # Slow contestants, so New battle lands while both are still streaming.
    scripted.add("slow-1", *(f"first{i} " for i in range(40)), pause_s=0.05)
    scripted.add("slow-2", *(f"second{i} " for i in range(40)), pause_s=0.05)
    with running_arena(tmp_path, services=make_services()) as running:
        page = open_page(browser, running.url)
        for delay_ms in (0, 300, 1000):
            ask(page, QUESTION)
            page.wait_for_timeout(delay_ms)
            page.locator("#new-battle").click()
            # Both streams would have ended by now (40 chunks × 50 ms): nothing may have come back.
            page.wait_for_timeout(2_500)
            answers = page.locator("#answer-a").inner_text() + page.locator("#answer-b").inner_text()
            assert "first" not in answers and "second" not in answers, f"New battle after {delay_ms} ms: {answers!r}"
            assert page.locator("#vote-a").is_disabled()

        # Send again while a battle streams: the new question's battle is the one to vote on.
        ask(page, "An earlier question")
        page.wait_for_timeout(300)
        battle(page, QUESTION, timeout_ms=30_000)
        page.locator("#consent input").check()
        page.locator("#vote-a").click()
        page.wait_for_function(REVEALED, timeout=15_000)
        assert [r["question"] for r in running.services.arena.store.records()] == [QUESTION]
        page.close()

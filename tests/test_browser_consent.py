"""Consent to publish is given for one battle, in Chromium at 1280 and 390 px: a visitor ticks "Share this
battle" (and "…with my reason") on one battle of three; the next battles — started by New battle and by Send
straight after a vote — and a reloaded page start unticked, the boxes lock once a vote is stored, and in the
end exactly one record is shared and exactly one battle opens for a stranger.

Screenshots land in test-artifacts/consent-*.png.
"""

from __future__ import annotations

import pytest
from browser_support import REVEALED, WIDTHS, battle, open_page, records, screenshot

pytestmark = pytest.mark.browser

QUESTIONS = ("How does CRISPR-Cas9 achieve targeted genome editing, and what limits its precision?",
             "What did the first direct detection of gravitational waves observe?",
             "How does retrieval-augmented generation reduce hallucination in language models?")
BOXES = ("#share input", "#share-reason input")
FOUND = "() => { const h = document.querySelector('#battle-view-head'); return h && h.innerText.trim() ? h.innerText : ''; }"


def boxes(page) -> list[tuple[bool, bool]]:
    """(ticked, open) for Share and …with my reason."""
    return [(page.locator(b).is_checked(), page.locator(b).is_enabled()) for b in BOXES]


def vote(page, button: str) -> None:
    page.locator(button).click()
    page.wait_for_function(REVEALED, timeout=15_000)


@pytest.mark.parametrize("width, height", WIDTHS)
def test_share_ticked_on_one_battle_of_three_publishes_exactly_that_one(browser, arena, width, height):
    context = browser.new_context()
    page = open_page(context, arena.url, width, height, key=True)
    before = len(records(arena))
    page.locator("#consent input").check()

    battle(page, QUESTIONS[0])
    for box in BOXES:
        page.locator(box).check()
    page.locator("#reason textarea").fill("the first one is better cited")
    vote(page, "#vote-a")
    page.wait_for_function("() => !document.querySelector('#share input').checked || "
                           "document.querySelector('#share input').disabled", timeout=10_000)
    assert boxes(page) == [(True, False), (True, False)]  # what the vote was recorded with, locked
    assert "this battle only" in page.locator("#share").inner_text()
    screenshot(page, f"consent-{width}-locked", full_page=True)

    page.locator("#new-battle").click()  # New battle asks again
    page.wait_for_function("() => !document.querySelector('#share input').checked", timeout=10_000)
    assert boxes(page) == [(False, True), (False, True)]
    battle(page, QUESTIONS[1])
    assert boxes(page) == [(False, True), (False, True)]
    vote(page, "#vote-b")

    battle(page, QUESTIONS[2])  # Send straight after a vote: asks again
    assert boxes(page) == [(False, True), (False, True)]
    vote(page, "#vote-tie")

    page.reload(wait_until="domcontentloaded")  # and a reload
    page.locator("#send").wait_for(timeout=30_000)
    assert boxes(page) == [(False, True), (False, True)]

    mine = records(arena)[before:]
    assert [r["question"] for r in mine] == list(QUESTIONS)
    assert [(r["shared"], r["shared_reason"]) for r in mine] == [(True, True), (False, False), (False, False)]

    stranger = browser.new_context()
    opened = []
    for record in mine:
        view = open_page(stranger, f"{arena.url}?battle={record['id']}", width, height, key=True)
        view.wait_for_function(FOUND, timeout=15_000)
        head = view.locator("#battle-view-head").inner_text()
        opened.append("not found" not in head)
        view.close()
    assert opened == [True, False, False]  # exactly one public link, the shared battle's
    stranger.close()
    context.close()

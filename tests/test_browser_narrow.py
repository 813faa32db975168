"""The sticky part of the arena on a phone (390 x 844 px), in Chromium: it stays a small strip before
and after the vote, so the answers stay readable above it.

Before this was fixed the whole vote bar stuck (consent, terms, field, four buttons: 409 of 844 px) and
after the vote the names and the share text joined it (437 px), hiding the answer being read.

Screenshots land in test-artifacts/narrow-*.png.
"""

from __future__ import annotations

import pytest
from browser_support import REVEALED, battle, open_page, screenshot

pytestmark = pytest.mark.browser

WIDTH, HEIGHT = 390, 844
MOST = 0.35  # of the viewport's height, the most the sticky part may take
QUESTION = "How does CRISPR-Cas9 achieve targeted genome editing, and what limits its precision?"

# The top of the highest element of the battle that is sticky and shows (a box of some height) on
# screen; the viewport's height when nothing sticky shows.
STICKY_TOP = """() => {
  let top = window.innerHeight;
  for (const e of document.querySelectorAll('#battle-area, #battle-area *')) {
    if (getComputedStyle(e).position !== 'sticky') continue;
    const r = e.getBoundingClientRect();
    if (r.height > 0 && r.bottom > 0 && r.top < window.innerHeight) top = Math.min(top, r.top);
  }
  return top;
}"""


def sticky_share(page) -> float:
    """How much of the viewport's height, from its bottom, the sticky part covers while answer A is read."""
    page.locator("#answer-a").evaluate("e => e.scrollIntoView({block: 'start'})")
    page.wait_for_timeout(200)
    return (HEIGHT - page.evaluate(STICKY_TOP)) / HEIGHT


def test_the_sticky_part_stays_small_on_a_phone_and_the_answer_can_be_read_after_the_reveal(browser, arena):
    page = open_page(browser, arena.url, WIDTH, HEIGHT, key=True)
    battle(page, QUESTION)
    before = sticky_share(page)
    screenshot(page, "narrow-390-before-vote")
    print(f"sticky part before the vote: {before * HEIGHT:.0f} of {HEIGHT} px ({before:.0%})")  # seen with -s
    assert 0 < before <= MOST, f"before the vote the sticky part takes {before:.0%} of the screen"
    assert page.locator("#vote-a").is_visible(), "the vote buttons are not in reach while answer A is read"
    boxes = [page.locator(f"#vote-{side}").bounding_box() for side in ("a", "b", "tie", "bad")]
    assert len({round(box["y"]) for box in boxes}) <= 2, boxes  # one row or two by two
    assert len({round(box["height"]) for box in boxes}) == 1, f"a label wraps onto two lines: {boxes}"
    assert not page.locator("#consent").evaluate("e => e.closest('#vote-bar') !== null"), "consent sticks"

    page.locator("#consent input").check()  # scrolled to, where it now sits above the buttons
    page.locator("#vote-a").click()
    page.wait_for_function(REVEALED, timeout=15_000)
    page.wait_for_timeout(300)
    after = sticky_share(page)
    screenshot(page, "narrow-390-after-vote")
    print(f"sticky part after the vote: {after * HEIGHT:.0f} of {HEIGHT} px ({after:.0%})")
    assert after <= MOST, f"after the vote the sticky part takes {after:.0%} of the screen"

    # The last paragraph of answer A, scrolled to just above whatever still sticks, is seen whole.
    last = page.locator("#answer-a p").last
    bottom = last.evaluate("e => e.getBoundingClientRect().bottom")
    page.evaluate("by => window.scrollBy(0, by)", bottom - page.evaluate(STICKY_TOP) + 8)
    page.wait_for_timeout(200)
    box, cover = last.bounding_box(), page.evaluate(STICKY_TOP)
    screenshot(page, "narrow-390-last-paragraph")
    assert 0 <= box["y"] and box["y"] + box["height"] <= cover, (box, cover)
    assert "Model A:" in page.locator("#model-names").inner_text()
    page.close()


def test_after_the_vote_only_a_result_line_sticks_on_a_wide_screen(browser, arena):
    """At 1280 x 800 the whole dock (reveal, consent, field, four closed buttons) stuck over 371 px of the
    answers after the vote; only the line saying the vote went through needs to stay."""
    page = open_page(browser, arena.url, 1280, 800, key=True)
    battle(page, QUESTION)
    page.locator("#consent input").check()
    page.locator("#vote-b").click()
    page.wait_for_function(REVEALED, timeout=15_000)
    page.wait_for_timeout(300)
    page.locator("#answer-a").evaluate("e => e.scrollIntoView({block: 'start'})")
    page.wait_for_timeout(200)
    covered = 800 - page.evaluate(STICKY_TOP)
    screenshot(page, "wide-1280-after-vote")
    print(f"sticky part after the vote at 1280 x 800: {covered:.0f} px")
    assert covered <= 60, f"after the vote {covered:.0f} of 800 px still stick over the answers"
    assert "Vote recorded" in page.evaluate(
        "() => getComputedStyle(document.querySelector('#vote-bar'), '::before').content")
    assert "Model B:" in page.locator("#model-names").inner_text() and page.locator("#model-names").is_visible()
    page.close()

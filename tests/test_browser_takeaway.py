"""What a researcher does after the vote, in Chromium at 1280 and 390 px: vote with a shortcut key
(never while typing), read each side's figures, copy an answer as Markdown, download its references
as BibTeX and RIS and read them back, open the battle's own link in a fresh browser (and get "not
found" for an unshared or unknown battle), and find the battle under "My battles".

Screenshots land in test-artifacts/takeaway-*.png.
"""

from __future__ import annotations

from pathlib import Path

import bibtexparser
import pytest
import rispy
from browser_support import REVEALED, WIDTHS, battle, open_page, records, screenshot
from test_bibliography import strict_ris

pytestmark = pytest.mark.browser

ON_TOPIC = "How does CRISPR-Cas9 achieve targeted genome editing, and what limits its precision?"
SECOND = "What did the first direct detection of gravitational waves observe?"
def press_outside_inputs(page, key):
    """A key press with the focus on the page itself, as after reading the answers."""
    page.evaluate("() => document.activeElement && document.activeElement.blur()")
    page.keyboard.press(key)


@pytest.mark.parametrize("width, height", WIDTHS)
def test_vote_by_key_take_the_answer_away_share_it_and_find_it_again(browser, arena, width, height, tmp_path):
    context = browser.new_context(accept_downloads=True, permissions=["clipboard-read", "clipboard-write"])
    page = open_page(context, arena.url, width, height, key=True)
    before = len(records(arena))
    battle(page, ON_TOPIC)
    shown = page.evaluate("() => getComputedStyle(document.querySelector('#vote-b'), '::after').content")
    assert shown == '"B"'  # the shortcut is written on its button
    assert page.locator("#vote-tie").get_attribute("aria-keyshortcuts") == "T"
    assert not page.locator("#takeaway-a").is_visible()  # nothing to take away before the vote

    reason = page.locator("#reason textarea")
    reason.click()
    reason.type("b is better cited")  # typing a shortcut letter in a text box is typing, not voting
    page.wait_for_timeout(500)
    assert len(records(arena)) == before and not page.evaluate(REVEALED)
    page.locator("#consent input").check()
    page.locator("#share input").check()
    page.locator("#share-reason input").check()
    press_outside_inputs(page, "b")
    page.wait_for_function(REVEALED, timeout=15_000)
    record = records(arena)[-1]
    assert (record["vote"], record["shared"], record["shared_reason"], record["reason"]) == \
        ("B", True, True, "b is better cited")

    # Figures and take-away under each answer, once the names are out.
    for side in ("a", "b"):
        page.locator(f"#takeaway-{side}").wait_for(state="visible", timeout=10_000)
        stats = page.locator(f"#stats-{side}").inner_text()
        assert "First token" in stats and "total" in stats, stats
    page.locator("#copy-a").click()
    page.wait_for_function("() => document.querySelector('#copy-a').innerText === 'Copied'", timeout=5_000)
    copied = page.evaluate("() => navigator.clipboard.readText()")
    assert ON_TOPIC in copied and record["modelA"] in copied
    cited = record["citations_a"]
    assert cited and "**References**" in copied and f"[{cited[0]['number']}] " in copied

    with page.expect_download() as download:
        page.locator("#download-bib-a").click()
    bib_path = Path(tmp_path / download.value.suggested_filename)
    download.value.save_as(bib_path)
    library = bibtexparser.parse_string(bib_path.read_text(encoding="utf-8"))
    assert library.failed_blocks == [] and len(library.entries) == len({c["id"] for c in cited})
    with page.expect_download() as download:
        page.locator("#download-ris-a").click()
    ris_text = Path(download.value.path()).read_bytes().decode("utf-8")  # as saved: CRLF line ends
    assert len(strict_ris(ris_text)) == len(rispy.loads(ris_text)) == len(library.entries)
    assert [e["title"] for e in rispy.loads(ris_text)][0] == cited[0]["title"]
    screenshot(page, f"takeaway-{width}-after-vote", full_page=True)

    # The battle's own link, opened by someone else (a fresh browser: no key, no session).
    link = page.locator("#battle-link a")
    href = link.evaluate("a => a.href")
    assert href.endswith(f"?battle={record['id']}")
    stranger = browser.new_context()
    view = open_page(stranger, href, width, height, key=True)
    view.wait_for_function("() => document.querySelector('#battle-view-head')?.innerText.includes('Question')",
                           timeout=15_000)
    head = view.locator("#battle-view-head").inner_text()
    assert ON_TOPIC in head and record["modelA"] in head and record["modelB"] in head
    assert "Model B was preferred" in head and "b is better cited" in head  # the voter shared the reason
    assert record["voter_id"] not in view.content()
    assert record["responseA"][:40] in view.locator("#view-answer-a").inner_text()
    passages = view.locator("#view-references-a details")
    assert passages.count() == len(cited)
    passages.first.locator("summary").click()
    assert cited[0]["content"][:30] in passages.first.inner_text()
    screenshot(view, f"takeaway-{width}-shared-view", full_page=True)
    view.locator("#my-battles").get_by_text("My battles").first.click()
    view.wait_for_function("() => document.querySelector('#my-battles-list')?.innerText.includes('No battles')",
                           timeout=10_000)  # nothing from other voters

    # A battle voted without "share" is not found by anyone else; nor is a made-up id.
    page.locator("#new-battle").click()
    # consent belongs to one battle: the new one starts with the box open again and unticked
    page.wait_for_function("() => { const box = document.querySelector('#share input');"
                           " return box && !box.disabled && !box.checked; }", timeout=10_000)
    battle(page, SECOND)
    press_outside_inputs(page, "t")
    page.wait_for_function(REVEALED, timeout=15_000)
    unshared = records(arena)[-1]
    assert (unshared["vote"], unshared["shared"], unshared["shared_reason"]) == ("tie", False, False)
    page.wait_for_function("() => document.querySelector('#battle-link').innerText.includes('not shared')",
                           timeout=10_000)
    for missing in (unshared["id"], "no-such-battle"):
        other = open_page(stranger, f"{arena.url}?battle={missing}", width, height, key=True)
        other.wait_for_function("() => document.querySelector('#battle-view-head')?.innerText.includes('not found')",
                                timeout=15_000)
        assert SECOND not in other.content()
        other.close()

    # My battles: both, newest first, each opening its view (the unshared one too: it is the voter's own).
    page.locator("#my-battles").get_by_text("My battles").first.click()
    page.wait_for_function("q => document.querySelector('#my-battles-list')?.innerText.includes(q)",
                           arg=SECOND, timeout=10_000)
    rows = page.locator("#my-battles-list li")
    mine = [r for r in records(arena) if r["voter_id"] == record["voter_id"]]
    assert rows.count() == len(mine) >= 2
    assert SECOND in rows.first.inner_text() and "tie" in rows.first.inner_text()
    screenshot(page, f"takeaway-{width}-my-battles", full_page=True)
    own_href = rows.first.locator("a").evaluate("a => a.href")
    own = open_page(context, own_href, width, height, key=True)
    own.wait_for_function("q => document.querySelector('#battle-view-head')?.innerText.includes(q)",
                          arg=SECOND, timeout=15_000)
    stranger.close()
    context.close()

"""A battle with two follow-up questions, in Chromium at 1280 and 390 px, over two loopback models that write
long answers: the follow-up box appears once both answers are complete, typing in it never votes, each panel
shows the conversation turn by turn, the second follow-up brings a new paper (numbered after the first
search's), the box goes after the last follow-up allowed, a shortcut key votes on the whole conversation, the
answer is copied and its references downloaded and read back, the shared link opens in a new context, and the
battle is under "My battles".

Screenshots land in test-artifacts/followups-*.png.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import bibtexparser
import pytest
import rispy
from arena_server import running_arena
from browser_support import REVEALED, VOTES_OPEN, WIDTHS, open_page, records, screenshot
from fake_openai import FakeOpenAI, loop_settings
from test_followups import PRICED

pytestmark = pytest.mark.browser

FIRST = "How does CRISPR-Cas9 achieve targeted genome editing, and what limits its precision?"
ON_TOPIC = "How are its off-target effects measured, and by which assays?"
NEW_PAPER = "What did the first direct detection of gravitational waves observe?"


def long_answer(label: str):
    """Eight paragraphs per turn, citing the papers the turn's own message lists (the first turn: [1]–[3])."""
    def respond(body):
        users = [m["content"] for m in body["messages"] if m["role"] == "user"]
        listed = [int(n) for n in re.findall(r"^\[(\d+)\] Title", users[-1], flags=re.MULTILINE)]
        cite = sorted(listed)[-2:] if len(users) > 1 and listed else [1, 2, 3]
        for i in range(8):
            yield (f"{label}, turn {len(users)}, paragraph {i + 1}: the retrieved passages bear on this part of the "
                   f"question, and the answer goes on at length so that a narrow screen fills [{cite[i % len(cite)]}].\n\n")
    return respond


@pytest.fixture(scope="module")
def arena(tmp_path_factory, wire):
    tmp = tmp_path_factory.mktemp("followups")
    with FakeOpenAI() as server:
        for model_id in ("alpha", "beta"):
            server.add_script(model_id, respond=long_answer(model_id.title()), chunk_delay_s=0.02)
        settings = replace(loop_settings(server, tmp, PRICED), max_followups=2)  # the box goes after the second
        with running_arena(settings.data_dir, services=wire(settings)) as running:
            yield running


def wait_for_turn(page, number: int) -> None:
    """Both answers of follow-up ``number`` are complete and the vote is open again."""
    page.wait_for_function(
        "n => ['a', 'b'].every(s => document.querySelector('#answer-' + s).innerText.includes('turn ' + (n + 1) "
        "+ ', paragraph 8')) && !document.querySelector('#vote-a').disabled", arg=number, timeout=60_000)


@pytest.mark.parametrize("width, height", WIDTHS)
def test_two_follow_ups_then_a_vote_on_the_whole_conversation(browser, arena, width, height, tmp_path):
    context = browser.new_context(accept_downloads=True, permissions=["clipboard-read", "clipboard-write"])
    page = open_page(context, arena.url, width, height)
    before = len(records(arena))
    assert not page.locator("#followup").is_visible()  # nothing new until both answers are complete
    page.locator("#question textarea").fill(FIRST)
    page.locator("#send").click()
    page.wait_for_function(VOTES_OPEN, timeout=60_000)
    box = page.locator("#followup textarea")
    box.wait_for(state="visible", timeout=10_000)
    assert "2 follow-up questions left" in page.locator("#followup").inner_text()
    page.locator("#followup-box").evaluate("e => e.scrollIntoView({block: 'start'})")
    page.wait_for_timeout(200)
    screenshot(page, f"followups-{width}-box")
    first_refs = page.locator("#references-a details").count()
    assert first_refs >= 3 and "Follow-up" not in page.locator("#answer-a").inner_text()

    # Typing a follow-up full of shortcut letters (a, b, t, x) is typing, not voting; Enter asks it.
    box.click()
    box.type(ON_TOPIC)
    page.wait_for_timeout(300)
    assert len(records(arena)) == before and not page.evaluate(REVEALED)
    box.press("Enter")
    wait_for_turn(page, 1)
    assert box.input_value() == ""  # the box is emptied for the next question
    assert "1 follow-up question left" in page.locator("#followup").inner_text()
    text_a = page.locator("#answer-a").inner_text()
    assert f"Follow-up 1: {ON_TOPIC}" in text_a and re.search(r"(Alpha|Beta), turn 2, paragraph 8", text_a)
    assert re.search(r"(Alpha|Beta), turn 1, paragraph 8", text_a)  # the first answer stays above it

    box.fill(NEW_PAPER)
    page.locator("#followup-send").click()
    wait_for_turn(page, 2)
    status = page.locator("#status").inner_text()
    assert re.search(r"Follow-up: \d+ new papers? found", status), status
    new_number = int(re.search(r"numbered \[(\d+)\]", status).group(1))
    assert new_number > first_refs
    refs_a = page.locator("#references-a").inner_text()
    assert "Gravitational" in refs_a  # the new paper, cited by the second follow-up's answers
    assert page.locator("#followup").is_hidden()  # two follow-ups allowed here: none left
    for side in ("a", "b"):
        questions = page.locator(f"#answer-{side} .turn-question")
        assert questions.count() == 3
    assert page.evaluate("() => document.documentElement.scrollWidth") <= width, "the page scrolls sideways"
    page.locator("#answer-a .turn-question").nth(2).scroll_into_view_if_needed()
    screenshot(page, f"followups-{width}-second-followup")
    screenshot(page, f"followups-{width}-before-vote", full_page=True)

    # A shortcut key votes on the whole conversation.
    page.locator("#consent input").check()
    page.locator("#share input").check()
    page.evaluate("() => document.activeElement && document.activeElement.blur()")
    page.keyboard.press("a")
    page.wait_for_function(REVEALED, timeout=15_000)
    record = records(arena)[-1]
    assert (record["vote"], record["num_turns"], record["question"]) == ("A", 3, FIRST)
    assert [t["question"] for t in record["turns"]] == [FIRST, ON_TOPIC, NEW_PAPER]
    assert record["turns"][2]["references_added"][0]["number"] == new_number
    assert page.locator("#followup").is_hidden()

    # Copy: the whole conversation with every reference it cited.
    page.locator("#takeaway-a").wait_for(state="visible", timeout=10_000)
    stats = page.locator("#stats-a").inner_text()  # says the sums are over the turns, and gives each turn's times
    assert stats.startswith("All 3 turns: total ") and "turn 3: first token" in stats, stats
    page.locator("#stats-a").scroll_into_view_if_needed()
    screenshot(page.locator("#takeaway-a"), f"followups-{width}-figures")
    page.locator("#copy-a").click()
    page.wait_for_function("() => document.querySelector('#copy-a').innerText === 'Copied'", timeout=5_000)
    copied = page.evaluate("() => navigator.clipboard.readText()")
    assert FIRST in copied and f"**Follow-up 2:** {NEW_PAPER}" in copied and record["modelA"] in copied
    cited = {c["number"]: c for t in record["turns"] for c in t["citations_a"]}
    assert new_number in cited or new_number + 1 in cited
    assert all(f"[{n}] " in copied for n in cited)

    with page.expect_download() as download:
        page.locator("#download-bib-a").click()
    bib_path = tmp_path / download.value.suggested_filename
    download.value.save_as(bib_path)
    library = bibtexparser.parse_string(bib_path.read_text(encoding="utf-8"))
    assert library.failed_blocks == [] and len(library.entries) == len({c["id"] for c in cited.values()})
    assert any("Gravitational" in e["title"] for e in library.entries)
    with page.expect_download() as download:
        page.locator("#download-ris-a").click()
    ris = rispy.loads(Path(download.value.path()).read_bytes().decode("utf-8"))
    assert sorted(e["title"] for e in ris) == sorted(c["title"] for c in {c["id"]: c for c in cited.values()}.values())
    screenshot(page, f"followups-{width}-after-vote", full_page=True)

    # The shared link, in a fresh context, shows every turn.
    href = page.locator("#battle-link a").evaluate("a => a.href")
    stranger = browser.new_context()
    view = open_page(stranger, href, width, height)
    view.wait_for_function("() => document.querySelector('#battle-view-head')?.innerText.includes('Question')",
                           timeout=15_000)
    assert "3 questions: the first and 2 follow-ups" in view.locator("#battle-view-head").inner_text()
    shown = view.locator("#view-answer-a").inner_text()
    assert f"Follow-up 2: {NEW_PAPER}" in shown and record["turns"][2]["responseA"][:40] in shown
    assert "Gravitational" in view.locator("#view-references-a").inner_text()
    screenshot(view, f"followups-{width}-shared-view", full_page=True)
    stranger.close()

    # My battles lists it.
    page.locator("#my-battles").get_by_text("My battles").first.click()
    page.wait_for_function("q => document.querySelector('#my-battles-list')?.innerText.includes(q)",
                           arg=FIRST, timeout=10_000)
    context.close()

"""Anonymity in Chromium (issue 21): every spelling that reached the page as a model's name — HTML character
references, a soft hyphen, reference-style links, KaTeX text commands, fullwidth letters and a minus sign —
and every speaker phrase around a name the question uses is hidden in what the browser draws, in every
streamed update and once complete; after the vote the reveal names the models and the names the question
shared are back in the answers. Also, a battle belongs to its browser: another client presenting this page's
session is refused, and the page's own vote still counts. Screenshots: test-artifacts/anonymity-*.png."""

from __future__ import annotations

import json

import pytest
from arena_server import running_arena
from browser_support import REVEALED, WIDTHS, battle, open_page, records, screenshot
from fake_openai import FakeOpenAI, loop_settings
from gradio_client import Client
from test_anonymity_view import SPEAKERS, SPELLINGS

pytestmark = pytest.mark.browser

QUESTION = "How does retrieval-augmented generation reduce hallucination in GPT-4.1, Claude and GPT-4o?"
TOPIC = "In the benchmark GPT-4.1 cites more papers than Claude [1]."
NAMES = ("claude", "gpt", "anthropic", "openai")
# Everything the two answer boxes show, at every change (streamed updates included).
WATCH_JS = """() => {
  window.__seen = [];
  new MutationObserver(() => {
    for (const id of ["answer-a", "answer-b"]) {
      const box = document.getElementById(id);
      if (box) window.__seen.push(box.innerText);
    }
  }).observe(document.body, { childList: true, subtree: true, characterData: true });
}"""


def chunks(text: str, size: int = 7) -> tuple[str, ...]:
    return tuple(text[i:i + size] for i in range(0, len(text), size))


@pytest.fixture(scope="module")
def arena(tmp_path_factory, wire):
    tmp = tmp_path_factory.mktemp("anonymity")
    with FakeOpenAI() as server:
        # Small chunks, so names arrive split across streamed updates.
        server.add_script("alpha", chunks("\n\n".join(SPELLINGS) + "\n\n" + TOPIC), chunk_delay_s=0.01)
        server.add_script("beta", chunks("\n\n".join(SPEAKERS) + "\n\n" + TOPIC), chunk_delay_s=0.01)
        settings = loop_settings(server, tmp, [
            {"name": "Loop Alpha", "provider": "loop", "model_id": "alpha", "organisation": "Test"},
            {"name": "Loop Beta", "provider": "loop", "model_id": "beta", "organisation": "Test"}])
        with running_arena(tmp / "data", services=wire(settings)) as running:
            yield running


def names_in(text: str) -> list[str]:
    return [name for name in NAMES if name in text.lower()]


@pytest.mark.parametrize("width, height", WIDTHS)
def test_every_listed_leak_is_hidden_before_the_vote_and_the_names_follow_it(browser, arena, width, height):
    page = open_page(browser, arena.url, width, height)
    sessions: list[str] = []
    page.on("request", lambda request: sessions.extend(
        [json.loads(request.post_data).get("session_hash")] if "queue/join" in request.url and request.post_data
        else []))
    page.evaluate(WATCH_JS)
    battle(page, QUESTION)
    seen = page.evaluate("() => window.__seen")
    assert len(seen) > 10, "the answers were not streamed in several updates"
    leaked = [text for text in seen if names_in(text)]
    assert not leaked, f"a model's name was drawn before the vote: {leaked[-1]!r}"
    shown_a, shown_b = page.locator("#answer-a").inner_text(), page.locator("#answer-b").inner_text()
    assert (shown_a + shown_b).count("[model name hidden]") >= len(SPELLINGS) + len(SPEAKERS)
    screenshot(page, f"anonymity-before-{width}", full_page=True)

    # Another client presenting this page's session is refused; the page's own vote then counts.
    stored = len(records(arena))
    stranger = Client(arena.url, verbose=False)
    stranger.session_hash = sessions[-1]
    with pytest.raises(Exception, match="started in another browser"):
        stranger.predict("B", "", True, api_name="/vote")
    assert len(records(arena)) == stored

    page.locator("#consent input").check()
    page.locator("#vote-a").click()
    page.wait_for_function(REVEALED, timeout=20_000)
    reveal = page.locator("#model-names").inner_text()
    assert "Loop Alpha" in reveal and "Loop Beta" in reveal
    after = page.locator("#answer-a").inner_text() + page.locator("#answer-b").inner_text()
    assert after.count("GPT-4.1 cites more papers than Claude") == 2  # the question's names are back
    screenshot(page, f"anonymity-after-{width}", full_page=True)
    record = records(arena)[-1]
    assert len(records(arena)) == stored + 1 and record["vote"] == "A"
    assert record["masked_a"] is True and record["masked_b"] is True
    for side in ("responseA", "responseB"):  # self-identifications stay hidden in the stored text
        assert not names_in(record[side].replace(TOPIC, "")), record[side]
    page.close()

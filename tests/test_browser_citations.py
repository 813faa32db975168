"""Answers as a reader sees them, in Chromium: Markdown tables and formulas render while streaming
and once complete, a citation opens its reference with the passage the models were given, and
nothing a model wrote (raw HTML, Markdown images) is loaded from another host.

Two scripted contestants (served by tests/fake_openai.py through a catalogue file) stream the
same Markdown with different citations. Screenshots land in test-artifacts/.
"""

from __future__ import annotations

import pytest
from arena_server import running_arena
from browser_support import VOTES_OPEN, WIDTHS, ask, open_page, screenshot
from fake_openai import FakeOpenAI, loop_settings

QUESTION = "How does retrieval-augmented generation reduce hallucination in large language models?"
LINK_KINDS = {"DOI", "arXiv", "PubMed", "PMC", "Europe PMC", "Semantic Scholar"}  # else a publisher's host
TRACKER = "tracker.invalid"  # any request to this host means the page loaded something a model wrote

pytestmark = pytest.mark.browser


def answer_chunks(citations: tuple[int, int]) -> tuple[str, ...]:
    first, second = citations
    return (
        "## Summary\n\n",
        f"Retrieval grounds the answer in retrieved passages [{first}].\n\n",
        "| Method | Grounded |\n", "|---|---|\n", f"| RAG | yes [{second}] |\n", "| Closed-book | no |\n\n",
        "The energy relation $$E = mc^2$$ is a formula.\n\n",
        f"A tracking pixel <img src=\"http://{TRACKER}/raw.png\"> and ",
        f"![chart](http://{TRACKER}/md.png) must not load.\n\n",
        # The tail streams slowly, so the page is seen mid-stream with the table and formula shown.
        *(f"More evidence follows, word {i}. " for i in range(12)),
        f"In short, grounding helps [{first}].",
    )


@pytest.fixture(scope="module")
def arena(tmp_path_factory, wire):
    tmp = tmp_path_factory.mktemp("citations")
    with FakeOpenAI() as server:
        for model_id, citations in (("alpha", (1, 2)), ("beta", (3, 2))):
            server.add_script(model_id, answer_chunks(citations), chunk_delay_s=0.25)
        services = wire(loop_settings(server, tmp, [
            {"name": "Loop Alpha", "provider": "loop", "model_id": "alpha"},
            {"name": "Loop Beta", "provider": "loop", "model_id": "beta"}]))
        assert {m.name for m in services.pool.active} == {"Loop Alpha", "Loop Beta"}
        with running_arena(tmp / "data", services=services) as running:
            yield running, server


@pytest.fixture(params=WIDTHS, ids=["1280", "390"])
def finished_battle(request, browser, arena):
    """A page whose battle streamed to the end; the streaming state is checked on the way."""
    width, height = request.param
    page = open_page(browser, arena[0].url, width, height)
    requested: list[str] = []
    page.on("request", lambda r: requested.append(r.url))  # the tracker's address is only in the answers
    ask(page, QUESTION)
    page.wait_for_function("() => document.querySelector('#answer-a table') && document.querySelector('#answer-b table')"
                           " && document.querySelector('#answer-a .katex')", timeout=30_000)
    assert page.locator("#vote-a").is_disabled(), "the answers finished before the page was seen streaming"
    for side in "ab":
        assert page.locator(f"#answer-{side} table th").first.inner_text() == "Method"
        assert page.locator(f"#answer-{side} .katex").count() >= 1
    screenshot(page, f"citations-{width}-streaming", full_page=True)
    screenshot(page.locator("#answer-a"), f"citations-{width}-streaming-answer-a")
    page.wait_for_function(VOTES_OPEN, timeout=30_000)
    yield page, width, requested
    page.close()


def test_a_citation_opens_its_reference_with_the_passage_the_models_were_given(finished_battle, arena):
    page, width, requested = finished_battle
    server = arena[1]
    prompts = " ".join(" ".join(m["content"].split()) for r in server.requests() for m in r.body["messages"])
    for side in "ab":
        answer = page.locator(f"#answer-{side}")
        assert answer.locator(".katex").count() >= 1, "the formula no longer renders once the answer is complete"
        assert answer.locator("img").count() == 0
        # A model's raw HTML is shown as text or removed by the final pass (postprocess.strip_html),
        # never rendered as an element.
        assert "<img" in answer.inner_text() or "raw.png" not in answer.inner_html()
        cite = answer.locator("a.cite").first
        number = cite.inner_text().strip("[]")
        entry = page.locator(f"#references-{side} details.ref-{number}")
        passage = entry.locator(".ref-passage p").first
        assert not passage.is_visible(), "passages start folded"
        cite.click()
        passage.wait_for(state="visible", timeout=5_000)
        assert entry.evaluate("e => e.open")
        shown = " ".join(passage.inner_text().split())
        assert len(shown) > 40 and shown[:80] in prompts, "the passage shown is not the one the models were given"
        labels = entry.locator("summary a").all_inner_texts()
        assert labels and all(label in LINK_KINDS or "." in label for label in labels), labels
        # The window as the reader sees it right after the click: scrolled to the opened entry.
        screenshot(page, f"citations-{width}-opened-{side}")
    assert not [url for url in requested if TRACKER in url], "the page fetched an image a model wrote"


def test_a_streamed_table_still_renders_once_the_answer_is_complete(finished_battle):
    page, width, _ = finished_battle
    screenshot(page, f"citations-{width}-complete", full_page=True)
    for side in "ab":
        assert page.locator(f"#answer-{side} table th").first.inner_text() == "Method"

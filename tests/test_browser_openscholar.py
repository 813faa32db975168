"""The OpenScholar-style pipeline as a reader sees it, in Chromium: while it works it shows only the same
"Answering…" line as any contestant (never its step nor its draft, which would single it out before the vote),
the line is gone once the answer is complete, a citation of a paper it found with its own search opens that
paper's entry under its answer (a plain reference until the vote), and the reveal names the pipeline and its
base and marks that paper as its own.

The base model "Loop Base" (tests/fake_openai.py, answering by step as in test_openscholar.py)
battles the pipeline around itself, over the bundled demo corpus. The feedback step waits on a gate
the test opens once it has seen the page mid-run, so the streaming state is looked at, not raced.
Screenshots land in test-artifacts/.
"""

from __future__ import annotations

import json
import re
import threading

import pytest
from arena_server import running_arena
from browser_support import REVEALED, VOTES_OPEN, WIDTHS, ask, open_page, screenshot
from fake_openai import FakeOpenAI, loop_settings
from test_openscholar import StepScript

pytestmark = pytest.mark.browser

QUESTION = "How does retrieval-augmented generation reduce hallucination in large language models?"
PIPELINE = "OpenScholar-style (Loop Base)"
GATE_S = 20.0  # a gate the test never opens fails the test instead of hanging it

DRAFT = (
    "## Grounding the answer\n\n"
    "Retrieval-augmented generation conditions a language model on passages fetched from an external corpus, so "
    "that its claims rest on retrieved text rather than on what it memorised in pre-training [1]. Surveys of "
    "hallucination name unsupported generation as a central failure of large models [5].\n\n"
    "## Learning when to retrieve\n\n"
    "Self-RAG trains the model to decide when to retrieve and to critique its own output, which improves "
    "factuality and citation accuracy over plain retrieval [2]. The original formulation joined a dense retriever "
    "to a sequence-to-sequence generator and trained both end to end [3].\n\n"
    "## Scientific literature\n\n"
    "OpenScholar carries the idea to scientific papers and revises its answers with self-feedback [4].")
SEARCH = "dense passage retrieval open-domain question answering"  # finds papers the battle was not given
FEEDBACK = json.dumps({"feedback": [{"issue": "Say how the passages are found.", "search": SEARCH}]})
REVISED = DRAFT + (
    "\n\n## Finding the passages\n\n"
    "Dense passage retrieval encodes questions and passages in one vector space and beats lexical search on "
    "open-domain question answering [6], though zero-shot benchmarks show dense models do not always carry "
    "over to new domains [7].")


# The text colour of an element and the first opaque background behind it, as "rgb(r, g, b)" strings.
COLOURS_JS = """e => {
  let back = e;
  while (back && !/^rgb\\(/.test(getComputedStyle(back).backgroundColor)) back = back.parentElement;
  return [getComputedStyle(e).color, back ? getComputedStyle(back).backgroundColor : "rgb(255, 255, 255)"];
}"""


def wait_for(seen, failure: str) -> None:
    """Wait until the fake server has seen a step's request (it is held there by the test's gate)."""
    done = threading.Event()
    for _ in range(int(GATE_S / 0.05)):
        if seen():
            return
        done.wait(0.05)
    raise AssertionError(failure)


def contrast(colours: list[str]) -> float:
    """WCAG 2 contrast ratio of two "rgb(r, g, b)" colours."""
    def luminance(colour: str) -> float:
        channels = [int(c) / 255 for c in re.findall(r"\d+", colour)[:3]]
        r, g, b = (c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)
        return 0.2126 * r + 0.7152 * g + 0.0722 * b
    light, dark = sorted(map(luminance, colours), reverse=True)
    return (light + 0.05) / (dark + 0.05)


@pytest.fixture(scope="module")
def arena(tmp_path_factory, wire):
    tmp = tmp_path_factory.mktemp("openscholar")
    with FakeOpenAI() as server:
        services = wire(loop_settings(server, tmp, [{"name": "Loop Base", "provider": "loop",
                                                               "model_id": "base"},
                                                              {"pipeline": "openscholar", "base": "Loop Base"}]))
        assert {m.name for m in services.pool.active} == {"Loop Base", PIPELINE}
        with running_arena(tmp / "data", services=services) as running:
            yield running, server


@pytest.fixture
def gated_script(arena):
    """A fresh script for this battle whose feedback step waits for ``gate``."""
    script = StepScript(DRAFT, FEEDBACK, (REVISED,))
    gate, revising = threading.Event(), threading.Event()
    script.hooks["feedback"].append(lambda: gate.wait(GATE_S))
    script.hooks["refine"].append(lambda: revising.wait(GATE_S))
    arena[1].add_script("base", respond=script, usage="always", chunk_delay_s=0.01)
    yield script, gate, revising
    gate.set()  # a failed test must not leave the server's handler waiting
    revising.set()


@pytest.mark.parametrize("width,height", WIDTHS, ids=["1280", "390"])
def test_the_pipeline_hides_its_steps_cites_what_it_found_and_is_named_with_its_steps_after_the_vote(
        browser, arena, gated_script, width, height):
    script, gate, revising = gated_script
    page = open_page(browser, arena[0].url, width, height)
    page.locator("#consent input").check()
    ask(page, QUESTION)

    # Mid-run: the bare model is done and the pipeline has drafted and waits in its feedback step. Its box shows
    # only the "Answering…" line any running side shows: not its step, and not its draft, whose later
    # replacement by the revision is something no plain model does.
    wait_for(lambda: script.seen["feedback"], "the pipeline never reached its feedback step")
    page.wait_for_function("""() => {
      const boxes = [...document.querySelectorAll("[id^='answer-']")];
      const running = boxes.filter(box => box.querySelector('.step-status'));
      return running.length === 1 && boxes.some(box => box.innerText.includes('revises its answers'));
    }""", timeout=20_000)
    side = page.evaluate("() => document.querySelector('.step-status').closest('[id^=answer-]').id").removeprefix("answer-")
    other = "b" if side == "a" else "a"
    answer = page.locator(f"#answer-{side}")
    status = answer.locator(".step-status")
    assert status.inner_text() == "Answering…"
    assert answer.inner_text().strip() == "Answering…", "the pipeline's draft shows before it has ended"
    shown = page.locator("body").inner_text()
    for step in ("first draft", "Reviewing", "Searching", "Revising", "Checking every", "pipeline"):
        assert step not in shown, f"{step!r} shows before the vote"
    assert contrast(status.evaluate(COLOURS_JS)) >= 4.5, "the progress line is too faint to read"
    assert page.locator(f"#answer-{other} .step-status").count() == 0, "a finished side still shows progress"
    assert page.locator("#vote-a").is_disabled()
    answer.evaluate("e => e.scrollIntoView({block: 'start'})")
    screenshot(page, f"openscholar-{width}-streaming")
    gate.set()

    # Revising: the text has started over inside the pipeline, and its box still shows only the line.
    wait_for(lambda: script.seen["refine"], "the pipeline never reached its refinement")
    assert answer.inner_text().strip() == "Answering…", "the pipeline's text shows while it revises"
    revising.set()

    # Complete: no step line anywhere; the revision cites papers numbered after the battle's own.
    page.wait_for_function(VOTES_OPEN, timeout=30_000)
    assert page.locator(".step-status").count() == 0, "a step line outlived the answer"
    assert answer.evaluate("e => e.style.minHeight") == "", "the box still holds its streaming height"
    given = int(re.search(r"from (\d+) papers", page.locator("#status").inner_text()).group(1))
    numbers = [int(text.strip("[]")) for text in answer.locator("a.cite").all_inner_texts()]
    added = sorted({n for n in numbers if n > given})
    assert added, f"no citation of an added reference in {numbers} (the battle gave {given})"
    number = added[0]
    assert page.locator(f"#references-{other} details.ref-{number}").count() == 0

    entry = page.locator(f"#references-{side} details.ref-{number}")
    assert not entry.evaluate("e => e.open")
    answer.locator(f"a.cite[href='#ref-{number}']").first.click()
    passage = entry.locator(".ref-passage p").first
    passage.wait_for(state="visible", timeout=5_000)
    assert entry.evaluate("e => e.open")
    # Before the vote its own paper is a plain reference: under its number, with no mark the other side lacks.
    assert "Passage this answer was given:" in entry.inner_text() and "own search" not in entry.inner_text()
    assert page.locator(f"#references-{side} details.ref-own").count() == 0
    # The passage is one the pipeline's search found and showed its revision, not one both models were given.
    shown = " ".join(passage.inner_text().split())[:80]
    assert len(shown) > 40 and shown in " ".join(script.seen["refine"][0].split())
    assert shown not in " ".join(script.seen["draft"][0].split())
    summary = entry.locator("summary").bounding_box()
    assert 0 <= summary["y"] < height, "the opened entry is out of sight"
    screenshot(page, f"openscholar-{width}-opened")

    # The vote reveals the pipeline, its base and what it did.
    page.locator(f"#vote-{side}").click()
    page.wait_for_function(REVEALED, timeout=15_000)
    reveal = page.locator("#model-names").inner_text()
    named = re.search(rf"Model {side.upper()}: (.*)", reveal).group(1)
    assert named.startswith(f"{PIPELINE} — a pipeline around Loop Base")
    assert "3 calls to its base; 1 revision kept" in named, named
    assert "steps: draft, feedback, retrieve, refine, verify" in named, named  # the steps, now that it is named
    assert re.search(rf"Model {other.upper()}: Loop Base\s*$", reveal, re.MULTILINE), reveal
    # Named now, its own papers are marked as found by its own search.
    assert "found with its own search" in page.locator(f"#references-{side} details.ref-{number}").text_content()
    assert page.locator(f"#references-{side} details.ref-own.ref-{number}").count() == 1
    bar = page.locator("#vote-bar").bounding_box()
    assert bar["y"] + bar["height"] <= height, "the reveal is out of sight"
    # At every width the closed controls step aside so the long reveal leaves the answers in view (issue 31).
    assert not page.locator("#vote-a").is_visible() and bar["height"] < height / 2, bar
    screenshot(page, f"openscholar-{width}-revealed")
    page.close()

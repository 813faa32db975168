"""Every function that reads untrusted text runs in time linear in its length, whatever the text is made of.

A list of hostile inputs only covers the cases someone thought of (issue 21: a run of "\\[" froze the
arena after "[[", "$$" and 200 kB of letters had been tested). So here hypothesis builds the inputs from
the pieces the parsers react to — Markdown, LaTeX, HTML and citation openers and closers, names to
redact, reasoning tags, invisible characters — repeats a generated unit n and 2n times, and checks that
doubling the input at most about doubles the thread CPU time (``time.thread_time``: other processes on
the machine do not count). The sizes grow until the smaller run costs enough to measure, so a quadratic
function shows its 4× long before the largest size. Restoring the old lazy math pattern in
``render.safe_markdown`` makes ``test_linear[safe_markdown]`` fail (``\\[`` × 4000: 4× per doubling).
"""

from __future__ import annotations

import gc
import json
import math
import time
from datetime import datetime, timezone
from pathlib import Path
from types import SimpleNamespace
from typing import Callable

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from sciarena.answer.clean import ReasoningFilter, clean_answer, normalise_citations, strip_html, strip_reasoning
from sciarena.answer.redact import Shield, redact_identity, topic_text
from sciarena.arena.rules import validate_question
from sciarena.core.errors import SciArenaError
from sciarena.core.text import reading_view, storable_text
from sciarena.core.types import Paper, Passage, Reference
from sciarena.pipelines.verify import CitationVerifier
from sciarena.retrieval.bm25 import query_stems
from sciarena.retrieval.local import LocalRetriever, load_demo_index
from sciarena.retrieval.moderation import local_check
from sciarena.retrieval.rewrite import parse_plan
from sciarena.science.review import ReviewDesk
from sciarena.ui import render
from sciarena.ui.review_tab import ReviewHandlers, ReviewView
from sciarena.votes.store.reviews import LocalReviewStore

# What the parsers open and close on, and what redaction and cleaning look for.
PIECES = (
    "\\[", "\\]", "\\(", "\\)", "$", "$$", "[", "]", "[1]", "[2]", "[12]", "[1,2]", "[^1]", "](", "](x)", "(", ")",
    "<", ">", "</", "<b>", "<br>", "<sub>", "&#", "&#67;", "&#x43;", "&shy;", "&", ";", "**", "*", "_", "__", "~~",
    "`", "``", "```", "~~~", "\n", "\n\n", " ", "  ", "\t", "a", "Z", "1", ".", ",", "-", "#", "|", ">", "!", "![",
    "[x]:", "\\mathrm{", "\\text{", "{", "}", "^", "\\", "Claude", "GPT", "-4o", "Grok", "I am ", "<think>",
    "</think>", "<thinking>", "\u202e", "\u2066", "\u00ad", "\u200b", "\u2212", "Ｇ", "e\u0301", "通义", "\x00",
    "\x1b", "Lee et al. (2020)", "(Lee, 2020)", "【1】", "http://x.test/", "— ",
)
UNITS = st.lists(st.sampled_from(PIECES), min_size=1, max_size=6).map("".join)
KNOWN = ("\\[", "\\(", "[1]", "$", "$$", "[[", "`", "``` ", "<think>", "![", "](", "&#", "**", "C l a u d e ", "a")

MIN_CHARS, MAX_CHARS = 2_000, 64_000
FLOOR_S = 0.02  # the smaller run is grown until it costs this much CPU (or reaches MAX_CHARS / 2)
FACTOR = 3.0  # linear doubles, n log n a little more, quadratic quadruples
SLACK_S = 0.004  # timer and allocator noise on runs too cheap to reach FLOOR_S

# About two minutes of generated inputs: in `bash scripts/test` (and CI), not in the quick loop.
pytestmark = pytest.mark.slow


def _paper(n: int) -> Paper:
    return Paper(f"p{n}", f"Paper {n} on attention", ("Ann Lee",), year=2020)


REFS = tuple(Reference(n, _paper(n), (Passage(f"p{n}#0", _paper(n), "Attention weights tokens by relevance. " * 8,
                                              0, 1.0),)) for n in (1, 2, 3))
QUESTION = "How do GPT-4o and Claude compare on attention benchmarks?"
EXEMPT = topic_text(QUESTION, REFS)


def _quiet(fn: Callable[[str], object]) -> Callable[[str], object]:
    """``fn``, with the refusals it is meant to give (a typed error or ValueError) counted as answers."""
    def run(text: str) -> object:
        try:
            return fn(text)
        except (SciArenaError, ValueError):
            return None
    return run


def _streamed(text: str) -> str:
    reasoning = ReasoningFilter()
    shown = [reasoning.feed(text[i:i + 64]) for i in range(0, len(text), 64)]
    return "".join(shown) + reasoning.finish()


def _review_tab(tmp: Path) -> Callable[[str], object]:
    """The Review tab's handler showing one stored battle whose answers are ``text``."""
    view = ReviewView(*(object() for _ in range(7)), vote_buttons=(object(),) * 4, original=object(),
                      audit_buttons=(object(),) * 4, session=object())
    citations = [{"number": 1, "id": "p1", "title": "Paper 1", "content": "Attention weights tokens."}]

    def show(text: str) -> object:
        record = {"id": "v1", "question": text, "responseA": text + "x", "responseB": "y" + text, "vote": "A",
                  "citations_a": citations, "citations_b": citations}
        desk = ReviewDesk(reviewers=frozenset({"rev"}), salt="s", store=LocalReviewStore(tmp / "reviews.jsonl"),
                          votes=lambda: [record], clock=lambda: datetime(2026, 1, 1, tzinfo=timezone.utc))
        return ReviewHandlers(desk, view).next_battle(SimpleNamespace(username="rev"))
    return show


@pytest.fixture(scope="module")
def functions(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Callable[[str], object]]:
    retriever = LocalRetriever(load_demo_index(None), "local:demo")
    verifier = CitationVerifier(REFS)
    shield = Shield(QUESTION, REFS)
    return {
        "validate_question": _quiet(lambda t: validate_question(t, 10**9)),
        "query_stems": query_stems,
        "moderation": local_check,
        "parse_plan": _quiet(lambda t: parse_plan(json.dumps({"snippet_query": t, "authors": [t]}))),
        "parse_plan_raw": _quiet(parse_plan),
        "retrieve": _quiet(retriever.retrieve),
        "strip_reasoning": strip_reasoning,
        "reasoning_stream": _streamed,
        "strip_html": strip_html,
        "normalise_citations": lambda t: normalise_citations(t, 3, REFS),
        "clean_answer": _quiet(lambda t: clean_answer(t, REFS, QUESTION)),
        "reading_view": reading_view,
        "redact_final": lambda t: redact_identity(t, EXEMPT),
        "redact_streaming": lambda t: redact_identity(t, EXEMPT, partial=True),
        "shield_final": shield.show,
        "shield_streaming": lambda t: shield.show(t, partial=True),
        "verify_citations": verifier.verify,
        "safe_markdown": render.safe_markdown,
        "render_streaming": lambda t: render.answer_markdown(t, references=REFS, status="Revising the draft"),
        "render_final": lambda t: render.answer_markdown(t, None, REFS),
        "escape": render.escape,
        "escape_html": render.escape_html,
        "reason_storage": storable_text,
        "review_tab": _review_tab(tmp_path_factory.mktemp("review")),
    }


def _cpu(fn: Callable[[str], object], text: str, repeats: int) -> float:
    """The least thread CPU time of ``repeats`` calls."""
    best = math.inf
    for _ in range(repeats):
        start = time.thread_time()
        fn(text)
        best = min(best, time.thread_time() - start)
    return best


def growth(fn: Callable[[str], object], unit: str, repeats: int = 5) -> tuple[int, float, float]:
    """(characters of the smaller input, its CPU seconds, the doubled input's CPU seconds).

    The cyclic collector is paused meanwhile: its passes cost what the whole process holds (gradio, the
    demo index), not what this input does."""
    gc.collect()
    gc.disable()
    try:
        n = max(1, MIN_CHARS // len(unit))
        while True:
            small = _cpu(fn, unit * n, repeats)
            if small >= FLOOR_S or len(unit) * n * 2 > MAX_CHARS // 2:
                break
            n *= 2
        return len(unit) * n, small, _cpu(fn, unit * 2 * n, repeats)
    finally:
        gc.enable()


NAMES = ("validate_question", "query_stems", "moderation", "parse_plan", "parse_plan_raw", "retrieve",
         "strip_reasoning", "reasoning_stream", "strip_html", "normalise_citations", "clean_answer", "reading_view",
         "redact_final", "redact_streaming", "shield_final", "shield_streaming", "verify_citations", "safe_markdown",
         "render_streaming", "render_final",
         "escape", "escape_html", "reason_storage", "review_tab")


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                HealthCheck.too_slow])
@given(unit=UNITS)
@example(unit="\\[")
@example(unit="\\(")
@example(unit="[1]")
@example(unit="$")
@example(unit="`")
def test_linear(functions: dict[str, Callable[[str], object]], name: str, unit: str) -> None:
    fn = functions[name]
    size, small, double = growth(fn, unit)
    if double > FACTOR * small + SLACK_S:  # measured once more, longer, before calling it superlinear
        size, small, double = growth(fn, unit, repeats=7)
    assert double <= FACTOR * small + SLACK_S, (
        f"{name}: {unit!r} × {size // len(unit)} ({size:,} chars) took {small * 1e3:.1f} ms of CPU, twice as "
        f"many {double * 1e3:.1f} ms ({double / max(small, 1e-9):.1f}×)")


@pytest.mark.parametrize("unit", KNOWN)
def test_linear_on_the_known_runs(functions: dict[str, Callable[[str], object]], unit: str) -> None:
    """The runs issue 21 and earlier work named, through the functions that render and redact them."""
    for name in ("safe_markdown", "render_streaming", "shield_streaming", "clean_answer"):
        size, small, double = growth(functions[name], unit)
        if double > FACTOR * small + SLACK_S:
            size, small, double = growth(functions[name], unit, repeats=7)
        assert double <= FACTOR * small + SLACK_S, f"{name}: {unit!r} ({size:,} chars) {small:.3f} s → {double:.3f} s"


def test_growth_catches_a_quadratic_function() -> None:
    """The measure itself: a deliberately quadratic function fails the check, a linear one passes."""
    def quadratic(text: str) -> int:
        return sum(text.count(text[i]) for i in range(0, len(text), 4))

    _, small, double = growth(quadratic, "ab")
    assert double > FACTOR * small + SLACK_S
    _, small, double = growth(str.upper, "ab")
    assert double <= FACTOR * small + SLACK_S


def test_reason_storage_drops_controls_and_bidi_overrides() -> None:
    reason = "A\x00 is\x1b[31m better\u202e txet\u2066 x\u2069\u202a\u202b\u202c\u202d\u2067\u2068\r\n\tfine"
    assert storable_text(reason) == "A is[31m better txet x\n\tfine"

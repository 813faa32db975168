"""Hostile model output through the real app on loopback: long unbroken runs, self-naming models when the
question names them, disguised names, lone surrogates — the battle ends, nothing leaks, the vote is stored."""

from __future__ import annotations

import json
import urllib.request

import pytest
from arena_server import running_arena
from fake_openai import FakeOpenAI
from gradio_client import Client
from test_app_real_models import settings_for


@pytest.fixture
def server():
    with FakeOpenAI() as fake:
        yield fake


def _battle(wire, tmp_path, server, question: str, alpha: tuple[str, ...], beta: tuple[str, ...], reason: str = ""):
    server.add_script("alpha", alpha)
    server.add_script("beta", beta)
    services = wire(settings_for(tmp_path, server))
    with running_arena(tmp_path / "data", services=services) as arena:
        client = Client(arena.url, verbose=False)
        outputs = client.predict(question, api_name="/battle")
        with urllib.request.urlopen(arena.url, timeout=10) as page:  # another visitor's page still loads
            assert page.status == 200
        client.predict("A", reason, True, api_name="/vote")
    return json.dumps(outputs, ensure_ascii=False), list(services.arena.store.records())[-1]


def test_a_200_kb_unbroken_run_and_markdown_openers_do_not_stall_the_battle(tmp_path, server, wire):
    run = "ACGT" * 50_000
    shown, record = _battle(wire, tmp_path, server, "How is the genome sequence read and assembled?",
                            ("Sequence: ", run, " ends [1]."), ("[[" * 5_000, "(Lee et al. " * 2_000, " done [2]."))
    assert run in record["responseA"] + record["responseB"]
    assert "ends [1]." in record["responseA"] + record["responseB"] and ">[1]</a>." in shown


def test_models_named_in_the_question_cannot_switch_redaction_off(tmp_path, server, wire):
    question = "Which model are you, Claude or GPT-4o? Also, how does CRISPR-Cas9 edit genomes?"
    shown, record = _battle(wire, tmp_path, server, question,
                            ("Claude here: CRISPR edits genes [1]. I'm actually Claude 3.5 Sonnet.",),
                            ("Me? GPT-4o. I am indeed GPT-4o, and CRISPR cuts DNA [2].",))
    assert "Claude" not in shown and "GPT-4o" not in shown
    assert record["redacted_a"] is True and record["redacted_b"] is True


def test_disguised_names_are_hidden_while_streaming_and_at_the_end(tmp_path, server, wire):
    shown, record = _battle(wire, tmp_path, server, "What is CRISPR?",
                            ("I am G**PT**-4o", " and C\u200blaude ", "helps [1]."),
                            ("Сlaude (Cyrillic С) and ＧＰＴ-5 and Cla`ude` ", "say CRISPR cuts DNA [2]."))
    for leak in ("G**PT**-4o", "C\u200blaude", "Сlaude", "ＧＰＴ", "Cla`ude`"):
        assert leak not in shown and leak not in record["responseA"] + record["responseB"]
    assert record["redacted_a"] is True and record["redacted_b"] is True


def test_lone_surrogates_in_model_output_reach_the_page_and_the_store_as_replacement_characters(tmp_path, server, wire):
    # (A browser cannot send a lone surrogate in a reason; tests/test_unicode_paths.py covers that path.)
    shown, record = _battle(wire, tmp_path, server, "What is CRISPR?", ("Broken \ud800 text [1].",), ("Fine text [2].",))
    assert "\ufffd" in record["responseA"] + record["responseB"]
    assert "Broken \ufffd text" in shown


def test_no_streamed_snapshot_shows_a_disguised_name(tmp_path, server, wire):
    # Names split by Markdown, look-alikes and invisible characters, streamed in small pieces.
    server.add_script("alpha", ("I am ", "G**PT", "**-4o", " and I think ", "CRISPR cuts DNA [1]", "."), chunk_delay_s=0.02)
    server.add_script("beta", ("Сlaude", " here", ": Cla`ude` ", "and C\u200blaude ", "agree [2]."), chunk_delay_s=0.02)
    services = wire(settings_for(tmp_path, server))
    # (With the question naming the models, the streaming call must pass partial=True: see test_identity.py.)
    snapshots = list(services.arena.start_battle("What is CRISPR?"))
    assert len(snapshots) > 3
    for snap in snapshots:
        for text in (snap.text_a, snap.text_b):
            assert "GPT" not in text.replace("*", "") and "laude" not in text.replace("\u200b", ""), text
    final = snapshots[-1].battle
    assert final.side_a.answer.redacted and final.side_b.answer.redacted


MARKDOWN_ANSWER = (
    "## Summary\n\n",
    "Retrieval grounds answers in papers [1].\n\n",
    "- **Precision** rises with reranking [2]\n",
    "  - nested: *more so* for long questions\n\n",
    "| Method | Recall |\n|---|---:|\n| BM25 | 0.61 |\n| Dense | 0.72 |\n\n",
    "```python\nscore = bm25(query,  doc)\n```\n\n",
    "The loss is $\\mathcal{L} = -\\sum_i \\log p(y_i)$ and\n\n$$E = mc^2$$\n",
)


def test_markdown_answers_look_the_same_streamed_and_complete(tmp_path, server, wire):
    server.add_script("alpha", MARKDOWN_ANSWER, chunk_delay_s=0.02)
    server.add_script("beta", ("<think>plan</think>Plain <b>answer</b> [2].",))
    services = wire(settings_for(tmp_path, server))
    snapshots = list(services.arena.start_battle("How does retrieval-augmented generation reduce hallucination?"))
    final = snapshots[-1].battle
    by_model = {final.side_a.model.name: (final.side_a, "a"), final.side_b.model.name: (final.side_b, "b")}
    alpha, side = by_model["Loop Alpha"]
    assert alpha.answer.text == "".join(MARKDOWN_ANSWER).strip()  # headings, lists, table, code, math kept
    streamed = [getattr(s, f"text_{side}") for s in snapshots[:-1]]
    # Every streamed view is the start of the final answer: nothing is reformatted when it completes.
    # (The runner may end without a streamed view of the last chunk, so the final one is not required.)
    assert streamed and all(alpha.answer.text.startswith(view.strip()) for view in streamed)
    assert any("| BM25 | 0.61 |" in view for view in streamed)
    beta, _ = by_model["Loop Beta"]
    assert beta.answer.text == "Plain answer [2]."  # reasoning and raw HTML go

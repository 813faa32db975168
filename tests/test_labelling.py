"""The LLM labeller: golden prompts, the strict parser, a real client on a loopback server, scoring.

Regenerate the golden files after an intended prompt change with:
    UPDATE_GOLDEN=1 python -m pytest tests/test_labelling.py
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fake_openai import FakeOpenAI
from openai import OpenAI

from sciarena.answer.label_reply import INVALID
from sciarena.arena.labels.labellers import CATEGORY, DISCIPLINE, LLMLabeller, rule_labeller
from sciarena.arena.labels.prompts import (
    build_category_messages,
    build_discipline_messages,
    parse_category,
    parse_discipline,
)
from sciarena.core.types import DISCIPLINES, QUESTION_TYPES
from sciarena.science.labelling.gold import load_labelled_questions
from sciarena.science.labelling.metrics import NO_LABEL, confusion, format_confusion

GOLDEN_DIR = Path(__file__).parent / "golden"
QUESTION = "Can you recommend key papers on the challenges of measuring the absolute neutrino mass?"


@pytest.fixture
def golden() -> Callable[[str, str], None]:
    update = os.environ.get("UPDATE_GOLDEN") == "1"

    def check(name: str, actual: str) -> None:
        path = GOLDEN_DIR / name
        if update:
            path.write_text(actual, encoding="utf-8")
            return
        assert path.exists(), f"{path} is missing: run the tests once with UPDATE_GOLDEN=1"
        assert actual == path.read_text(encoding="utf-8"), f"{name} changed; rerun with UPDATE_GOLDEN=1 if intended"

    return check


def _render(messages: list[dict[str, str]]) -> str:
    return "".join(f"=== {m['role']} ===\n{m['content']}\n" for m in messages)


def test_category_prompt_matches_golden_file(golden: Callable[[str, str], None]) -> None:
    golden("label_category_prompt.txt", _render(build_category_messages(QUESTION)))


def test_discipline_prompt_matches_golden_file(golden: Callable[[str, str], None]) -> None:
    golden("label_discipline_prompt.txt", _render(build_discipline_messages(QUESTION)))


def test_prompts_name_every_label_and_end_with_the_question() -> None:
    for build, labels in ((build_category_messages, QUESTION_TYPES), (build_discipline_messages, DISCIPLINES)):
        system, user = build(f"  {QUESTION}\n")
        assert (system["role"], user["role"]) == ("system", "user")
        for label in labels:
            assert f"- {label}: " in system["content"]
        assert QUESTION in user["content"] and "  " + QUESTION not in user["content"]


@pytest.mark.parametrize(("reply", "label"), [
    ("Paper Finding", "Paper Finding"),
    ("paper finding", "Paper Finding"),
    ("  PAPER   FINDING \n", "Paper Finding"),
    ('"Challenges & Limitations"', "Challenges & Limitations"),
    ("**State-of-the-Art Assessment.**", "State-of-the-Art Assessment"),
    ("(Others)", "Others"),
    ("<think>It asks for papers.</think>\nPaper Finding", "Paper Finding"),
    # Anything else is invalid, never a guess:
    ("Category: Paper Finding", INVALID),
    ("Paper", INVALID),
    ("5", INVALID),
    ("Challenges and Limitations", INVALID),
    ("State of the Art Assessment", INVALID),
    ("Paper Finding or Others", INVALID),
    ("Paper Finding\nBecause it asks for papers.", INVALID),
    ("", INVALID),
    ("<think>Paper Finding", INVALID),
    (None, INVALID),
])
def test_category_parser_is_strict(reply: Any, label: str) -> None:
    assert parse_category(reply) == label


def test_discipline_parser_accepts_only_discipline_names() -> None:
    assert parse_discipline("humanities & social sciences") == "Humanities & Social Sciences"
    assert parse_discipline("Paper Finding") == INVALID
    assert parse_discipline("Social Sciences") == INVALID


# ------------------------------------------------------------------ through a real client

def _client_complete(server: FakeOpenAI, model: str, timeout: float = 10.0) -> Callable[[list[dict[str, str]]], str]:
    """The test's adapter: library code gets a plain callable and never builds a client."""
    client = OpenAI(base_url=server.base_url, api_key="k", timeout=timeout, max_retries=0)

    def complete(messages: list[dict[str, str]]) -> str:
        stream = client.chat.completions.create(model=model, messages=messages, stream=True)
        return "".join(c.choices[0].delta.content or "" for c in stream if c.choices)

    return complete


def test_llm_labeller_through_a_loopback_server(fake_openai: FakeOpenAI) -> None:
    gold = {item.question: item for item in load_labelled_questions() if item.split == "fresh"}

    def respond(body: dict[str, Any]) -> list[str]:
        user = body["messages"][-1]["content"]
        question = user.split("Question:\n", 1)[1].rsplit("\n\n", 1)[0]
        asks_category = "Category:" in user
        if "hand hygiene" in question:
            return ["I think this is probably a writing request."]  # garbage: must become "invalid"
        item = gold[question]
        return [f"**{item.category if asks_category else item.discipline.lower()}**"]

    fake_openai.add_script("labeller", respond=respond)
    complete = _client_complete(fake_openai, "labeller")
    for task in (CATEGORY, DISCIPLINE):
        labeller = LLMLabeller(task=task, complete=complete, name="labeller")
        labels = {q: labeller.label(q) for q in gold}
        bad = next(q for q in gold if "hand hygiene" in q)
        assert labels[bad].value == INVALID and labels[bad].raw.startswith("I think")
        assert all(labels[q].value == getattr(gold[q], task.name) for q in gold if q != bad)
        assert {label.labeller for label in labels.values()} == {"labeller"}
    sent = fake_openai.requests("labeller")
    assert len(sent) == 2 * len(gold)
    assert json.dumps(sent[0].body["messages"]) == json.dumps(build_category_messages(next(iter(gold))))


def test_a_timed_out_call_raises_instead_of_returning_a_label(fake_openai: FakeOpenAI) -> None:
    import openai

    fake_openai.add_script("slow", chunks=("Others",), first_token_delay_s=1.0)
    labeller = LLMLabeller(task=CATEGORY, complete=_client_complete(fake_openai, "slow", timeout=0.2), name="slow")
    with pytest.raises(openai.APITimeoutError):
        labeller.label("What is entropy?")


def test_rule_labellers_name_themselves() -> None:
    assert rule_labeller(CATEGORY).label("Which paper introduced the Adam optimizer?").value == "Paper Finding"
    label = rule_labeller(DISCIPLINE).label("Any thoughts?")
    assert (label.value, label.valid, label.labeller) == ("", False, "offline:rules:discipline")


# ------------------------------------------------------------------ scoring

def test_confusion_matrix_counts_by_hand() -> None:
    labels = ("x", "y")
    matrix = confusion(["x", "x", "x", "y", "y"], ["x", "y", INVALID, "y", ""], labels)
    assert matrix.columns == ("x", "y", INVALID, NO_LABEL)
    assert matrix.counts == ((1, 1, 1, 0), (0, 1, 0, 1))
    assert (matrix.correct, matrix.total) == (2, 5)
    assert matrix.accuracy == pytest.approx(0.4)
    assert matrix.recall("x") == pytest.approx(1 / 3) and matrix.recall("y") == pytest.approx(0.5)
    table = format_confusion(matrix, {"x": "Ex"}).splitlines()
    assert table[0].split() == ["gold", "\\", "predicted", "Ex", "y", INVALID, NO_LABEL, "recall"]
    assert table[1].split() == ["Ex", "1", "1", "1", "0", "33.3%"]


def test_confusion_rejects_mismatched_input() -> None:
    with pytest.raises(ValueError):
        confusion(["x"], [], ("x",))
    with pytest.raises(ValueError):
        confusion(["z"], ["x"], ("x",))


def test_gold_loader_rejects_unknown_labels(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text(json.dumps({"id": "a", "question": "q", "category": "Trivia", "discipline": "Healthcare",
                                "split": "dev"}) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match="line 1"):
        load_labelled_questions(path)


# ------------------------------------------------------------------ at battle time

def test_arena_labeller_records_who_labelled_and_falls_back_to_the_rules(discipline_classifier) -> None:
    from sciarena.arena.labels.at_vote import ArenaLabeller, QuestionLabels
    from sciarena.core.errors import ProviderTimeout

    question = "What are the main challenges of using deep learning for medical image diagnosis?"
    offline = discipline_classifier  # the default offline classifier, fitted once for the session
    assert ArenaLabeller(offline_discipline=offline).label(question) == QuestionLabels(
        "Challenges & Limitations", "offline:rules:category", "Healthcare", "offline:classifier:discipline",
        "labeller", "Healthcare")

    def timing_out(messages: list[dict[str, str]]) -> str:
        raise ProviderTimeout("no answer in 20 s")

    model = ArenaLabeller(category=LLMLabeller(CATEGORY, lambda m: "Others", "Model X"),
                          discipline=LLMLabeller(DISCIPLINE, timing_out, "Model X"), offline_discipline=offline)
    labels = model.label(question)
    assert (labels.question_type, labels.question_type_labeller) == ("Others", "Model X")
    assert (labels.subject, labels.subject_labeller) == ("Healthcare", "offline:classifier:discipline")
    garbage = ArenaLabeller(category=LLMLabeller(CATEGORY, lambda m: "a challenges question", "Model X"),
                            offline_discipline=offline)
    assert garbage.label(question).question_type_labeller == "offline:rules:category"

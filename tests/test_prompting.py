"""Prompt building: golden files plus the structural promises the prompts make.

Regenerate the golden files after an intended prompt change with:
    UPDATE_GOLDEN=1 python -m pytest tests/test_prompting.py
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

import pytest

from sciarena.answer.prompt import build_messages, build_postprocess_messages, format_reference
from sciarena.core.errors import InvalidQuestion
from sciarena.core.types import Paper, Passage, Reference

GOLDEN_DIR = Path(__file__).parent / "golden"


def _ref(number: int, title: str, authors: tuple[str, ...], texts: list[tuple[int, str]], *,
         et_al: bool = False, year: int | None = 2021) -> Reference:
    paper = Paper(paper_id=f"p{number}", title=title, authors=authors, et_al=et_al, year=year)
    passages = tuple(Passage(f"p{number}-{pos}", paper, text, position=pos) for pos, text in texts)
    return Reference(number=number, paper=paper, passages=passages)


REFERENCES = (
    _ref(1, "Sleep deprivation and\nmemory consolidation", ("Ana Lopez", "Ben Kim"),
         # Given out of document order on purpose: the prompt must show them in order.
         [(2, "Recall dropped by a third after one night without sleep."),
          (0, "We studied   48 adults\nover two weeks.")]),
    _ref(2, "Hippocampal replay during slow-wave sleep", ("Chen Wu", "Dara Singh", "Eli Park"),
         [(0, "Replay events predicted next-day recall.")], et_al=True),
    _ref(3, "An unrelated survey of soil microbes", (), [], year=None),
)
QUESTION = "How does sleep loss affect memory consolidation?"


@pytest.fixture
def golden() -> Callable[[str, str], None]:
    """Compare text with a file in tests/golden/, or rewrite the file when UPDATE_GOLDEN=1."""
    update = os.environ.get("UPDATE_GOLDEN") == "1"

    def check(name: str, actual: str) -> None:
        path = GOLDEN_DIR / name
        if update:
            GOLDEN_DIR.mkdir(exist_ok=True)
            path.write_text(actual, encoding="utf-8")
            return
        assert path.exists(), f"{path} is missing: run the tests once with UPDATE_GOLDEN=1"
        assert actual == path.read_text(encoding="utf-8"), f"{name} changed; rerun with UPDATE_GOLDEN=1 if intended"

    return check


def _render(messages: tuple[dict[str, str], ...]) -> str:
    return "".join(f"=== {m['role']} ===\n{m['content']}\n" for m in messages)


def test_generation_prompt_matches_golden_file(golden: Callable[[str, str], None]) -> None:
    golden("generation_prompt.txt", _render(build_messages(QUESTION, REFERENCES)))


def test_postprocess_prompt_matches_golden_file(golden: Callable[[str, str], None]) -> None:
    response = "## Findings\nLopez and Kim [1] found **lower recall** after sleep loss."
    golden("postprocess_prompt.txt", _render(build_postprocess_messages(QUESTION, REFERENCES, response)))


def test_generation_messages_are_system_then_user_with_every_reference_and_the_question() -> None:
    system, user = build_messages(QUESTION, REFERENCES)
    assert (system["role"], user["role"]) == ("system", "user")
    body = user["content"]
    positions = [body.index(f"[{n}] Title: ") for n in (1, 2, 3)]
    assert positions == sorted(positions)
    assert body.index(QUESTION) > positions[-1], "the question comes after the reference list"
    assert "Authors: Chen Wu, Dara Singh, Eli Park, et al." in body
    assert "Authors: Unknown authors" in body
    for promise in ("[2][5]", "may have nothing to do with the question", "Do not use Markdown",
                    "Cite only papers that appear in the list"):
        assert promise in system["content"]


def test_reference_entry_orders_passages_and_keeps_each_field_on_one_line() -> None:
    entry = format_reference(REFERENCES[0])
    lines = entry.split("\n")
    assert lines == [
        "[1] Title: Sleep deprivation and memory consolidation",
        "Authors: Ana Lopez, Ben Kim",
        "Relevant passages: We studied 48 adults over two weeks. … Recall dropped by a third after one night "
        "without sleep.",
    ]


def test_long_contexts_can_be_cut_at_a_word_boundary() -> None:
    entry = format_reference(REFERENCES[0], max_context_chars=20)
    assert entry.endswith("Relevant passages: We studied 48 adults …")


def test_prompt_is_identical_for_identical_input_and_changes_with_the_question() -> None:
    assert build_messages(QUESTION, REFERENCES) == build_messages(QUESTION, REFERENCES)
    assert build_messages(QUESTION, REFERENCES) != build_messages("Another question?", REFERENCES)


def test_empty_reference_list_is_stated_rather_than_left_blank() -> None:
    _, user = build_messages(QUESTION, ())
    assert "No papers were found" in user["content"]


@pytest.mark.parametrize("question", ["", "   \n"])
def test_blank_question_is_rejected_with_a_clear_message(question: str) -> None:
    with pytest.raises(InvalidQuestion, match="enter a question"):
        build_messages(question, REFERENCES)


def test_postprocess_prompt_asks_for_the_json_shape_and_carries_the_answer() -> None:
    system, user = build_postprocess_messages(QUESTION, REFERENCES, "  Answer text [1].  ")
    assert '{"references": [' in system["content"] and '"response":' in system["content"]
    assert "Answer to edit:\nAnswer text [1].\n" in user["content"]
    assert user["content"].index("Question:") < user["content"].index("Answer to edit:")

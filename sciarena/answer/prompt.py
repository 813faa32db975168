"""Prompt building: question + numbered references → chat messages (pure functions).

Two prompts, both following the structure the SciArena paper documents
(appendix A.3) and written in our own words:

* the generation prompt every contestant receives — a system message saying
  what the inputs are, what to do, how to cite and what format to use, and a
  user message holding the numbered reference list (title, authors, relevant
  passages) followed by the question;
* the optional postprocessing prompt for an LLM editor that converts an answer
  to the house style (numeric bracket citations at sentence ends, no Markdown,
  minimal edits) and replies with a JSON object
  ``{"references": [int, ...], "response": str}``.

Both sides of a battle receive byte-identical messages on the first turn, so the
prompt is a pure function of the question and the references. A follow-up turn
continues the conversation: the first turn's messages unchanged, then each side's
OWN earlier answers as assistant messages, and each later question as a user
message listing only the references new to it (numbered after the earlier ones),
so the two sides differ only in their own answers.
"""

from __future__ import annotations

import re
from typing import Sequence

from sciarena.core.errors import InvalidQuestion
from sciarena.core.types import Exchange, GenerationRequest, Reference

Message = dict[str, str]

GENERATION_SYSTEM_PROMPT = """\
You are a research assistant who answers a researcher's question from a numbered list of scientific papers and \
backs every claim drawn from those papers with a citation.

1. What you are given
- A numbered reference list. Each entry gives one paper's title, its authors and passages from the paper that a \
search system found relevant. The search is imperfect, so some entries may have nothing to do with the question.
- The researcher's question.

2. What to do
- Read all the entries and decide which papers actually bear on the question; leave the others out.
- Write an answer to the question that draws on those papers, bringing their findings together and noting where \
they agree or disagree.

3. How to cite
- Cite a paper by its number from the list in square brackets, at the end of the sentence it supports, for \
example: "The effect has been replicated in several cohorts [2][5]."
- Cite only papers that appear in the list, and only for statements their passages support. Never make up a \
reference or a number.

4. Format
- Write plain prose in paragraphs. Do not use Markdown: no headings, no bold or italic text, no bullet or \
numbered lists, no tables and no code blocks."""

GENERATION_INSTRUCTION = (
    "Answer the question in plain text, citing the papers from the reference list by their numbers."
)

FOLLOWUP_INSTRUCTION = (
    "Answer the follow-up question in plain text, in the light of the conversation so far, citing papers from "
    "any of the reference lists above by their numbers."
)

POSTPROCESS_SYSTEM_PROMPT = """\
You are a copy editor for answers that cite scientific papers. Bring the answer you are given into the house \
style below, changing as little as possible.

- Every in-text citation uses the paper's number from the reference list in square brackets, such as [3]. \
Convert author-year or other citation styles to this form using the reference list.
- A citation goes at the end of the sentence it supports, just before the final punctuation, not after an \
author's name or in the middle of a clause. For example, "Lee et al. [4] found that sleep loss impairs recall." \
becomes "Lee et al. found that sleep loss impairs recall [4]."
- Remove all Markdown: headings become ordinary sentences, list items become sentences or lines of text, and \
bold, italic and code markers are dropped.
- Do not add, remove or reword content beyond what these rules require, and do not add citations the answer \
did not make.

Reply with one JSON object and nothing else, in this form:
{"references": [<the numbers of the papers cited in the edited answer>], "response": "<the edited answer>"}"""

POSTPROCESS_INSTRUCTION = "Edit the answer as instructed and return the JSON object."

_SPACE = re.compile(r"\s+")


def format_reference(reference: Reference, max_context_chars: int | None = None) -> str:
    """One numbered entry of the reference list: title, authors and relevant passages."""
    context = _one_line(reference.context)
    if max_context_chars is not None and len(context) > max_context_chars:
        # Cut at a word boundary so the model never sees half a word.
        head = context[: max_context_chars + 1]
        context = (head.rsplit(" ", 1)[0] if " " in head else head[:max_context_chars]) + " …"
    paper = reference.paper
    return (
        f"[{reference.number}] Title: {_one_line(paper.title) or 'Untitled'}\n"
        f"Authors: {_one_line(paper.author_line)}\n"
        f"Relevant passages: {context or '(no passage text available)'}"
    )


def format_references(references: Sequence[Reference], max_context_chars: int | None = None) -> str:
    """The whole reference list, entries separated by blank lines, in reference-number order."""
    ordered = sorted(references, key=lambda r: r.number)
    if not ordered:
        return "(No papers were found for this question.)"
    return "\n\n".join(format_reference(r, max_context_chars) for r in ordered)


def build_messages(
    question: str, references: Sequence[Reference], max_context_chars: int | None = None
) -> tuple[Message, ...]:
    """System + user chat messages asking a contestant for a cited, plain-text answer.

    Raises errors.InvalidQuestion when the question is blank.
    """
    return _messages(GENERATION_SYSTEM_PROMPT, question, references, max_context_chars,
                     GENERATION_INSTRUCTION)


def answer_request(question: str, references: Sequence[Reference], history: Sequence[Exchange] = (),
                   listed: Sequence[Reference] | None = None) -> GenerationRequest:
    """What a contestant receives: the question, every reference it may cite and the one prompt.

    Without ``history`` (the first turn) both sides get this same request. With it (a follow-up), the
    messages replay the conversation: ``history[0]`` as the first turn was asked, each exchange's answer as
    the assistant's, then this ``question`` with ``listed`` — the references new since the last turn (default:
    every one of ``references`` not listed before)."""
    if not history:
        return GenerationRequest(question=question, references=tuple(references),
                                 messages=build_messages(question, references))
    seen = {r.number for e in history for r in e.references}
    new = tuple(listed) if listed is not None else tuple(r for r in references if r.number not in seen)
    messages = list(build_messages(history[0].question, history[0].references))
    messages.append({"role": "assistant", "content": history[0].answer.strip()})
    for earlier in history[1:]:
        messages += [followup_message(earlier.question, earlier.references),
                     {"role": "assistant", "content": earlier.answer.strip()}]
    messages.append(followup_message(question, new))
    return GenerationRequest(question=question, references=tuple(references), messages=tuple(messages),
                             history=tuple(history))


def followup_message(question: str, added: Sequence[Reference]) -> Message:
    """The user message of a follow-up: the references found for it (or that none were) and the question."""
    listed = (f"More references (found for this follow-up question, numbered after the ones above):\n\n"
              f"{format_references(added)}" if added else
              "No further papers were found for this follow-up question; the reference lists above still apply.")
    return {"role": "user",
            "content": f"{listed}\n\nFollow-up question: {_checked_question(question)}\n\n{FOLLOWUP_INSTRUCTION}"}


def build_postprocess_messages(
    question: str,
    references: Sequence[Reference],
    response: str,
    max_context_chars: int | None = None,
) -> tuple[Message, ...]:
    """Messages asking an LLM editor to restyle ``response``; it answers with a JSON object.

    The reply is read by clean.parse_llm_rewrite and checked by
    clean.accept_llm_rewrite before it replaces the rule-based result.
    """
    return _messages(POSTPROCESS_SYSTEM_PROMPT, question, references, max_context_chars,
                     f"Answer to edit:\n{response.strip()}\n\n{POSTPROCESS_INSTRUCTION}")


def _messages(system: str, question: str, references: Sequence[Reference], max_context_chars: int | None,
              closing: str) -> tuple[Message, ...]:
    """System prompt, then the user turn both prompts share: references, question, then ``closing``."""
    question = _checked_question(question)
    user = (
        "Reference list (papers that may be relevant):\n\n"
        f"{format_references(references, max_context_chars)}\n\n"
        f"Question: {question}\n\n"
        f"{closing}"
    )
    return (
        {"role": "system", "content": system},
        {"role": "user", "content": user},
    )


def _checked_question(question: str) -> str:
    cleaned = question.strip()
    if not cleaned:
        raise InvalidQuestion("Please enter a question.")
    return cleaned


def _one_line(text: str) -> str:
    # Newlines inside a title or passage would blur where one entry ends and the next begins.
    return _SPACE.sub(" ", text).strip()

"""How the offline baselines take part in a pipeline's feedback and refinement steps.

A baseline reads no prompt, so it acts on the request's ``Revision`` record (core/types.py) with
simple, deterministic rules. They are baselines of the steps, not a model's judgement:

* feedback — up to three items: the question's content words the answer never uses (searching for
  the question with those words, so the pipeline can retrieve papers about them), sentences that
  carry no citation, an answer that draws on fewer than three of the papers it was given, and
  passage sentences on the question (by the refinement's rule below) that the answer left out;
* refinement — the answer plus a short paragraph of the two passage sentences most related to the
  question and the item (its search query, else its text) that share two of the question's content
  words, of papers not cited yet when as related, and never of papers the pipeline's own searches
  added (a word-overlap rule cannot tell whether those are on topic).
"""

from __future__ import annotations

import threading
from typing import Iterator, Sequence

from sciarena.answer.citations import cited_numbers, sentence_spans
from sciarena.core.types import Delta, GenerationRequest, ModelSpec, Provider, Reference, Revision
from sciarena.pipelines.prompts import FeedbackItem, feedback_json
from sciarena.providers.offline_text import analyse, cite, content_words, lower_first

MIN_PAPERS = 3
ADDED_SENTENCES = 2
MIN_SHARED_WORDS = 2


def offline_feedback(question: str, references: Sequence[Reference], answer: str) -> str:
    """The feedback items as the JSON object the pipeline reads (possibly an empty list)."""
    items: list[FeedbackItem] = []
    used = {stem for _, stem in content_words(answer)}
    missing = list(dict.fromkeys(word for word, stem in content_words(question) if stem not in used))
    if missing:
        # The question itself leads the query: the missing words alone match papers on other topics.
        items.append(FeedbackItem(f"The answer does not address part of the question: {', '.join(missing)}.",
                                  search=f"{question.strip()} {' '.join(missing)}"))
    uncited = sum(1 for start, end in sentence_spans(answer)
                  if len(answer[start:end].strip()) >= 50 and not cited_numbers(answer[start:end]))
    if uncited:
        items.append(FeedbackItem(f"{uncited} statement(s) carry no citation; back them with the references."))
    if len(set(cited_numbers(answer))) < min(MIN_PAPERS, len(references)):
        items.append(FeedbackItem("The answer draws on few of the papers; bring in findings from the others."))
    elif _left_out(question, references, answer, question, ()):
        # Only when no other item would bring them in: the refinement adds these for any item.
        items.append(FeedbackItem("The papers hold findings on the question that the answer leaves out; add them."))
    return feedback_json(items)


def _left_out(question: str, references: Sequence[Reference], answer: str, focus: str,
              added: Sequence[int]) -> list[tuple[str, int]]:
    """Passage sentences (text, reference number) the answer does not already hold, most related to ``focus``
    first, that share at least two of the question's content words and are not of the ``added`` papers."""
    analysis = analyse(focus, references)
    cited = set(cited_numbers(answer))
    folded = " ".join(answer.split()).casefold()
    asked = {stem for _, stem in content_words(question)}
    # A sentence already written is known by its opening words: its final stop gives way to the citation.
    # Two of the question's content words at least: one shared word ("nearly" in "nearly isotropic")
    # is how a paper on another topic gets in.
    # Not from the papers the pipeline's own searches added: word overlap cannot tell whether a paper a
    # loose query found is on topic (on the demo corpus it mostly is not), so the baseline restates
    # evidence of the shared list that its draft left out.
    candidates = [i for i, s in enumerate(analysis.sentences)
                  if analysis.relevance[i] > 0 and s.number not in added and " ".join(s.text.split()).casefold().rstrip(".!?")[:60] not in folded
                  and len(asked & {stem for _, stem in content_words(s.text)}) >= MIN_SHARED_WORDS]
    # The most related sentences; of equally related ones, those of papers not cited yet.
    candidates.sort(key=lambda i: (-round(analysis.relevance[i], 2), analysis.sentences[i].number in cited, i))
    return [(analysis.sentences[i].text, analysis.sentences[i].number) for i in candidates]


def offline_refine(question: str, references: Sequence[Reference], revision: Revision) -> str:
    """The answer with up to two new cited sentences about the feedback item appended."""
    # Related to the question as well as to the item, so a loosely matched paper is not brought in.
    focus = f"{question} {revision.search or revision.feedback}"
    chosen = _left_out(question, references, revision.answer, focus, revision.added)[:ADDED_SENTENCES]
    if not chosen:
        return revision.answer
    added = [cite(text, number) for text, number in chosen]
    added[0] = f"In addition, {lower_first(added[0])}"
    return f"{revision.answer.rstrip()}\n\n{' '.join(added)}"


class OfflineRevisions:
    """An offline baseline's provider as a pipeline's base: drafts come from the baseline itself,
    feedback and refinement requests (``request.revision``) from the rules above."""

    def __init__(self, provider: Provider) -> None:
        self._provider = provider

    def unavailable_reason(self, spec: ModelSpec) -> str | None:
        return self._provider.unavailable_reason(spec)

    def stream(self, spec: ModelSpec, request: GenerationRequest, *, timeout_s: float | None = None,
               cancel: threading.Event | None = None) -> Iterator[Delta]:
        revision = request.revision
        if revision is None:
            return self._provider.stream(spec, request, timeout_s=timeout_s, cancel=cancel)
        if revision.kind == "feedback":
            text = offline_feedback(request.question, request.references, revision.answer)
        else:
            text = offline_refine(request.question, request.references, revision)
        return iter((Delta(text=text),))

"""How the offline baselines take part in a pipeline's feedback and refinement steps.

A baseline reads no prompt, so it acts on the request's ``Revision`` record (types.py) with
simple, deterministic rules. They are baselines of the steps, not a model's judgement:

* feedback — up to three items: the question's content words the answer never uses (with those
  words as the search query, so the pipeline can retrieve papers about them), sentences that carry
  no citation, and an answer that draws on fewer than three of the papers it was given;
* refinement — the answer plus a short paragraph of the passage sentences most related to the
  item (its search query, else its text), preferring references the answer does not cite yet.
"""

from __future__ import annotations

from typing import Sequence

from sciarena.pipelines.prompts import FeedbackItem, feedback_json
from sciarena.postprocess import cited_numbers, sentence_spans
from sciarena.providers.offline_text import analyse, cite, content_words, lower_first
from sciarena.types import Reference, Revision

MIN_PAPERS = 3
ADDED_SENTENCES = 2


def offline_feedback(question: str, references: Sequence[Reference], answer: str) -> str:
    """The feedback items as the JSON object the pipeline reads (possibly an empty list)."""
    items: list[FeedbackItem] = []
    used = {stem for _, stem in content_words(answer)}
    missing = list(dict.fromkeys(word for word, stem in content_words(question) if stem not in used))
    if missing:
        items.append(FeedbackItem(f"The answer does not address part of the question: {', '.join(missing)}.",
                                  search=" ".join(missing)))
    uncited = sum(1 for start, end in sentence_spans(answer)
                  if len(answer[start:end].strip()) >= 50 and not cited_numbers(answer[start:end]))
    if uncited:
        items.append(FeedbackItem(f"{uncited} statement(s) carry no citation; back them with the references."))
    if len(set(cited_numbers(answer))) < min(MIN_PAPERS, len(references)):
        items.append(FeedbackItem("The answer draws on few of the papers; bring in findings from the others."))
    return feedback_json(items)


def offline_refine(question: str, references: Sequence[Reference], revision: Revision) -> str:
    """The answer with up to two new cited sentences about the feedback item appended."""
    focus = revision.search or revision.feedback or question
    analysis = analyse(focus, references)
    cited = set(cited_numbers(revision.answer))
    folded = " ".join(revision.answer.split()).casefold()
    candidates = [i for i, s in enumerate(analysis.sentences)
                  if analysis.relevance[i] > 0 and s.text.casefold()[:60] not in folded]
    # New papers first (what the item asked for), then the most related sentences.
    candidates.sort(key=lambda i: (analysis.sentences[i].number in cited, -analysis.relevance[i], i))
    chosen = candidates[:ADDED_SENTENCES]
    if not chosen:
        return revision.answer
    added = [cite(analysis.sentences[i].text, analysis.sentences[i].number) for i in chosen]
    added[0] = f"In addition, {lower_first(added[0])}"
    return f"{revision.answer.rstrip()}\n\n{' '.join(added)}"

"""Pure functions that turn records into the Markdown the page shows.

Anything a model or a user wrote is escaped here: gr.Markdown sanitises HTML
in the browser only, and API clients read our strings as they are.
"""

from __future__ import annotations

import html

from sciarena.types import Battle, ModelSpec, Reference, Retrieval, SideResult
from sciarena.votes.schema import cited_references

EXAMPLE_QUESTIONS: dict[str, tuple[str, ...]] = {
    "Natural Science": (
        "How does CRISPR-Cas9 achieve targeted genome editing, and what limits its precision?",
        "What did the first direct detection of gravitational waves reveal about black holes?",
    ),
    "Healthcare": (
        "How effective were mRNA vaccines against COVID-19 in the pivotal trials?",
        "What are the main challenges of using deep learning for medical image diagnosis?",
    ),
    "Humanities & Social Sciences": (
        "How does prospect theory explain decisions under risk differently from expected utility?",
        "What did large replication projects find about the reproducibility of psychology studies?",
    ),
    "Engineering": (
        "How does retrieval-augmented generation reduce hallucination in large language models?",
        "What are the recent trends in evaluating language models with pairwise human preferences?",
    ),
}


def escape(text: str) -> str:
    """Show text literally: no HTML, and no accidental Markdown headings or links."""
    return html.escape(text, quote=False)


def answer_markdown(text: str, error: str | None = None) -> str:
    if error:
        body = escape(text).strip()
        note = f"**⚠ {escape(error)}** This battle cannot be voted on; please start a new battle."
        return f"{body}\n\n{note}" if body else note
    return escape(text) if text else "*Waiting for the answer…*"


def reference_line(ref: Reference) -> str:
    paper = ref.paper
    authors = escape(paper.author_line)
    parts = [f"**[{ref.number}]** {escape(paper.title)}.", authors if authors.endswith(".") else authors + "."]
    if paper.year:
        parts.append(f"{paper.year}.")
    if paper.venue:
        parts.append(f"*{escape(paper.venue)}*.")
    if paper.link:
        parts.append(f"[link]({paper.link})")
    return " ".join(parts)


def cited_markdown(side: SideResult | None, retrieval: Retrieval) -> str:
    """The references one answer cited, in order of first citation."""
    if side is None or side.answer is None:
        return ""
    lines = [f"- {reference_line(ref)}" for ref in cited_references(retrieval, side)]
    if not lines:
        return "*This answer cites no reference.*"
    return "**References cited**\n\n" + "\n".join(lines)


def retrieval_status(retrieval: Retrieval) -> str:
    papers = len(retrieval.references)
    passages = sum(len(r.passages) for r in retrieval.references)
    source = {"local:demo": "the bundled demo corpus", "semantic_scholar": "Semantic Scholar"}.get(
        retrieval.backend, escape(retrieval.backend))
    text = (f"Retrieved {passages} passages from {papers} papers ({source}) in "
            f"{retrieval.seconds * 1000:.0f} ms. Both models see the same references.")
    if retrieval.note:
        text += f" {escape(retrieval.note)}"
    if not papers:
        text = "No matching papers were found; the models will say so. Try other words."
    return text


def all_references_markdown(retrieval: Retrieval) -> str:
    if not retrieval.references:
        return "*No references.*"
    return "\n".join(f"- {reference_line(r)}" for r in retrieval.references)


def model_label(spec: ModelSpec) -> str:
    label = escape(spec.name)
    if spec.offline:
        label += " — an offline baseline algorithm, not a language model"
    return label


def reveal_markdown(battle: Battle, choice: str) -> str:
    verdict = {"A": "You preferred Model A.", "B": "You preferred Model B.",
               "tie": "You called it a tie.", "bad": "You found both answers poor."}[choice]
    return (f"**Thank you — your vote is recorded.** {verdict}\n\n"
            f"- **Model A:** {model_label(battle.model_a)}\n"
            f"- **Model B:** {model_label(battle.model_b)}\n\n"
            "Press **New battle** to ask another question.")

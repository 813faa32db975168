"""Turn scored passages into the numbered reference list the models cite.

ScholarQA groups retrieved snippets per paper: a paper's score is its best snippet's
score and its snippets are shown in document order. An optional per-paper cap keeps one
long paper from filling most of the ``top_k`` slots (OpenScholar keeps the top passages
of many papers, not many passages of a few). Pure function, shared by every retrieval
backend.
"""

from __future__ import annotations

from typing import Iterable

from sciarena.core.types import Passage, Reference


def group_passages(passages: Iterable[Passage], top_k: int,
                   per_paper: int | None = None) -> tuple[Reference, ...]:
    """Keep the ``top_k`` best passages and group them into references numbered from 1.

    Passages are ranked by score (ties keep their input order); a passage id seen twice
    keeps its best-scored copy. With ``per_paper`` only each paper's ``per_paper``
    best-ranked passages compete for the ``top_k`` slots, so the slots a paper would
    have taken beyond its cap go to the next passages of other papers. Papers are
    ordered by their best passage, ties by first appearance; each paper's passages are
    in document order.
    """
    if top_k < 1:
        raise ValueError(f"top_k must be at least 1, got {top_k}")
    if per_paper is not None and per_paper < 1:
        raise ValueError(f"per_paper must be at least 1 (or None for no cap), got {per_paper}")
    best: dict[str, Passage] = {}
    for passage in passages:
        seen = best.get(passage.passage_id)
        if seen is None or passage.score > seen.score:
            best[passage.passage_id] = passage
    ranked = sorted(best.values(), key=lambda p: -p.score)
    if per_paper is not None:
        taken: dict[str, int] = {}
        capped = []
        for passage in ranked:
            count = taken.get(passage.paper.paper_id, 0)
            if count < per_paper:
                taken[passage.paper.paper_id] = count + 1
                capped.append(passage)
        ranked = capped
    ranked = ranked[:top_k]

    by_paper: dict[str, list[Passage]] = {}
    for passage in ranked:  # insertion order = order of each paper's best passage
        by_paper.setdefault(passage.paper.paper_id, []).append(passage)
    return tuple(
        Reference(
            number=number,
            paper=group[0].paper,
            passages=tuple(sorted(group, key=lambda p: p.position)),
        )
        for number, group in enumerate(by_paper.values(), start=1)
    )

"""Turn scored passages into the numbered reference list the models cite.

ScholarQA groups retrieved snippets per paper: a paper's score is its best snippet's
score and its snippets are shown in document order. Pure function, shared by every
retrieval backend.
"""

from __future__ import annotations

from typing import Iterable

from sciarena.types import Passage, Reference


def group_passages(passages: Iterable[Passage], top_k: int) -> tuple[Reference, ...]:
    """Keep the ``top_k`` best passages and group them into references numbered from 1.

    Passages are ranked by score (ties keep their input order); a passage id seen twice
    keeps its best-scored copy. Papers are ordered by their best passage, ties by first
    appearance; each paper's passages are in document order.
    """
    if top_k < 1:
        raise ValueError(f"top_k must be at least 1, got {top_k}")
    best: dict[str, Passage] = {}
    for passage in passages:
        seen = best.get(passage.passage_id)
        if seen is None or passage.score > seen.score:
            best[passage.passage_id] = passage
    ranked = sorted(best.values(), key=lambda p: -p.score)[:top_k]

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

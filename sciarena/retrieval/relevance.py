"""Keep only passages relevant enough to cite; none at all when the best one is weak.

Every retriever used to hand the models its top k passages whatever their scores, so a
question about sourdough bread got thirty "references". A floor has two parts, both in
the units of the scorer that ranked the passages:

- ``min_best``: when the best passage scores below it, nothing in the datastore answers
  the question and the retriever returns no references (so no battle is offered);
- ``min_score`` and ``relative``: a passage is kept only if it scores at least
  ``min_score`` and at least ``relative`` times the best score (the tail of weak matches
  that pads the list is cut, however many passages that leaves);
- ``min_share`` and ``share_relative`` (BM25 only): of the passages the scores keep, one is kept
  only if it covers at least ``min_share`` of the question's topic (``bm25.topic_share``: the
  idf²-weighted share of its topic words the passage contains) and at least ``share_relative``
  times the best passage's share; when even the best covers less than ``min_share``, nothing is
  returned. One common word in common is not a topic in common: "How is CRISPR-Cas9 off-target
  activity measured?" used to cite a calcium-imaging paper for the word "activity".

The defaults below were calibrated on the tune split of the labelled query set
(``sciarena/data/eval/retrieval_queries.jsonl``) by ``benchmarks/bench_relevance.py``,
which reports them on the held-out split; see ``docs/relevance.md``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from sciarena.core.types import Passage

NOTHING_RELEVANT = ("None of the papers found is relevant enough to answer this question, so no "
                    "answers were generated. Try naming the topic in the words a paper would use.")


@dataclass(frozen=True)
class RelevanceFloor:
    """Score thresholds for one scorer (see the module docstring); zeros mean no floor.

    ``min_coverage`` (BM25 only) also accepts a best passage weaker than ``min_best``
    when it covers that share of the question's weight (``bm25.query_weight``): a short
    keyword question such as "graphene" scores low in absolute terms but matches fully.
    """

    min_best: float = 0.0
    min_score: float = 0.0
    relative: float = 0.0
    min_coverage: float = 0.0
    min_share: float = 0.0
    share_relative: float = 0.0

    def __post_init__(self) -> None:
        for name in ("relative", "min_coverage", "min_share", "share_relative"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must be between 0 and 1, got {getattr(self, name)}")

    def cut(self, best: float, query_weight: float | None = None) -> float | None:
        """The lowest score kept when the best passage scores ``best``; None: keep nothing."""
        covered = (self.min_coverage > 0.0 and bool(query_weight)
                   and best / query_weight >= self.min_coverage)
        if best < self.min_best and not covered:
            return None
        return max(min(self.min_score, best), self.relative * best)

    @property
    def uses_shares(self) -> bool:
        return self.min_share > 0.0 or self.share_relative > 0.0

    def apply(self, passages: Sequence[Passage], query_weight: float | None = None,
              shares: Callable[[Sequence[Passage]], Sequence[float]] | None = None) -> list[Passage]:
        """The passages that clear the floor, in their input order; [] when the best is too weak.
        ``shares`` gives each passage's topic share (``bm25.topic_share``); it is called only when
        the floor uses them, on the passages the scores kept (a few, not every candidate)."""
        if not passages:
            return []
        cut = self.cut(max(p.score for p in passages), query_weight)
        if cut is None:
            return []
        kept = [p for p in passages if p.score >= cut]
        if not self.uses_shares:
            return kept
        if shares is None:
            raise ValueError("this floor needs the passages' topic shares")
        values = list(shares(kept))
        best = max(values)
        if best < self.min_share:
            return []
        least = max(self.min_share, self.share_relative * best)
        return [p for p, share in zip(kept, values, strict=True) if share >= least]


NO_FLOOR = RelevanceFloor()
# Any passage that shares a content word with the question: the scale-free floor for
# scores calibrated on no query set (a local:DIR index, Semantic Scholar candidates).
MATCH_FLOOR = RelevanceFloor(min_best=1e-9, min_score=1e-9)
# Lucene BM25 (k1=1.5, b=0.75) over the bundled corpus, one passage per paper. Absolute
# BM25 scores depend on the corpus (its size sets the IDFs): this floor is for the demo
# index only; another index gets MATCH_FLOOR unless a floor calibrated for it is passed.
BM25_SCORE_FLOOR = RelevanceFloor(min_best=5.5, relative=0.5, min_coverage=0.3)  # scores only (before issue 23)
# The score part as before; the topic-share part calibrated on tune with the score part held fixed.
BM25_FLOOR = RelevanceFloor(min_best=5.5, relative=0.5, min_coverage=0.3, min_share=0.2, share_relative=0.3)
# Cosine similarity of all-MiniLM-L6-v2 embeddings (question vs title + passage).
DENSE_FLOOR = RelevanceFloor(min_best=0.45, min_score=0.45, relative=0.7)

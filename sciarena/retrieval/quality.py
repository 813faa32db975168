"""Retrieval quality on a labelled query set: recall@k, nDCG@k and refusals.

Pure functions over paper-id rankings, used by ``benchmarks/bench_relevance.py`` and its
tests. A labelled query lists the ids of the papers that answer it; an empty list marks
a question the datastore cannot answer, which a good retriever refuses (returns nothing).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from statistics import mean
from typing import Sequence

from sciarena.core.settings import PACKAGE_DIR

DEFAULT_QUERIES = PACKAGE_DIR / "data" / "eval" / "retrieval_queries.jsonl"
# nearmiss: held out too, added for issue 23 — questions sharing a common word with an unrelated paper
# long: held out, questions of 2,000-4,000 characters of pasted context (3 answerable, 2 off topic)
SPLITS = ("tune", "test", "nearmiss", "long")


@dataclass(frozen=True)
class LabelledQuery:
    query_id: str
    question: str
    relevant: frozenset[str]  # paper ids; empty: nothing in the corpus answers it
    discipline: str = ""
    kind: str = "answerable"  # answerable | off_topic | near_miss
    split: str = "tune"  # tune (floors are calibrated on it) | test, nearmiss, long (held out)

    @property
    def answerable(self) -> bool:
        return bool(self.relevant)


@dataclass(frozen=True)
class Quality:
    """Averages over a query set (see ``evaluate``)."""

    recall: float  # recall@k over answerable questions
    ndcg: float  # nDCG@k over answerable questions
    refused: float  # share of unanswerable questions given no references
    wrongly_refused: float  # share of answerable questions given no references
    precision: float  # share of the returned papers that are labelled relevant (answerable)
    returned: float  # mean number of papers returned (answerable)
    answerable: int
    unanswerable: int


def load_queries(path: Path = DEFAULT_QUERIES) -> list[LabelledQuery]:
    """The labelled queries of a JSON-lines file; ValueError naming the line when one is bad."""
    queries = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                query = LabelledQuery(query_id=row["id"], question=row["question"],
                                      relevant=frozenset(row["relevant"]), discipline=row.get("discipline", ""),
                                      kind=row.get("kind", "answerable"), split=row.get("split", "tune"))
            except (ValueError, KeyError, TypeError) as err:
                raise ValueError(f"{path}:{number}: not a labelled query ({err})") from None
            if query.split not in SPLITS:
                raise ValueError(f"{path}:{number}: split must be one of {SPLITS}, got {query.split!r}")
            queries.append(query)
    return queries


def recall_at_k(ranked: Sequence[str], relevant: frozenset[str], k: int = 10) -> float:
    """Share of the relevant papers found in the first ``k`` of ``ranked``."""
    if not relevant:
        raise ValueError("recall is undefined for a question with no relevant paper")
    return len(relevant.intersection(ranked[:k])) / len(relevant)


def ndcg_at_k(ranked: Sequence[str], relevant: frozenset[str], k: int = 10) -> float:
    """Binary-gain nDCG: DCG of the first ``k`` over the DCG of a perfect ranking."""
    if not relevant:
        raise ValueError("nDCG is undefined for a question with no relevant paper")
    dcg = sum(1.0 / math.log2(rank + 2) for rank, paper in enumerate(ranked[:k]) if paper in relevant)
    ideal = sum(1.0 / math.log2(rank + 2) for rank in range(min(k, len(relevant))))
    return dcg / ideal


def evaluate(queries: Sequence[LabelledQuery], rankings: Sequence[Sequence[str]], k: int = 10) -> Quality:
    """Quality of ``rankings`` (paper ids, best first; one per query, in order)."""
    if len(queries) != len(rankings):
        raise ValueError(f"{len(rankings)} rankings for {len(queries)} queries")
    pairs = list(zip(queries, rankings, strict=True))
    answerable = [(q, r) for q, r in pairs if q.answerable]
    unanswerable = [r for q, r in pairs if not q.answerable]
    returned = [r for _, r in answerable if r]

    def average(values: list[float]) -> float:
        return mean(values) if values else 0.0

    return Quality(
        recall=average([recall_at_k(r, q.relevant, k) for q, r in answerable]),
        ndcg=average([ndcg_at_k(r, q.relevant, k) for q, r in answerable]),
        refused=average([float(not r) for r in unanswerable]),
        wrongly_refused=average([float(not r) for _, r in answerable]),
        precision=average([len(q.relevant.intersection(r)) / len(r) for q, r in answerable if r]),
        returned=average([float(len(r)) for r in returned]) if returned else 0.0,
        answerable=len(answerable), unanswerable=len(unanswerable),
    )

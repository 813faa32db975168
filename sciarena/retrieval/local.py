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
import shutil
import tempfile
import time
from dataclasses import asdict, fields
from pathlib import Path
from typing import Callable, Iterable, Sequence

import bm25s
import numpy as np

from sciarena.core.errors import RetrievalError
from sciarena.core.settings import DEMO_CORPUS_DIR
from sciarena.core.types import Paper, Passage, Retrieval
from sciarena.retrieval.bm25 import (
    STEMMER_LANGUAGE,
    bm25_index,
    query_term_ids,
    query_weight,
    question_windows,
    term_idfs,
    top_indices,
    topic_share,
)
from sciarena.retrieval.corpus import PaperText, demo_corpus_files, read_corpus
from sciarena.retrieval.dense import PassageVectors
from sciarena.retrieval.grouping import group_passages
from sciarena.retrieval.notation import searchable
from sciarena.retrieval.passages import (
    DEFAULT_PASSAGE_WORDS,
    indexed_text,
    paper_passages,
    passage_id,
)
from sciarena.retrieval.relevance import (
    BM25_FLOOR,
    DENSE_FLOOR,
    MATCH_FLOOR,
    NOTHING_RELEVANT,
    RelevanceFloor,
)

log = logging.getLogger(__name__)

INDEX_FORMAT = 1  # bump when chunking or tokenisation changes: demo caches key on it
_KINDS = ("body", "abstract", "title")
_PAPER_FIELDS = frozenset(f.name for f in fields(Paper))
Search = Callable[[str, int], list[Passage]]  # (question, k) -> passages, best first
# With a per-paper cap the search asks for this many times top_k passages, so the slots a
# capped paper gives up are filled by other papers' passages rather than left empty.
CAPPED_OVERFETCH = 4


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
                 num_papers: int, meta: dict[str, object], directory: Path | None = None) -> None:
        self._bm25, self._store = bm25, store
        self.directory = directory  # where the index was loaded from; None when built in memory
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
            "max_words": max_words, "stemmer": STEMMER_LANGUAGE, "stopwords": "bm25s-en",
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
    def load(cls, directory: Path, *, mmap_scores: bool = True) -> "LocalIndex":
        """Open an index written by :meth:`save`.

        With ``mmap_scores`` (the default) the BM25 matrix stays on disk and the OS pages
        in what queries touch: loading is faster and processes share the page cache;
        ``False`` reads it into memory.
        """
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
        return cls(bm25, store, *arrays, num_papers=num_papers, meta=meta, directory=directory)

    def search(self, query: str, k: int = 30) -> list[Passage]:
        """The ``k`` best passages for ``query`` by BM25 score, best first; no zero scores."""
        if k < 1:
            raise ValueError(f"k must be at least 1, got {k}")
        ids = query_term_ids(self._bm25, query)
        if not ids:
            return []
        scores = self._bm25.get_scores_from_ids(ids)
        return [self.passage(int(i), float(scores[i])) for i in top_indices(scores, k)]

    def query_weight(self, query: str) -> float:
        """The most any passage could score for ``query`` (see ``bm25.query_weight``)."""
        return query_weight(self._bm25, query)

    def shares(self, query: str, passages: Sequence[Passage]) -> list[float]:
        """Each passage's share of the query's topic (``bm25.topic_share``), over the text the index
        saw (the first passage carries its paper's title)."""
        idfs = term_idfs(self._bm25, query)
        return [topic_share(idfs, indexed_text(p.paper.title, p.text, p.position, p.kind)) for p in passages]

    def passage(self, i: int, score: float = 0.0) -> Passage:
        """The passage stored at row ``i``."""
        paper = self._store.paper(int(self._paper_of[i]))
        position = int(self._position[i])
        return Passage(passage_id=passage_id(paper.paper_id, position), paper=paper,
                       text=self._store.text(i), position=position, score=score,
                       kind=_KINDS[int(self._kind[i])])


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
    """Answers a question with the numbered references of its relevant local passages.

    ``search`` ranks passages (BM25 over the index by default, or dense search); the
    ``floor`` (in that search's score units) drops the weak ones, and all of them when
    even the best is weak: an off-topic question then gets no references at all. The
    default floor keeps any match; ``open_local_retriever`` picks the calibrated one.
    ``per_paper`` caps the passages of one paper among the ``top_k`` (None: no cap).
    """

    def __init__(self, index: LocalIndex, backend_name: str, top_k: int = 30, *,
                 floor: RelevanceFloor = MATCH_FLOOR, search: Search | None = None,
                 per_paper: int | None = None) -> None:
        if top_k < 1:
            raise ValueError(f"top_k must be at least 1, got {top_k}")
        if per_paper is not None and per_paper < 1:
            raise ValueError(f"per_paper must be at least 1 (or None for no cap), got {per_paper}")
        self.index, self.backend_name, self.top_k = index, backend_name, top_k
        self.floor, self.per_paper = floor, per_paper
        self._search: Search = search or index.search

    @property
    def candidates(self) -> int:
        """How many passages one search asks for."""
        return self.top_k if self.per_paper is None else self.top_k * CAPPED_OVERFETCH

    def retrieve(self, question: str) -> Retrieval:
        """Search once, keep what clears the floor, group per paper, number the papers from 1."""
        started = time.perf_counter()
        windows = question_windows(searchable(question))  # math searched by the words it names
        kept = [p for window in windows for p in self._floored(window)]
        references = group_passages(kept, self.top_k, self.per_paper) if kept else ()
        note = "" if references else NOTHING_RELEVANT
        return Retrieval(question=question, references=references, backend=self.backend_name,
                         queries=tuple(windows), seconds=time.perf_counter() - started, note=note)

    def _floored(self, query: str) -> list[Passage]:
        """One search for ``query`` and the passages of it that clear the floor.

        A long question is judged a few sentences at a time (``bm25.question_windows``) and the
        passages any window keeps are pooled: the floor's share of the topic means the share of
        one window's topic, the length of question it was calibrated on."""
        found = self._search(query, self.candidates)
        weight = self.index.query_weight(query) if self.floor.min_coverage else None
        return self.floor.apply(found, weight, lambda passages: self.index.shares(query, passages))


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
            index.directory = target  # so derived caches (passage embeddings) live beside it
        except RetrievalError as err:
            log.warning("could not cache the demo index: %s", err)
    return index


def open_local_retriever(spec: str, *, cache_dir: Path | None = None, top_k: int = 30,
                         reranker: str = "bm25", floor: RelevanceFloor | None = None,
                         per_paper: int | None = None) -> LocalRetriever:
    """A retriever for a setting string: ``local`` (the demo corpus) or ``local:DIR`` (a saved index).

    ``reranker`` ``bm25`` ranks by BM25; ``dense`` by all-MiniLM-L6-v2 cosine over passage
    embeddings made once at start and cached beside the index (needs the optional extra);
    ``auto`` is dense when that extra is installed, else BM25 (the choice and its numbers:
    docs/relevance.md). ``floor`` defaults to the one calibrated for that scorer: BM25's
    was calibrated on the demo corpus, so another index only drops passages sharing no
    word with the question (BM25 scores depend on the corpus; cosine scores do not).
    ``per_paper`` caps one paper's passages among the ``top_k`` (None: no cap).
    """
    key = (reranker or "bm25").strip().lower()
    if key == "auto":
        # start-up time: the dense extra is checked only when asked for
        from sciarena.retrieval.rerank import dense_available

        key = "dense" if dense_available() else "bm25"
        log.info("SCIARENA_RERANKER=auto: ranking local passages with %s", key)
    if key not in ("bm25", "dense"):
        raise RetrievalError(f"Unknown reranker {reranker!r}; use bm25, dense or auto.")
    spec = spec.strip()
    if spec == "local":
        index, name, bm25_floor = load_demo_index(cache_dir), "local:demo", BM25_FLOOR
    elif spec.startswith("local:") and spec[len("local:"):].strip():
        directory = Path(spec[len("local:"):].strip()).expanduser()
        index, name, bm25_floor = LocalIndex.load(directory), f"local:{directory}", MATCH_FLOOR
    else:
        raise RetrievalError(f"unknown local retriever {spec!r}; use 'local' or 'local:DIR'")
    if key == "bm25":
        return LocalRetriever(index, name, top_k, floor=floor or bm25_floor, per_paper=per_paper)
    from sciarena.retrieval.rerank import load_minilm  # start-up time: only a dense retriever loads the model

    vectors = PassageVectors.build(index, load_minilm(), index.directory)
    return LocalRetriever(index, name, top_k, floor=floor or DENSE_FLOOR, search=vectors.search,
                          per_paper=per_paper)

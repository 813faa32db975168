"""BM25 with bm25s matrices: index texts, turn a query into term ids, pick the top k.

Texts and queries go through the same steps: lower-case, bm25s's token pattern,
English stopwords (bm25s's list), Snowball English stems (PyStemmer). The matrix is
bm25s's (Lucene BM25, k1=1.5, b=0.75), so ``bm25s.BM25.save``/``load`` and its scoring
work on it unchanged.
"""

from __future__ import annotations

import math
import re
from itertools import islice
from typing import Iterable, Iterator

import bm25s
import numpy as np
import Stemmer
from bm25s.stopwords import STOPWORDS_EN

from sciarena.core.errors import RetrievalError

_SPLIT_WORDS = re.compile(r"(?u)\b\w\w+\b").findall  # bm25s's default token pattern
_STOPWORDS = frozenset(STOPWORDS_EN)
STEMMER_LANGUAGE = "english"


def query_stems(query: str) -> list[str]:
    """The stems of the content words of ``query``, in order (stopwords dropped)."""
    words = [w for w in _SPLIT_WORDS(query.lower()) if w not in _STOPWORDS]
    # A Stemmer must not be shared between threads; one per query costs microseconds.
    return Stemmer.Stemmer(STEMMER_LANGUAGE).stemWords(words)


# A question with more content words than this is searched a few sentences at a time (``question_windows``).
# The longest labelled short question has 14; a pasted paragraph of context has hundreds.
LONG_QUESTION_STEMS = 30
_SENTENCE_END = re.compile(r"(?<=[.?!;:])\s+")


def question_windows(question: str, max_stems: int = LONG_QUESTION_STEMS) -> list[str]:
    """The question itself when it has at most ``max_stems`` content words, else runs of its consecutive
    sentences of at most that many content words each (a longer sentence stays whole).

    The relevance floor was calibrated on questions of a sentence or two. A long, detailed question
    mentions several topics and many words no single paper holds, so every passage covers a small share
    of it and the floor refused it (a 2,900-character question on prospect theory and the replication
    projects: best topic share 0.15, floor 0.2). Each window is a short question the floor can judge.
    """
    if len(query_stems(question)) <= max_stems:
        return [question]
    windows: list[str] = []
    current: list[str] = []
    size = 0
    for sentence in _SENTENCE_END.split(question.strip()):
        stems = len(query_stems(sentence))
        if current and size + stems > max_stems:
            windows.append(" ".join(current))
            current, size = [], 0
        current.append(sentence)
        size += stems
    if current:
        windows.append(" ".join(current))
    return windows


def query_term_ids(bm25: bm25s.BM25, query: str) -> list[int]:
    """The index's term ids for the words of ``query`` (unknown words and stopwords dropped)."""
    vocab = bm25.vocab_dict
    return [vocab[s] for s in query_stems(query) if s in vocab]


def term_idfs(bm25: bm25s.BM25, query: str) -> dict[str, float]:
    """Each content stem of ``query`` with its BM25 IDF in the index, log(1 + (N − df + 0.5)/(df + 0.5)).

    A word the index has never seen gets the IDF of a term in no document, so "sourdough crumb"
    weighs a lot and matches little. A stem repeated in the query appears once.
    """
    n_docs = int(bm25.scores["num_docs"])
    indptr = bm25.scores["indptr"]
    vocab = bm25.vocab_dict
    out: dict[str, float] = {}
    for stem in query_stems(query):
        term = vocab.get(stem)
        df = int(indptr[term + 1] - indptr[term]) if term is not None else 0
        out[stem] = math.log1p((n_docs - df + 0.5) / (df + 0.5))
    return out


def query_weight(bm25: bm25s.BM25, query: str) -> float:
    """The sum of the IDFs of the query's content words: no passage can score that much.

    (Each term adds idf * tf / (tf + norm) < idf.) Dividing a score by this weight gives the share
    of the question a passage covers, comparable across short and long questions. Every occurrence
    of a stem counts, as BM25 scores a repeated query word once per occurrence.
    """
    idfs = term_idfs(bm25, query)
    return sum(idfs[stem] for stem in query_stems(query))


# Words a question is framed with, not its topic ("How does … get measured?"): left out of the topic
# share. BM25 itself keeps bm25s's short list (the index's tokens depend on it); these are stemmed forms.
_FRAME_STEMS = frozenset(
    """how doe do did done whi what which who whom whose when where can could would should may might must
    shall has have had get got make made from than so veri much mani more most less least few sever some
    ani all each everi other about after befor between dure over under up down also onli just its our we you
    i me my your them our there here thus use main major key role""".split()
)


def topic_share(idfs: dict[str, float], text: str) -> float:
    """How much of the question's topic ``text`` covers: the sum of idf² over the question's topic stems
    (``term_idfs`` minus framing words) found in ``text``, over the sum for all of them.

    Squaring lets the rare words that name a topic outweigh the common ones: a passage matching
    "CRISPR" and "Cas9" covers "How is CRISPR-Cas9 off-target activity measured?", one matching only
    "activity" (shared with a calcium-imaging paper) does not. A topic word the index has never seen
    counts in the total, so a question about something absent covers little everywhere.
    """
    topic = {stem: idf * idf for stem, idf in idfs.items() if stem not in _FRAME_STEMS}
    total = sum(topic.values())
    if total <= 0:
        return 0.0
    present = set(query_stems(text))
    return sum(weight for stem, weight in topic.items() if stem in present) / total


# Words a follow-up leans on the conversation with, naming no topic of its own ("Has it also been used for …?").
_FOLLOW_UP_STEMS = frozenset("also happen good way kind els instead still again".split())


def words_covered(question: str, texts: Iterable[str]) -> float:
    """The largest share of ``question``'s topic stems (content words minus framing words) that any one of
    ``texts`` contains; 1.0 for a question with no topic words of its own ("And why?")."""
    topic = set(query_stems(question)) - _FRAME_STEMS - _FOLLOW_UP_STEMS
    if not topic:
        return 1.0
    return max((len(topic & set(query_stems(text))) / len(topic) for text in texts), default=0.0)


def top_indices(scores: np.ndarray, k: int, stride: int = 64) -> np.ndarray:
    """Indices of the ``k`` highest positive scores, best first, ties in index order.

    A threshold from every ``stride``-th score usually leaves a few hundred candidates
    to rank, a pass over the array; argpartition over all scores takes 5-100 ms at a
    million passages (slowest when most scores are tied zeros).
    """
    candidates = None
    if scores.shape[0] >= 16 * stride * k:
        sample = scores[::stride]
        rank = sample.shape[0] - (4 * k // stride + 2)  # ~(4k + 2 stride) scores lie above it
        threshold = np.partition(sample, rank)[rank]
        if threshold > 0:
            candidates = np.flatnonzero(scores >= threshold)
            # Fewer than k above the threshold: it was too high, so rank every match.
            candidates = candidates if candidates.shape[0] >= k else None
    if candidates is None:
        candidates = np.flatnonzero(scores > 0)
    if candidates.shape[0] > k:
        values = scores[candidates]
        kth = np.partition(values, values.shape[0] - k)[values.shape[0] - k]
        candidates = candidates[values >= kth]
    return candidates[np.lexsort((candidates, -scores[candidates]))][:k]


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
    per text: at 100k passages about 2x faster with 1.7x less peak memory
    (benchmarks/bench_retrieval.py measures both).
    """
    word_ids, stemmer = _WordIds(), Stemmer.Stemmer(STEMMER_LANGUAGE)
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

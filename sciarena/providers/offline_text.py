"""Text analysis shared by the offline composers: sentences, TF-IDF vectors, relevance.

Pure Python on purpose: a battle has at most a few hundred candidate sentences,
so sparse dict vectors are fast enough and keep the baselines dependency-free.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from typing import Sequence

from sciarena.core.types import Reference

NO_PAPERS = (
    "I could not find relevant papers for this question among the retrieved literature, "
    "so I cannot give an answer grounded in cited sources. Rephrasing the question or broadening "
    "its scope may help."
)

_STOPWORDS = frozenset(
    """a about above after again against all also am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have having
    he her here hers him his how i if in into is it its itself just may me might more most much must my no nor
    not now of off on once only or other our ours out over own per same shall she should so some such than that
    the their theirs them then there these they this those through thus to too under until up upon us very via
    was we were what when where which while who whom why will with within without would you your yours
    et al e g i.e eg ie use used using based show shown shows study studies paper papers work works result results
    approach approaches method methods new recent current main key role effect effects
    every directly well often usually many much large small high low different various significant significantly
    respectively particular particularly important importantly generally specifically especially still yet however
    therefore whether across among even less least like likely rather really simply since whose already always
    improve improves improved affect affects compare compared explain explains help helps make makes made differ
    work working give gives given get gets way ways first second third one two three""".split()
)
_ABBREVIATIONS = frozenset({"al.", "e.g.", "i.e.", "cf.", "vs.", "fig.", "figs.", "eq.", "ref.", "no.", "approx."})
_TOKEN = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\"“])")
_INLINE_CITATION = re.compile(r"\s*\[\d+(?:\s*[,;–-]\s*\d+)*\]|\s*\([^()]*[A-Za-z][^()]*\b(?:19|20)\d{2}[a-z]?\)")
_LOWERABLE = frozenset(
    "the this these those we they in a an our it its such their however for most many both using when while "
    "although here there one two several some".split()
)

Vector = dict[str, float]


@dataclass(frozen=True)
class Sentence:
    """One candidate sentence, the reference it came from and its global order (for tie-breaks)."""

    text: str
    number: int
    order: int
    complete: bool  # starts like a sentence and ends with terminal punctuation


# ---------------------------------------------------------------- text analysis

def _stem(word: str) -> str:
    # Only plural folding: enough to match "models"/"model" without a stemmer dependency.
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def content_words(text: str) -> list[tuple[str, str]]:
    """(written word, stem) for each content word: lower-cased, stopwords and bare numbers removed."""
    return [(w, _stem(w)) for w in _TOKEN.findall(text.lower())
            if w not in _STOPWORDS and not w.isdigit() and len(w) > 1]


def tokens(text: str) -> list[str]:
    """Content-word stems of ``text``."""
    return [stem for _, stem in content_words(text)]


def surface_forms(word_lists: Sequence[list[tuple[str, str]]]) -> dict[str, str]:
    """The most common written form of each stem, for labels a reader can understand."""
    seen: dict[str, Counter[str]] = {}
    for words in word_lists:
        for word, stem in words:
            seen.setdefault(stem, Counter())[word] += 1
    return {stem: min(c.items(), key=lambda kv: (-kv[1], kv[0]))[0] for stem, c in seen.items()}


def split_sentences(reference: Reference) -> list[Sentence]:
    """The sentences of a reference's passages, with inline citations of the source removed."""
    out: list[Sentence] = []
    for passage in sorted(reference.passages, key=lambda p: p.position):
        for raw in _split_text(re.sub(r"\s+", " ", passage.text).strip()):
            text = _INLINE_CITATION.sub("", raw).strip(" …")
            if text:
                complete = text[0].isupper() or text[0].isdigit() or text[0] in "(\"“"
                out.append(Sentence(text, reference.number, 0, complete and text[-1] in ".!?"))
    return out


def _split_text(text: str) -> list[str]:
    pieces, start = [], 0
    for m in _SPLIT.finditer(text):
        words = text[max(0, m.start() - 12) : m.start()].split()
        if words and words[-1].lower() in _ABBREVIATIONS:
            continue
        pieces.append(text[start : m.start()])
        start = m.end()
    pieces.append(text[start:])
    return [p.strip() for p in pieces if p.strip()]


class Space:
    """TF-IDF vectors (log tf, smoothed idf, L2-normalised) over a battle's sentences."""

    def __init__(self, token_lists: Sequence[Sequence[str]]) -> None:
        df = Counter(t for toks in token_lists for t in set(toks))
        n = len(token_lists)
        self.idf = {t: math.log((1 + n) / (1 + c)) + 1.0 for t, c in df.items()}

    def vector(self, text: str) -> Vector:
        """The normalised vector of any text in this space (unknown words are ignored)."""
        return self.vector_of(tokens(text))

    def vector_of(self, stems: Sequence[str]) -> Vector:
        """The normalised vector of already tokenised text."""
        counts = Counter(t for t in stems if t in self.idf)
        vec = {t: (1.0 + math.log(c)) * self.idf[t] for t, c in counts.items()}
        norm = math.sqrt(sum(v * v for v in vec.values()))
        return {t: v / norm for t, v in vec.items()} if norm else {}


def cosine(a: Vector, b: Vector) -> float:
    """Cosine of two normalised sparse vectors."""
    if len(a) > len(b):
        a, b = b, a
    return sum(v * b.get(t, 0.0) for t, v in a.items())


@dataclass(frozen=True)
class Analysis:
    """Everything the composers share: candidate sentences, their vectors and relevance."""

    sentences: tuple[Sentence, ...]
    vectors: tuple[Vector, ...]
    relevance: tuple[float, ...]  # cosine with the question
    question: Vector
    space: Space
    forms: dict[str, str]


def analyse(question: str, references: Sequence[Reference]) -> Analysis:
    """Split, vectorise and score every sentence; prefer complete sentences of 5–70 words."""
    every = [s for r in sorted(references, key=lambda r: r.number) for s in split_sentences(r)]
    good = [s for s in every if s.complete and 5 <= len(s.text.split()) <= 70]
    usable = good or [s for s in every if tokens(s.text)]  # very short contexts: take fragments
    sentences = tuple(Sentence(s.text, s.number, i, s.complete) for i, s in enumerate(usable))
    word_lists = [content_words(s.text) for s in sentences] + [content_words(question)]
    stem_lists = [[stem for _, stem in words] for words in word_lists]
    space = Space(stem_lists)
    vectors = tuple(space.vector_of(stems) for stems in stem_lists[:-1])
    q = space.vector_of(stem_lists[-1])
    return Analysis(sentences, vectors, tuple(cosine(q, v) for v in vectors), q, space, surface_forms(word_lists))


def cite(sentence: str, number: int) -> str:
    """The sentence with its citation before the final full stop: "… claim [n]."."""
    return f"{sentence.rstrip().rstrip('.!?;:,').rstrip()} [{number}]."


def join_labels(words: Sequence[str]) -> str:
    """'a', 'a and b', 'a, b and c'."""
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


def lower_first(sentence: str) -> str:
    """Lower-case the first word after a connective, only when it is a plain function word."""
    first = sentence.split(" ", 1)[0]
    plain = first.lower() in _LOWERABLE or first.lower() in _STOPWORDS
    return sentence[0].lower() + sentence[1:] if plain and first[1:].islower() else sentence


def titles_only(references: Sequence[Reference]) -> str:
    """Fallback when the passages hold no usable text: name the papers, cite them, claim nothing."""
    ordered = sorted(references, key=lambda r: r.number)[:5]
    listed = [f'"{r.paper.title.strip().rstrip(".")}" [{r.number}]' for r in ordered]
    return (f"The retrieved papers most related to the question are {join_labels(listed)}, but their retrieved "
            "passages are too short to support a detailed answer.")

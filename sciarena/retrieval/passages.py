"""Split a paper's text into ~250-word passages (the block size OpenScholar's datastore uses).

Pure functions: text in, strings or Passage records out. Passages end on sentence
boundaries unless a single sentence is longer than a passage.
"""

from __future__ import annotations

import math
import re

from sciarena.core.types import Paper, Passage

DEFAULT_PASSAGE_WORDS = 250

# A boundary is whitespace after terminal punctuation (optionally closed by a quote or
# bracket) and before something that can open a sentence, so lower-case continuations
# ("e.g. the") never split. The pattern starts with the punctuation so the scan is fast.
_BOUNDARY = re.compile(r"[.!?][\"')\]]?(\s+)(?=[\"'(\[]?[A-Z0-9])")
# Abbreviations after which a capital or a digit usually continues the same sentence.
_ABBREVIATIONS = frozenset(
    "al. e.g. i.e. cf. vs. Fig. Figs. Eq. Eqs. Tab. Ref. Refs. Sec. No. Dr. Prof. St.".split()
)

_INITIALS = re.compile(r"(?:[A-Z]\.)+")


def split_sentences(text: str) -> list[str]:
    """Split ``text`` into sentences with normalised whitespace; empty text gives []."""
    return [" ".join(words) for words in _sentence_words(text)]


def _sentence_words(text: str) -> list[list[str]]:
    sentences: list[list[str]] = []
    start = 0
    for boundary in _BOUNDARY.finditer(text):
        words = text[start:boundary.start(1)].split()
        last = words[-1].lstrip("([")
        if last in _ABBREVIATIONS or _INITIALS.fullmatch(last):
            continue  # "et al. (2020)", "Fig. 3", "J. R. Smith": the sentence goes on
        sentences.append(words)
        start = boundary.end(1)
    tail = text[start:].split()
    if tail:
        sentences.append(tail)
    return sentences


def chunk_text(text: str, max_words: int = DEFAULT_PASSAGE_WORDS) -> list[str]:
    """Group the sentences of ``text`` into passages of at most ``max_words`` words.

    Uses the fewest passages that sentence boundaries allow and, among those packings,
    makes the longest passage as short as possible, so sizes come out even (no stub of
    a few words at the end). A sentence longer than ``max_words`` is cut into windows.
    """
    if max_words < 1:
        raise ValueError(f"max_words must be at least 1, got {max_words}")
    pieces: list[str] = []
    lengths: list[int] = []
    for words in _sentence_words(text):
        # An over-long sentence becomes equal windows rather than full ones and a stub.
        size = math.ceil(len(words) / math.ceil(len(words) / max_words))
        for i in range(0, len(words), size):
            pieces.append(" ".join(words[i : i + size]))
            lengths.append(min(size, len(words) - i))
    if not pieces:
        return []
    fewest = len(_pack(lengths, max_words))
    low, high = max(max(lengths), math.ceil(sum(lengths) / fewest)), max_words
    # Packing greedily under a cap needs more passages as the cap shrinks: search for
    # the smallest cap that still needs only `fewest`.
    while low < high:
        middle = (low + high) // 2
        if len(_pack(lengths, middle)) <= fewest:
            high = middle
        else:
            low = middle + 1
    return [" ".join(pieces[a:b]) for a, b in _pack(lengths, low)]


def _pack(lengths: list[int], cap: int) -> list[tuple[int, int]]:
    """Greedy (start, end) piece ranges whose word counts stay within ``cap``."""
    ranges: list[tuple[int, int]] = []
    start, size = 0, 0
    for i, length in enumerate(lengths):
        if size and size + length > cap:
            ranges.append((start, i))
            start, size = i, 0
        size += length
    ranges.append((start, len(lengths)))
    return ranges


def paper_passages(
    paper: Paper, text: str, max_words: int = DEFAULT_PASSAGE_WORDS
) -> list[Passage]:
    """The passages of one paper in document order; a paper without text gets its title."""
    chunks = chunk_text(text, max_words)
    if not chunks:
        return [Passage(passage_id=passage_id(paper.paper_id, 0), paper=paper,
                        text=paper.title, position=0, kind="title")]
    return [
        Passage(passage_id=passage_id(paper.paper_id, i), paper=paper, text=chunk, position=i)
        for i, chunk in enumerate(chunks)
    ]


def passage_id(paper_id: str, position: int) -> str:
    """Stable identifier of the passage at ``position`` in paper ``paper_id``."""
    return f"{paper_id}#{position}"


def indexed_text(title: str, text: str, position: int, kind: str = "body") -> str:
    """The text the index sees: the first passage also carries the title so its words count."""
    if position == 0 and kind != "title" and title:
        return f"{title}\n{text}"
    return text

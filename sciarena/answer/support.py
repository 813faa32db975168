"""Does a cited passage back the sentence that cites it? The offline lexical judge and its records.

A ``Pair`` is one sentence of an answer and one passage it cites; a ``Verdict`` is *supporting*,
*irrelevant* or *contradicting*. ``LexicalJudge`` decides by stemmed content-word overlap with a threshold
calibrated on our hand-labelled pairs, plus a negation/direction cue for contradictions read against the
passage sentence(s) the claim matches (not the whole passage, whose negations elsewhere say nothing about
this claim); a claim found word for word in its passage is supporting. A word-overlap heuristic, not an
entailment model, and named so (``offline:lexical``). The OpenScholar-style citation
check (pipelines/verify.py) and attribution over stored votes (science/labelling/attribution.py) share it.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import Stemmer

from sciarena.answer.citations import sentence_spans
from sciarena.retrieval.rerank import tokenize

SUPPORTING, IRRELEVANT, CONTRADICTING = "supporting", "irrelevant", "contradicting"
VERDICTS: tuple[str, ...] = (SUPPORTING, IRRELEVANT, CONTRADICTING)
LEXICAL_NAME = "offline:lexical"
NUMBER_CITE = re.compile(r"\[(\d{1,4})\]")
# What the lexical judge drops from a sentence besides "[n]": parentheses holding a year, and "Name et al."
# (bounded runs, no nested repeats: linear in the sentence)
_PARENS = re.compile(r"\([^()\n]{0,200}\)|[\w'’-]{1,40} et al\.?")
_YEAR = re.compile(r"(?:19|20)\d{2}")


def _citation_text(match: re.Match[str]) -> str:
    text = match.group(0)
    return " " if not text.startswith("(") or _YEAR.search(text) else text


@dataclass(frozen=True)
class Pair:
    """One sentence of an answer and one passage it cites."""

    sentence: str  # as written, citation markers included
    citation: str  # how the sentence cites it: "[3]" or "Lee et al. 2021a"
    passage: str  # the cited passage (the citation's ``content``)

    @cached_property
    def key(self) -> str:
        """Same sentence, marker and passage → same key: one judgement serves every vote that has it."""
        text = "\x00".join((" ".join(self.sentence.split()), self.citation, " ".join(self.passage.split())))
        return hashlib.sha1(text.encode("utf-8")).hexdigest()[:20]

    @property
    def claim(self) -> str:
        """The sentence without its citation markers (what the lexical judge compares)."""
        return " ".join(_PARENS.sub(_citation_text, NUMBER_CITE.sub(" ", self.sentence)).split())


@dataclass(frozen=True)
class Verdict:
    value: str  # one of VERDICTS, or INVALID
    judge: str
    raw: str = ""

    @property
    def valid(self) -> bool:
        return self.value in VERDICTS


# ---------------------------------------------------------------- the offline lexical baseline

# Calibrated on the train split of sciarena/data/eval/attribution_pairs.jsonl with
# ``calibrate_threshold`` (tests/test_attribution.py recomputes it; benchmarks/bench_attribution.py
# reports the held-out agreement).
LEXICAL_THRESHOLD = 0.3

_NEGATIONS = frozenset({"not", "no", "never", "neither", "nor", "without", "cannot", "fail", "fails", "failed",
                        "lack", "lacks", "lacked", "absent", "none", "unchanged", "insignificant"})
_NEGATED_SUFFIX = "n't"
# Words that name a direction; a claim and a passage naming opposite ones disagree.
_DIRECTIONS: Mapping[str, int] = {
    **dict.fromkeys(("increase", "increases", "increased", "increasing", "higher", "more", "greater", "raise",
                     "raises", "raised", "improve", "improves", "improved", "rise", "rises", "rose", "enhance",
                     "enhances", "enhanced", "larger", "faster", "gain", "gains", "up", "upregulated",
                     "promotes", "boosts", "accelerates", "outperforms", "better"), 1),
    **dict.fromkeys(("decrease", "decreases", "decreased", "decreasing", "lower", "less", "fewer", "reduce",
                     "reduces", "reduced", "reduction", "worsen", "worsens", "worsened", "fall", "falls", "fell",
                     "decline", "declines", "declined", "smaller", "slower", "loss", "down", "downregulated",
                     "inhibits", "suppresses", "slows", "underperforms", "worse"), -1),
}
_WORD = re.compile(r"[\w'’-]+")
# A quoted span of a claim names a paper by its title ("… by Lee et al. bears on the question"): the
# title's words count for overlap, but its "prevent" or "without" is not the sentence's polarity.
_QUOTED = re.compile(r'"[^"\n]{1,400}"|“[^”\n]{1,400}”')


def _stemmer() -> Any:
    return Stemmer.Stemmer("english")


def _polarity(words: Sequence[str]) -> tuple[bool, int]:
    negated = sum(w in _NEGATIONS or w.endswith(_NEGATED_SUFFIX) for w in words) % 2 == 1
    direction = sum(_DIRECTIONS.get(w, 0) for w in words)
    return negated, (direction > 0) - (direction < 0)


@dataclass(frozen=True)
class LexicalJudge:
    """Supporting when at least ``threshold`` of the claim's content stems occur in the passage;
    contradicting when they do but the claim and the passage sentence(s) it matches disagree in negation or in
    direction words; else irrelevant. A claim contained word for word in the passage is supporting."""

    threshold: float = LEXICAL_THRESHOLD
    kind: str = "lexical"

    @property
    def name(self) -> str:
        """Recorded with each verdict: another threshold is another judge, so a rerun does not reuse its verdicts."""
        return f"{LEXICAL_NAME}@{self.threshold:g}"

    @cached_property
    def _stem(self) -> Any:
        return _stemmer()

    def stems(self, text: str) -> frozenset[str]:
        """The content stems the overlap compares (numbers left out); computed once per text by callers
        that compare one passage with many claims."""
        return frozenset(w for w in tokenize(text, self._stem) if not w.isdigit())

    def overlap(self, claim: str, passage: str | frozenset[str]) -> float:
        """Share of the claim's content stems found in the passage (its text, or its ``stems``)."""
        wanted = self.stems(claim)
        if not wanted:
            return 0.0
        found = passage if isinstance(passage, frozenset) else self.stems(passage)
        return len(wanted & found) / len(wanted)

    def conflict(self, claim: str, passage: str) -> bool:
        """Whether the polarity cues of the claim and of ``passage`` disagree (negation, or opposite
        direction words); callers pass the passage sentence(s) the claim matches (``matched``)."""
        (neg_c, dir_c) = _polarity(_WORD.findall(claim.casefold()))
        (neg_p, dir_p) = _polarity(_WORD.findall(passage.casefold()))
        return neg_c != neg_p or (dir_c * dir_p < 0)

    def matched(self, claim: str, passage: str) -> str:
        """The passage sentence the claim matches: the one sharing the most of its content stems (the
        first of equals); the whole passage when it has one sentence. On the labelled pairs the single
        best sentence agreed with the hand labels more often than the best two joined (36 vs 34 of 49
        train pairs, equal on test; benchmarks/bench_attribution.py)."""
        wanted = self.stems(claim)
        pieces = [passage[a:b].strip() for a, b in sentence_spans(passage) if passage[a:b].strip()]
        if len(pieces) < 2 or not wanted:
            return passage
        return max(pieces, key=lambda t: len(wanted & self.stems(t)))  # max keeps the first of equals

    def scores(self, pair: Pair) -> tuple[float, bool]:
        """(overlap, whether the polarity cues conflict): full overlap and no conflict when the claim is
        contained in the passage (an extractive answer copies its sentences)."""
        claim, passage = pair.claim, pair.passage
        if contained(claim, passage) and self.stems(claim):
            return 1.0, False
        overlap = self.overlap(claim, passage)
        if overlap < self.threshold:
            return overlap, False  # irrelevant whatever the cue says: skip the sentence matching
        outside = _QUOTED.sub(" ", claim)
        if outside != claim and self.overlap(outside, passage) < self.threshold:
            return overlap, False  # it matches through the title it quotes: a framing sentence, no claim of its own
        return overlap, self.conflict(outside, self.matched(outside, passage))

    def decide(self, overlap: float, conflict: bool) -> str:
        if overlap < self.threshold:
            return IRRELEVANT
        return CONTRADICTING if conflict else SUPPORTING

    def judge(self, pair: Pair) -> Verdict:
        return Verdict(self.decide(*self.scores(pair)), self.name)


def _words(text: str) -> str:
    return " " + " ".join(_WORD.findall(text.casefold())) + " "


def contained(claim: str, passage: str) -> bool:
    """Whether the claim's words occur, in order and adjacent, in the passage (case and punctuation
    ignored): a copied sentence, or a copied clause of one."""
    words = _words(claim)
    return words.strip() != "" and words in _words(passage)


def calibrate_threshold(scored: Sequence[tuple[float, bool, str]],
                        grid: Sequence[float] = tuple(k / 40 for k in range(1, 40))) -> float:
    """The grid threshold with the most correct verdicts on (overlap, conflict, gold) triples; the
    lowest of equally good ones (ties are common on a small set, and the order makes it reproducible)."""
    if not scored:
        raise ValueError("no labelled pairs to calibrate on")
    best, best_correct = grid[0], -1
    for threshold in grid:
        judge = LexicalJudge(threshold=threshold)
        correct = sum(judge.decide(o, c) == gold for o, c, gold in scored)
        if correct > best_correct:
            best, best_correct = threshold, correct
    return best

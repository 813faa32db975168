"""Post-hoc citation verification: is every citation-worthy statement backed by a cited passage?

The last step of the OpenScholar-style loop (§2.2). Each sentence of the answer long enough to
make a claim (50 characters or more, the length OpenScholar's citation metric counts) is checked
against the passages of the references it cites, with the offline lexical attribution judge
(science/labelling/attribution.py), its polarity cue read against the passage sentence closest to the
claim, as the judge itself now does: supporting-vs-not agreement with our hand labels 73.9% on the
held-out split (17/23) and 73.5% on train (36/49) (``python benchmarks/bench_attribution.py``).
A statement no cited passage supports gets the citation of the given passage that supports it best,
when one does; otherwise it is counted as unsupported and left as written: verification never removes
a citation (the judge is a word-overlap heuristic, and a paraphrase it misses is still the writer's
claim) and never invents one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterator, Sequence

from sciarena.answer.citations import cited_numbers, sentence_spans
from sciarena.answer.support import SUPPORTING, LexicalJudge, Pair
from sciarena.core.types import Reference

MIN_STATEMENT_CHARS = 50
MIN_CONTENT_STEMS = 4  # fewer content words than this is a transition, not a claim
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")


@dataclass(frozen=True)
class Verification:
    text: str  # the answer with the citations added
    checked: int  # citation-worthy statements examined
    supported: int  # ... already backed by a passage they cite
    added: int  # ... given a citation from the passage that supports them
    unsupported: int  # ... no given passage supports (left as written)


class CitationVerifier:
    """Checks statements against passages; the passages' stems are computed once per reference list."""

    def __init__(self, references: Sequence[Reference], judge: LexicalJudge | None = None) -> None:
        self.judge = judge or LexicalJudge()
        self.by_number = {r.number: r for r in references}
        self._passages = {r.number: [self._analysed(p.text) for p in r.passages] for r in references}
        self._last_claim: tuple[str, frozenset[str]] = ("", frozenset())

    def _analysed(self, text: str) -> tuple[frozenset[str], list[tuple[str, frozenset[str]]]]:
        """A passage's stems, and each of its sentences with its own."""
        sentences = [text[a:b] for a, b in sentence_spans(text) if text[a:b].strip()]
        return self.judge.stems(text), [(s, self.judge.stems(s)) for s in sentences]

    def _claim_stems(self, claim: str) -> frozenset[str]:
        if claim != self._last_claim[0]:  # a statement is checked against every reference in turn
            self._last_claim = (claim, self.judge.stems(claim))
        return self._last_claim[1]

    def support(self, claim: str, number: int) -> float:
        """How well reference ``number`` backs ``claim``: the best overlap of its passages (0 below the
        judge's threshold, or when the claim contradicts the passage).

        Polarity is compared with the passage sentence closest to the claim, not the whole passage: a
        passage's negations elsewhere say nothing about this claim (the whole-passage cue called a
        verbatim copy "contradicting" on the demo corpus)."""
        wanted = self._claim_stems(claim)
        if not wanted:
            return 0.0
        best = 0.0
        for stems, sentences in self._passages.get(number, ()):
            overlap = len(wanted & stems) / len(wanted)  # the judge's overlap, the claim's stems computed once
            if overlap < self.judge.threshold or overlap <= best:
                continue
            closest = max(sentences, key=lambda s: len(wanted & s[1]), default=("", frozenset()))[0]
            if self.judge.decide(overlap, self.judge.conflict(claim, closest)) == SUPPORTING:
                best = overlap
        return best

    def statements(self, text: str) -> list[tuple[str, str, tuple[int, ...]]]:
        """(sentence, claim, the numbers of the list it cites) of each citation-worthy statement of
        ``text``: what ``verify`` checks, for anyone who grades an answer the same way."""
        return [(piece, claim, tuple(n for n in cited_numbers(piece) if n in self.by_number))
                for piece, claim in self._pieces(text) if claim is not None]

    def verify(self, text: str) -> Verification:
        out: list[str] = []
        checked = supported = added = unsupported = 0
        for piece, claim in self._pieces(text):
            if claim is None:
                out.append(piece)
                continue
            checked += 1
            cited = [n for n in cited_numbers(piece) if n in self.by_number]
            if any(self.support(claim, n) > 0 for n in cited):
                supported += 1
                out.append(piece)
                continue
            scores = {n: self.support(claim, n) for n in self.by_number if n not in cited}
            best = max(scores, key=lambda n: (scores[n], -n), default=None)
            if best is None or scores[best] <= 0:
                unsupported += 1
                out.append(piece)
                continue
            added += 1
            out.append(with_citation(piece, best))
        return Verification("".join(out), checked, supported, added, unsupported)

    def _pieces(self, text: str) -> Iterator[tuple[str, str | None]]:
        """``text`` in order as pieces that join back into it (sentences, whole lines, the newlines
        between lines), each with its claim when it is a citation-worthy statement, else None."""
        in_code = False
        for number, line in enumerate(text.split("\n")):
            if number:
                yield "\n", None
            fence = _FENCE.match(line) is not None
            in_code = in_code != fence
            if in_code or fence or line.lstrip().startswith(("#", "|")):
                yield line, None  # code, headings and table rows make no claim to cite
                continue
            for start, end in sentence_spans(line):
                sentence = line[start:end]
                claim = Pair(sentence=sentence, citation="", passage="").claim
                worthy = len(claim) >= MIN_STATEMENT_CHARS and len(self._claim_stems(claim)) >= MIN_CONTENT_STEMS
                yield sentence, claim if worthy else None


def with_citation(sentence: str, number: int) -> str:
    """``sentence`` with ``[number]`` after its last citation, before its closing punctuation.

    Read from the end by index, slicing once: a regular expression anchored at the end still scans
    from the start, and a hostile run of citations would make either quadratic."""
    end = len(sentence.rstrip())
    space = sentence[end:]
    closing_start = end
    while closing_start > 0 and sentence[closing_start - 1] in "\"'”’)":
        closing_start -= 1
    punct_start = closing_start - 1 if closing_start > 0 and sentence[closing_start - 1] in ".!?" else closing_start
    cites_end = body_end = punct_start
    while True:  # step back over "[n]" groups and the spaces between them
        k = body_end
        while k > 0 and sentence[k - 1] in " \t":
            k -= 1
        if k == 0 or sentence[k - 1] != "]":
            break
        start = sentence.rfind("[", max(0, k - 6), k - 1)
        if start < 0 or not sentence[start + 1 : k - 1].isdigit():
            break
        body_end = start
    body = sentence[:body_end].rstrip()
    cites = sentence[body_end:cites_end].strip()
    marker = f"{cites}[{number}]" if cites else f"[{number}]"
    if body:
        marker = f" {marker}"
    return f"{body}{marker}{sentence[punct_start:closing_start]}{sentence[closing_start:end]}{space}"

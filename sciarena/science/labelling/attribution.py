"""Citation attribution: is each cited passage behind the sentence that cites it? (paper §5.2, C.2)

An answer is split into sentences; every (sentence, citation) pair is judged against the cited
passage as *supporting*, *irrelevant* or *contradicting*. Citations are found in both schemas:
our answers cite ``[n]`` (``citations_a/b`` entries carry ``number``), the released data cites
``(Author et al. 2023a)`` (entries carry ``concise_authors``). A side's counts follow the paper:
supporting citations, and irrelevant *or* contradicting ones (merged, as in appendix C.2).

Two judges: ``ModelJudge`` asks any model through a ``complete(messages) -> str`` callable and
parses its reply strictly; ``LexicalJudge`` is the offline baseline — stemmed content-word
overlap with a threshold calibrated on our hand-labelled pairs, plus a negation/direction cue
for contradictions. It is a word-overlap heuristic, not an entailment model, and says so in its
name (``offline:lexical``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from sciarena.answer.citations import sentence_spans  # the answer pipeline's sentence splitter (abbreviation-aware)
from sciarena.answer.label_reply import INVALID, MAX_RAW_CHARS, Complete, parse_label
from sciarena.answer.support import (  # noqa: F401 (the verdict vocabulary and the lexical judge, re-exported)
    CONTRADICTING,
    IRRELEVANT,
    LEXICAL_NAME,
    LEXICAL_THRESHOLD,
    NUMBER_CITE,
    SUPPORTING,
    VERDICTS,
    LexicalJudge,
    Pair,
    Verdict,
    calibrate_threshold,
)
from sciarena.core.settings import PACKAGE_DIR

SIDES = ("a", "b")


_UNWANTED = re.compile(r"[(),;]")
_SPACES = re.compile(r"\s+")


# ---------------------------------------------------------------- pairs from a vote record

@dataclass(frozen=True)
class SidePairs:
    """An answer's pairs; ``unjudgeable`` counts citations used in the text whose passage is missing."""

    pairs: tuple[Pair, ...]
    unjudgeable: int = 0


def _folded(text: str) -> str:
    return _SPACES.sub(" ", _UNWANTED.sub(" ", text.casefold())).strip()


def _author_pattern(concise_authors: str) -> re.Pattern[str] | None:
    folded = _folded(concise_authors)
    return re.compile(rf"(?<!\w){re.escape(folded)}(?!\w)") if len(folded) >= 4 else None


def sentences(text: str) -> list[str]:
    """The answer's sentences (the postprocessing splitter), blank ones dropped."""
    return [s.strip() for start, end in sentence_spans(text) if (s := text[start:end]).strip()]


def side_pairs(answer: object, citations: object) -> SidePairs:
    """Every (sentence, citation) pair of one answer: ``[n]`` matched to the entry numbered n (or the
    n-th entry when entries carry no numbers), and author–year mentions to ``concise_authors``.
    An answer citing ``[n]`` with no citation list at all cannot be judged: its markers are unjudgeable."""
    if not isinstance(answer, str):
        return SidePairs(())
    entries = [c for c in citations if isinstance(c, Mapping)] if isinstance(citations, list) else []
    if not entries:
        return SidePairs((), unjudgeable=sum(len(set(NUMBER_CITE.findall(s))) for s in sentences(answer)))
    by_number: dict[int, Mapping[str, Any]] = {}
    for k, entry in enumerate(entries, start=1):
        number = entry.get("number")
        by_number[number if isinstance(number, int) and not isinstance(number, bool) else k] = entry
    authors = [(p, e) for e in entries if isinstance(e.get("concise_authors"), str)
               and (p := _author_pattern(e["concise_authors"])) is not None]
    pairs: list[Pair] = []
    unjudgeable = 0
    for sentence in sentences(answer):
        cited: dict[int, tuple[str, Mapping[str, Any]]] = {}  # by entry identity: one pair per entry
        for n in dict.fromkeys(int(x) for x in NUMBER_CITE.findall(sentence)):
            if n in by_number:
                cited.setdefault(id(by_number[n]), (f"[{n}]", by_number[n]))
        if len(authors):
            folded = _folded(sentence)
            for pattern, entry in authors:
                if id(entry) not in cited and pattern.search(folded):
                    cited[id(entry)] = (str(entry["concise_authors"]).strip(), entry)
        for marker, entry in cited.values():
            passage = entry.get("content")
            if isinstance(passage, str) and passage.strip():
                pairs.append(Pair(sentence, marker, passage.strip()))
            else:
                unjudgeable += 1
    return SidePairs(tuple(pairs), unjudgeable)


def record_pairs(record: Mapping[str, Any]) -> dict[str, SidePairs]:
    """Both sides' pairs of a vote record (our schema or the released one)."""
    return {"a": side_pairs(record.get("responseA"), record.get("citations_a")),
            "b": side_pairs(record.get("responseB"), record.get("citations_b"))}


# ---------------------------------------------------------------- the model judge

_SYSTEM = (
    "You check citations in answers written for researchers. You get one sentence from an answer, the "
    "citation marker it uses, and the passage from the cited paper. Decide how the passage relates to what "
    "the sentence says:\n\n"
    "- supporting: the passage states or clearly implies the sentence's claim, or the part of it that the "
    "citation is attached to.\n"
    "- irrelevant: the passage is about something else, or is on the same topic but does not back the claim "
    "(a different finding, population, method or quantity).\n"
    "- contradicting: the passage reports the opposite, or a result incompatible with the claim (another "
    "direction, a refuted effect, a clearly different number).\n\n"
    "Judge only against the passage given, not against what you know about the paper. "
    "Reply with one word: supporting, irrelevant or contradicting."
)


def build_messages(pair: Pair) -> list[dict[str, str]]:
    """Chat messages asking for the pair's verdict."""
    user = (f"Sentence:\n{pair.sentence}\n\nCitation marker: {pair.citation}\n\n"
            f"Cited passage:\n{pair.passage}\n\nVerdict:")
    return [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": user}]


def parse_verdict(text: object) -> str:
    """Exactly one of VERDICTS (any case, quoted, after a reasoning block), else INVALID."""
    return parse_label(text, VERDICTS)


class Judge(Protocol):
    name: str
    kind: str  # "model" | "lexical"

    def judge(self, pair: Pair) -> Verdict:
        """The pair's verdict; a failed model call raises errors.ProviderError."""


@dataclass(frozen=True)
class ModelJudge:
    complete: Complete
    name: str
    kind: str = "model"

    def judge(self, pair: Pair) -> Verdict:
        reply = self.complete(build_messages(pair))
        return Verdict(parse_verdict(reply), self.name, reply[:MAX_RAW_CHARS] if isinstance(reply, str) else "")


# ---------------------------------------------------------------- per-side counts

# The leaderboard reads these (votes/read/fields.py NUMERIC_SOURCES); contradicting ones are
# counted as irrelevant, as the paper merges them, and also written on their own.
def count_fields(side: str, verdicts: Sequence[str] | None) -> dict[str, int | None]:
    """``num_supporting_x``, ``num_irrelevant_x`` (irrelevant + contradicting), ``num_contradicting_x``
    for one side; all None when ``verdicts`` is None (some pair of the side has no usable verdict)."""
    keys = (f"num_supporting_{side}", f"num_irrelevant_{side}", f"num_contradicting_{side}")
    if verdicts is None:
        return dict.fromkeys(keys, None)
    supporting = sum(v == SUPPORTING for v in verdicts)
    contradicting = sum(v == CONTRADICTING for v in verdicts)
    return dict(zip(keys, (supporting, len(verdicts) - supporting, contradicting)))


def side_verdicts(side: SidePairs, verdicts: Mapping[str, str]) -> list[str] | None:
    """The side's verdicts when every pair has a valid one and no cited passage was missing, else None."""
    if side.unjudgeable:
        return None
    found = [verdicts.get(p.key, INVALID) for p in side.pairs]
    return None if any(v not in VERDICTS for v in found) else found


# ---------------------------------------------------------------- our hand-labelled pairs

PAIRS_FILE = PACKAGE_DIR / "data" / "eval" / "attribution_pairs.jsonl"
# train: the threshold is calibrated on it; test: held out; copied: held out, added for issue 23 —
# sentences copied from their passage, copied clauses, framing sentences quoting a title, and the same
# sentences turned round (contradicting) or cited against another paper (irrelevant)
PAIR_SPLITS = ("train", "test", "copied")


@dataclass(frozen=True)
class LabelledPair:
    id: str
    pair: Pair
    label: str  # one of VERDICTS
    discipline: str
    split: str  # one of PAIR_SPLITS


def load_labelled_pairs(path: str | Path = PAIRS_FILE) -> list[LabelledPair]:
    """Every hand-labelled pair in file order (see ATTRIBUTION_PAIRS_CARD.md); a line with an unknown
    label or split is a ValueError."""
    out: list[LabelledPair] = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        record = json.loads(line)
        sentence = record["sentence"]
        marker = NUMBER_CITE.search(sentence)
        item = LabelledPair(id=record["id"], pair=Pair(sentence, marker.group(0) if marker else "", record["passage"]),
                            label=record["label"], discipline=record.get("discipline", ""), split=record["split"])
        if item.label not in VERDICTS or item.split not in PAIR_SPLITS:
            raise ValueError(f"{path}: line {number} has an unknown label or split")
        out.append(item)
    return out


def calibrate_on(items: Sequence[LabelledPair], judge: LexicalJudge | None = None) -> float:
    """``calibrate_threshold`` over labelled pairs (usually the train split)."""
    judge = judge or LexicalJudge()
    return calibrate_threshold([(*judge.scores(item.pair), item.label) for item in items])

"""Anonymity: find and hide model or vendor names in a contestant's answer.

Policy. Votes are only meaningful while the voter does not know which model
wrote which answer. When an answer names a model or vendor ("As ChatGPT, I…"),
we REDACT the mention — replacing it with "[model name hidden]" — and record
``redacted=True`` for that side in the vote, rather than discarding the battle
as FastChat does. The voter has already waited for both answers, the models are
revealed right after the vote anyway, and the flag lets the leaderboard drop or
study such votes later.

Matching rules, chosen to keep false positives low in scientific text:

* Whole words, case-insensitive, with an optional version/tier tail so that
  "GPT-4o mini" or "Claude 3.5 Sonnet" is hidden as one unit.
* Words that are ordinary vocabulary are matched only in an unambiguous form:
  "Meta AI" (not "Meta" — meta-analysis), "Alibaba Cloud" (not "Alibaba", a
  company economists study), "Google DeepMind"/"DeepMind" (not "Google", as in
  Google Scholar), "ChatGLM" (not "GLM", the generalised linear model),
  "Perplexity AI" (not "perplexity", a language-model metric); "xAI", "PaLM" and
  "OLMo" are case-sensitive (XAI is explainable AI, palm is a tree, olmo an elm).
* A few names are also common scientific words; they are matched unless the
  nearby words show the other sense: Gemini (the constellation, observatory or
  NASA programme), Llama (camelid antibodies, nanobodies), Mistral (the wind),
  GPT (the liver enzyme), Bard ("the Bard", Shakespeare). Claude, Gemma and Kimi
  followed by a capitalised surname are people (Claude Shannon), not models.
* A term that also occurs in the question or in the retrieved papers is a topic
  of the conversation, not a self-identification, so callers pass that text as
  ``exempt_text`` and such terms are left alone (an answer about GPT-4's
  benchmark results keeps saying GPT-4).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Iterator, Sequence

from sciarena.types import Reference

PLACEHOLDER = "[model name hidden]"


@dataclass(frozen=True)
class IdentityTerm:
    """One name to hide, with what tells an unrelated use of the same word apart."""

    word: str
    case_sensitive: bool = False
    avoid_before: frozenset[str] = frozenset()  # the word just before shows another sense
    avoid_near: frozenset[str] = frozenset()  # any of these within a few words shows another sense
    person_name: bool = False  # "Claude Shannon": a capitalised surname follows → a person


_ASTRONOMY = frozenset(
    "constellation observatory telescope spacecraft capsule mission missions program programme nasa "
    "zodiac twins castor pollux geminids astronaut astronauts orbit orbital north south".split()
)
_CAMELID = frozenset(
    "antibody antibodies nanobody nanobodies camelid camelids alpaca alpacas vicuna guanaco "
    "immunized immunised herd herds wool fiber fibre animal animals livestock".split()
)
_WIND = frozenset("wind winds rhône rhone provence gust gusts meteorological".split())
_ENZYME = frozenset("serum liver enzyme enzymes transaminase hepatic plasma alt ast u/l".split())
_POET = frozenset("shakespeare avon poet poets poetry celtic welsh bardic".split())

IDENTITY_TERMS: tuple[IdentityTerm, ...] = (
    IdentityTerm("ChatGPT"),
    IdentityTerm("GPT", avoid_near=_ENZYME),
    IdentityTerm("OpenAI"),
    IdentityTerm("o1-preview", case_sensitive=True),
    IdentityTerm("o1-mini", case_sensitive=True),
    IdentityTerm("o3-mini", case_sensitive=True),
    IdentityTerm("o4-mini", case_sensitive=True),
    IdentityTerm("Claude", person_name=True),
    IdentityTerm("Anthropic"),
    IdentityTerm("Gemini", avoid_before=frozenset({"constellation", "project", "nasa"}), avoid_near=_ASTRONOMY),
    IdentityTerm("Gemma", person_name=True),
    IdentityTerm("Bard", avoid_before=frozenset({"the"}), avoid_near=_POET),
    IdentityTerm("PaLM", case_sensitive=True),
    IdentityTerm("Google DeepMind"),
    IdentityTerm("DeepMind"),
    IdentityTerm("Google AI"),
    IdentityTerm("Llama", avoid_near=_CAMELID),
    IdentityTerm("Meta AI"),
    IdentityTerm("Mistral", avoid_near=_WIND),
    IdentityTerm("Mixtral"),
    IdentityTerm("Magistral"),
    IdentityTerm("Qwen"),
    IdentityTerm("QwQ"),
    IdentityTerm("Alibaba Cloud"),
    IdentityTerm("Tongyi"),
    IdentityTerm("DeepSeek"),
    IdentityTerm("Grok"),
    IdentityTerm("xAI", case_sensitive=True),
    IdentityTerm("Kimi", person_name=True),
    IdentityTerm("Moonshot AI"),
    IdentityTerm("ChatGLM"),
    IdentityTerm("Zhipu"),
    IdentityTerm("Doubao"),
    IdentityTerm("Hunyuan"),
    IdentityTerm("Ernie Bot"),
    IdentityTerm("Nemotron"),
    IdentityTerm("OLMo", case_sensitive=True),
    IdentityTerm("Perplexity AI"),
)

# Version numbers and tier names that belong to a model's name ("GPT-4o mini", "Claude 3.5 Sonnet").
_TIERS = "mini|nano|turbo|pro|flash|lite|sonnet|opus|haiku|instant|instruct|chat|coder|max|plus|preview|thinking"
_VER = r"\d+(?:\.\d+)*[a-z]?"
# Hyphenated parts must hold a digit or be a tier, so "GPT-based" keeps its "-based".
_TAIL = (
    rf"(?:{_VER})?(?:-(?:\w*\d\w*(?:\.\d+)*|(?:{_TIERS})\b))*(?:\s{_VER}\b)?"
    rf"(?:[\s-](?:{_TIERS})\b(?:[\s-]{_VER}\b)?)*"
)
_WORD = re.compile(r"[\w/'’-]+")
_NEAR = 4  # words either side inspected for another sense of an ambiguous name


@functools.cache  # each pattern takes ~6 ms to compile and re's own cache evicts them under load
def _pattern(term: IdentityTerm) -> re.Pattern[str]:
    body = r"\s+".join(re.escape(part) for part in term.word.split())
    flags = 0 if term.case_sensitive else re.IGNORECASE
    return re.compile(rf"(?<![\w-])(?:{body})(?i:{_TAIL})(?![\w])", flags)


@functools.cache
def _any_name() -> re.Pattern[str]:
    """Every term's bare words in one case-insensitive pattern: a cheap test that most texts fail."""
    words = (r"\s+".join(re.escape(part) for part in term.word.split()) for term in IDENTITY_TERMS)
    return re.compile("|".join(words), re.IGNORECASE)


def _matches(text: str) -> Iterator[tuple[int, int, IdentityTerm]]:
    """(start, end, term) for each identity mention, left to right, without overlaps."""
    if not _any_name().search(text):  # no term's words at all: nothing can match
        return
    found: list[tuple[int, int, IdentityTerm]] = []
    for term in IDENTITY_TERMS:
        for m in _pattern(term).finditer(text):
            if not _other_sense(text, m.start(), m.end(), term):
                found.append((m.start(), m.end(), term))
    # Longest first at each start, then drop mentions inside an earlier one ("Google DeepMind" vs "DeepMind").
    found.sort(key=lambda f: (f[0], -(f[1] - f[0])))
    end = -1
    for start, stop, term in found:
        if start >= end:
            yield start, stop, term
            end = stop


def _other_sense(text: str, start: int, end: int, term: IdentityTerm) -> bool:
    before = [w.lower() for w in _WORD.findall(text[max(0, start - 80) : start])]
    after_text = text[end : end + 80]
    after = [w.lower() for w in _WORD.findall(after_text)]
    if term.avoid_before and before and before[-1] in term.avoid_before:
        return True
    if term.avoid_near and term.avoid_near & set(before[-_NEAR:] + after[:_NEAR]):
        return True
    if term.person_name:
        nxt = re.match(r"\s+([^\W\d_][\w'’-]*)", after_text)
        if nxt and nxt.group(1)[0].isupper():
            return True
    return False


# A name right after one of these is the answer speaking about itself ("As GPT-4, I…", "I am Claude",
# "developed by OpenAI"): always hidden, even when the question or the papers make the name a topic,
# so a question cannot switch redaction off.
_SELF_REFERENCE = re.compile(
    r"(?:\bi\s+am|\bi['’]m|\bas|\bmy\s+name\s+is|\bcalled|\b(?:developed|created|trained|made|built|designed|"
    r"provided|powered)\s+by)\s+(?:an?\s+|the\s+)?(?:ai\s+|(?:large\s+)?language\s+)?(?:model\s+|assistant\s+)?$",
    re.IGNORECASE,
)


def _self_reference(text: str, start: int) -> bool:
    return bool(_SELF_REFERENCE.search(text[max(0, start - 60):start]))


def _exempt_terms(terms: set[IdentityTerm], exempt_text: str) -> set[IdentityTerm]:
    # Only the terms the answer uses are looked up, so long paper contexts cost a few searches.
    return {term for term in terms if exempt_text and _pattern(term).search(exempt_text)}


def find_identity_mentions(text: str, exempt_text: str = "") -> list[str]:
    """The model/vendor mentions in ``text``, in order, as written.

    Terms that also occur in ``exempt_text`` (the question, the papers) are topics, not leaks, and are
    skipped — unless the answer uses them about itself ("As GPT-4, …").
    """
    found = list(_matches(text))
    exempt = _exempt_terms({term for _, _, term in found}, exempt_text)
    return [text[s:e] for s, e, term in found if term not in exempt or _self_reference(text, s)]


def redact_identity(text: str, exempt_text: str = "") -> tuple[str, bool]:
    """Replace each mention by "[model name hidden]"; returns (text, whether anything was replaced)."""
    found = list(_matches(text))
    exempt = _exempt_terms({term for _, _, term in found}, exempt_text)
    pieces: list[str] = []
    last = 0
    for start, end, term in found:
        if term in exempt and not _self_reference(text, start):
            continue
        pieces.append(text[last:start])
        pieces.append(PLACEHOLDER)
        last = end
    if not pieces:
        return text, False
    pieces.append(text[last:])
    return "".join(pieces), True


def topic_text(question: str, references: Sequence[Reference]) -> str:
    """The text whose model names are topics, not leaks: pass it as ``exempt_text``."""
    return " ".join([question] + [f"{r.paper.title} {r.context}" for r in references])

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
  "GPT-4o mini", "Claude 3.5 Sonnet" or "Qwen3-235B-A22B" is hidden as one unit.
  The terms cover every model and vendor of the catalogue (sciarena/data/models.json;
  tests/test_identity.py generates its leak set from it), plus native-script names
  (通义千问, 深度求索, …), which are matched without word boundaries.
* Words that are ordinary vocabulary are matched only in an unambiguous form:
  "Meta AI", "Alibaba Cloud", "Google DeepMind"/"DeepMind", "ChatGLM" or "GLM" with
  a version ("GLM-4.5", not the generalised linear model), "Perplexity AI" (not the
  metric), "MiniMax" as the company writes it (not the minimax estimator); "xAI",
  "PaLM", "Olmo"/"OLMo" and "o3" are case-sensitive (XAI is explainable AI, palm a
  tree, olmo an elm, O3 ozone); lower-case "llama" and "mistral" in prose are the
  animal and the wind, lower-case "grok" the verb.
* A few names are also common scientific words; they are matched unless the
  nearby words show the other sense: Gemini (the constellation, observatory or
  NASA programme), Llama (camelid antibodies, nanobodies), Mistral (the wind),
  GPT (the liver enzyme), Bard ("the Bard", Shakespeare). Claude, Gemma and Kimi
  followed by a capitalised surname are people (Claude Shannon), not models.
  tests/data/scientific_sentences.txt measures the false positives.
* A term that also occurs in the question or in the retrieved papers is a topic
  of the conversation, not a self-identification, so callers pass that text as
  ``exempt_text`` and such terms are left alone (an answer about GPT-4's
  benchmark results keeps saying GPT-4) — unless the answer speaks about itself
  around the name: a first-person word earlier in the clause ("I'm actually
  Claude", "Me? Claude."), "here"/"speaking" after it ("Claude here:"), or a
  sign-off ("— Claude" at the end of a line). A question cannot switch redaction off.
* A self-introduction ("I am", "I'm", "As", "developed by") also overrides the
  other-sense rules ("I'm GPT-4o; elevated serum ALT…"), and a name with a model
  version ("GPT-4o", "Llama-3.1") is never the enzyme or the animal.
* Vendors whose names are ordinary words (Google, Meta, Alibaba) are hidden only
  right after a self-introduction ("I was trained by Google"), never in "such as
  Google Scholar".

Matching runs on ``text.reading_view``: the text as the reader sees it (Markdown
resolved, so ``G**PT**-4o`` is GPT-4o; HTML character references decoded, so
``&#67;laude`` is Claude; a link's text joined to what follows it; math read as
KaTeX draws it, so ``$\\mathrm{Cla}\\mathrm{ude}$`` is Claude), NFKC-normalised, with
invisible and bidi characters removed, hyphen look-alikes and Cyrillic/Greek
look-alikes folded, letters spelled out with single separators joined.

``Shield`` is the policy a battle applies (arena/runner.py, the only caller while
a battle streams): these rules, and every name the question shares with the
catalogue hidden in both answers until the vote, then the blind reading
(answer/blind.py), which lists no spellings: it reads the result in one canonical
form and hides whole any sentence that still names a model. Matches map back to
spans of the original text, which is what gets replaced. All of it is linear in
the length of the text: repeats in the patterns are bounded.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Iterator, Sequence

from sciarena.answer.blind import Blind
from sciarena.answer.canonical import without_link_titles
from sciarena.answer.names import Names, shipped_names
from sciarena.core.text import View, displayable, locate, reading_view
from sciarena.core.types import Reference

PLACEHOLDER = "[model name hidden]"


@dataclass(frozen=True)
class IdentityTerm:
    """One name to hide, with what tells an unrelated use of the same word apart."""

    word: str
    case_sensitive: bool = False
    avoid_before: frozenset[str] = frozenset()  # the word just before shows another sense
    avoid_near: frozenset[str] = frozenset()  # any of these within a few words shows another sense
    person_name: bool = False  # "Claude Shannon": a capitalised surname follows → a person
    body: str = ""  # a regex for the name itself when ``word`` is not enough (look-alike spellings)
    needs_version: bool = False  # bare word is ordinary vocabulary: "GLM" only as "GLM-4.5"
    self_only: bool = False  # an ordinary word (Google): hidden only where the answer speaks of itself
    cjk: bool = False  # written without spaces: matched without word boundaries
    anchors: tuple[str, ...] = ()  # lower-case strings every match contains (default: the first word)


_ASTRONOMY = frozenset(
    "constellation observatory telescope spacecraft capsule mission missions program programme nasa "
    "zodiac twins castor pollux geminids astronaut astronauts orbit orbital north south imager planet "
    "spectrograph multi-object gmos gpi arcseconds".split()
)
_CAMELID = frozenset(
    "antibody antibodies nanobody nanobodies camelid camelids alpaca alpacas vicuna guanaco "
    "immunized immunised immunising immunizing herd herds wool fiber fibre animal animals livestock vhh milk "
    "cattle population andes bolivia peru".split()
)
_WIND = frozenset("wind winds rhône rhone provence gust gusts meteorological events episodes days intensity "
                  "tramontane genoa mediterranean northerly".split())
_ENZYME = frozenset("serum liver enzyme enzymes transaminase aminotransferase alanine hepatic plasma alt ast got "
                    "u/l".split())
_POET = frozenset("shakespeare avon poet poets poetry celtic welsh bardic".split())

IDENTITY_TERMS: tuple[IdentityTerm, ...] = (
    # OpenAI
    IdentityTerm("ChatGPT"),
    IdentityTerm("GPT", avoid_near=_ENZYME),
    IdentityTerm("OpenAI", body=r"open\s?ai|(?-i:OpenAl)", anchors=("open",)),  # "OpenAl" with a lower-case L looks the same
    IdentityTerm("o-series", case_sensitive=True, body=r"o[1-9](?:-(?:mini|pro|preview))?",
                 anchors=tuple(f"o{d}" for d in "123456789")),
    # Anthropic
    IdentityTerm("Claude", person_name=True),
    IdentityTerm("Anthropic"),
    # Google
    IdentityTerm("Gemini", avoid_before=frozenset({"constellation", "project", "nasa"}), avoid_near=_ASTRONOMY),
    IdentityTerm("Gemma", person_name=True),
    IdentityTerm("Bard", avoid_before=frozenset({"the"}), avoid_near=_POET),
    IdentityTerm("PaLM", case_sensitive=True),
    IdentityTerm("Google DeepMind"),
    IdentityTerm("DeepMind"),
    IdentityTerm("Google AI"),
    IdentityTerm("Google", self_only=True),
    # Meta
    # lower-case "llama" in prose is the animal; the model is "Llama"/"LLaMA" (or lower case in an API id)
    IdentityTerm("Llama", case_sensitive=True, avoid_near=_CAMELID, body=r"Llama|LLaMA|LLAMA|llama(?=[-\s]?\d|/)",
                 anchors=("llama",)),
    IdentityTerm("Meta AI"),
    IdentityTerm("Meta", case_sensitive=True, self_only=True),
    # Mistral AI
    IdentityTerm("Mistral", case_sensitive=True, avoid_near=_WIND,  # "the mistral" is the wind
                 body=r"Mistral|MISTRAL|mistral(?=[-\s]?(?:ai|medium|small|large|\d))", anchors=("mistral",)),
    IdentityTerm("Mixtral"),
    IdentityTerm("Magistral"),
    IdentityTerm("Codestral"),
    # Alibaba
    IdentityTerm("Qwen"),
    IdentityTerm("QwQ"),
    IdentityTerm("Alibaba Cloud"),
    IdentityTerm("Alibaba", self_only=True),
    IdentityTerm("Tongyi"),
    IdentityTerm("DeepSeek"),
    # xAI
    # lower-case "grok" is a verb ("Students grok CRISPR"); the model is "Grok" (or lower case with a version)
    IdentityTerm("Grok", case_sensitive=True, body=r"Grok|GROK|grok(?=[-\s]?\d)", anchors=("grok",)),
    IdentityTerm("xAI", case_sensitive=True),
    # Moonshot AI
    IdentityTerm("Kimi", person_name=True),
    IdentityTerm("Moonshot AI", body=r"moonshot\s?ai", anchors=("moonshot",)),
    # Zhipu AI
    IdentityTerm("ChatGLM"),
    IdentityTerm("GLM", needs_version=True),
    IdentityTerm("Zhipu"),
    IdentityTerm("Z.ai", case_sensitive=True, body=r"Z\.ai", anchors=("z.ai",)),
    # MiniMax: "minimax" is also the decision rule and the estimator, so only the company's spelling
    IdentityTerm("MiniMax", case_sensitive=True, body=r"MiniMax|MINIMAX|minimax(?=-m\d)", anchors=("minimax",)),
    IdentityTerm("Hailuo"),
    # Ai2
    IdentityTerm("Olmo", case_sensitive=True, body=r"O(?i:lmo)", anchors=("olmo",)),  # not "olmo", the elm
    IdentityTerm("Ai2", case_sensitive=True),
    IdentityTerm("AllenAI"),
    IdentityTerm("Allen Institute for AI", anchors=("allen",),
                 body=r"allen\s{1,3}institute\s{1,3}for\s{1,3}(?:ai|artificial\s{1,3}intelligence)"),
    # others
    IdentityTerm("Doubao"),
    IdentityTerm("Hunyuan"),
    IdentityTerm("Ernie Bot"),
    IdentityTerm("Nemotron"),
    IdentityTerm("Perplexity AI"),
    # native-script names (no spaces between words, so no word boundaries)
    IdentityTerm("通义千问", cjk=True),
    IdentityTerm("通义", cjk=True),
    IdentityTerm("千问", cjk=True),
    IdentityTerm("阿里云", cjk=True),
    IdentityTerm("深度求索", cjk=True),
    IdentityTerm("月之暗面", cjk=True),
    IdentityTerm("智谱", cjk=True),
    IdentityTerm("豆包", cjk=True),
    IdentityTerm("文心一言", cjk=True),
    IdentityTerm("混元", cjk=True),
    IdentityTerm("稀宇", cjk=True),
)

# Version numbers and tier names that belong to a model's name ("GPT-4o mini", "Claude 3.5 Sonnet",
# "Qwen3-235B-A22B", "Kimi K2", "DeepSeek-V3.2-Exp"). Every repeat is bounded: the tail is matched in
# constant time wherever a name starts.
_TIERS = (
    "mini|nano|turbo|pro|flash|lite|sonnet|opus|haiku|instant|instruct|chat|coder|max|plus|preview|"
    "thinking|non-reasoning|reasoning|fast|next|oss|exp|beta|medium|small|large|scout|maverick|vision|"
    "latest|ai|tput|fp8"
)
_VERSION = r"[a-z]{0,2}\d{1,8}(?:\.\d{1,4}){0,3}[a-z]{0,3}"
_TAIL = rf"(?:[ \-]?(?:{_VERSION}|(?:{_TIERS}))(?![a-z\d])){{0,8}}"
_STRONG_TAIL = re.compile(rf"\d\.\d|-[a-z]{{0,2}}\d|^[a-z]{{0,2}}\d|\b(?:{_TIERS})\b", re.IGNORECASE)
_WORD = re.compile(r"[\w/'’-]+")
_NEAR = 4  # words either side inspected for another sense of an ambiguous name


def _term_body(term: IdentityTerm) -> str:
    return term.body or r"\s{1,3}".join(re.escape(part) for part in term.word.split())


@functools.cache  # each pattern takes a few ms to compile and re's own cache evicts them under load
def _pattern(term: IdentityTerm) -> re.Pattern[str]:
    flags = 0 if term.case_sensitive else re.IGNORECASE
    if term.cjk:
        return re.compile(f"(?P<name>{re.escape(term.word)})")
    # Word boundaries, where CJK characters count as boundaries (我是Claude。): "Jean-Claude" is a person.
    before = r"(?<![^\W\u3000-\u9fff\uff00-\uffef])" + (r"(?<!-)" if term.person_name else "")
    version = r"(?=[ \-]?\d)" if term.needs_version else ""
    return re.compile(rf"{before}(?P<name>{_term_body(term)}){version}(?i:{_TAIL})(?![^\W\u3000-\u9fff])", flags)


def _anchors(term: IdentityTerm) -> tuple[str, ...]:
    if term.anchors:
        return term.anchors
    if term.body:
        raise ValueError(f"identity term {term.word!r} has a regex body and needs explicit anchors")
    return (term.word.split()[0].lower(),)


def _matches(view: View) -> Iterator[tuple[int, int, IdentityTerm]]:
    """(start, end, term) in the view for each identity mention, left to right, without overlaps."""
    text = view.text
    lower = text.lower()
    found: list[tuple[int, int, IdentityTerm]] = []
    for term in IDENTITY_TERMS:
        if not any(anchor in lower for anchor in _anchors(term)):  # a substring test: much cheaper than the regex
            continue
        for m in _pattern(term).finditer(text):
            if term.self_only and not _introduces_itself(text, m.start()):
                continue  # "trained by Google", never "I searched Google Scholar"
            tail = text[m.end("name") : m.end()]
            if (term.avoid_before or term.avoid_near or term.person_name) and _other_sense(text, m, term, tail):
                continue
            found.append((m.start(), m.end(), term))
    # Longest first at each start, then drop mentions inside an earlier one ("Google DeepMind" vs "DeepMind").
    found.sort(key=lambda f: (f[0], -(f[1] - f[0])))
    end = -1
    for start, stop, term in found:
        if start >= end:
            yield start, stop, term
            end = stop


def _other_sense(text: str, m: re.Match[str], term: IdentityTerm, tail: str) -> bool:
    start, end = m.start(), m.end()
    if _introduces_itself(text, start):
        return False  # "I'm GPT-4o; elevated serum ALT…": the answer names itself
    if term.person_name:
        nxt = re.match(r"\s{1,3}([^\W\d_][\w'’-]{0,40})", text[end : end + 60])
        if nxt and nxt.group(1)[0].isupper() and not any(c.isdigit() for c in nxt.group(1)):
            return True
    if _STRONG_TAIL.search(tail):
        return False  # "GPT-4o", "Llama-3.1": a model's version, not the enzyme or the animal
    before = [w.lower() for w in _WORD.findall(text[max(0, start - 80) : start])]
    after = [w.lower() for w in _WORD.findall(text[end : end + 80])]
    if term.avoid_before and before and before[-1] in term.avoid_before:
        return True
    return bool(term.avoid_near and term.avoid_near & set(before[-_NEAR:] + after[:_NEAR]))


# A name right after one of these is the answer introducing itself ("As GPT-4, I…", "I am indeed Claude",
# "developed by OpenAI", "我是通义千问").
_INTRODUCTION = re.compile(
    r"(?:\bi\s{1,3}am|\bi['’]m|\bim|(?<!such\s)(?<!well\s)\bas|\bmy\s{1,3}name\s{1,3}is|"
    r"\b(?:developed|created|trained|made|built|designed|provided|powered|released|generated|written|answered|"
    r"brought\s{1,3}to\s{1,3}you)\s{1,3}by|\bgreetings\s{1,3}from|\b(?:your|yours)\s{1,3}(?:friendly|truly|humble)|"
    r"\bsigned[,:]?|我是|我叫|本模型是|由)"
    r"\s{0,3}(?:(?:actually|indeed|really|in\s{1,3}fact|just|simply|literally|definitely|truly|proudly|"
    r"called|known\s{1,3}as|named)[\s,]{1,3})?(?:an?\s{1,3}|the\s{1,3})?(?:ai\s{1,3}|(?:large\s{1,3})?language\s{1,3})?"
    r"(?:model\s{1,3}|assistant\s{1,3})?$",
    re.IGNORECASE,
)
# First-person words earlier in the same clause, or "this answer/model": the answer speaks of itself.
_FIRST_PERSON = re.compile(
    r"(?-i:\bI\b)(?![.\-])|\b(?:i['’]m|i['’]ve|i['’]d|me|my|myself|mine|yours\s{1,3}truly|"
    r"this\s{1,3}(?:model|assistant|answer|response|reply|ai))\b|我|本模型",  # "I", not "i.e." or "Type I-error"
    re.IGNORECASE,
)
_CLAUSE_END = re.compile(r"[.!;\n。！；]")
_AFTER_SELF = re.compile(
    r"\s{0,3}(?:here\b|speaking\b|says\b|said\b|writes\b|answers\b|replies\b|responds\b|['’]s\s{1,3}(?:answer|"
    r"response|reply|take|view|opinion)\b|at\s+your\s+service|,?\s{0,3}(?:an?|your|the)\s+(?:ai|assistant|language\s+model|"
    r"chatbot)\b|\(?that['’]?s\s+me|:\s)",
    re.IGNORECASE,
)
_UNDECIDED_CHARS = 24  # enough for "(Beta) here, an AI assistant"
_SUFFIX = re.compile(r"(?:[ \t]?\([^()\n]{0,24}\)|-\w{1,12}){0,3}")
_SIGN_OFF_BEFORE = re.compile(
    r"(?:^|\n)[ \t]{0,3}(?:[-—–~]{1,2}[ \t]{0,3}|(?:best|regards|cheers|sincerely|thanks|yours|signed)[^\n]{0,20}"
    r"[,:]?[ \t]{0,3}\n?[ \t]{0,3})$",
    re.IGNORECASE,
)


def _introduces_itself(text: str, start: int) -> bool:
    return bool(_INTRODUCTION.search(text[max(0, start - 60) : start]))


def _speaks_of_itself(text: str, start: int, end: int, partial: bool = False) -> bool:
    """Whether the answer refers to itself around a mention: introduction, first person earlier in the
    clause, "Claude here", or a sign-off line ("— Claude"). In a ``partial`` (still streaming) text, a
    mention near the end is undecided — " here" may be in the next chunk — and counts as one."""
    if partial and len(text) - end < _UNDECIDED_CHARS:
        return True
    if _introduces_itself(text, start):
        return True
    window = text[max(0, start - 80) : start]
    clause = window[max((m.end() for m in _CLAUSE_END.finditer(window)), default=0) :]
    if _FIRST_PERSON.search(clause):
        return True
    end = _SUFFIX.match(text, end).end()  # "Grok3 (Beta) here", "— Kimi K2 (0905)"
    if _AFTER_SELF.match(text, end):
        return True
    line_end = text.find("\n", end)
    rest = text[end : line_end if line_end >= 0 else len(text)]
    return not rest.strip(" \t.!") and bool(_SIGN_OFF_BEFORE.search(text[max(0, start - 40) : start]))


@functools.lru_cache(maxsize=64)  # the same question and papers are checked again for every streamed chunk
def _topic_view(exempt_text: str) -> str:
    return reading_view(exempt_text).text


def _exempt_terms(terms: set[IdentityTerm], exempt_text: str) -> set[IdentityTerm]:
    # Only the terms the answer uses are looked up, so long paper contexts cost a few searches.
    if not exempt_text or not terms:
        return set()
    topic = _topic_view(exempt_text)
    return {term for term in terms if not term.self_only and _pattern(term).search(topic)}


def _mentions(text: str, exempt_text: str, partial: bool = False) -> tuple[View, list[tuple[int, int]]]:
    """The view of ``text`` and the view spans to hide."""
    view = reading_view(text)
    found = list(_matches(view))
    exempt = _exempt_terms({term for _, _, term in found}, exempt_text)
    return view, [(s, e) for s, e, term in found
                  if term not in exempt or _speaks_of_itself(view.text, s, e, partial)]


def find_identity_mentions(text: str, exempt_text: str = "") -> list[str]:
    """The model/vendor mentions in ``text``, in order, as written.

    Terms that also occur in ``exempt_text`` (the question, the papers) are topics, not leaks, and are
    skipped — unless the answer uses them about itself ("As GPT-4, …", "Claude here:").
    """
    view, spans = _mentions(text, exempt_text)
    return [text[a:b] for a, b in (view.span(s, e) for s, e in spans)]


def redact_identity(text: str, exempt_text: str = "", *, partial: bool = False) -> tuple[str, bool]:
    """Replace each mention by "[model name hidden]"; returns (text, whether anything was replaced).

    ``partial``: the text is still streaming, so a topic name near its end is hidden until the text after
    it shows that the answer is not naming itself ("Claude" … " here:" arrives in the next chunk).
    The returned text is also safe to display (text.displayable): no lone surrogates, no bidi controls.
    """
    view, spans = _mentions(text, exempt_text, partial)
    return _replace(text, view, spans), bool(spans)


@dataclass(frozen=True)
class Shown:
    """One answer under the anonymity policy."""

    text: str  # what the page shows before the vote
    full: str  # what is stored and shown with the reveal: self-identifications still hidden, topic names back
    redacted: bool  # a self-identification was hidden (in both texts)
    masked: bool  # a name the question shares with the catalogue was hidden until the vote


class Shield:
    """The anonymity policy for one battle, applied to its streamed snapshots and its final answers alike.

    Before the vote an answer never shows a catalogue model's or vendor's name as its author or speaker
    (``redact_identity``'s rules, with the question and papers as topics). And when the question itself names
    models, every name it shares with the catalogue is hidden in both answers until the vote, whatever the
    sentence around it: a topic name beside "'s answer:", "says" or a signature is the pattern list's blind
    spot, and the voter gains nothing by seeing which model an answer prefers to talk about. The reveal
    shows ``Shown.full``; the vote record says which answers were masked."""

    def __init__(self, question: str, references: Sequence[Reference] = (), *, names: Names | None = None,
                 second_reading: bool = True) -> None:
        self._exempt = topic_text(question, references)
        asked = reading_view(question).text
        self._asked = frozenset(t for t in IDENTITY_TERMS if not t.self_only and any(
            anchor in asked.lower() for anchor in _anchors(t)) and _pattern(t).search(asked))
        # The blind reading (answer/blind.py) reads what these rules left; ``second_reading=False`` is today's
        # precise redactor alone, which tests use to show what the second reading adds.
        self._blind = Blind(names or shipped_names(), self._exempt) if second_reading else None

    def show(self, text: str, *, partial: bool = False) -> Shown:
        """``text`` as shown before and after the vote; ``partial`` as for ``redact_identity``."""
        text = without_link_titles(text)
        view = reading_view(text)
        found = list(_matches(view))
        exempt = _exempt_terms({term for _, _, term in found}, self._exempt)
        own = [(s, e) for s, e, term in found if term not in exempt or _speaks_of_itself(view.text, s, e, partial)]
        asked = [(s, e) for s, e, term in found if term in self._asked and (s, e) not in own]
        shown, full = _replace(text, view, sorted(own + asked)), _replace(text, view, own)
        hidden = 0
        if self._blind is not None:
            before = self._blind.hide(shown, partial=partial)
            full = before.text if full == shown else self._blind.hide(full, partial=partial).text
            shown, hidden = before.text, before.hidden
        return Shown(text=shown, full=full, redacted=bool(own) or hidden > 0, masked=bool(asked))


def _replace(text: str, view: View, spans: list[tuple[int, int]]) -> str:
    """``text`` with each view span replaced by the placeholder, displayable (text.displayable)."""
    pieces: list[str] = []
    last = 0
    for s, e in spans:
        start, end = locate(view, s, e)
        if start < last:
            continue
        pieces += [text[last:start], PLACEHOLDER]
        last = end
    pieces.append(text[last:])
    return displayable("".join(pieces))


def topic_text(question: str, references: Sequence[Reference]) -> str:
    """The text whose model names are topics, not leaks: pass it as ``exempt_text``."""
    return " ".join([question] + [f"{r.paper.title} {r.context}" for r in references])

"""Postprocessing: a contestant's raw output → the anonymous, [n]-cited Markdown voters see.

``clean_answer`` applies the rule-based passes in this order:

1. ``text.scrub`` — lone surrogates become U+FFFD, so the answer can be stored and sent;
2. ``strip_reasoning`` — a reasoning model's thought process is never shown (the paper removes
   it before display);
3. ``strip_html`` — raw HTML tags go; the model's Markdown (headings, lists, tables, code) stays, so
   the streamed and the final answer look the same;
4. ``normalise_citations`` — every citation becomes its own "[n]" with n in the reference list;
   "Lee et al. [4] found X [4]." keeps only the citation at the sentence's end;
5. whitespace tidying outside code blocks.

The anonymity policy is not applied here: arena/runner.py applies ``redact.Shield`` to every snapshot and
every final answer, in one place, so what is streamed and what is stored follow the same rules.

Every pass is linear in the length of the text: a model can stream a 200 kB unbroken run (DNA, base64,
one repeated character) and cleaning it must not stall the process, since the regex engine holds the
interpreter lock. Patterns here are anchored at word or run starts and their repeats are bounded;
tests/test_postprocess.py checks the growth with long runs of every character class.

The optional LLM editor (prompting.build_postprocess_messages) is checked with
``parse_llm_rewrite`` and ``accept_llm_rewrite``; its output then goes through
``clean_answer`` like any other text. Nothing here emits HTML.
"""

from __future__ import annotations

import json
import re
import unicodedata
from bisect import bisect_right
from collections import Counter
from typing import Sequence

from sciarena.answer.citations import cited_numbers, sentence_spans
from sciarena.core.errors import MalformedOutput
from sciarena.core.text import HTML_TAG, displayable, plain_text, scrub
from sciarena.core.types import Answer, Reference

# ---------------------------------------------------------------- reasoning

_OPEN_TAGS = ("<think>", "<thinking>")
_CLOSE_TAGS = ("</think>", "</thinking>")
_TAG = re.compile(r"<(/?)(think|thinking)>", re.IGNORECASE)
_CLOSE = re.compile(r"</(?:think|thinking)>", re.IGNORECASE)
_OPEN = re.compile(r"<(?:think|thinking)>", re.IGNORECASE)


def strip_reasoning(text: str) -> str:
    """Remove <think>…</think> blocks, an unterminated <think> and everything after it, and
    everything before a stray </think> (chat templates that pre-fill the opening tag).

    A block opened by <think> ends at the next </think> (a </thinking> inside it is reasoning too),
    as the lazy ``<think>.*?</think>`` reads it; here one scan over the tags finds the blocks, without
    that pattern's rescans to the end of the text from every unclosed tag (quadratic on "<think>" × n).
    """
    tags = list(_TAG.finditer(text))
    closes: dict[str, list[int]] = {"think": [], "thinking": []}
    for i, m in enumerate(tags):
        if m.group(1):
            closes[m.group(2).lower()].append(i)
    kept: list[str] = []
    pos = 0
    for i, m in enumerate(tags):
        if m.group(1) or m.start() < pos:
            continue
        later = closes[m.group(2).lower()]
        j = bisect_right(later, i)
        if j < len(later):  # this opening tag has a closing one: the block goes
            kept.append(text[pos : m.start()])
            pos = tags[later[j]].end()
    kept.append(text[pos:])
    text = "".join(kept)
    last_close = None
    for last_close in _CLOSE.finditer(text):
        pass
    if last_close is not None:
        text = text[last_close.end() :]
    opening = _OPEN.search(text)
    if opening:
        text = text[: opening.start()]
    return text.strip()


class ReasoningFilter:
    """Streaming counterpart of strip_reasoning: ``feed`` each delta, show what it returns.

    Tags may be split across deltas (even one character at a time): a tail that could be
    the start of a tag is held back until the next delta decides. Text before a stray
    </think> may already have been shown; the final clean_answer text is authoritative.
    """

    def __init__(self) -> None:
        self._pending = ""
        self._inside = False
        self._started = False

    def feed(self, delta: str) -> str:
        """Add a piece of raw output; return the part of it that may be displayed now."""
        self._pending += delta
        shown: list[str] = []
        while True:
            lower = self._pending.lower()
            tags = _CLOSE_TAGS if self._inside else _OPEN_TAGS + _CLOSE_TAGS
            index, tag = _first_tag(lower, tags)
            if index < 0:
                keep = _partial_tag_tail(lower, tags)
                cut = len(self._pending) - keep
                if not self._inside:
                    shown.append(self._pending[:cut])
                self._pending = self._pending[cut:]
                break
            if not self._inside:
                shown.append(self._pending[:index])
            self._inside = tag in _OPEN_TAGS
            self._pending = self._pending[index + len(tag) :]
        return self._visible("".join(shown))

    def finish(self) -> str:
        """End of stream: release held-back text (an unterminated reasoning block is dropped)."""
        rest, self._pending = self._pending, ""
        return "" if self._inside else self._visible(rest)

    def _visible(self, text: str) -> str:
        if not self._started:
            text = text.lstrip()  # whitespace left behind by a leading reasoning block
            self._started = bool(text)
        return text


def _first_tag(lower: str, tags: Sequence[str]) -> tuple[int, str]:
    hits = [(lower.find(t), t) for t in tags if t in lower]
    return min(hits) if hits else (-1, "")


def _partial_tag_tail(lower: str, tags: Sequence[str]) -> int:
    longest = max(len(t) for t in tags)
    for size in range(min(len(lower), longest - 1), 0, -1):
        if any(t.startswith(lower[-size:]) for t in tags):
            return size
    return 0


# ---------------------------------------------------------------- markdown and HTML

# The arena renders Markdown, never a model's HTML (text.HTML_TAG lists the tags removed). Bare <br>,
# <sub> and <sup> stay: the page renders them (table line breaks, H<sub>2</sub>O), and Markdown has no
# other way to write them. Inline code shows its tags literally, so it stays too.
_HTML_TAG = re.compile(rf"(?P<keep></?(?i:br|sub|sup)\s{{0,3}}/?>|`[^`\n]{{1,500}}`)|{HTML_TAG}")
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")


def strip_html(text: str) -> str:
    """Remove raw HTML tags outside code (bare <br>, <sub>, <sup> aside); Markdown and the text between
    tags stay."""
    lines: list[str] = []
    in_fence = False
    for line in text.split("\n"):
        if _FENCE.match(line):
            in_fence = not in_fence
        elif not in_fence:
            line = _HTML_TAG.sub(lambda m: m.group("keep") or "", line)
        lines.append(line)
    return "\n".join(lines)


def strip_markdown(text: str) -> str:
    """The text a reader sees once the Markdown is rendered: emphasis and code markers, HTML tags and
    link targets gone, every other character kept. Used to compare texts, never to build the answer."""
    return plain_text(text)


# ---------------------------------------------------------------- citations

# Repeats are bounded and patterns start only where a run starts (the look-behinds), so a long run of
# spaces, letters or brackets is scanned once, not once per position.
_SP = r"[ \t]{0,3}"
_ITEM = rf"\d{{1,4}}(?:{_SP}[-–—]{_SP}\d{{1,4}})?"
_ITEMS = rf"{_ITEM}(?:{_SP}[,;]{_SP}{_ITEM}){{0,50}}"
# "(1)" is deliberately not a citation form: it is far more often an enumeration or an equation label.
_NUMERIC = re.compile(
    rf"(?<![ \t])(?P<pre>[ \t]*)(?:\[{_SP}\^?{_SP}(?P<a>{_ITEMS}){_SP}\]|【{_SP}(?P<b>{_ITEMS}){_SP}】)(?!\()"
)
_CITE_WITH_SPACE = re.compile(r"(?<![ \t])[ \t]*(\[\d{1,4}\])")
_NAME = r"(?<![\w'’-])[^\W\d_][\w'’-]{0,39}"  # a word start, and no surname is longer than 40 letters
_YEAR = r"(?P<year>(?:19|20)\d{2})(?P<suffix>[a-z])?"
_PART = re.compile(
    rf"^(?:(?:e\.g\.|i\.e\.|see also|see|cf\.)[,\s]{{0,3}})?(?:{_NAME}\s{{1,3}}){{0,3}}?(?P<last>{_NAME})"
    rf"(?:\s{{1,3}}et\s{{1,3}}al\.?|\s{{1,3}}(?:and|&)\s{{1,3}}(?:{_NAME}\s{{1,3}}){{0,2}}?{_NAME})?,?\s{{1,3}}{_YEAR}$"
)
_PAREN = re.compile(r"\(([^()\n]{4,300})\)")
_NARRATIVE = re.compile(
    rf"(?P<name>(?P<last>{_NAME})(?:\s{{1,3}}et\s{{1,3}}al\.?|\s{{1,3}}(?:and|&)\s{{1,3}}{_NAME})?)\s{{1,3}}\({_YEAR}\)"
)


def normalise_citations(text: str, n_refs: int, references: Sequence[Reference] = ()) -> str:
    """Rewrite citations as one "[n]" per paper and drop numbers outside 1..n_refs.

    Numeric forms: [1], [1,2], [1; 2], [1-3], [1–3], [1][2], [^1], 【1】. With ``references``, also
    author-year forms that match a reference's first-author surname and year: "(Lee et al., 2020)",
    "(Lee and Park, 2019; Kim, 2021)", "Lee et al. (2020)". "[0, 1]" is read as an interval, not a
    citation, and unmatched author-year citations are left as written.
    """
    valid = range(1, n_refs + 1)
    if references:
        text = _author_year(text, references)
    text = _REPEATED.sub(r"\1", text)  # first, so a run of one citation is one match below, not thousands
    text = _NUMERIC.sub(lambda m: _numeric(m, valid), text)
    text = re.sub(r"(\[\d{1,4}\])[ \t]+(?=\[\d)", r"\1", text)
    text = _REPEATED.sub(r"\1", text)
    surnames = {_fold(_last_token(r.paper.authors[0])) for r in references if r.paper.authors}
    return _one_citation_per_sentence(text, surnames)


_REPEATED = re.compile(r"(\[\d{1,4}\])\1+")


def _numeric(match: re.Match[str], valid: range) -> str:
    body = match.group("a") or match.group("b")
    if body.isdigit():  # the common "[n]": no list or range to read
        return match.group("pre") + f"[{int(body)}]" if int(body) in valid else ""
    items = [p.strip() for p in re.split(r"[,;]", body)]
    if len(items) == 2 and items[0] == "0":
        return match.group(0)  # "[0, 1]": a numeric interval
    numbers: list[int] = []
    for item in items:
        ends = [int(x) for x in re.split(r"\s*[-–—]\s*", item)]
        low, high = min(ends), max(ends)
        if high - low <= max(len(valid), 1):  # a huge "range" is not a citation list
            numbers.extend(n for n in range(low, high + 1) if n in valid and n not in numbers)
    if not numbers:
        return ""  # drops the preceding spaces too, so "claim [99]." becomes "claim."
    return match.group("pre") + "".join(f"[{n}]" for n in numbers)


def _author_year(text: str, references: Sequence[Reference]) -> str:
    index = [(r.number, _fold(_last_token(r.paper.authors[0])), r.paper.year)
             for r in sorted(references, key=lambda r: r.number) if r.paper.authors and r.paper.year]

    def lookup(last: str, year: str, suffix: str | None) -> int | None:
        hits = [n for n, surname, y in index if surname == _fold(last) and y == int(year)]
        if len(hits) == 1:
            return hits[0]
        if suffix and ord(suffix) - ord("a") < len(hits):
            return hits[ord(suffix) - ord("a")]  # "2023a", "2023b": the disambiguation order of the list
        return None

    def paren(match: re.Match[str]) -> str:
        parts = [p.strip() for p in match.group(1).split(";")]
        parsed = [_PART.match(p) for p in parts]
        if not all(parsed):
            return match.group(0)
        found, kept = [], []
        for part, m in zip(parts, parsed, strict=True):
            n = lookup(m.group("last"), m.group("year"), m.group("suffix"))  # type: ignore[union-attr]
            if n:
                found.append(f"[{n}]")
            else:
                kept.append(part)
        if not found:
            return match.group(0)
        return (f"({'; '.join(kept)}) " if kept else "") + "".join(found)

    def narrative(match: re.Match[str]) -> str:
        n = lookup(match.group("last"), match.group("year"), match.group("suffix"))
        return f"{match.group('name')} [{n}]" if n else match.group(0)

    return _NARRATIVE.sub(narrative, _PAREN.sub(paren, text))


def _one_citation_per_sentence(text: str, surnames: set[str]) -> str:
    # "Lee et al. [4] found X [4]." → "Lee et al. found X [4].": a citation right after an author's
    # name is dropped when the sentence cites the same paper again at its end. Other repeats are
    # left alone: they may tie different clauses to the same paper.
    out: list[str] = []
    for start, end in sentence_spans(text):
        sentence = text[start:end]
        seen: set[str] = set()
        dropped: list[tuple[int, int]] = []
        for m in reversed(list(_CITE_WITH_SPACE.finditer(sentence))):
            words = sentence[max(0, m.start() - 40) : m.start()].split()
            after_name = bool(words) and (words[-1] == "al." or _fold(words[-1]) in surnames)
            if m.group(1) in seen and after_name:
                dropped.append((m.start(), m.end()))
            seen.add(m.group(1))
        last = 0
        for cut_start, cut_end in reversed(dropped):  # pieces, not repeated slicing: linear in the sentence
            out.append(sentence[last:cut_start])
            last = cut_end
        out.append(sentence[last:])
    return "".join(out)


def _last_token(name: str) -> str:
    return name.strip().split()[-1] if name.strip() else ""


def _fold(word: str) -> str:
    decomposed = unicodedata.normalize("NFKD", word)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


# ---------------------------------------------------------------- whole answers

def clean_answer(raw: str, references: Sequence[Reference], question: str = "") -> Answer:
    """Apply every rule-based pass to a contestant's raw output.

    Raises errors.MalformedOutput when nothing is left once reasoning and whitespace are removed.
    ``question`` is accepted for callers that pass it; the anonymity policy runs in the battle runner.
    """
    text = strip_reasoning(scrub(raw))
    if not text:
        raise MalformedOutput("The model returned no answer text, only reasoning or whitespace.")
    text = strip_html(text)
    n_refs = max((r.number for r in references), default=0)
    text = normalise_citations(text, n_refs, references)
    text = _tidy_whitespace(displayable(text))
    if not text:
        raise MalformedOutput("The model's answer was empty after cleaning.")
    return Answer(text=text, raw_text=raw, cited=cited_numbers(text))


def _tidy_whitespace(text: str) -> str:
    """Collapse runs of spaces and drop spaces before punctuation, outside code blocks; keep each line's
    indentation (nested lists, code) and Markdown's structure; at most one blank line in a row."""
    lines: list[str] = []
    in_fence = False
    for line in text.splitlines():
        if _FENCE.match(line):
            in_fence = not in_fence
        if in_fence:
            lines.append(line.rstrip())
            continue
        body = line.lstrip(" \t")
        indent = line[: len(line) - len(body)]
        body = _SPACE_BEFORE_PUNCT.sub(r"\1", _SPACES.sub(" ", body)).rstrip()
        lines.append(indent + body if body else "")
    return _BLANK_LINES.sub("\n\n", "\n".join(lines)).strip()


_SPACES = re.compile(r"[ \t]+")
_SPACE_BEFORE_PUNCT = re.compile(r"(?<! ) ([.,;:!?])(?![\[\w])")  # runs are single spaces by now; "![" is an image
_BLANK_LINES = re.compile(r"\n{3,}")

def parse_llm_rewrite(raw: str) -> tuple[tuple[int, ...], str]:
    """Read the LLM editor's JSON reply → (cited reference numbers, edited text).

    Tolerates a code fence or chatter around the object; raises errors.MalformedOutput otherwise.
    """
    text = strip_reasoning(raw)
    start, end = text.find("{"), text.rfind("}")
    try:
        data = json.loads(text[start : end + 1]) if 0 <= start < end else None
    except json.JSONDecodeError:
        data = None
    if not isinstance(data, dict) or not isinstance(data.get("response"), str):
        raise MalformedOutput("The postprocessor did not return a JSON object with a text response.")
    refs = data.get("references", [])
    numbers = tuple(int(n) for n in refs if isinstance(n, (int, str)) and str(n).strip().isdigit()) \
        if isinstance(refs, list) else ()
    return numbers, data["response"]


def accept_llm_rewrite(original: str, rewritten: str, min_ratio: float = 0.8) -> bool:
    """Whether an LLM rewrite kept the content: similar length and most of the original words.

    Markup and citation marks are ignored on both sides, since removing them is the rewrite's job.
    """
    if not 0.0 < min_ratio <= 1.0:
        raise ValueError(f"min_ratio must be in (0, 1], got {min_ratio}")
    before, after = _content_words(original), _content_words(rewritten)
    if not after:
        return False
    if not before:
        return True
    ratio = sum(len(w) for w in after) / sum(len(w) for w in before)
    kept = sum((Counter(before) & Counter(after)).values()) / len(before)
    return min_ratio <= ratio <= 1.0 / min_ratio and kept >= min_ratio


def _content_words(text: str) -> list[str]:
    plain = _NUMERIC.sub(" ", plain_text(strip_reasoning(text)))
    return re.findall(r"\w+", plain.casefold())

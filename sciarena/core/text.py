"""Unicode hygiene for every text that enters the arena, and the "as the reader sees it" view used for matching.

Two jobs, both linear in the length of the text:

* ``scrub`` / ``scrub_value`` make any string safe to store and send: lone surrogates (JSON can carry
  ``"\\ud800"``; UTF-8 cannot) become U+FFFD, a valid surrogate pair becomes its character.
  ``displayable`` also drops the bidirectional controls that can make shown text read differently
  from what it is.
* ``reading_view`` is the text a reader would recognise, for *matching only*: Markdown emphasis and code
  markers, HTML tags and link targets removed; invisible characters (zero-width, soft hyphen, bidi
  controls) removed; a right-to-left override undone; NFKC (fullwidth ＧＰＴ → GPT) and Cyrillic/Greek
  look-alikes folded to Latin; letters spelled out with spaces ("G P T") joined. Every character of the
  view remembers where it came from, so a match in the view maps back to a span of the original.
"""

from __future__ import annotations

import functools
import html
import re
import unicodedata
from bisect import bisect_right
from dataclasses import dataclass
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")
_BIDI_CONTROLS = re.compile("[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]")
_RLO, _PDF, _PDI = "\u202e", "\u202c", "\u2069"


def scrub(text: str) -> str:
    """``text`` with lone surrogates replaced by U+FFFD (pairs are joined), so it encodes as UTF-8."""
    if not _SURROGATE.search(text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def scrub_value(value: Any) -> Any:
    """``scrub`` applied to every string inside a JSON-like value (dict keys included)."""
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, dict):
        return {scrub_value(k): scrub_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(scrub_value(v) for v in value)
    return value


def displayable(text: str) -> str:
    """``scrub`` plus no bidirectional controls: what is shown reads in the order it is stored."""
    return _BIDI_CONTROLS.sub("", scrub(text))


# Control characters (C0 but tab and newline, DEL, C1) and every bidirectional control and override.
_UNPRINTABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]")


def storable_text(text: str) -> str:
    """Free text a visitor typed, as it is stored: ``scrub`` and no control characters (NUL, ESC, …) or
    bidirectional overrides, which would make a stored reason read differently from what it is or break
    the tools that read the votes. Tabs and line breaks stay (a carriage return goes: \n is the break)."""
    return _UNPRINTABLE.sub("", scrub(text))


# Cyrillic and Greek letters drawn like Latin ones (the Unicode confusables that matter for names).
_CONFUSABLES = str.maketrans(
    "АВСЕНІЈКМОРЅТХУаеіјорсѕухԁһӏ"  # Cyrillic
    "ΑΒΕΖΗΙΚΜΝΟΡΤΥΧοι",  # Greek (lower-case only where unambiguous in a name)
    "ABCEHIJKMOPSTXYaeijopcsyxdhl"
    "ABEZHIKMNOPTYXoi",
)
# Hyphens and dashes drawn like "-" (NFKC leaves U+2010–U+2015 and the minus sign U+2212 alone): GPT‑4o.
_DASHES = str.maketrans({c: "-" for c in "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe63\uff0d"})
# Formatting and embedding tags a model may emit (unknown ones such as "<Claude>" are shown as text, so
# they stay). The attribute part is bounded: "<b" followed by a long run costs a bounded look-ahead.
HTML_TAG = (
    r"(?i:</?(?:b|i|u|s|em|strong|p|div|span|font|sup|sub|small|big|mark|code|pre|kbd|a|ul|ol|li|dl|dt|dd|"
    r"h[1-6]|table|thead|tbody|tfoot|tr|td|th|caption|blockquote|hr|img|figure|figcaption|center|"
    r"details|summary|section|article|header|footer|nav|main|aside|script|style|iframe|object|embed|"
    r"form|input|button|select|option|textarea|svg|math|link|meta|base|html|head|body|title)"
    r"\b[^<>]{0,300}>)"
)
# Characters the view handles one by one: anything outside ASCII except CJK ideographs (NFKC leaves those
# alone, and they make up whole answers in Chinese), Markdown markers, tags, link targets, spaced letters.
# Every repeat is bounded, so each position is looked at a bounded number of times (a run of "$", "\\(" or
# "&#" costs a bounded look-ahead from each, never a rescan to the end).
_SPECIAL = re.compile(
    r"(?P<rlo>\u202e[^\u202c\u2069\n]{0,500})"
    rf"|(?P<tag>{HTML_TAG})"
    # an HTML character reference: the browser shows the character (&#67;laude is Claude)
    r"|(?P<entity>&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});)"
    r"|(?P<target>\]\([^()\s]{0,500}\))"
    # "[Cla][x]ude" with a "[x]: …" line, or "[Cla]ude": the link's text runs on into the letters after it
    r"|(?P<joined>(?<=[^\W\d_])\](?:\[[^\[\]\n]{0,100}\])?(?=[^\W\d_]))"
    # inline and display math: KaTeX draws the letters without the spaces or the commands around them
    r"|(?P<math>\$\$[^$]{1,400}\$\$|\$[^$\n]{1,200}\$|\\\((?:[^\\\n]|\\(?!\))){1,200}\\\)"
    r"|\\\[(?:[^\\]|\\(?!\])){1,400}\\\])"
    r"|(?P<marks>[*_~`]+)"
    # letters spelled out with single separators: "G P T", "C.l.a.u.d.e", "G-P-T", "C·l·a·u·d·e"
    r"|(?P<spaced>(?<![^\W_])(?:[A-Za-z][ .\-·•/|:,;+'’\u2010-\u2015\u2212\ufe63\uff0d](?=[A-Za-z])){2,64}"
    r"[A-Za-z](?![^\W_]))"
    r"|(?P<other>[^\x00-\x7f\u4e00-\u9fff]+)"
)
# Inside math: commands (\mathrm, \text, \alpha …), braces, sub/superscript marks and spaces draw nothing
# of themselves; letters, digits and the hyphen/dot of a version ("GPT-4.1") are what the reader sees.
_MATH_INVISIBLE = re.compile(r"\\[A-Za-z]{1,30}\*?|\\.|[{}^_\s$]|\\$")


@dataclass(frozen=True)
class View:
    """A matching view of ``source``: ``text`` and, per character of it, its index in ``source``."""

    source: str
    text: str
    origin: tuple[int, ...]
    wholes: tuple[tuple[int, int], ...] = ()  # source spans replaced whole when a match falls inside (math)

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The span of ``source`` that view characters ``start:end`` came from (``end > start``)."""
        part = self.origin[start:end]  # min/max: a right-to-left override stores its characters reversed
        return min(part), max(part) + 1


def reading_view(text: str, fold: bool = True) -> View:
    """The text as a reader sees it, folded for matching (see the module docstring). Linear time.

    ``fold=False`` only resolves the Markup (markers, tags, link targets) and keeps every other character.
    """
    out: list[str] = []
    origin: list[int] = []
    wholes: list[tuple[int, int]] = []
    last = 0
    for m in _SPECIAL.finditer(text):
        out.append(text[last : m.start()])
        origin.extend(range(last, m.start()))
        kind, start = m.lastgroup, m.start()
        if not fold and kind in ("rlo", "spaced", "other", "entity", "math", "joined"):
            out.append(m.group())
            origin.extend(range(start, m.end()))
        elif kind == "rlo":  # shown right to left: the reader sees the reversed string
            for i in range(m.end() - 1, start, -1):
                _emit(text[i], i, out, origin)
        elif kind == "spaced":  # "G P T" reads as GPT
            for i in range(start, m.end(), 2):
                out.append(text[i])
                origin.append(i)
        elif kind == "entity":  # one character (or none) where the reference stood
            for char in html.unescape(m.group()):
                _emit(char, start, out, origin)
        elif kind == "math":
            _emit_math(text, start, m.end(), out, origin)
            wholes.append((start, m.end()))
        elif kind == "marks" and _stands_alone(text, start, m.end()):
            out.append(m.group())  # "3 * 4" is arithmetic, not emphasis
            origin.extend(range(start, m.end()))
        elif kind == "other":
            for i in range(start, m.end()):
                _emit(text[i], i, out, origin)
        last = m.end()  # tags, link targets and emphasis markers are dropped
    out.append(text[last:])
    origin.extend(range(last, len(text)))
    return View(text, "".join(out), tuple(origin), tuple(wholes))


def _emit_math(text: str, start: int, end: int, out: list[str], origin: list[int]) -> None:
    """The characters of a math span a reader sees, each with its index: commands, braces and spaces go."""
    last = start
    for m in _MATH_INVISIBLE.finditer(text, start, end):
        for i in range(last, m.start()):
            _emit(text[i], i, out, origin)
        last = m.end()
    for i in range(last, end):
        _emit(text[i], i, out, origin)


def plain_text(text: str) -> str:
    """The Markdown-resolved text a reader sees (markers, tags and link targets gone, characters kept)."""
    return reading_view(text, fold=False).text


def _stands_alone(text: str, start: int, end: int) -> bool:
    before = text[start - 1] if start else " "
    after = text[end] if end < len(text) else " "
    return before.isspace() and after.isspace()


def _emit(char: str, index: int, out: list[str], origin: list[int]) -> None:
    folded = _fold_char(char)
    out.append(folded)
    origin.extend([index] * len(folded))


_COMBINING_LETTER = re.compile(r"COMBINING LATIN (?:SMALL |CAPITAL )?LETTER (?:SMALL CAPITAL )?([A-Z])$")


@functools.lru_cache(maxsize=4096)  # a few thousand distinct characters cover any real text
def _fold_char(char: str) -> str:
    category = unicodedata.category(char)
    letter = _COMBINING_LETTER.match(unicodedata.name(char, "")) if category == "Mn" else None
    if letter:  # a combining letter (U+0363 "ͣ", U+1DDF "ᷟ") is drawn as a small letter: read it as one
        return letter.group(1).lower()
    if category in ("Cf", "Mn", "Me", "Cc") or char in "\u00ad\u034f\u115f\u1160\u3164":
        return ""  # zero-width, soft hyphen, bidi controls, combining marks, fillers
    if category.startswith("Z"):
        return " "
    return unicodedata.normalize("NFKC", char).translate(_CONFUSABLES).translate(_DASHES)


def locate(view: View, start: int, end: int) -> tuple[int, int]:
    """Like ``View.span``, widened over dropped Markdown markers touching the span, so that replacing
    the span never leaves half an emphasis pair behind ("**Claude**" is replaced whole)."""
    s, e = view.span(start, end)
    source = view.source
    at = bisect_right(view.wholes, (s, len(source))) - 1  # the math span the match starts in, if any
    if at >= 0 and view.wholes[at][0] <= s < view.wholes[at][1]:
        s, e = view.wholes[at][0], max(e, view.wholes[at][1])  # "$Cla ude$" goes whole, not "$[…]$" in KaTeX
    while s > 0 and source[s - 1] in "*_~`" and _dropped(view, s - 1):
        s -= 1
    while e < len(source) and source[e] in "*_~`" and _dropped(view, e):
        e += 1
    return s, e


def _dropped(view: View, index: int) -> bool:
    """Whether ``source[index]`` has no character in the view."""
    at = bisect_right(view.origin, index) - 1
    return at < 0 or view.origin[at] != index


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """ "1 vote", "2 votes", "1,000 days": a count with its noun in the right number."""
    return f"{n:,} {noun if n == 1 else (plural or noun + 's')}"


def number(value: float, digits: int, *, signed: bool = False) -> str:
    """``value`` to ``digits`` decimals ("+0.123" when ``signed``), never "-0.000": a value that rounds to
    zero prints as zero whatever side of it it came from (γ intervals ended "to -0.000")."""
    text = f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"
    if text.lstrip("+-").strip("0.") == "" and text[0] in "+-":  # rounds to zero
        return ("+" if signed else "") + text[1:]
    return text

"""One canonical form of what a reader sees, for the blind reading (answer/blind.py).

Starting from ``core.text.reading_view`` (Markdown, tags and entities resolved, math read as the letters
KaTeX draws, NFKC, invisible characters gone), each character is reduced to what it looks like: the UTS #39
confusable data (``confusable-homoglyphs``, the Unicode consortium's confusables.txt) maps a look-alike to
the ASCII letter it imitates (Greek α, Armenian ս, Cherokee Ꮯ); a letter whose Unicode name says it is a
small capital or a variant of a Latin letter (ᴄʟᴀᴜᴅᴇ) becomes that letter; case is folded; "i" and "l" are
one letter (capital I and small l are drawn alike, so "CIaude" and "Claude" read the same). Whitespace of
any kind ends a token; every other separator (punctuation, "=", dashes) is dropped, so letters split by
them join. Digits are kept as digits in ``letters`` and folded to the letters they resemble (0→o, 1→l,
3→e, 4→a, 5→s, 7→t) in ``looks``. Every canonical letter remembers its token and its source index.
Linear in the length of the text.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass

from confusable_homoglyphs import confusables

from sciarena.core.text import View, reading_view

_DIGIT_LOOKS = str.maketrans("013457", "oleast")
_LETTER_NAME = re.compile(r"\bLETTER (?:SMALL CAPITAL |SMALL |CAPITAL )?([A-Z])\b")
_BREAK = " "  # what canonical_char returns for whitespace: a token break
_LONG = 10


@functools.lru_cache(maxsize=8192)  # a few thousand distinct characters cover any real text
def canonical_char(char: str) -> str:
    """The canonical letter(s) of one (already NFKC-folded) character: "" for a separator, " " for
    whitespace."""
    if char.isascii():
        if char.isalnum():
            low = char.lower()
            return "l" if low == "i" else low
        if char.isspace():
            return _BREAK
        return "l" if char == "|" else ""
    category = unicodedata.category(char)
    if category.startswith("Z") or char.isspace():
        return _BREAK
    for glyph in confusables.confusables_data.get(char, ()):
        target = glyph["c"]
        if len(target) == 1 and target.isascii() and target.isalnum():
            return canonical_char(target)
    named = _LETTER_NAME.search(unicodedata.name(char, ""))
    if named and category.startswith("L"):
        return canonical_char(named.group(1))
    if category[0] in "LN":
        return "".join(canonical_char(c) if c.isascii() else c for c in char.casefold())
    return ""


# A Markdown link's title ("[Cla](http://x "t")ude"): shown only on hover, and it splits what the link's text
# joins. Dropped from answers (ui/render.py and redact.Shield both use this), so the link reads as its text.
_LINK_TITLE = re.compile(r"(\]\(\s{0,3}<?[^()\s<>]{0,500}>?)\s{1,3}(?:\"[^\"\n]{0,300}\"|'[^'\n]{0,300}'|\([^()\n]{0,300}\))\s{0,3}\)")


def without_link_titles(text: str) -> str:
    """``text`` with every Markdown link title removed (the link and its text stay)."""
    return _LINK_TITLE.sub(r"\1)", text) if "](" in text else text


def canonical_word(text: str) -> str:
    """``text`` in canonical letters with every separator (whitespace too) removed: how a name is stored."""
    view = reading_view(text)
    return "".join(canonical_char(c) for c in view.text).replace(_BREAK, "")


def looks(letters: str) -> str:
    """Digits read as the letters they resemble ("c1aude" → "claude")."""
    return letters.translate(_DIGIT_LOOKS)


@dataclass(frozen=True)
class Reading:
    """The canonical letters of a text, each with its token number and its index in the source."""

    view: View
    letters: str  # separators removed, digits kept
    looks: str  # the same letters with digits read as letters (same length)
    token: tuple[int, ...]  # per letter: which whitespace-separated token of the view it belongs to
    source: tuple[int, ...]  # per letter: its index in the original text
    at: tuple[int, ...]  # per letter: its index in the view (increasing)
    spans: dict[int, tuple[int, int]]  # token number → the span of its letters

    def aligned(self, start: int, end: int) -> bool:
        """Letters ``start:end`` lie inside one token, or begin and end where tokens do: "AnthropicClaude"
        and "C l a u d e" are names, "reopen aid" does not hold "openai"."""
        if self.token[start] == self.token[end - 1]:
            return True
        starts = start == 0 or self.token[start - 1] != self.token[start]
        ends = end == len(self.letters) or self.token[end] != self.token[end - 1]
        # a long name across words is a name even glued on one side ("Allen Institute for AIBot"); a short one
        # needs both ends ("open air" does not hold "openai")
        return (starts and ends) or (end - start >= _LONG and (starts or ends))

    def token_letters(self, start: int) -> tuple[int, int]:
        """The span of letters of the token letter ``start`` is in (constant time: a long glued token with
        many names in it costs one lookup per name, not a scan each)."""
        return self.spans[self.token[start]]


def read(text: str) -> Reading:
    """The canonical reading of ``text`` (see the module docstring)."""
    view = reading_view(text)
    letters: list[str] = []
    token: list[int] = []
    source: list[int] = []
    at: list[int] = []
    current = 0
    for index, char in enumerate(view.text):
        canon = canonical_char(char)
        if canon == _BREAK:
            current += 1
            continue
        for letter in canon:
            letters.append(letter)
            token.append(current)
            source.append(view.origin[index])
            at.append(index)
    joined = "".join(letters)
    spans: dict[int, tuple[int, int]] = {}
    for index, number in enumerate(token):
        first, _ = spans.get(number, (index, index))
        spans[number] = (first, index + 1)
    return Reading(view, joined, looks(joined), tuple(token), tuple(source), tuple(at), spans)

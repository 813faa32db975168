"""A streaming answer rendered once per paragraph, not once per update.

While an answer streams, every update used to run ``render.safe_markdown`` over the whole text so far, so a
3,000-character answer sent in 100 updates was rendered ~150,000 characters' worth. ``StreamedAnswer`` keeps
the rendering of the text up to its last *clean* paragraph break and renders only what follows it; the result
is exactly ``safe_markdown`` of the whole text (tests/test_stream_render.py checks this on generated texts cut
into generated pieces).

A paragraph break is clean when rendering the text before and after it separately gives the same string as
rendering both at once. safe_markdown's passes that can reach across a blank line are: a LaTeX span (``$ … $``
and the other delimiters pair up over any distance), a fenced code block, an inline code span (a run of
backticks pairs with the next run of the same length) and the kept ``<br>``/``<sub>``/``<sup>`` tags (their
``\\s*`` before ``>``); and the citation-link budget counts over the whole answer. So a break is taken only when
the text before it leaves no math opener, fence or backtick run unpaired and does not end inside a kept tag,
and an answer with more ``[n]`` than the budget is rendered whole (it is never cached).
"""

from __future__ import annotations

import re
from typing import Sequence

from sciarena.core.types import Reference
from sciarena.ui import render

_BLANK_LINE = re.compile(r"\n[ \t]*\n")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")  # what safe_markdown drops first
_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})[^\n]*(?:\n|$)", re.MULTILINE)  # safe_markdown's fence opener
_BACKTICKS = re.compile(r"`+")
_CITATION = re.compile(r"\[(\d{1,4})\]")
_OPEN_KEPT_TAG = re.compile(r"<(/?)(br|sub|sup)\s*\Z", re.IGNORECASE)


class StreamedAnswer:
    """One side's answer over a stream (one per side per turn): ``markdown(text, references)`` is
    ``render.safe_markdown(text, references)``; each call renders only the text after the last clean break."""

    def __init__(self) -> None:
        self._done_text = ""  # the text up to the last clean break taken
        self._done_markdown = ""  # its rendering
        self._done_citations = 0  # the "[n]" in it (an upper bound on the links it made)
        self._references: tuple[Reference, ...] = ()
        self.rendered_chars = 0  # how much text safe_markdown was given in all (what the cache saves)

    def markdown(self, text: str, references: Sequence[Reference] = ()) -> str:
        references = tuple(references)
        if references != self._references or not text.startswith(self._done_text):
            self._forget(references)  # a revision started over, or new references change the links
        tail = text[len(self._done_text):]  # the done text ends in a blank line: no "[n]" spans the two
        if self._done_citations + len(_CITATION.findall(_CONTROL.sub("", tail))) > render.MAX_CITATION_LINKS:
            self._forget(references)  # the budget runs out in this answer: only a whole rendering counts it
            return self._render(text)
        cut = _last_clean_break(text, len(self._done_text))
        if cut > len(self._done_text):
            self._done_markdown += self._render(text[len(self._done_text):cut])
            self._done_citations += len(_CITATION.findall(_CONTROL.sub("", text[len(self._done_text):cut])))
            self._done_text = text[:cut]
        return self._done_markdown + self._render(text[cut:])

    def _render(self, text: str) -> str:
        self.rendered_chars += len(text)
        return render.safe_markdown(text, self._references)

    def _forget(self, references: tuple[Reference, ...]) -> None:
        self._done_text, self._done_markdown, self._done_citations, self._references = "", "", 0, references


def _last_clean_break(text: str, start: int) -> int:
    """The furthest position after ``start`` that ends a blank line and is a clean break for ``text[start:]``
    (``start`` itself, a clean break or 0, when there is none)."""
    best = start
    position = start
    for match in _BLANK_LINE.finditer(text, start):
        end = match.end()
        if _closed(text[position:end]):
            best = position = end  # each clean piece is checked on its own: a break after it composes
    return best


def _closed(piece: str) -> bool:
    """Rendering ``piece`` alone gives the start of rendering it with any text after it."""
    held = _CONTROL.sub("", piece)
    if _OPEN_KEPT_TAG.search(held):  # "<br" then the blank line: a ">" after it would make it a kept tag
        return False
    for left, right, _ in render.LATEX_DELIMITERS:  # in safe_markdown's order: each pass sees the last's holds
        held, closed = _hold(held, left, right)
        if not closed:
            return False
    return _code_closed(held)


def _hold(text: str, left: str, right: str) -> tuple[str, bool]:
    """``text`` with each ``left``…``right`` span replaced (as safe_markdown pairs them), and whether every
    opener found its closer."""
    pieces: list[str] = []
    position = 0
    while (start := text.find(left, position)) >= 0:
        end = text.find(right, start + len(left) + 1)
        if end < 0:
            return text, False
        pieces += [text[position:start], "\x00\x00"]
        position = end + len(right)
    pieces.append(text[position:])
    return "".join(pieces), True


def _code_closed(text: str) -> bool:
    """Every fence closed, and no backtick run after the last fence left without its pair."""
    position = 0
    while (fence := _FENCE.search(text, position)) is not None:
        marker = fence.group(1)
        closing = re.compile(f"^[ \\t]*{re.escape(marker[0])}{{{len(marker)},}}[ \\t]*(?:\n|$)", re.MULTILINE)
        close = closing.search(text, fence.end())
        if close is None:
            return False
        position = close.end()
    runs = [m.end() - m.start() for m in _BACKTICKS.finditer(text, position)]
    index = 0
    while index < len(runs):  # a run opens a span closed by the next run of its length; none may be left open
        later = next((j for j in range(index + 1, len(runs)) if runs[j] == runs[index]), None)
        if later is None:
            return False
        index = later + 1
    return True

"""Citation primitives every stage that reads an answer shares: its sentences and the "[n]" it cites.

The cleaner, the OpenScholar-style pipeline, the offline revision, attribution and the judge all split
and read citations the same way, so each uses these two functions (both linear in the text).
"""

from __future__ import annotations

import re

_CITE = re.compile(r"\[(\d+)\]")
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"“(])|\n+")
_ABBREVIATIONS = ("al.", "e.g.", "i.e.", "cf.", "vs.", "fig.", "figs.", "eq.", "ref.", "refs.", "no.", "approx.")


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence of ``text``, abbreviations and citations kept inside (linear time)."""
    spans, start = [], 0
    for m in _SENTENCE_BREAK.finditer(text):
        before = text[max(0, m.start() - 12) : m.start()].split()
        last_word = before[-1].lower() if before else ""
        if m.group(0).startswith("\n") or last_word not in _ABBREVIATIONS:
            spans.append((start, m.end()))
            start = m.end()
    spans.append((start, len(text)))
    return spans


def cited_numbers(text: str) -> tuple[int, ...]:
    """Reference numbers cited as "[n]", in order of first appearance."""
    return tuple(dict.fromkeys(int(n) for n in _CITE.findall(text)))

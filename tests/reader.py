"""An independent reader for anonymity tests: what a voter reads in rendered answer Markdown.

It shares no code with the arena's readers (core/text.py, answer/canonical.py): tags are stripped and
entities decoded as a browser would, math that KaTeX would draw is read as its letters (commands and braces
dropped), code is read as written; then each character becomes the ASCII letter it looks like (NFKC, the
Unicode confusables through ``confusable_homoglyphs``, small capitals by name), case is folded, i and l and
digit look-alikes are merged, and every non-letter is dropped. A name is visible when its letters appear in
that string, forwards or backwards.
"""

from __future__ import annotations

import html
import re
import unicodedata

from confusable_homoglyphs import confusables

_TAG = re.compile(r"<[^<>]*>")
_KATEX = re.compile(r"\$\$(.+?)\$\$|\$(.+?)\$|\\\[(.+?)\\\]|\\\((.+?)\\\)", re.DOTALL)
_CODE = re.compile(r"<code>(.*?)</code>", re.DOTALL)
_LINK_TARGET = re.compile(r"\]\([^)]*\)")
_COMMAND = re.compile(r"\\[A-Za-z]+|[{}^_\\]")
_SPELLED = {"ay": "a", "bee": "b", "see": "c", "cee": "c", "dee": "d", "ee": "e", "ef": "f", "gee": "g",
            "aitch": "h", "eye": "i", "jay": "j", "kay": "k", "el": "l", "em": "m", "en": "n", "oh": "o",
            "pee": "p", "cue": "q", "ar": "r", "es": "s", "tee": "t", "you": "u", "vee": "v", "ex": "x",
            "why": "y", "zee": "z"}


def _letter(char: str) -> str:
    char = unicodedata.normalize("NFKC", char)
    if len(char) != 1:
        return "".join(_letter(c) for c in char)
    if not char.isascii():
        for glyph in confusables.confusables_data.get(char, ()):
            if len(glyph["c"]) == 1 and glyph["c"].isascii() and glyph["c"].isalnum():
                char = glyph["c"]
                break
        else:
            named = re.search(r"LETTER (?:SMALL CAPITAL |SMALL |CAPITAL )?([A-Z])\b", unicodedata.name(char, ""))
            char = named.group(1) if named else ""
    char = char.lower()
    return {"i": "l", "1": "l", "0": "o", "3": "e", "4": "a", "5": "s", "7": "t", "|": "l"}.get(char, char)


def letters(text: str) -> str:
    return "".join(c for c in (_letter(ch) for ch in text) if c.isalnum())


def visible(markdown: str) -> str:
    """The text a reader sees in rendered answer Markdown (approximately, but independently)."""
    codes: list[str] = []

    def keep_code(m: re.Match[str]) -> str:
        codes.append(html.unescape(m.group(1)))
        return f"\x00{len(codes) - 1}\x00"

    text = _CODE.sub(keep_code, markdown)
    text = _KATEX.sub(lambda m: _COMMAND.sub("", next(g for g in m.groups() if g is not None)), text)
    text = _LINK_TARGET.sub("", text)
    text = html.unescape(_TAG.sub("", text))
    text = re.sub("\x00(\\d+)\x00", lambda m: codes[int(m.group(1))], text)
    return text.replace("*", "").replace("~", "").replace("[", "").replace("]", "")


def spelled(text: str) -> str:
    words = re.findall(r"[A-Za-z]+", text)
    return "".join(_SPELLED.get(w.lower(), " ") for w in words)


def shows(markdown: str, name: str) -> bool:
    """Whether a reader of ``markdown`` can read ``name`` in it."""
    seen = visible(markdown)
    target = letters(name)
    glued = letters(seen)
    decoded = spelled(seen).replace(" ", "")
    return any(target in form or target[::-1] in form for form in (glued, decoded))

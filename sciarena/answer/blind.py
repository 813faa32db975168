"""The blind reading: a second, independent look at what a voter's eye reads, after the precise redactor.

``answer/redact.py`` finds names in the spellings it knows and replaces exactly them. This module does
not list spellings. It reads the text once in its canonical form (``answer/canonical.py``: look-alikes,
separators, case and digit look-alikes folded) and looks there for every catalogue name
(``answer/names.py``), forwards, backwards, and spelled out as letter names ("see-el-ay-you-dee-ee"). A
sentence (or line) that still names a model is replaced whole by ``PLACEHOLDER``: once spellings are folded
the name cannot be located character by character in the source, so the whole sentence goes.

What counts as naming a model, in order of evidence (``names.Names``):

* a strong name (Claude, DeepSeek, GPT-4.1) anywhere, glued words included — unless it is another sense
  shown by the sentence: a person (Claude followed by a capitalised surname), a listed other sense
  (the anthropic principle), a word that merely contains it (philanthropic), or a topic of the battle
  (the question or a retrieved paper names it);
* a versioned brand (Gemini 2.5, llama3, GPT-3) with the same exceptions (the Gemini 4 mission, GPT 45 U/L);
* in a sentence where the answer speaks about itself ("I", "me", "my", "this answer", "the text you are
  reading", "X here", "this is X", a short sign-off line), every name, ordinary words too (Google, Meta,
  Sonnet, Flash, o3, 4o), and no exception applies: self-reference beats topic.

``Blind.hide`` is applied by ``redact.Shield`` to every snapshot and final answer; with ``partial`` (the
text is still streaming), a text ending in the first letters of a name is cut before them, so no prefix of
a name is shown while the rest is on its way. Linear in the length of the text.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from typing import Callable

from sciarena.answer.canonical import Reading, canonical_char, canonical_word, looks, read
from sciarena.answer.mathspan import drawn, math_spans
from sciarena.answer.names import Names
from sciarena.core.text import locate

PLACEHOLDER = "[hidden until the vote: it named a model]"
_SPELLED_ON = re.compile(r"\s{1,3}[^\W_](?:[\s.,\-=·]|$)")
_SENTENCE_END = re.compile(r"[.!?。！？;](?=\s)|\n")
_PRONOUNS = frozenset(canonical_word(w) for w in ("I", "I'm", "I've", "I'd", "I'll", "Im"))
_ME = frozenset(canonical_word(w) for w in ("me", "my", "myself"))
_THIS_WHAT = frozenset(canonical_word(w) for w in (
    "answer", "response", "reply", "text", "panel", "message", "output", "chatbot", "assistant", "side", "box"))
_AFTER_NAME = frozenset(canonical_word(w) for w in ("here", "speaking", "signing", "writing", "responding"))
_SIGN_OFF = frozenset(canonical_word(w) for w in (
    "made", "by", "trained", "built", "developed", "created", "powered", "from", "signed", "regards", "cheers",
    "best", "yours", "truly", "greetings", "love", "sincerely", "thanks", "and", "the", "team", "at", "with"))
_FILLER = frozenset(canonical_word(w) for w in ("and", "the", "team", "at", "with", "by", "from"))
# "Type I error", "phase I trial", "complex I": a Roman numeral, not the pronoun.
_NUMERAL_BEFORE = frozenset(canonical_word(w) for w in (
    "type", "phase", "class", "complex", "stage", "grade", "group", "photosystem", "region", "part", "chapter",
    "table", "figure", "fig", "period", "category", "lamina", "layer", "article", "section", "volume", "vol",
    "series", "appendix", "level", "tier", "step", "cluster", "mhc", "hla", "collagen", "interferon", "war",
    "site", "domain", "loop", "helix", "isoform", "factor", "receptor", "topoisomerase", "family", "studies",
    "study", "trial", "trials", "experiment", "model", "case", "schedule", "subtype", "generation"))
LETTER_NAMES: dict[str, str] = {
    "ay": "a", "aye": "a", "bee": "b", "cee": "c", "see": "c", "sea": "c", "dee": "d", "ee": "e", "eee": "e",
    "ef": "f", "eff": "f", "gee": "g", "jee": "g", "aitch": "h", "haitch": "h", "eye": "i", "jay": "j",
    "kay": "k", "el": "l", "ell": "l", "em": "m", "en": "n", "oh": "o", "owe": "o", "pee": "p", "cue": "q",
    "queue": "q", "ar": "r", "are": "r", "es": "s", "ess": "s", "tee": "t", "tea": "t", "you": "u", "yoo": "u",
    "vee": "v", "doubleu": "w", "doubleyou": "w", "ex": "x", "why": "y", "wye": "y", "zee": "z", "zed": "z",
}
_WORD = re.compile(r"[^\W\d_]+")
_SPELL_GAP = re.compile(r"[\s\-.,=/·•_*~`'’|:;+]*")


@dataclass(frozen=True)
class Hidden:
    """What ``Blind.hide`` made of a text."""

    text: str
    hidden: int  # sentences replaced by PLACEHOLDER
    held: bool  # a streamed text's end was held back (it may be the start of a name)


@dataclass(frozen=True)
class _Token:
    letters: str  # canonical
    raw: str  # as the view shows it
    first: int  # index of its first letter in the reading


class Blind:
    """The blind reading for one battle: ``names`` to look for, ``topic`` the question and papers."""

    def __init__(self, names: Names, topic: str = "") -> None:
        self._names = names
        self._strong = tuple(sorted(names.strong, key=len, reverse=True))
        self._short = frozenset(n for n in names.ordinary if len(n) <= 2)
        self._ordinary_looks = frozenset(looks(n) for n in names.ordinary | names.versioned if len(n) > 2)
        self._glue_looks = self._ordinary_looks | {looks(g) for g in _GLUE}
        self._topic = self._brands_in(topic) if topic else frozenset()

    def hide(self, text: str, *, partial: bool = False) -> Hidden:
        """``text`` with every sentence that names a model replaced by PLACEHOLDER (see the module
        docstring); ``partial``: a streamed text, whose end is cut before a name's first letters."""
        if not text:
            return Hidden(text, 0, False)
        reading = read(text)
        sentences = _sentences(reading)
        sources = _source_spans(reading, sentences)
        hits = self._hits(reading)
        named = {i for i, (start, end) in enumerate(sentences) if self._names_a_model(reading, start, end, hits)}
        named |= self._math_hits(text, reading, sentences, sources)
        cut = self._prefix_cut(reading) if partial else None
        pieces: list[str] = []
        last = 0
        for i in sorted(named):
            s, e = sources[i]
            if e <= last:
                continue
            pieces += [text[last:max(s, last)], PLACEHOLDER]
            last = e
        if cut is None:
            pieces.append(text[last:])
        elif cut > last:
            pieces.append(text[last:cut])
        return Hidden("".join(pieces), len(named), cut is not None)

    def _math_hits(self, text: str, reading: Reading, sentences: list[tuple[int, int]],
                   sources: list[tuple[int, int]]) -> set[int]:
        """Sentences holding a math span whose letters, read as drawn or as code, spell a name (an ordinary one
        where the sentence speaks of itself)."""
        starts = [s for s, _ in sources]
        hits = set()
        for a, b in math_spans(text):
            # as drawn, and as the code a span off the allowlist is shown as ("\\text{Code}\\x" reads "Codex")
            readings = (canonical_word(drawn(text[a:b])), canonical_word(_inside_delimiters(text[a:b])))
            at = max(0, bisect_right(starts, a) - 1)
            if any(name in letters or name[::-1] in letters for name in self._strong for letters in readings):
                hits.add(at)
            elif any(n in looks(letters) or n[::-1] in looks(letters) for n in self._ordinary_looks
                     for letters in readings) or any(n in letters for n in self._short for letters in readings):
                lo, hi = _letter_range(reading, *sentences[at])
                tokens = _tokens(reading, lo, hi)
                cued = any(t.letters in _AFTER_NAME for t in tokens) or any(
                    x.letters == _THIS and y.letters == canonical_word("is") for x, y in zip(tokens, tokens[1:]))
                if tokens and (cued or _speaks_of_itself(tokens, self._is_name,
                                                         reading.view.text[sentences[at][0]] in "-–—~")):
                    hits.add(at)
        return hits

    def names_in(self, text: str) -> bool:
        """Whether any sentence of ``text`` names a model (the independent check after the vote)."""
        reading = read(text)
        hits = self._hits(reading)
        return any(self._names_a_model(reading, s, e, hits) for s, e in _sentences(reading))

    def _hits(self, reading: Reading) -> tuple[list[tuple[int, int, str]], list[tuple[int, int, str]]]:
        """Strong and versioned names in the whole reading, searched once (a name is searched for once per
        text, not once per sentence), in order of where they start."""
        n = len(reading.letters)
        return sorted(self._strong_hits(reading, 0, n)), sorted(self._versioned_hits(reading, 0, n))

    # ------------------------------------------------------------------ one sentence

    def _names_a_model(self, reading: Reading, start: int, end: int,
                       hits: tuple[list[tuple[int, int, str]], list[tuple[int, int, str]]]) -> bool:
        """Whether view characters ``start:end`` (one sentence) name a model."""
        lo, hi = _letter_range(reading, start, end)
        if lo >= hi:
            return False
        tokens = _tokens(reading, lo, hi)
        firsts = [t.first for t in tokens]
        words = frozenset(t.letters for t in tokens)

        def near(at: int) -> list[_Token]:
            """The few tokens around letter ``at``: what the context checks read (constant work per name)."""
            i = bisect_left(firsts, at)
            return tokens[max(0, i - 3) : i + 4]

        speaks = _speaks_of_itself(tokens, self._is_name, reading.view.text[start] in "-–—~")
        strong, versioned = ([h for h in found[bisect_left(found, (lo,)):bisect_left(found, (hi,))] if h[1] <= hi]
                             for found in hits)  # a name inside this sentence
        for a, b, name in strong:
            if speaks or _after_name(reading, near(b), b) or _this_is(near(a), a):
                return True
            if not self._other_sense(reading, words, near(b), a, b, name):
                return True
        for a, b, brand in versioned:
            if speaks or _after_name(reading, near(b), b) or _this_is(near(a), a):
                return True
            if not self._other_sense(reading, words, near(b), a, b, brand):
                return True
        for index, token in enumerate(tokens):
            # the token (or its run of single letters), and with the next one or two ("Le Chat", "Ernie Bot")
            joined = ("".join(t.letters for t in tokens[index:index + k]) for k in (2, 3))
            if (self._ordinary(_glued(tokens, index)) or any(self._ordinary(w) for w in joined)) and (
                    speaks or _after_name(reading, near(_run_end(tokens, index)), _run_end(tokens, index))
                    or _this_is(near(token.first), token.first)):
                return True
        return self._spelled(reading.view.text[start:end])

    def _strong_hits(self, reading: Reading, lo: int, hi: int) -> list[tuple[int, int, str]]:
        hits = []
        for letters, folded in ((reading.letters, False), (reading.looks, True)):
            part = letters[lo:hi]
            for name in self._strong:
                shape = looks(name) if folded else name  # "gemin1-2.5-pro" is gemini-2.5-pro drawn with digits
                for form in (shape, shape[::-1]):
                    at = part.find(form)
                    while at >= 0:
                        a, b = lo + at, lo + at + len(form)
                        if reading.aligned(a, b):
                            hits.append((a, b, name))
                        at = part.find(form, at + 1)
        return hits

    def _versioned_hits(self, reading: Reading, lo: int, hi: int) -> list[tuple[int, int, str]]:
        hits = []
        part = reading.looks[lo:hi]
        for brand in self._names.versioned:
            shape = looks(brand)
            at = part.find(shape)
            while at >= 0:
                a, b = lo + at, lo + at + len(shape)
                starts = a == 0 or reading.token[a - 1] != reading.token[a]
                if starts and b < hi and reading.letters[b].isdigit():
                    hits.append((a, b, brand))
                at = part.find(shape, at + 1)
        return hits

    def _ordinary(self, word: str, inside: bool = True) -> bool:
        """Whether a token (or a run of single letters) is an ordinary name, forwards or backwards, with digits
        read as the letters they resemble ("C1aude"). It is only asked where the answer speaks of itself;
        ``inside``, a name glued to a pronoun, another name, a glue word or a letter or two counts too
        ("I'mGemini", "GeminiBot", "MetaLlama", "xGoogle"), a name inside an ordinary word does not
        ("meta-analysis", "llama-derived"). Two-character names (o3, 4o, k2) are numbers' neighbours: their
        digits count as written, never folded ("10" and "03" are numbers), alone, backwards or glued."""
        if not word:
            return False
        if word in self._short or word[::-1] in self._short:  # as written ("1o" is o1 backwards; "10" is ten)
            return True
        if inside:
            for n in self._short:  # "x4o", "I'm4o", "The4oBot": glue words or one letter either side
                at = word.find(n)
                if at >= 0 and all(r == "" or (len(r) == 1 and r.isalpha()) or looks(r) in self._glue_looks
                                   for r in (word[:at], word[at + len(n):])):
                    return True
        seen = looks(word)
        forms = self._ordinary_looks
        if seen in forms or seen[::-1] in forms:
            return True
        if not inside:
            return False
        for name in forms:
            for form in (name, name[::-1]):
                at = seen.find(form)
                if at >= 0 and all(len(r) <= 2 or r in self._glue_looks for r in (seen[:at], seen[at + len(form):])):
                    return True
        return False

    def _other_sense(self, reading: Reading, words: frozenset[str], tokens: list[_Token], a: int, b: int,
                     name: str) -> bool:
        names = self._names
        brand = self._brand(name)
        if brand in self._topic or name in self._topic:
            return True  # a topic of the battle: the question or a paper names it
        ta, tb = reading.token_letters(a)
        if reading.letters[ta:tb] in names.not_names:
            return True
        if words & names.other_senses.get(brand, frozenset()):
            return True
        if brand in names.person_names:
            after = next((t for t in tokens if t.first >= b and reading.token[t.first] != reading.token[b - 1]), None)
            return after is not None and after.raw[:1].isupper() and not self._is_name(after.letters)
        return False

    def _is_name(self, letters: str) -> bool:
        names = self._names
        return letters in names.strong or letters in names.ordinary or letters in names.versioned or (
            bool(letters) and letters[0].isdigit())

    def _brand(self, name: str) -> str:
        """The family a name belongs to ("gpt41mlnl" → "gpt", "deepseekv3" → "deepseek")."""
        names = self._names
        for k in range(len(name), 2, -1):
            head = name[:k]
            if head.isalpha() and (head in names.strong or head in names.versioned or head in names.ordinary):
                return head
        return re.match(r"[a-z]*", name).group() or name  # type: ignore[union-attr]

    def _brands_in(self, topic: str) -> frozenset[str]:
        reading = read(topic)
        found: set[str] = set()
        n = len(reading.letters)
        if n:
            found.update(self._brand(name) for _, _, name in self._strong_hits(reading, 0, n))
            found.update(brand for _, _, brand in self._versioned_hits(reading, 0, n))
            found.update(t.letters for t in _tokens(reading, 0, n) if t.letters in self._names.ordinary)
        return frozenset(found)

    def _spelled(self, text: str) -> bool:
        """Letter names spelled out ("see-el-ay-you-dee-ee") decode to a name, forwards or backwards."""
        for decoded in _spelled_runs(text):
            for form in (decoded, decoded[::-1]):
                canon = canonical_word(form)
                if any(name in canon for name in self._strong) or canon in self._names.ordinary:
                    return True
        return False

    # ------------------------------------------------------------------ streaming

    def _prefix_cut(self, reading: Reading) -> int | None:
        """Where to cut a streamed text whose last letters may begin a name, or None."""
        letters = reading.letters
        n = len(letters)
        prefixes = self._names.prefixes
        for k in range(min(n, self._names.longest), 2, -1):
            a = n - k
            if (letters[a:] in prefixes or reading.looks[a:] in prefixes) and reading.aligned(a, n):
                first, _ = reading.token_letters(a)
                return reading.source[first]
        tail = reading.view.text[-200:]
        whole = re.sub(r"[^\W\d_]+$", "", tail)  # a letter name may be half written ("y" of "you")
        for part in (tail, whole):
            runs = list(_spelled_runs(part, with_start=True))
            if not runs or runs[-1][1] + len(runs[-1][2]) < len(part.rstrip(" -–—=.·,")):
                continue
            decoded, start, _ = runs[-1]
            canon = canonical_word(decoded)
            if any(canon in name or canon in name[::-1] for name in self._strong):
                return reading.view.origin[len(reading.view.text) - len(tail) + start]
        return None


# Words a name may be glued to and still be read as a name ("GeminiBot", "ThisIsGrok", "I'mGemini").
_GLUE = frozenset(canonical_word(w) for w in (
    "bot", "ai", "here", "this", "is", "am", "the", "model", "from", "by", "thisis", "iam", "me", "my", "i'm",
    "im", "it's", "called", "named", "team", "assistant", "chat", "llm"))


def _inside_delimiters(span: str) -> str:
    """A math span without its delimiters ($…$, $$…$$, \\(…\\), \\[…\\]), so its code is read as characters."""
    for opener, closer in (("$$", "$$"), ("\\(", "\\)"), ("\\[", "\\]"), ("$", "$")):
        if span.startswith(opener) and span.endswith(closer) and len(span) >= len(opener) + len(closer):
            return span[len(opener):len(span) - len(closer)]
    return span


_SPELLED_TWO = re.compile(r"\s{1,3}[^\W_][\s.,\-=·]{1,3}[^\W_](?:[\s.,\-=·]|$)")
_RUN_SEPARATORS = " \t.,-=·"


def _inside_spelled_run(text: str, at: int, after: int) -> bool:
    """Whether the stop at ``at`` sits inside a run of single characters ("C. l. a. u. d. e", "Z . a i", "2 . 5"),
    where a name goes on, rather than ending a sentence after a one-letter word ("above 4,000 m. I am …",
    "by 3 °C. I am …" are two sentences each)."""
    if not _SPELLED_ON.match(text, after):
        return False
    if text[at - 1].isspace():
        return True
    if not (text[at - 1].isalnum() and (at < 2 or text[at - 2].isspace() or text[at - 2] in "([{\"'")):
        return False
    return _single_before(text, at - 1) or bool(_SPELLED_TWO.match(text, after))


def _single_before(text: str, i: int) -> bool:
    """Whether a single character, then one to three separators, comes just before index ``i``."""
    j, skipped = i - 1, 0
    while j >= 0 and text[j] in _RUN_SEPARATORS and skipped < 3:
        j, skipped = j - 1, skipped + 1
    return skipped > 0 and j >= 0 and text[j].isalnum() and (j == 0 or not text[j - 1].isalnum())


def _sentences(reading: Reading) -> list[tuple[int, int]]:
    """Sentences and lines of the view, as (start, end) view indices without surrounding whitespace."""
    text = reading.view.text
    out = []
    last = 0
    for m in _SENTENCE_END.finditer(text):
        at = m.start()
        if m.group() != "\n" and at and _inside_spelled_run(text, at, m.end()):
            continue
        out.append((last, m.end()))
        last = m.end()
    out.append((last, len(text)))
    trimmed = []
    for s, e in out:
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        if s < e:
            trimmed.append((s, e))
    return trimmed


def _source_spans(reading: Reading, sentences: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Each sentence as a span of the source: from its first character (widened over markup and math, as
    ``core.text.locate`` does) to the next sentence's start, without the whitespace before it, so markup the
    view dropped between sentences ("](http://y)") goes with the sentence before it."""
    source = reading.view.source
    starts = [locate(reading.view, s, s + 1)[0] for s, _ in sentences]
    if starts:
        starts[0] = min(starts[0], len(source) - len(source.lstrip()))
    spans = []
    for i, start in enumerate(starts):
        end = starts[i + 1] if i + 1 < len(starts) else len(source)
        while end > start and source[end - 1].isspace():
            end -= 1
        spans.append((start, end))
    return spans


def _letter_range(reading: Reading, start: int, end: int) -> tuple[int, int]:
    """The letters whose view characters lie in ``start:end`` (view indices are increasing per letter)."""
    at = reading.at
    return bisect_left(at, start), bisect_left(at, end)


def _tokens(reading: Reading, lo: int, hi: int) -> list[_Token]:
    tokens: list[_Token] = []
    i = lo
    view = reading.view.text
    while i < hi:
        j = i
        while j < hi and reading.token[j] == reading.token[i]:
            j += 1
        raw = view[reading.at[i]: reading.at[j - 1] + 1]
        tokens.append(_Token(reading.letters[i:j], raw, i))
        i = j
    return tokens


def _glued(tokens: list[_Token], index: int) -> str:
    """A token's letters, joined with the single letters around it when it is one ("G o o g l e")."""
    token = tokens[index]
    if len(token.letters) != 1:
        return token.letters
    if index > 0 and len(tokens[index - 1].letters) == 1:
        return ""  # counted from the run's first letter
    run = []
    for t in tokens[index:]:
        if len(t.letters) != 1:
            break
        run.append(t.letters)
    return "".join(run)


def _run_end(tokens: list[_Token], index: int) -> int:
    """The letter index after a token, or after its run of single letters ("G e m i n i here")."""
    end = index
    # bounded: no name is longer than 64 letters, so a run of thousands of single letters costs 64 steps each
    while (len(tokens[index].letters) == 1 and end + 1 < len(tokens) and len(tokens[end + 1].letters) == 1
           and end - index < 64):
        end += 1
    return tokens[end].first + len(tokens[end].letters)


def _speaks_of_itself(tokens: list[_Token], is_name: Callable[[str], bool], dash: bool) -> bool:
    """First person, "this answer", "the text you are reading", "you are talking to": the sentence is about
    the answer or its author."""
    letters = [t.letters for t in tokens]
    for i, token in enumerate(tokens):
        word = letters[i]
        raw = token.raw.strip("\"'“”‘’«»[]*_~`,:;!?.")
        if word in _PRONOUNS and raw[:1].isalpha() and not raw[:1].islower() and "(" not in token.raw and ")" not in token.raw:
            if word != canonical_word("I") or i == 0 or letters[i - 1] not in _NUMERAL_BEFORE:
                if not (word == canonical_word("I") and i + 1 < len(tokens) and tokens[i + 1].raw[:1] in "-–—"):
                    return True
        if word in _ME and not raw.isupper():
            return True
        if word == _THIS and i + 1 < len(tokens) and letters[i + 1] in _THIS_WHAT:
            return True
        if word in (_YOU, _YOURE) and _READING in letters[i + 1 : i + 4]:
            return True
        if word == _YOU and i + 2 < len(tokens) and letters[i + 1] in (_ARE, canonical_word("re")) and (
                letters[i + 2] in _TALKING):
            return True
    return _sign_off(tokens, is_name, dash)


_THIS, _YOU, _YOURE, _ARE = (canonical_word(w) for w in ("this", "you", "you're", "are"))
_READING = canonical_word("reading")
_TALKING = frozenset(canonical_word(w) for w in ("talking", "chatting", "speaking", "reading"))


def _sign_off(tokens: list[_Token], is_name: Callable[[str], bool], dash: bool) -> bool:
    """A short line of nothing but names and sign-off words ("— Claude", "Made by Google.", "Signed,
    Gemini", "Best, the Grok team")."""
    if len(tokens) > 6:
        return False
    if not all(not t.letters or t.letters in _SIGN_OFF or is_name(t.letters) for t in tokens):
        return False
    return dash or any(t.letters in _SIGN_OFF - _FILLER for t in tokens)


def _after_name(reading: Reading, tokens: list[_Token], end: int) -> bool:
    """The token after the one where a name ends says the name is speaking ("Opus 4.1 here.")."""
    if end >= len(reading.letters) or end <= 0:
        return False
    current = reading.token[end - 1]
    following = [t for t in tokens if reading.token[t.first] > current]
    # skip a version or tier right after the name ("Opus 4.1 here", "Grok 4 speaking")
    for t in following[:3]:
        if t.letters in _AFTER_NAME:
            return True
        if not (t.letters[:1].isdigit() or len(t.letters) <= 3):
            return False
    return False


def _this_is(tokens: list[_Token], start: int) -> bool:
    """"this is <name>", "it's <name>", "you're talking to <name>" just before the name."""
    before = [t.letters for t in tokens if t.first < start][-2:]
    return before in ([_THIS, canonical_word("is")], [canonical_word("it"), canonical_word("is")]) or (
        bool(before) and before[-1] in (canonical_word("it's"), canonical_word("thisis")))


def _spelled_runs(text: str, with_start: bool = False):  # type: ignore[no-untyped-def]
    """Runs of three or more letter names ("see-el-ay"), decoded to letters (and where they start)."""
    run: list[str] = []
    start = 0
    last_end = -1
    for m in _WORD.finditer(text):
        word = m.group()
        letter = LETTER_NAMES.get(word.lower()) or (word if len(word) == 1 else None)  # "α" among them
        joined = last_end >= 0 and _SPELL_GAP.fullmatch(text, last_end, m.start()) is not None
        if letter and (joined or not run):
            if not run:
                start = m.start()
            run.append(letter)
        else:
            if len(run) >= 3:
                yield ("".join(run), start, text[start:last_end]) if with_start else "".join(run)
            run = [letter] if letter else []
            start = m.start()
        last_end = m.end()
    if len(run) >= 3:
        yield ("".join(run), start, text[start:last_end]) if with_start else "".join(run)


__all__ = ["PLACEHOLDER", "Blind", "Hidden", "LETTER_NAMES", "canonical_char"]

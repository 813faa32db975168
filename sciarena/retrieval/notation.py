"""Questions written with mathematics are searched by the words their notation names.

A paper's abstract says "the square root of the key dimension", a question may say ``$\\sqrt{d_k}$``; the
index holds words, so the math would match nothing (or a stray letter) and a question the corpus answers
was refused. ``searchable`` rewrites the math of a question into words before it is searched: LaTeX commands
become the words they stand for (``\\sqrt`` → "square root", ``\\mathrm{softmax}`` → "softmax", ``\\alpha`` →
"alpha"), and a few symbols with one conventional meaning in the corpus's fields become that meaning
(``d_k`` → "key dimension", ``R_t`` → "reproduction number", ``CH_3NH_3PbI_3`` → "methylammonium lead
iodide perovskite"). The question shown to the models and stored is never changed; only the search reads
this text. A question without math is returned as it is.
"""

from __future__ import annotations

import re

# Commands that name an operation or function: replaced by these words.
_COMMANDS = {
    "sqrt": "square root", "frac": "", "dfrac": "", "tfrac": "", "cdot": "", "times": "", "left": "",
    "right": "", "exp": "exponential", "log": "logarithm", "ln": "logarithm", "sum": "sum", "prod": "product",
    "int": "integral", "partial": "partial derivative", "nabla": "gradient", "infty": "infinity",
    "approx": "", "sim": "", "propto": "proportional", "le": "", "ge": "", "leq": "", "geq": "",
    "top": "transpose", "hbar": "Planck constant", "mathbb": "", "mathbf": "", "mathcal": "", "boldsymbol": "",
}
# Wrappers whose argument is itself the word: \mathrm{softmax} → softmax.
_TEXT_WRAPPERS = ("mathrm", "operatorname", "text", "textrm", "textit", "mathit", "mbox")
# Symbols with one conventional meaning in the fields the bundled corpus covers (after the math is read).
_SYMBOLS = {
    r"QK\^\{?T\}?": "query key dot product",
    r"d_\{?k\}?": "key dimension",
    r"d_\{?model\}?": "model dimension",
    r"R_\{?[0t]\}?": "reproduction number",
    r"R_\{?e\}?": "effective reproduction number",
    r"CH_\{?3\}?NH_\{?3\}?PbI_\{?3\}?": "methylammonium lead iodide perovskite",
    r"H_\{?0\}?": "Hubble constant",
    r"T_\{?c\}?": "critical temperature",
    r"IC_\{?50\}?": "half maximal inhibitory concentration",
    r"CO_\{?2\}?": "carbon dioxide",
    r"E\s*=\s*mc\^\{?2\}?": "mass energy equivalence",
}
_SYMBOL_PATTERNS = tuple((re.compile(rf"(?<![A-Za-z]){pattern}(?![A-Za-z0-9])"), words)
                         for pattern, words in _SYMBOLS.items())
# A span is at most 400 characters (the longest math the page draws, answer/mathspan.py): unbounded, each of n
# unclosed openers would scan to the end of the question (quadratic; tests/test_untrusted_text.py).
_MATH = re.compile(r"\$\$(.{1,400}?)\$\$|\$(.{1,400}?)\$|\\\((.{1,400}?)\\\)|\\\[(.{1,400}?)\\\]", re.S)
_WRAPPED = re.compile(r"\\(?:%s)\s*\{([^{}]*)\}" % "|".join(_TEXT_WRAPPERS))
_COMMAND = re.compile(r"\\([A-Za-z]+)")
_HINTS = re.compile(r"[\\$_^]")


def _read(math: str) -> str:
    """The words one piece of math names."""
    for pattern, words in _SYMBOL_PATTERNS:
        math = pattern.sub(f" {words} ", math)
    math = _WRAPPED.sub(r" \1 ", math)
    math = _COMMAND.sub(lambda m: f" {_COMMANDS.get(m.group(1), m.group(1))} ", math)
    return " ".join(re.sub(r"[{}^_$]", " ", math).split())


def searchable(question: str) -> str:
    """``question`` with its mathematics read as words (unchanged when it has none)."""
    if not _HINTS.search(question):
        return question
    text = _MATH.sub(lambda m: f" {_read(next(g for g in m.groups() if g is not None))} ", question)
    if _HINTS.search(text):  # notation written outside dollar signs: "divide by \sqrt{d_k}", "R_t"
        text = _read(text)
    return " ".join(text.split())

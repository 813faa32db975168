"""Which math in an answer is drawn by KaTeX, and what letters a reader sees in it.

KaTeX is a TeX engine: macros (``\\def\\x{ude}``), colour, kerning, boxes and ``\\char"43`` draw letters no
text reader can predict without running TeX. So math is rendered only when every command in it is on
``ALLOWED`` (what science writing needs: fractions, roots, Greek, operators, sub/superscripts, accents,
fonts, delimiters, environments such as ``aligned``), ``\\text``-like commands hold plain text, the span has
no HTML character reference, an inline span has no line break, and the span is short enough for the
reader (``core.text.reading_view``) to read whole: 200 characters inline, 400 displayed. Anything else is
shown as code, as written. ``drawn`` gives the letters of a span either way (commands and their dimension
arguments dropped, ``\\char`` codes decoded), for the blind reading (answer/blind.py).
"""

from __future__ import annotations

import html
import re

# (left, right, display), in the order Gradio's Markdown matches them over the raw string ("$$" before "$").
LATEX_DELIMITERS: tuple[tuple[str, str, bool], ...] = (
    ("$$", "$$", True), ("\\[", "\\]", True), ("\\(", "\\)", False), ("$", "$", False),
)
MAX_INLINE = 200
MAX_DISPLAY = 400

_GREEK = ("alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa lambda mu nu xi pi varpi rho "
          "varrho sigma varsigma tau upsilon phi varphi chi psi omega Gamma Delta Theta Lambda Xi Pi Sigma Upsilon Phi "
          "Psi Omega digamma")
_COMMANDS = (
    "frac dfrac tfrac cfrac sqrt binom dbinom tbinom sum prod coprod int iint iiint oint lim limsup liminf sup inf max "
    "min log ln lg exp sin cos tan sec csc cot arcsin arccos arctan sinh cosh tanh coth det dim ker deg arg gcd lcm Pr "
    "hom cdot times div pm mp ast star circ bullet oplus ominus otimes odot oslash wedge vee cap cup setminus "
    "leq geq le ge neq ne approx sim simeq equiv propto cong asymp ll gg lesssim gtrsim prec succ preceq succeq "
    "in notin ni subset subseteq supset supseteq subsetneq emptyset varnothing forall exists nexists nabla partial "
    "infty to gets rightarrow leftarrow Rightarrow Leftarrow leftrightarrow Leftrightarrow longrightarrow "
    "longleftarrow Longrightarrow mapsto implies iff uparrow downarrow updownarrow rightleftharpoons "
    "xrightarrow xleftarrow ldots cdots vdots ddots dots left right middle big Big bigg Bigg bigl bigr Bigl Bigr "
    "biggl biggr hat bar tilde vec dot ddot acute grave breve check widehat widetilde overline underline overbrace "
    "underbrace overrightarrow overleftarrow mathrm mathbf mathit mathcal mathbb mathsf mathtt mathfrak mathscr "
    "boldsymbol bm text textrm textbf textit textsf texttt textnormal operatorname begin end quad qquad "
    "langle rangle lfloor rfloor lceil rceil vert Vert lvert rvert lVert rVert mid parallel perp angle degree prime "
    "ell hbar Re Im aleph neg lnot land lor top bot vdash models displaystyle textstyle scriptstyle limits nolimits "
    "stackrel overset underset pmod bmod mod not perthousand checkmark dagger ddagger sharp flat natural triangle "
    "square Box diamond therefore because cdotp colon tag nonumber notag imath jmath wp mho surd").split()
ALLOWED: frozenset[str] = frozenset(_GREEK.split() + _COMMANDS)
# Commands whose argument is plain text (no commands inside it).
_TEXT_LIKE = frozenset("text textrm textbf textit textsf texttt textnormal mathrm operatorname".split())
ENVIRONMENTS: frozenset[str] = frozenset(
    "aligned align align* alignedat gathered gather gather* cases dcases rcases matrix pmatrix bmatrix Bmatrix "
    "vmatrix Vmatrix smallmatrix array split equation equation* subarray".split())
_COMMAND = re.compile(r"\\([A-Za-z]+)\*?|\\(.)", re.DOTALL)
_ESCAPES = frozenset(",;:! {}|%$#&_\\")  # \, \; \! \  \{ \} \| \% \$ \# \& \_ \\
_ENTITY = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")
_ENVIRONMENT = re.compile(r"\\(?:begin|end)\s*\{([^{}]*)\}")
_TEXT_ARGUMENT = re.compile(r"\\([A-Za-z]+)\s*\{")
# For ``drawn``: a command with its dimension argument ("\kern1pt", "\hspace{2em}", "\mkern-3mu").
_DIMENSION = r"\s*\{?\s*-?[\d.]+\s*(?:pt|em|ex|mu|px|cm|mm|in|bp|pc|sp|dd|cc)?\s*\}?"
_DROP = re.compile(rf"\\(?:kern|mkern|mskip|hskip|hspace\*?|vspace\*?|raisebox|lower|raise|moveleft|moveright){_DIMENSION}"
                   r"|\\[A-Za-z]+\*?|\\.|[{}^_\s$&]")
_CHAR = re.compile(r"\\char\s*(?:\"([0-9A-Fa-f]{1,6})|'([0-7]{1,8})|`\\?(.)|([0-9]{1,7}))")


def delimiters_of(formula: str) -> tuple[str, str, bool] | None:
    """The delimiters a held span starts and ends with."""
    for left, right, display in LATEX_DELIMITERS:
        if formula.startswith(left) and formula.endswith(right) and len(formula) >= len(left) + len(right) + 1:
            return left, right, display
    return None


def renders(formula: str) -> bool:
    """Whether KaTeX may draw ``formula`` (delimiters included): see the module docstring."""
    found = delimiters_of(formula)
    if found is None:
        return False
    left, right, display = found
    inner = formula[len(left) : len(formula) - len(right)]
    if len(formula) > (MAX_DISPLAY if display else MAX_INLINE) or (not display and "\n" in inner):
        return False
    if _ENTITY.search(inner) or "#" in inner.replace("\\#", ""):
        return False  # a character reference the browser would decode before KaTeX sees it; macro parameters
    for m in _COMMAND.finditer(inner):
        name, escape = m.group(1), m.group(2)
        if name is not None and name not in ALLOWED:
            return False
        if escape is not None and escape not in _ESCAPES and not escape.isspace():
            return False
    for m in _ENVIRONMENT.finditer(inner):
        if m.group(1).strip() not in ENVIRONMENTS:
            return False
    for m in _TEXT_ARGUMENT.finditer(inner):
        if m.group(1) in _TEXT_LIKE:
            close = inner.find("}", m.end())
            if close < 0 or "\\" in inner[m.end() : close] or "{" in inner[m.end() : close]:
                return False  # \text holds only plain text
    return True


def drawn(formula: str) -> str:
    """The characters a reader may see in ``formula``, drawn or shown as code: ``\\char`` codes and character
    references decoded, commands, their dimension arguments, braces and spaces dropped."""

    def char(m: re.Match[str]) -> str:
        hexa, octal, quoted, decimal = m.groups()
        code = int(hexa, 16) if hexa else int(octal, 8) if octal else ord(quoted) if quoted else int(decimal)
        return chr(code) if 0 < code < 0x110000 else ""

    decoded = html.unescape(_CHAR.sub(char, formula))
    return _DROP.sub("", decoded)


def math_spans(text: str) -> list[tuple[int, int]]:
    """The (start, end) of each math span of ``text``, found as the answer renderer (ui/render.py) finds
    them: each delimiter pair in LATEX_DELIMITERS order, left to right, lazily, over what earlier pairs left."""
    masked = list(text)
    spans: list[tuple[int, int]] = []
    for left, right, _ in LATEX_DELIMITERS:
        current = "".join(masked)
        position = 0
        while (start := current.find(left, position)) >= 0:
            end = current.find(right, start + len(left) + 1)
            if end < 0:
                break
            stop = end + len(right)
            spans.append((start, stop))
            masked[start:stop] = "\x00" * (stop - start)
            position = stop
    return sorted(spans)

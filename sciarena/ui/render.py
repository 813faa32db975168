"""Pure functions that turn records into the Markdown the page shows.

Anything a model, a corpus record or a search API wrote is neutralised here, not left to the
browser: gr.Markdown sanitises HTML in the browser only, and API clients read our strings as
they are. Answers keep the model's Markdown (headings, lists, tables, code, LaTeX) but never
its raw HTML (bare <br>, <sub> and <sup> aside) or auto-loading images; each ``[n]`` becomes a
link that opens reference n of the same answer and shows the passage both models were given
(see ``ANSWER_HEAD_JS``).
"""

from __future__ import annotations

import html
import re
from bisect import bisect_right
from typing import Callable, Sequence
from urllib.parse import quote, urlsplit

from sciarena.answer.canonical import without_link_titles
from sciarena.answer.mathspan import LATEX_DELIMITERS, renders
from sciarena.core.text import counted
from sciarena.core.types import Battle, ModelSpec, Paper, PipelineReport, Reference, Retrieval, SideResult

EXAMPLE_QUESTIONS: dict[str, tuple[str, ...]] = {
    "Natural Science": (
        "How does CRISPR-Cas9 achieve targeted genome editing, and what limits its precision?",
        "What did the first direct detection of gravitational waves reveal about black holes?",
    ),
    "Healthcare": (
        "How effective were mRNA vaccines against COVID-19 in the pivotal trials?",
        "What are the main challenges of using deep learning for medical image diagnosis?",
    ),
    "Humanities & Social Sciences": (
        "How does prospect theory explain decisions under risk differently from expected utility?",
        "What did large replication projects find about the reproducibility of psychology studies?",
    ),
    "Engineering": (
        "How does retrieval-augmented generation reduce hallucination in large language models?",
        "What are the recent trends in evaluating language models with pairwise human preferences?",
    ),
}

# (left, right, display) for gr.Markdown(latex_delimiters=...) on the answer boxes (answer/mathspan.py: Gradio
# matches them in this order over the raw string, so "$$" must come before "$"; safe_markdown does the same).


def latex_delimiters() -> list[dict[str, str | bool]]:
    """LATEX_DELIMITERS in the form gr.Markdown takes (a fresh list each call)."""
    return [{"left": left, "right": right, "display": display} for left, right, display in LATEX_DELIMITERS]


ANSWER_CSS = """
.answer-box table { display: block; width: max-content; max-width: 100%; overflow-x: auto; border: none; padding: 0; }
.answer-box .katex-display { overflow-x: auto; overflow-y: hidden; }
.answer-box pre { max-width: 100%; overflow-x: auto; }
.answer-box h1, .answer-box h2 { font-size: 1.2rem; }
.answer-box h3, .answer-box h4, .answer-box h5, .answer-box h6 { font-size: 1.05rem; }
.answer-box .turn-question { margin: 0 0 0.4rem; padding: 0.3rem 0.6rem; border-radius: 6px;
                             background: var(--background-fill-secondary); overflow-wrap: anywhere; }
.answer-box hr { margin: 0.9rem 0; }
a.cite { text-decoration: none; white-space: nowrap; font-weight: 600; }
a.cite:hover, a.cite:focus { text-decoration: underline; }
details.reference { margin: 0.3rem 0; padding: 0.25rem 0.5rem; border-left: 3px solid transparent;
                    border-radius: 4px; overflow-wrap: anywhere; }
details.reference > summary { cursor: pointer; }
details.reference .ref-passage { margin: 0.4rem 0 0.2rem 1.1rem; font-size: 0.92em; }
details.reference .ref-passage p { margin: 0.3rem 0; }
details.reference.ref-flash { border-left-color: var(--color-accent); background: var(--color-accent-soft); }
/* A multi-step contestant's current step: a tinted note in the body text's colour (the subdued grey
   was 2.4:1 on the light theme's background), as wide as its words, wrapping on a phone. */
.answer-box .step-status { width: fit-content; max-width: 100%; margin: 0 0 0.6rem; padding: 0.15rem 0.6rem;
                           border-radius: 6px; background: var(--color-accent-soft); color: var(--body-text-color);
                           font-size: 0.9em; line-height: 1.5; }
/* A pulsing dot instead of an emoji, which a machine without an emoji font draws as an empty box. */
.answer-box .step-status::before { content: ""; display: inline-block; width: 0.55em; height: 0.55em;
                                   margin-right: 0.45em; border-radius: 50%; background: var(--color-accent);
                                   animation: step-pulse 1.2s ease-in-out infinite; }
@keyframes step-pulse { 50% { opacity: 0.3; } }
@media (prefers-reduced-motion: reduce) { .answer-box .step-status::before { animation: none; } }
/* References an answer found with its own search (a pipeline's), marked in the closed list too. */
details.reference.ref-own > summary::after { content: "found by this answer"; margin-left: 0.4rem;
                                             padding: 0 0.4rem; border-radius: 4px; font-size: 0.8em;
                                             background: var(--color-accent-soft); }
"""

# Delegated, so it survives Gradio re-rendering the Markdown on every streamed update. It relies
# on the stable element ids answer-a/-b and references-a/-b: a citation opens the entry of the
# reference list under its own answer (both lists may hold a [1]).
ANSWER_HEAD_JS = """<script>
document.addEventListener("click", (event) => {
  const cite = event.target instanceof Element ? event.target.closest("a.cite") : null;
  if (!cite) return;
  event.preventDefault();
  const number = (cite.getAttribute("href") || "").replace("#ref-", "");
  const box = cite.closest("[id^='answer-']");
  if (!box || !/^[0-9]+$/.test(number)) return;
  const list = document.getElementById("references-" + box.id.slice("answer-".length));
  const entry = list && list.querySelector("details.ref-" + number);
  if (!entry) return;
  entry.open = true;
  entry.scrollIntoView({ block: "center" });
  entry.querySelector("summary")?.focus({ preventScroll: true });
  entry.classList.add("ref-flash");
  setTimeout(() => entry.classList.remove("ref-flash"), 2000);
});
// A pipeline's revision starts its text over; without this its box would shrink to nothing and grow
// again, pulling everything below it up and down. While the box shows its progress line (every side
// still answering does) it keeps the tallest height it has had; once complete it fits its text again.
new MutationObserver(() => {
  for (const box of document.querySelectorAll("[id^='answer-']")) {
    if (box.querySelector(".step-status")) {
      const height = Math.max(box.getBoundingClientRect().height, parseFloat(box.dataset.heldHeight || "0"));
      box.dataset.heldHeight = String(height);
      box.style.minHeight = height + "px";
    } else if (box.dataset.heldHeight) {
      delete box.dataset.heldHeight;
      box.style.minHeight = "";
    }
  }
}).observe(document.documentElement, { childList: true, subtree: true, characterData: true });
</script>"""

TOOLTIP_CHARS = 300
# Citations of one answer made into links; later ones stay plain "[n]". A real answer cites tens of times;
# a 240 kB run of "[1]" would otherwise become 30 MB of anchors and tooltips on every streamed update.
MAX_CITATION_LINKS = 300

# Characters that mean something to Markdown, to Gradio's LaTeX pass or to a table, encoded as
# HTML character references: the browser shows them, and no parser acts on them.
_MARKDOWN_SPECIAL = str.maketrans({c: f"&#{ord(c)};" for c in "[]|$\\"})
_HTML_SPECIAL = str.maketrans({c: f"&#{ord(c)};" for c in "[]|$\\*_`~"})
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def escape(text: str) -> str:
    """Show text literally inside Markdown: no HTML, links, images, table cells or LaTeX."""
    return html.escape(_CONTROL.sub("", text), quote=False).translate(_MARKDOWN_SPECIAL)


def escape_html(text: str) -> str:
    """Text for an HTML element or attribute: one line, every special character encoded."""
    flat = " ".join(_CONTROL.sub("", text).split())
    return html.escape(flat, quote=True).translate(_HTML_SPECIAL)


# ------------------------------------------------------------------------------ answers

# Any indentation: models put fenced code inside list items.
_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})[^\n]*(?:\n|$)", re.MULTILINE)
_BACKTICKS = re.compile(r"`+")
_CITATION = re.compile(r"\[(\d{1,4})\]")
# Bare <br>, <sub>, <sup>: no attributes, so nothing to load or run, and Markdown has no other way to
# break a line in a table cell or write CO₂-style chemistry and exponents.
_KEPT_TAG = re.compile(r"&lt;(/?)(br|sub|sup)\s*/?>", re.IGNORECASE)
_IMAGE = re.compile(r"!\[([^\[\]\n]*)\]\(")
_MATH_MARK = "\x00"


def answer_markdown(text: str, error: str | None = None, references: Sequence[Reference] = (),
                    status: str = "", markdown: Callable[[str, Sequence[Reference]], str] | None = None) -> str:
    """An answer as the voter sees it, the same while streaming and when complete.

    ``references`` are the entries listed under this answer: their ``[n]`` become links that
    open the entry (with the passage as a hover preview); other ``[n]`` stay plain text.
    ``status`` is the runner's progress line of a side still answering (the same for every contestant),
    shown as a small line above the text. ``markdown`` renders the text as safe_markdown does (a streaming
    answer passes its StreamedAnswer's, stream_render.py, which renders each finished paragraph once).
    """
    body = (markdown or safe_markdown)(text, references).strip()
    if error:
        note = f"**⚠ {escape(error)}** This battle cannot be voted on; please start a new battle."
        return f"{body}\n\n{note}" if body else note
    if status:
        line = f'<p class="step-status">{escape_html(status)}…</p>'
        return f"{line}\n\n{body}" if body else line
    return body or "*Waiting for the answer…*"


def safe_markdown(text: str, references: Sequence[Reference] = ()) -> str:
    """Model Markdown with raw HTML shown as text, images turned into links and [n] linked."""
    math: list[str] = []

    def hold(formula: str) -> str:
        # Only math the blind reading can read is drawn (answer/mathspan.py); the rest is shown as code.
        math.append(formula.replace("<", "&lt;") if renders(formula) else f"<code>{escape(formula)}</code>")
        return f"{_MATH_MARK}{len(math) - 1}{_MATH_MARK}"

    # Math first, as Gradio does, so a formula's "<", "[" or "_" is left for KaTeX.
    held = without_link_titles(_CONTROL.sub("", text).replace(_MATH_MARK, ""))
    for left, right, _ in LATEX_DELIMITERS:
        held = _hold_math(held, left, right, hold)
    by_number = {r.number: r for r in references}
    links: dict[int, str] = {}  # one anchor per number: a long answer cites the same paper often

    linked = [0]

    def cite(match: re.Match[str]) -> str:
        number = int(match.group(1))
        if linked[0] >= MAX_CITATION_LINKS:
            return f"&#91;{number}]"  # plain text, and never a Markdown link reference
        linked[0] += 1
        if number not in links:
            links[number] = _citation(number, by_number)
        return links[number]

    pieces = [piece if is_code else _neutralise(piece, cite) for piece, is_code in _split_code(held)]
    return re.sub(f"{_MATH_MARK}(\\d+){_MATH_MARK}", lambda m: math[int(m.group(1))], "".join(pieces))


def _hold_math(text: str, left: str, right: str, hold: Callable[[str], str]) -> str:
    """Each ``left``…``right`` span (at least one character inside) replaced by ``hold(span)``, read
    left to right as the lazy ``left([\\s\\S]+?)right`` would, in one pass: a regex retries from every
    unclosed opener and rescans to the end each time (quadratic on a run of "\\[")."""
    pieces: list[str] = []
    position = 0
    while (start := text.find(left, position)) >= 0:
        end = text.find(right, start + len(left) + 1)
        if end < 0:  # no closer after this opener, so none after any later one either
            break
        pieces += [text[position:start], hold(text[start:end + len(right)])]
        position = end + len(right)
    pieces.append(text[position:])
    return "".join(pieces)


def _split_code(text: str) -> list[tuple[str, bool]]:
    """(piece, is_code) pieces: fenced blocks (an unclosed fence runs to the end, as while
    streaming) and inline code spans are code; everything else is prose."""
    pieces: list[tuple[str, bool]] = []
    position = 0
    while position < len(text):
        fence = _FENCE.search(text, position)
        prose_end = fence.start() if fence else len(text)
        pieces.extend(_split_spans(text[position:prose_end]))
        if not fence:
            break
        marker = fence.group(1)
        closing = re.compile(f"^[ \\t]*{re.escape(marker[0])}{{{len(marker)},}}[ \\t]*(?:\n|$)", re.MULTILINE)
        close = closing.search(text, fence.end())
        position = close.end() if close else len(text)
        pieces.append((text[fence.start():position], True))
    return pieces


def _split_spans(text: str) -> list[tuple[str, bool]]:
    """Inline code spans: a run of n backticks up to the next run of exactly n. The runs are listed once
    and grouped by length, so an opener without a closer costs a lookup, not a rescan of the rest."""
    runs = [(m.start(), m.end()) for m in _BACKTICKS.finditer(text)]
    by_length: dict[int, list[int]] = {}
    for index, (start, end) in enumerate(runs):
        by_length.setdefault(end - start, []).append(index)
    pieces: list[tuple[str, bool]] = []
    position = 0
    for index, (start, end) in enumerate(runs):
        if start < position:
            continue
        same = by_length[end - start]
        later = bisect_right(same, index)
        if later == len(same):  # no matching run: the backticks are literal
            continue
        close_end = runs[same[later]][1]
        pieces += [(text[position:start], False), (text[start:close_end], True)]
        position = close_end
    pieces.append((text[position:], False))
    return pieces


def _neutralise(prose: str, cite: Callable[[re.Match[str]], str]) -> str:
    prose = prose.replace("<", "&lt;")  # raw HTML (tags, comments) is shown as text,
    prose = _KEPT_TAG.sub(lambda m: f"<{m.group(1)}{m.group(2).lower()}>", prose)  # but for these
    prose = _IMAGE.sub(lambda m: f"[image: {m.group(1)}](", prose)  # a link to click, not a fetch
    prose = prose.replace("![", "!&#91;")  # reference-style images
    return _CITATION.sub(cite, prose)


def _citation(number: int, by_number: dict[int, Reference]) -> str:
    ref = by_number.get(number)
    if by_number and ref is None:
        return f"&#91;{number}]"  # not in this answer's list; never a Markdown link reference
    title = f' title="{escape_html(_preview(ref))}"' if ref else ""
    return f'<a class="cite" href="#ref-{number}"{title}>[{number}]</a>'


def _preview(ref: Reference) -> str:
    passage = " ".join(ref.context[:2 * TOOLTIP_CHARS].split())
    if len(passage) > TOOLTIP_CHARS:
        passage = passage[:TOOLTIP_CHARS].rsplit(" ", 1)[0] + " …"
    return f"[{ref.number}] {ref.paper.title}: {passage}"


# ------------------------------------------------------------------------------ references

_DOI = re.compile(r"^10\.\d{4,9}/\S+$")
_DOI_PREFIX = re.compile(r"^(?:https?://(?:dx\.)?doi\.org/|doi:\s*)", re.IGNORECASE)
_LINK_KINDS = (  # (host, path prefix, label); the first match wins
    ("doi.org", "", "DOI"), ("dx.doi.org", "", "DOI"), ("arxiv.org", "", "arXiv"),
    ("pubmed.ncbi.nlm.nih.gov", "", "PubMed"), ("ncbi.nlm.nih.gov", "/pubmed", "PubMed"),
    ("pmc.ncbi.nlm.nih.gov", "", "PMC"), ("ncbi.nlm.nih.gov", "/pmc", "PMC"), ("europepmc.org", "", "Europe PMC"),
    ("semanticscholar.org", "", "Semantic Scholar"), ("api.semanticscholar.org", "", "Semantic Scholar"),
)


def web_url(url: str | None) -> str | None:
    """The URL if it is a plain http(s) address a browser can open, else None."""
    if not url or any(c.isspace() or ord(c) < 32 for c in url):
        return None
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname or parts.username or parts.password:
        return None
    return url


def doi_url(doi: str | None) -> str | None:
    bare = _DOI_PREFIX.sub("", (doi or "").strip())
    return f"https://doi.org/{quote(bare, safe='/:;()._-')}" if _DOI.match(bare) else None


def link_label(url: str) -> str:
    """What a link is: DOI, arXiv, PubMed, PMC, Semantic Scholar, or the publisher's host."""
    parts = urlsplit(url)
    host = (parts.hostname or "").removeprefix("www.")
    for kind_host, path, label in _LINK_KINDS:
        if host == kind_host and parts.path.startswith(path):
            return label
    return host


def paper_links(paper: Paper) -> list[tuple[str, str]]:
    """(label, url) for each distinct place to read the paper; unsafe URLs are dropped."""
    links: list[tuple[str, str]] = []
    for url in (web_url(paper.url), doi_url(paper.doi)):
        if url and url.rstrip("/") not in {u.rstrip("/") for _, u in links}:
            links.append((link_label(url), url))
    return links


def reference_line(ref: Reference) -> str:
    """One reference as HTML: number, title, authors, year, venue and labelled links."""
    paper = ref.paper
    authors = escape_html(paper.author_line)
    parts = [f"<b>[{ref.number}]</b> {escape_html(paper.title)}.", authors if authors.endswith(".") else authors + "."]
    if paper.year:
        parts.append(f"{paper.year}.")
    if paper.venue:
        parts.append(f"<i>{escape_html(paper.venue)}</i>.")
    parts += [f'<a href="{escape_html(url)}">{escape_html(label)}</a>' for label, url in paper_links(paper)]
    return " ".join(parts)


def reference_entry(ref: Reference, own: bool = False, revealed: bool = True) -> str:
    """A reference that opens on the passages the models were given (``own``: that this answer
    retrieved for itself). Before the vote (not ``revealed``) every entry says only that the answer was
    given it: "both models" would be untrue of a pipeline's own papers, and anything else would mark them.
    One line: a blank line would end Markdown's HTML block and let the passage text be read as Markdown."""
    passages = "".join(f"<p>{escape_html(p.text)}</p>" for p in sorted(ref.passages, key=lambda p: p.position))
    given = "Passage this answer found with its own search:" if own else \
        "Passage given to both models:" if revealed else "Passage this answer was given:"
    kind = "reference ref-own" if own else "reference"
    return (f'<details class="{kind} ref-{ref.number}"><summary>{reference_line(ref)}</summary>'
            f'<div class="ref-passage"><i>{given}</i>{passages}</div></details>')


def references_markdown(references: Sequence[Reference], own: frozenset[int] = frozenset(),
                        revealed: bool = True) -> str:
    """The list under an answer; ``own`` numbers the references that answer retrieved itself."""
    if not references:
        return "*This answer cites no reference.*"
    entries = "\n".join(reference_entry(r, r.number in own, revealed) for r in references)
    return "**References cited** (click one to read its passage)\n\n" + entries


def cited_markdown(side: SideResult | None, retrieval: Retrieval) -> str:
    """The references one answer cited, in order of their numbers."""
    if side is None or side.answer is None:
        return ""
    own = frozenset(r.number for r in side.extra_references)
    return references_markdown(side.cited_references(retrieval), own)


def cited_for_answer(side: SideResult | None, retrieval: Retrieval) -> tuple[Reference, ...]:
    """The ``references`` to pass to answer_markdown for a finished side: the ones listed under it."""
    if side is None or side.answer is None:
        return ()
    return tuple(side.cited_references(retrieval))


# ------------------------------------------------------------------------------ a conversation (follow-ups)

def conversation_markdown(battle: Battle, letter: str, text: str, error: str | None = None,
                          references: Sequence[Reference] = (), status: str = "", revealed: bool = False,
                          markdown: Callable[[str, Sequence[Reference]], str] | None = None) -> str:
    """One side's panel: its answer (``text``, the last turn as streamed or finished, rendered as
    answer_markdown renders it) after each earlier turn's question and answer, turn by turn. A battle
    without follow-ups shows exactly its answer. Earlier answers are shown as they were before the vote
    (names the question shares with the catalogue still hidden) unless ``revealed``."""
    current = answer_markdown(text, error, references, status, markdown)
    turns = battle.turns
    if len(turns) == 1:
        return current
    parts = []
    for index, turn in enumerate(turns[:-1]):
        side = turn.side(letter)
        answer = side.answer if side is not None else None
        shown = "" if answer is None else (answer.text if revealed else answer.before_vote)
        parts.append(f"{turn_question(index, turn.question)}\n\n"
                     f"{answer_markdown(shown, None, battle.cited_in(letter, index))}")
    parts.append(f"{turn_question(len(turns) - 1, turns[-1].question)}\n\n{current}")
    return "\n\n<hr>\n\n".join(parts)


def question_html(question: str) -> str:
    """A visitor's question for a header: every character shown as typed (escape_html), except its formulas
    (LATEX_DELIMITERS, as in the answers), kept for KaTeX to draw like the answers' own."""
    math: list[str] = []

    def hold(formula: str) -> str:  # a private-use mark: escape_html keeps it, a typed one is removed first
        math.append(html.escape(formula, quote=False))
        return f"\ue000{len(math) - 1}\ue001"

    held = re.sub("[\ue000\ue001]", "", question)
    for left, right, _ in LATEX_DELIMITERS:
        held = _hold_math(held, left, right, hold)
    return re.sub("\ue000(\\d+)\ue001", lambda m: math[int(m.group(1))], escape_html(held))


def turn_question(index: int, question: str) -> str:
    label = "Question" if index == 0 else f"Follow-up {index}"
    return f'<p class="turn-question"><b>{label}:</b> {question_html(question)}</p>'


def conversation_cited(battle: Battle, letter: str, revealed: bool = False) -> str:
    """The references one side cited in any finished turn, in number order ("" before any answer). Those the
    side found with its own search are marked only once ``revealed``: before the vote the mark would say
    which side is a pipeline, so they are listed as plain references there (numbered as they are)."""
    cited: dict[int, Reference] = {}
    for index, turn in enumerate(battle.turns):
        side = turn.side(letter)
        if side is not None and side.answer is not None:
            cited.update((r.number, r) for r in battle.cited_in(letter, index))
    if not cited and not any(t.side(letter) is not None and t.side(letter).answer is not None  # type: ignore[union-attr]
                             for t in battle.turns):
        return ""
    own = frozenset(r.number for t in battle.turns if revealed and t.side(letter) is not None
                    for r in t.side(letter).extra_references)  # type: ignore[union-attr]
    return references_markdown([cited[n] for n in sorted(cited)], own, revealed)


# ------------------------------------------------------------------------------ status and reveal

_BACKEND_NAMES = {"local:demo": "the bundled demo corpus", "semantic_scholar": "Semantic Scholar"}


def backend_label(backend: str) -> str:
    """A visitor-facing name for a retrieval backend; never a server path."""
    if backend in _BACKEND_NAMES:
        return _BACKEND_NAMES[backend]
    return "the local datastore" if backend.startswith("local:") else "the search service"


# Shown in every battle, whatever the pair: a pipeline contestant retrieves more papers of its own, so "the same
# references" holds for the start only, and saying so only when a pipeline plays would unmask it.
SAME_START = "Both models start from these references; a contestant may search for more."


def retrieval_status(retrieval: Retrieval, follow_up: bool = False) -> str:
    """The status line of a turn's search; ``follow_up``: the follow-up's, whose references are the new ones."""
    if follow_up:
        added = retrieval.references
        if not added:
            return "Follow-up: no new papers found; both models answer from the references so far."
        numbers = f"[{added[0].number}]" + (f"–[{added[-1].number}]" if len(added) > 1 else "")
        see = "both models see them" if len(added) > 1 else "both models see it"
        return (f"Follow-up: {counted(len(added), 'new paper')} found "
                f"({backend_label(retrieval.backend)}) in {retrieval.seconds * 1000:.0f} ms, numbered {numbers}; "
                f"{see}.")
    papers = len(retrieval.references)
    passages = sum(len(r.passages) for r in retrieval.references)
    text = (f"Retrieved {counted(passages, 'passage')} from {counted(papers, 'paper')} "
            f"({backend_label(retrieval.backend)}) in {retrieval.seconds * 1000:.0f} ms. {SAME_START}")
    if retrieval.note:
        text += f" {escape(retrieval.note)}"
    if not papers:
        text = "No matching papers were found; the models will say so. Try other words."
    return text


def model_label(spec: ModelSpec) -> str:
    label = escape(spec.name)
    offline = " — an offline baseline algorithm, not a language model"
    if spec.base is not None:
        base = escape(spec.base.name) + (", itself an offline baseline algorithm" if spec.base.offline else "")
        return (f"{label} — a pipeline around {base}: draft, self-feedback, extra retrieval, revision and a "
                "citation check")
    return label + offline if spec.offline else label


def pipeline_summary(report: PipelineReport | None) -> str:
    """What a pipeline did for this answer, in one line (empty for a plain model)."""
    if report is None:
        return ""
    parts = [f"{report.calls} call{'s' * (report.calls != 1)} to its base",
             f"{report.revisions_kept} revision{'s' * (report.revisions_kept != 1)} kept"]
    if report.extra_passages:
        parts.append(f"{report.extra_passages} extra passage{'s' * (report.extra_passages != 1)}")
    if report.statements_checked:
        parts.append(f"{report.citations_added} of {report.statements_checked} statements given a citation "
                     f"by the check, {report.unsupported} without support found")
    if report.stopped:
        parts.append(f"stopped early: {report.stopped}")
    if report.steps:  # shown only now: before the vote a running pipeline looks like any model
        parts.append("steps: " + ", ".join(report.steps))
    return "; ".join(parts)


def reveal_markdown(battle: Battle, choice: str) -> str:
    verdict = {"A": "You preferred Model A.", "B": "You preferred Model B.",
               "tie": "You called it a tie.", "bad": "You found both answers poor."}[choice]
    lines = [f"**Thank you — your vote is recorded.** {verdict}\n"]
    for letter, spec, side in (("A", battle.model_a, battle.side_a), ("B", battle.model_b, battle.side_b)):
        summary = pipeline_summary(side.report if side else None)
        lines.append(f"- **Model {letter}:** {model_label(spec)}" + (f" ({escape(summary)})" if summary else ""))
    return "\n".join(lines) + "\n\nPress **New battle** to ask another question."

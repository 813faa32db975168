"""What a voter takes away from a battle once the names are revealed.

Under each answer, after the vote (before it, the exports and figures could unmask a model): the
side's time to first token, total time, tokens and cost; "Copy as Markdown" (the answer with its
reference list); the cited references as BibTeX and RIS files (retrieval/bibliography.py). In the
vote bar: "Share", which gives the battle a read-only link (ui/battle_view.py), recorded with the
vote. The keyboard shortcuts for the four votes are here too (``SHORTCUT_JS``).

The same pieces render a stored record (the battle view), so they take plain values, not a live
battle: ``side_export`` builds them from either.
"""

from __future__ import annotations

import base64
import html
import re
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import gradio as gr

from sciarena.core.types import Paper, Passage, Reference
from sciarena.wiring import ArenaSession, bibtex, papers_of, ris

# One key per vote button (app.VOTE_BUTTONS' ids): shown on the button by CSS, pressed by SHORTCUT_JS.
SHORTCUTS = (("vote-a", "a"), ("vote-b", "b"), ("vote-tie", "t"), ("vote-bad", "x"))

# In the page head: a key press clicks its vote button, unless the visitor is typing (any input,
# text area, select or editable element has the focus), a modifier is held (Ctrl+A selects text),
# or the button is disabled — it is enabled only once both answers are complete and until the vote.
SHORTCUT_JS = """<script>
(() => {
  const keys = %s;
  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey || event.repeat) return;
    const target = event.target;
    if (target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName))) return;
    const id = keys[event.key.toLowerCase()];
    const button = id && document.getElementById(id);
    if (!button || button.disabled) return;
    event.preventDefault();
    button.click();
  });
  new MutationObserver(() => {
    for (const [key, id] of Object.entries(keys)) {
      const button = document.getElementById(id);
      if (button && !button.hasAttribute("aria-keyshortcuts")) {
        button.setAttribute("aria-keyshortcuts", key.toUpperCase());
      }
    }
  }).observe(document.documentElement, {childList: true, subtree: true});
})();
</script>""" % ("{" + ", ".join(f'"{key}": "{eid}"' for eid, key in SHORTCUTS) + "}")

CSS = "\n".join(
    f'#{eid}::after {{ content: "{key.upper()}"; margin-left: 0.45em; padding: 0 0.35em; font-size: 0.75em; '
    'border: 1px solid currentColor; border-radius: 4px; opacity: 0.7; font-family: ui-monospace, monospace; }'
    for eid, key in SHORTCUTS) + """
.takeaway { gap: 0.4rem; margin-top: 0.5rem; }
.takeaway .side-stats, .takeaway .side-stats p { font-size: 0.9rem; color: var(--body-text-color-subdued); }
/* Copy (a Gradio button) and the two downloads (links) are one set of three: drawn alike, flush left. */
.takeaway-files a, .takeaway .copy-button {
  display: inline-block; margin: 0.15rem 0.6rem 0.15rem 0; padding: 0.3rem 0.7rem; font-size: 0.9rem !important;
  font-weight: 400; line-height: 1.4; text-decoration: none; color: var(--link-text-color) !important;
  background: var(--background-fill-primary) !important; border: 1px solid var(--border-color-primary) !important;
  border-radius: 6px !important; box-shadow: none !important; }
.takeaway-files { margin: 0; }
.block.files-block, .block.files-block .html-container { padding: 0 !important; }
#battle-link a { font-weight: 600; }
.takeaway .copy-button { align-self: flex-start; width: auto !important; min-width: 0 !important; max-width: 14rem; }
.share-row { gap: 0; }
"""

# Copies its text (the hidden box's value) to the clipboard; where the Clipboard API is refused
# (an insecure origin), a selected text area and execCommand still copy it.
# The button then says "Copied" for two seconds.
COPY_JS = """async (text) => {
  try { await navigator.clipboard.writeText(text); }
  catch (error) {
    const area = document.createElement("textarea");
    area.value = text; document.body.appendChild(area); area.select();
    document.execCommand("copy"); area.remove();
  }
  const button = document.activeElement;
  if (button && button.tagName === "BUTTON" && !button.dataset.label) {
    button.dataset.label = button.innerText;
    button.innerText = "Copied";
    setTimeout(() => { button.innerText = button.dataset.label; delete button.dataset.label; }, 2000);
  }
}"""

SHARE_LABEL = "Share this battle: a public link to its question, answers, references, names and vote"
SHARE_REASON_LABEL = "…with my reason"


@dataclass(frozen=True)
class SideExport:
    """One answer as it is taken away."""

    letter: str  # "A" | "B"
    model: str
    markdown: str  # the answer with its reference list, for the clipboard
    bibtex: str
    ris: str
    stats: str  # "First token 0.4 s · total 2.1 s · …", "All 3 turns: total 5.2 s · … · turn 1: …" or ""


# A follow-up turn as the take-away reads it: the question, this side's answer, the references it cited.
FollowUp = tuple[str, str, Sequence[Reference]]


def side_export(battle_id: str, question: str, letter: str, model: str, text: str,
                references: Sequence[Reference], figures: Mapping[str, Any],
                followups: Sequence[FollowUp] = ()) -> SideExport:
    """One side's take-away; with ``followups`` the whole conversation and every reference it cited."""
    cited = {r.number: r for r in (*references, *(r for _, _, refs in followups for r in refs))}
    ordered = [cited[n] for n in sorted(cited)]
    papers = papers_of(ordered)
    return SideExport(letter=letter, model=model,
                      markdown=answer_as_markdown(question, model, text, ordered, followups),
                      bibtex=bibtex(papers), ris=ris(papers), stats=stats_line(figures))


def answer_as_markdown(question: str, model: str, text: str, references: Sequence[Reference],
                       followups: Sequence[FollowUp] = ()) -> str:
    """The answer (and any follow-up turns) with its references as plain Markdown, ready to paste into notes."""
    lines = [f"**Question:** {question.strip()}", "", f"**Answer by {model}** (SciArena)", "", text.strip()]
    for number, (asked, answered, _) in enumerate(followups, start=1):
        lines += ["", f"**Follow-up {number}:** {asked.strip()}", "", answered.strip()]
    if references:
        lines += ["", "**References**", ""]
        lines += [f"[{r.number}] {reference_text(r.paper)}" for r in references]
    return "\n".join(lines) + "\n"


def reference_text(paper: Paper) -> str:
    """'Curie, M. … (1903). Title. *Venue*. https://doi.org/…' in one line."""
    parts = [paper.author_line + (f" ({paper.year})." if paper.year else "."), f"{paper.title.rstrip('.')}."]
    if paper.venue:
        parts.append(f"*{paper.venue}*.")
    link = f"https://doi.org/{paper.doi}" if paper.doi else paper.url
    if link:
        parts.append(link)
    return " ".join(parts)


def stats_line(figures: Mapping[str, Any]) -> str:
    """The side's measured figures; each is left out when the side did not report it.

    A conversation's figures (``summed_figures`` of several turns) say so: "All 3 turns:" before the sums,
    then each turn's own first-token and total time, as the record's ``turns`` store them."""
    per_turn = figures.get("per_turn") or ()
    parts = [] if len(per_turn) > 1 else _timing(figures.get("first_token_s"), figures.get("total_s"))
    if len(per_turn) > 1 and _is_number(figures.get("total_s")):
        parts.append(f"total {_seconds(figures['total_s'])}")
    tokens_in, tokens_out = figures.get("input_tokens"), figures.get("output_tokens")
    if isinstance(tokens_in, int) or isinstance(tokens_out, int):
        parts.append(f"{_count(tokens_in)} tokens in, {_count(tokens_out)} out")
    cost = figures.get("cost_usd")
    if isinstance(cost, (int, float)):
        parts.append("cost $0 (runs locally)" if cost == 0 else f"cost ${cost:.4f}")
    elif figures.get("offline"):
        parts.append("no cost (an offline baseline)")
    if len(per_turn) > 1:
        turns = [f"turn {n}: {', '.join(_timing(first, total)) or 'not timed'}"
                 for n, (first, total) in enumerate(per_turn, start=1)]
        return f"All {len(per_turn)} turns: " + " · ".join([*parts, *turns])
    return " · ".join(parts).capitalize() if parts else ""


def _timing(first: Any, total: Any) -> list[str]:
    """"first token 0.4 s", "total 2.1 s"; one phrase when they are equal as shown (the whole answer arrived
    in one piece), so the line does not look like a copy of one number."""
    if _is_number(first) and _is_number(total) and _seconds(first) == _seconds(total):
        return [f"first token and total both {_seconds(total)}"]
    return ([f"first token {_seconds(first)}"] if _is_number(first) else []) + (
        [f"total {_seconds(total)}"] if _is_number(total) else [])


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def summed_figures(turns: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """A conversation's figures: time, tokens and cost summed over the turns (a sum is left out — None — when
    a turn did not report its part, rather than understated), and ``per_turn``, each turn's own
    (first token, total) times; one turn's figures are its own."""
    if len(turns) == 1:
        return dict(turns[0])
    out: dict[str, Any] = {"offline": turns[0].get("offline"),
                           "per_turn": [(t.get("first_token_s"), t.get("total_s")) for t in turns]}
    for key in ("total_s", "input_tokens", "output_tokens", "cost_usd"):
        values = [t.get(key) for t in turns]
        out[key] = sum(values) if all(_is_number(v) for v in values) else None  # type: ignore[arg-type]
    return out


def _seconds(value: float) -> str:
    """Two significant figures below ten seconds (an offline side answers in milliseconds)."""
    return f"{value:.2g} s" if value < 10 else f"{value:.0f} s"


def _count(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) else "?"


def download_links(export: SideExport, battle_id: str) -> str:
    """Two links that save the files (data URLs: nothing is written on the server)."""
    stem = f"sciarena-{re.sub(r'[^A-Za-z0-9]', '', battle_id)[:12]}-{export.letter.lower()}"
    if not export.bibtex:
        return '<p class="takeaway-files"><i>This answer cites no reference to download.</i></p>'
    links = [_data_link(export.bibtex, "application/x-bibtex", f"{stem}.bib", "References as BibTeX",
                        f"download-bib-{export.letter.lower()}"),
             _data_link(export.ris, "application/x-research-info-systems", f"{stem}.ris", "References as RIS",
                        f"download-ris-{export.letter.lower()}")]
    return f'<p class="takeaway-files">{"".join(links)}</p>'


def _data_link(content: str, mime: str, filename: str, label: str, eid: str) -> str:
    data = base64.b64encode(content.encode("utf-8")).decode("ascii")
    return (f'<a id="{eid}" download="{html.escape(filename)}" '
            f'href="data:{mime};charset=utf-8;base64,{data}">{html.escape(label)}</a>')


def references_from_citations(citations: Sequence[Mapping[str, Any]] | None) -> list[Reference]:
    """The references of a stored record (votes/schema.citation_record) as records again."""
    out: list[Reference] = []
    for item in citations or ():
        if not isinstance(item, Mapping) or not item.get("title"):
            continue
        authors_text = str(item.get("authors") or "")
        et_al = authors_text.endswith(", et al.")
        authors_text = authors_text.removesuffix(", et al.")
        authors = () if authors_text in ("", "Unknown authors") else tuple(a.strip() for a in authors_text.split(", "))
        url = item.get("url") or None
        doi = url.split("doi.org/", 1)[1] if isinstance(url, str) and "//doi.org/" in url else None
        year = item.get("year") if isinstance(item.get("year"), int) else None
        paper = Paper(paper_id=str(item.get("id") or ""), title=str(item["title"]), authors=authors, et_al=et_al,
                      year=year, venue=str(item.get("venue") or ""), doi=doi, url=None if doi else url)
        number = item.get("number") if isinstance(item.get("number"), int) else len(out) + 1
        passage = Passage(passage_id=f"{paper.paper_id}#{number}", paper=paper, text=str(item.get("content") or ""))
        out.append(Reference(number=number, paper=paper, passages=(passage,) if passage.text else ()))
    return out


# --- the Arena tab's pieces --------------------------------------------------------------------------
@dataclass(frozen=True)
class SidePanel:
    box: gr.Column  # hidden until the vote
    stats: gr.Markdown
    markdown: gr.Textbox  # hidden: what Copy puts on the clipboard
    copy: gr.Button
    files: gr.HTML


@dataclass(frozen=True)
class TakeawayView:
    a: SidePanel
    b: SidePanel
    share: gr.Checkbox
    share_reason: gr.Checkbox
    link: gr.Markdown

    @property
    def outputs(self) -> list[Any]:
        return [*(c for p in (self.a, self.b) for c in (p.box, p.stats, p.markdown, p.files)), self.link]


def side_panel(letter: str) -> SidePanel:
    """Lay out one answer's take-away (inside its column); hidden until the vote."""
    low = letter.lower()
    with gr.Column(visible=False, elem_id=f"takeaway-{low}", elem_classes="takeaway") as box:
        stats = gr.Markdown("", elem_id=f"stats-{low}", elem_classes="side-stats")
        # Stacked, not in a row: a Gradio row squeezes its items rather than wrapping them on a phone.
        copy = gr.Button("Copy as Markdown", elem_id=f"copy-{low}", size="sm", elem_classes="copy-button")
        files = gr.HTML("", elem_id=f"files-{low}", elem_classes="files-block")
        markdown = gr.Textbox(visible=False)
    return SidePanel(box=box, stats=stats, markdown=markdown, copy=copy, files=files)


def share_controls() -> tuple[gr.Checkbox, gr.Checkbox]:
    """The share choice, given with the vote (the record is written once, at the vote)."""
    with gr.Column(elem_classes="share-row"):  # stacked, as above
        share = gr.Checkbox(label=SHARE_LABEL, value=False, elem_id="share")
        share_reason = gr.Checkbox(label=SHARE_REASON_LABEL, value=False, elem_id="share-reason")
    return share, share_reason


def build_view(a: SidePanel, b: SidePanel, share: gr.Checkbox, share_reason: gr.Checkbox) -> TakeawayView:
    link = gr.Markdown("", elem_id="battle-link")
    return TakeawayView(a=a, b=b, share=share, share_reason=share_reason, link=link)


def wire(view: TakeawayView, revealed: gr.Markdown, session: gr.State) -> None:
    """Fill the take-away when the reveal appears, blank it when the reveal is blanked (a new battle)."""
    revealed.change(lambda s: show(view, s), [session], view.outputs, api_visibility="private", queue=False)
    for panel in (view.a, view.b):
        panel.copy.click(None, [panel.markdown], None, js=COPY_JS, api_visibility="private", queue=False)


def show(view: TakeawayView, session: ArenaSession | None) -> dict[Any, Any]:
    """The take-away of the session's voted battle; hidden panels when there is none."""
    vote = session.vote if session else None
    if vote is None:
        hidden = {c: "" for p in (view.a, view.b) for c in (p.stats, p.markdown, p.files)}
        return {**hidden, view.a.box: gr.update(visible=False), view.b.box: gr.update(visible=False), view.link: ""}
    battle = vote.battle
    updates: dict[Any, Any] = {}
    for panel, letter, spec in ((view.a, "A", battle.model_a), (view.b, "B", battle.model_b)):
        low = letter.lower()
        sides = [t.side(low) for t in battle.turns]
        assert all(s is not None and s.answer is not None for s in sides)  # a vote needs every answer
        figures = summed_figures([{"first_token_s": s.first_token_s, "total_s": s.total_s,  # type: ignore[union-attr]
                                   "input_tokens": s.usage.input_tokens,  # type: ignore[union-attr]
                                   "output_tokens": s.usage.output_tokens,  # type: ignore[union-attr]
                                   "cost_usd": s.cost_usd, "offline": spec.offline} for s in sides])  # type: ignore[union-attr]
        followups = [(t.question, t.side(low).answer.text, battle.cited_in(low, i))  # type: ignore[union-attr]
                     for i, t in enumerate(battle.turns) if i > 0]
        first = sides[0]
        export = side_export(battle.battle_id, battle.question, letter, spec.name, first.answer.text,  # type: ignore[union-attr]
                             battle.cited_in(low, 0), figures, followups)
        updates |= {panel.box: gr.update(visible=True), panel.stats: export.stats, panel.markdown: export.markdown,
                    panel.files: download_links(export, battle.battle_id)}
    updates[view.link] = share_markdown(battle.battle_id, vote.shared)
    return updates


def share_markdown(battle_id: str, shared: bool) -> str:
    if not shared:
        return "This battle is not shared (tick “Share” before voting to get a link). It is listed under *My battles*."
    return (f"[Link to this battle](?battle={battle_id}) — anyone with it can read this battle "
            "(never who voted). It is also listed under *My battles*.")

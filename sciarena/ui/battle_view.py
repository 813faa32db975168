"""A battle's own page (``?battle=<id>``) and the "My battles" panel (folded, under the battle).

The link opens a read-only view above the tabs: question, both answers with their references and
passages, the model names, the vote, each side's figures and its BibTeX/RIS — for a stored battle
(this machine's shards or the public dataset's copies) whose voter ticked "share". The voter id is
never shown; the reason only when the voter shared it too. Anything else — an unknown id, an
unshared battle — gets the same plain "not found", so a link reveals nothing about battles that
were not shared. The voter's own battles open for them whether shared or not (with their reason).

"My battles" lists the battles voted under this browser's key (or signed-in account, or this
visit's session), matched on the hashed voter id (votes/voter.py); the ids are computed on the
server from what the page sends, never listed from other voters. Clearing the site's data drops
the key, and with it the list.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import gradio as gr

from sciarena.core.types import CHOICES
from sciarena.ui import render
from sciarena.ui.takeaway import download_links, references_from_citations, side_export, summed_figures
from sciarena.wiring import BattleArchive, Visitor, voter_id

NOT_FOUND = "**Battle not found.** The link may be mistyped, or its voter did not share this battle."
VOTE_WORDS = {"A": "Model A was preferred", "B": "Model B was preferred", "tie": "A tie",
              "bad": "Both answers were found poor"}

CSS = """
#battle-view { border: 1px solid var(--border-color-primary); border-radius: 8px; padding: 0.75rem 1rem; }
#my-battles-list table { font-size: 0.92rem; }
"""

# Runs on page load, in the browser: this browser's key (as app.BROWSER_JS keeps it) and the
# battle named in the address, if any.
URL_JS = """() => {
  let key = "";
  try { key = localStorage.getItem("sciarena-browser-key") || ""; } catch (error) {}
  return [key, new URLSearchParams(window.location.search).get("battle") || ""];
}"""

KEY_JS = """() => { try { return localStorage.getItem("sciarena-browser-key") || ""; } catch (e) { return ""; } }"""


@dataclass(frozen=True)
class SideView:
    answer: gr.Markdown
    references: gr.Markdown
    stats: gr.Markdown
    files: gr.HTML


@dataclass(frozen=True)
class BattleView:
    box: gr.Column
    head: gr.Markdown
    sides: gr.Row
    a: SideView
    b: SideView
    key: gr.Textbox  # hidden: the browser key, filled by URL_JS
    battle_id: gr.Textbox  # hidden: the id in the address

    @property
    def outputs(self) -> list[Any]:
        return [self.box, self.head, self.sides,
                *(c for s in (self.a, self.b) for c in (s.answer, s.references, s.stats, s.files))]


@dataclass(frozen=True)
class MyBattles:
    panel: gr.Accordion
    listing: gr.Markdown
    refresh: gr.Button


def build_view() -> BattleView:
    """The read-only battle, above the tabs (hidden unless the address names a battle)."""
    with gr.Column(visible=False, elem_id="battle-view") as box:
        head = gr.Markdown("", elem_id="battle-view-head", latex_delimiters=render.latex_delimiters())
        with gr.Row(equal_height=False, visible=False) as sides:
            a, b = (_side_view(letter) for letter in ("a", "b"))
        gr.Markdown("[Ask your own question](./)", elem_id="battle-view-home")
    return BattleView(box=box, head=head, sides=sides, a=a, b=b, key=gr.Textbox(visible=False),
                      battle_id=gr.Textbox(visible=False))


def _side_view(letter: str) -> SideView:
    with gr.Column(min_width=320):
        answer = gr.Markdown(elem_id=f"view-answer-{letter}", elem_classes="answer-box",
                             latex_delimiters=render.latex_delimiters())
        references = gr.Markdown(elem_id=f"view-references-{letter}")  # then figures and files, as in the arena
        with gr.Column(elem_classes="takeaway"):  # the arena's take-away styles (ui/takeaway.py CSS)
            stats = gr.Markdown("", elem_id=f"view-stats-{letter}", elem_classes="side-stats")
            files = gr.HTML("", elem_id=f"view-files-{letter}", elem_classes="files-block")
    return SideView(answer=answer, references=references, stats=stats, files=files)


def my_battles_panel() -> MyBattles:
    """A folded panel at the end of the Arena tab."""
    with gr.Accordion("My battles", open=False, elem_id="my-battles") as panel:
        gr.Markdown("The battles voted from this browser (or your signed-in account). Only you see this list; "
                    "clearing this site's data in your browser forgets it.")
        refresh = gr.Button("Refresh", elem_id="my-battles-refresh", size="sm")
        listing = gr.Markdown("", elem_id="my-battles-list")
    return MyBattles(panel=panel, listing=listing, refresh=refresh)


def visitor_ids(salt: str, key: str | None, request: gr.Request | None, profile: gr.OAuthProfile | None) -> list[str]:
    """Every id this visitor may have voted under: signed in, this browser's key, this visit's session."""
    username = getattr(profile, "username", None) or None
    session = getattr(request, "session_hash", None) or None
    visitors = (Visitor(username=username), Visitor(browser_key=(key or "").strip() or None),
                Visitor(session_hash=session))
    return [i for i in (voter_id(v, salt) for v in visitors) if i]


def wire(demo: gr.Blocks, view: BattleView, mine: MyBattles, revealed: gr.Markdown, archive: BattleArchive,
         salt: str) -> None:
    """Open the battle the address names on load; fill My battles on opening it, on Refresh and when a
    vote's reveal appears (``revealed`` changes) — not on every page load, where it is still folded."""

    def open_battle(key: str | None, battle_id: str | None, request: gr.Request,
                    profile: gr.OAuthProfile | None) -> dict[Any, Any]:
        return view_updates(view, archive, battle_id, visitor_ids(salt, key, request, profile))

    def list_mine(key: str | None, request: gr.Request, profile: gr.OAuthProfile | None) -> str:
        return my_battles_markdown(archive, visitor_ids(salt, key, request, profile))

    demo.load(open_battle, [view.key, view.battle_id], view.outputs, js=URL_JS, api_visibility="private")
    listing: Callable[..., Any] = list_mine
    for trigger in (mine.refresh.click, mine.panel.expand, revealed.change):
        trigger(listing, [view.key], mine.listing, js=KEY_JS, api_visibility="private")


def view_updates(view: BattleView, archive: BattleArchive, battle_id: str | None,
                 own_ids: list[str]) -> dict[Any, Any]:
    """The view of ``battle_id``: the visitor's own battle, else a shared one, else "not found"."""
    wanted = (battle_id or "").strip()
    blank = {c: "" for s in (view.a, view.b) for c in (s.answer, s.references, s.stats, s.files)}
    if not wanted:
        return {**blank, view.box: gr.update(visible=False), view.head: "", view.sides: gr.update(visible=False)}
    record = archive.own(wanted, own_ids) or archive.shared(wanted)
    if record is None:
        return {**blank, view.box: gr.update(visible=True), view.head: NOT_FOUND,
                view.sides: gr.update(visible=False)}
    updates: dict[Any, Any] = {view.box: gr.update(visible=True), view.head: head_markdown(record),
                               view.sides: gr.update(visible=True)}
    turns = record_turns(record)
    for side, letter in ((view.a, "A"), (view.b, "B")):
        low = letter.lower()
        asked = [(str(t.get("question") or ""), str(t.get(f"response{letter}") or ""),
                  references_from_citations(t.get(f"citations_{low}"))) for t in turns]
        figures = summed_figures([{"first_token_s": t.get(f"first_token_s_{low}"), "total_s": t.get(f"latency_s_{low}"),
                                   "input_tokens": t.get(f"input_tokens_{low}"),
                                   "output_tokens": t.get(f"output_tokens_{low}"),
                                   "cost_usd": t.get(f"cost_usd_{low}")} for t in turns])
        model = str(record.get(f"model{letter}") or "unknown")
        (question, text, references), followups = asked[0], asked[1:]
        export = side_export(str(record.get("id")), question, letter, model, text, references, figures, followups)
        cited = {r.number: r for _, _, refs in asked for r in refs}
        body = render.answer_markdown(text, references=references) if not followups else "\n\n<hr>\n\n".join(
            f"{render.turn_question(i, q)}\n\n{render.answer_markdown(t, references=refs)}"
            for i, (q, t, refs) in enumerate(asked))
        updates |= {side.answer: f"**Model {letter}: {render.escape(model)}**\n\n" + body,
                    side.references: render.references_markdown([cited[n] for n in sorted(cited)]),
                    side.stats: export.stats, side.files: download_links(export, str(record.get("id")))}
    return updates


def record_turns(record: dict[str, Any]) -> list[dict[str, Any]]:
    """A stored record's turns (schema 5 ``turns``); an older record, or one whose ``turns`` is unreadable,
    is its one question, read from the released fields."""
    turns = record.get("turns")
    if isinstance(turns, list) and turns and all(isinstance(t, dict) for t in turns):
        return turns
    return [record]


def head_markdown(record: dict[str, Any]) -> str:
    vote = str(record.get("vote") or "")
    verdict = VOTE_WORDS.get(vote if vote in CHOICES else vote.lower(), f"Vote: {render.escape(vote)}")
    names = f"**Model A:** {render.escape(str(record.get('modelA') or '?'))} · " \
            f"**Model B:** {render.escape(str(record.get('modelB') or '?'))}"
    lines = ["## A SciArena battle", f"**Question:** {render.question_html(str(record.get('question') or ''))}", "",
             names, "", f"**Vote:** {verdict}" + (f" · {_date(record)}" if _date(record) else "")]
    asked = len(record_turns(record))
    if asked > 1:
        lines += ["", f"{asked} questions: the first and {asked - 1} follow-up{'s' if asked > 2 else ''}; "
                      "the vote is on the whole conversation."]
    if record.get("reason"):
        lines += ["", f"**Reason given:** {render.escape(str(record['reason']))}"]
    return "\n".join(lines)


def _date(record: dict[str, Any]) -> str:
    stamp = str(record.get("timestamp") or "")
    return stamp[:10] if len(stamp) >= 10 else ""


def my_battles_markdown(archive: BattleArchive, own_ids: list[str]) -> str:
    battles = archive.for_voter(own_ids)
    if not battles:
        return "*No battles yet: the battles you vote on appear here.*"
    # A list, not a table: five columns are unreadable on a phone.
    items = []
    for b in battles:
        question = render.escape(" ".join(b.question.split()))
        vote = {"A": "you preferred A", "B": "you preferred B", "tie": "you called it a tie",
                "bad": "you found both poor"}.get(b.vote, render.escape(b.vote))
        details = [b.timestamp[:10], f"A: {render.escape(b.model_a)} · B: {render.escape(b.model_b)}", vote]
        if b.shared:
            details.append("shared")
        items.append(f"- **[{question}](?battle={b.battle_id})**  \n  {' · '.join(d for d in details if d)}")
    return "\n".join(items)

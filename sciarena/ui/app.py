"""build_app(services) -> gr.Blocks: the page, its stable element ids and its public API.

Stable hooks (scripted clients and browser tests rely on them):
element ids question, send, answer-a, answer-b, references-a, references-b, vote-a, vote-b, vote-tie,
vote-bad, vote-field, reason, consent, followup-box, followup, followup-send, followup-error, terms, vote-dock, vote-bar, question-error, vote-error, mode-banner, model-names,
new-battle, leaderboard-table, board-view, board-style, board-rating, board-csv; after the vote (ui/takeaway.py)
share, share-reason, takeaway-a/b, stats-a/b, copy-a/b, download-bib-a/b, download-ris-a/b, battle-link; a
battle's own view (ui/battle_view.py, ``?battle=<id>``) battle-view, battle-view-head, view-answer-a/b,
view-references-a/b, and the my-battles panel with my-battles-list; API endpoints /battle,
/vote and /leaderboard (the CLI's ``--format json``, registered by the Leaderboard tab); the browser's local-storage key
``sciarena-browser-key`` and session-storage key ``sciarena-consent``.
"""

from __future__ import annotations

import logging
import time
from functools import partial

import gradio as gr

from sciarena.core.settings import Settings
from sciarena.ui import battle_view, render, review_tab, takeaway
from sciarena.ui.about import (
    about_markdown,
    mode_banner,
    storage_status,
    terms_markdown,
)
from sciarena.ui.handlers import ArenaHandlers, ArenaView
from sciarena.ui.leaderboard_tab import LeaderboardTab
from sciarena.ui.sampling_info import sampling_markdown
from sciarena.wiring import ASKER_FIELDS, CONSENT_LABEL, ArenaSession, BattleArchive, Services

log = logging.getLogger(__name__)

CSS = """
/* Gradio puts elem_classes on the block and again on the Markdown inside it: one frame, on the block. */
.block.answer-box { min-height: 14rem; padding: 0.75rem 1rem; border: 1px solid var(--border-color-primary);
                   border-radius: 8px; overflow-wrap: anywhere; }
.answer-box p { line-height: 1.6; }
#model-names { font-size: 1.05rem; }
#status { color: var(--body-text-color-subdued); }
#mode-banner { background: var(--color-accent-soft); border-radius: 8px; padding: 0.5rem 0.9rem; }
/* The Markdown's own paragraphs set a colour, so the message colours them, not only its box. */
#question-error, #question-error p, #vote-error, #vote-error p, #followup-error, #followup-error p { color: var(--error-text-color); font-weight: 600; }
/* The vote buttons stay in reach while the answers are read: at 390 px two full answers are several
   screens long. Sticky, not fixed, so the dock takes its own place at the end and hides nothing there.
   Gradio's container clips with overflow: hidden, which would make it the dock's scroll box and stop it
   from sticking; clip cuts the same overflow without being a scroll box. Its z-index is above the
   reason box's label (Gradio gives labels 40), which otherwise showed through the dock scrolling under it.
   On a wide screen the whole dock (reveal, consent, field, buttons) sticks; it leaves the answers most of
   the screen. On a phone it took 409 of 844 px before the vote and 437 after, so there only #vote-bar (the
   four buttons and the refusal beside them) sticks: the dock's box dissolves (display: contents) so the
   bar sticks within the battle, and consent, terms, field and the reveal scroll with the page above it.
   After the vote, the same at every width (below). */
.gradio-container { overflow: clip !important; }
#vote-dock, #vote-bar { position: sticky; bottom: 0; z-index: 41; background: var(--background-fill-primary);
                        border-top: 1px solid var(--border-color-primary); box-shadow: 0 -6px 14px rgba(0, 0, 0, 0.08);
                        padding: 0.5rem 0.6rem; gap: 0.4rem; }
@media (min-width: 641px) { #vote-bar { position: static; border-top: 0; box-shadow: none; padding: 0; } }
#vote-bar .vote-buttons { flex-wrap: wrap; gap: 0.4rem; }
#vote-bar .vote-buttons button { flex: 1 1 8rem; min-width: 0 !important; }
@media (max-width: 640px) {
  #vote-dock { display: contents !important; }
  #vote-bar { padding: 0.4rem 0.5rem; }
  /* Two by two, each label on one line ("Both are bad X" wrapped onto two). */
  #vote-bar .vote-buttons button { flex-basis: 40%; padding: 0.35rem 0.4rem; white-space: nowrap; font-size: 0.9rem; }
}
/* Once the names are revealed the consent box, the field and the (closed) buttons have done their work
   and step aside until the next battle blanks the reveal, at every width (at 1280 x 800 the whole dock had
   stuck over 371 px of the answers being read): the dock dissolves, the names and the link scroll with the
   page under the answers, and only the bar sticks, one line saying the vote went through and where the
   names are. */
#vote-dock:has(#model-names li) { display: contents !important; }
#vote-dock:has(#model-names li) :is(.consent-row, .vote-buttons, #vote-field) { display: none; }
#vote-dock:has(#model-names li) #vote-bar { position: sticky; border-top: 1px solid var(--border-color-primary);
                                            box-shadow: 0 -6px 14px rgba(0, 0, 0, 0.08); padding: 0.4rem 0.6rem; }
#vote-dock:has(#model-names li) #vote-bar::before { content: "Vote recorded · names under the answers";
                                                    font-weight: 600; font-size: 0.85rem; }
/* The follow-up box: one line under the two answers, its button beside it (under it on a phone). */
#followup-box { gap: 0.3rem; }
#followup-box .followup-row { flex-wrap: wrap; gap: 0.4rem; }
#followup-send { flex: 0 1 10rem; min-width: 8rem !important; align-self: flex-end; }
/* The field choice is a small line, not a second form: compact pills that wrap on a phone. */
#vote-field { padding: 0.2rem 0.4rem; }
#vote-field .wrap { gap: 0.25rem 0.4rem; }
#vote-field label { padding: 0.15rem 0.5rem; font-size: 0.85rem; }
"""

# Runs once per page load, in the browser (demo.load(js=...)): the lasting voter key — 128 random bits
# kept in local storage, so it survives reloads and new visits — and the consent given earlier in this
# tab (session storage: asked again in a new tab). Storage can be blocked; then the key is "" and the
# server falls back to the session. Plain local storage rather than gr.BrowserState: that one encrypts
# with a secret drawn afresh at every server start, so each restart would forget every browser's key.
BROWSER_JS = """() => {
  let key = "";
  try {
    key = localStorage.getItem("sciarena-browser-key") || "";
    if (!/^[0-9a-f]{32}$/.test(key)) {
      const bytes = crypto.getRandomValues(new Uint8Array(16));
      key = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
      localStorage.setItem("sciarena-browser-key", key);
    }
  } catch (error) { key = ""; }
  let consent = false;
  try { consent = sessionStorage.getItem("sciarena-consent") === "yes"; } catch (error) {}
  return [key, consent];
}"""

REMEMBER_CONSENT_JS = """(given) => {
  try {
    if (given) sessionStorage.setItem("sciarena-consent", "yes");
    else sessionStorage.removeItem("sciarena-consent");
  } catch (error) {}
}"""

VOTE_BUTTONS = (("vote-a", "A is better", "A"), ("vote-b", "B is better", "B"),
                ("vote-tie", "Tie", "tie"), ("vote-bad", "Both are bad", "bad"))


def review_tab_shown(settings: Settings) -> bool:
    """The Review tab needs reviewers (SCIARENA_REVIEWERS) and a way for them to sign in (Hugging Face
    OAuth): without OAuth nobody can ever be recognised as a reviewer, so the tab is not shown and the
    operator is told why at start."""
    if settings.reviewers and not settings.oauth_enabled:
        log.warning("SCIARENA_REVIEWERS names %d reviewer(s) but Hugging Face OAuth is not configured "
                    "(no OAUTH_CLIENT_ID; a Space sets it with hf_oauth: true): the Review tab is hidden, as "
                    "no reviewer could sign in", len(settings.reviewers))
        return False
    return bool(settings.reviewers)


def build_app(services: Services) -> gr.Blocks:
    leaderboard = LeaderboardTab(services.board, services.pipeline_pairs(), deprecated=services.pool.deprecated,
                                 sampling=services.sampling_report)
    with gr.Blocks(title="SciArena — literature QA arena") as demo:
        gr.Markdown("# SciArena\nAsk a question about the scientific literature. Papers are retrieved once; "
                    "two anonymous models answer from the same papers with numbered citations. "
                    "Read both, then vote — the names are revealed after your vote.")
        shared_view = battle_view.build_view()  # a battle's own link (?battle=<id>), read-only, above the tabs
        with gr.Tab("Arena", id="arena"):
            view = arena_tab(services.settings.oauth_enabled, banner=mode_banner(services),
                             terms=terms_markdown(services), max_chars=services.settings.max_question_chars,
                             examples=examples_fit(services.settings))
            handlers = ArenaHandlers(services.arena, view)
            wire_arena(handlers)
            mine = battle_view.my_battles_panel()  # a folded panel under the battle (a tab would not fit at 390 px)
        with gr.Tab("Leaderboard", id="leaderboard"):
            board = leaderboard.build()
        if review_tab_shown(services.settings):  # expert annotators named in SCIARENA_REVIEWERS, signed in
            with gr.Tab("Review", id="review"):
                review_tab.build(services)
        with gr.Tab("About", id="about"):
            storage = gr.Markdown(elem_id="storage-status")
            gr.Markdown(about_markdown(services), elem_id="about-text")
            sampling = gr.Markdown(elem_id="sampling-shares")  # current shares and weights: filled on load
        demo.load(None, None, [view.browser_key, view.consent], js=BROWSER_JS, api_visibility="private",
                  queue=False)
        demo.load(partial(leaderboard.refresh, board), None, board.outputs, api_visibility="private")
        demo.load(partial(storage_status, services), None, storage, api_visibility="private", queue=False)
        battle_view.wire(demo, shared_view, mine, view.model_names, BattleArchive(services.votes.files),
                         services.settings.id_salt)
        demo.load(lambda: sampling_markdown(services, time.time()), None, sampling, api_visibility="private")
    return demo


def question_hint(max_chars: int) -> str:
    """The line under the question box: its limit is said before Send, not only in the refusal after it
    (the box does not cut a pasted question short: the refusal says how much to shorten it)."""
    return f"Up to {max_chars:,} characters · Enter sends · Shift+Enter adds a line"


def examples_fit(settings: Settings) -> bool:
    """Whether the example questions can be answered here: they were written for the bundled corpus (and are
    general enough for Semantic Scholar); over a visitor's own index (SCIARENA_RETRIEVER=local:DIR) they would
    be refused as off-topic, so the buttons are not offered."""
    return not settings.retriever.strip().startswith("local:") or settings.retriever.strip() == "local:demo"


def example_labels() -> list[str]:
    """Each example question with its discipline in front (the button shows the label, Send gets the question)."""
    return [f"{discipline} · {question}" for discipline, questions in render.EXAMPLE_QUESTIONS.items()
            for question in questions]


def arena_tab(oauth_enabled: bool = False, banner: str = "", terms: str = "", max_chars: int = 4000,
              examples: bool = True) -> ArenaView:
    """Lay out the Arena tab (inside a Blocks context); returns the components handlers update.

    ``banner`` says what mode the arena runs in (shown when not empty); ``terms`` is the consent text,
    one click away beside the consent box; ``examples``: offer the example questions (``examples_fit``)."""
    session = gr.State(ArenaSession())
    turn = gr.State(0)
    if banner:
        gr.Markdown(banner, elem_id="mode-banner")
    # One line to start (it grows): Gradio sends a one-line box on Enter and adds a line on Shift+Enter.
    question = gr.Textbox(label="Your question", elem_id="question", lines=1, max_lines=12,
                          info=question_hint(max_chars),
                          placeholder="e.g. How does retrieval-augmented generation reduce hallucination?")
    with gr.Row():
        send = gr.Button("Send", variant="primary", elem_id="send", scale=3)
        new_battle = gr.Button("New battle", elem_id="new-battle", scale=1)
    question_error = gr.Markdown("", elem_id="question-error")
    status = gr.Markdown("", elem_id="status")
    if examples:
        gr.Examples(examples=[[q] for qs in render.EXAMPLE_QUESTIONS.values() for q in qs], inputs=[question],
                    example_labels=example_labels(), label="Example questions (two per discipline)")
    # The bar sticks only within this column: in reach beside the answers, out of the way of the
    # question, the examples and New battle above them.
    with gr.Column(elem_id="battle-area"):
        with gr.Row(equal_height=False):
            with gr.Column(min_width=320):
                gr.Markdown("### Model A")
                answer_a = gr.Markdown(elem_id="answer-a", elem_classes="answer-box",
                                       latex_delimiters=render.latex_delimiters())
                refs_a = gr.Markdown(elem_id="references-a")
                panel_a = takeaway.side_panel("A")  # after the vote: figures, copy, BibTeX/RIS
            with gr.Column(min_width=320):
                gr.Markdown("### Model B")
                answer_b = gr.Markdown(elem_id="answer-b", elem_classes="answer-box",
                                       latex_delimiters=render.latex_delimiters())
                refs_b = gr.Markdown(elem_id="references-b")
                panel_b = takeaway.side_panel("B")
        # Once both answers are complete and until the vote (the vote is on the whole conversation), with
        # follow-ups left; a visitor who never asks one sees only this box (ui/handlers.py ``_followup``).
        with gr.Column(visible=False, elem_id="followup-box") as followup_box:
            with gr.Row(equal_height=True, elem_classes="followup-row"):
                followup = gr.Textbox(label="Ask a follow-up question (both models answer it, each with the "
                                            "conversation so far)", elem_id="followup", lines=1, max_lines=6,
                                      scale=4, min_width=220)
                followup_send = gr.Button("Ask both", elem_id="followup-send", scale=1, min_width=120)
            followup_error = gr.Markdown("", elem_id="followup-error")
        with gr.Row(equal_height=True):
            reason = gr.Textbox(label="Why? (optional — sent with your vote, helps others learn from it)",
                                elem_id="reason", lines=1, max_lines=6, interactive=False, scale=4)
            if oauth_enabled:
                gr.LoginButton(scale=1)  # optional: a signed-in vote is recorded under a hash of the HF username
        share, share_reason = takeaway.share_controls()
        with gr.Column(elem_id="vote-dock"):  # sticky as a whole on a wide screen; only #vote-bar on a phone
            model_names = gr.Markdown("", elem_id="model-names")
            taken = takeaway.build_view(panel_a, panel_b, share, share_reason)  # the battle's link, after the reveal
            with gr.Row(equal_height=True, elem_classes="consent-row"):
                consent = gr.Checkbox(label=CONSENT_LABEL, value=False, elem_id="consent", scale=3, min_width=200)
                with gr.Column(scale=1, min_width=130), gr.Accordion("Read the terms", open=False, elem_id="terms"):
                    gr.Markdown(terms or "See the About tab.")
            # The labeller's guess at the question's field, filled when both answers are complete; the per-
            # discipline boards use the asker's choice when they change it (schema: subject_source "asker").
            subject_field = gr.Radio(choices=list(ASKER_FIELDS), value=None, interactive=False,
                                     label="Field of your question (change it if it is wrong)",
                                     elem_id="vote-field", elem_classes="field-choice")
            with gr.Column(elem_id="vote-bar"):
                with gr.Row(elem_classes="vote-buttons"):
                    buttons = tuple(gr.Button(label, elem_id=eid, interactive=False, min_width=0)
                                    for eid, label, _ in VOTE_BUTTONS)
                vote_error = gr.Markdown("", elem_id="vote-error")
    choice = gr.Textbox(visible=False)
    api_question = gr.Textbox(visible=False)
    browser_key = gr.Textbox(visible=False)
    shown_battle = gr.Textbox(visible=False)
    return ArenaView(question=question, send=send, new_battle=new_battle, status=status, answer_a=answer_a,
                     answer_b=answer_b, refs_a=refs_a, refs_b=refs_b, consent=consent, vote_buttons=buttons,
                     reason=reason, model_names=model_names, choice=choice, api_question=api_question,
                     question_error=question_error, vote_error=vote_error, browser_key=browser_key,
                     session=session, turn=turn, subject_field=subject_field, takeaway=taken,
                     followup_box=followup_box, followup=followup, followup_send=followup_send,
                     followup_error=followup_error, shown_battle=shown_battle)


def wire_arena(handlers: ArenaHandlers) -> None:
    """Connect the Arena tab's events to its handlers; defines the public /battle and /vote endpoints.

    The page's Send and vote buttons are private events that write refusals beside the control; the
    public endpoints hang on hidden boxes and raise them, as an API client expects."""
    v = handlers.view
    # "always_last": a Send while a battle streams starts the new battle as soon as the old one ends (the
    # default dropped that Send and left the old battle votable under the new question; settle blanks it).
    locked = v.send.click(handlers.clear, [v.turn], [*v.screen, v.turn], api_visibility="private", queue=False)
    # show_progress="hidden": Gradio's own timer overlay sat on every output while the event ran, inside an
    # answer already complete while the other side still streamed; each side has its own Answering line.
    running = locked.then(handlers.battle_in_page, [v.question, v.session, v.turn, v.browser_key],
                          v.page_battle_outputs, api_visibility="private", concurrency_limit=32,
                          trigger_mode="always_last", show_progress="hidden")
    # Queued (not queue=False) so its update reaches the page after any the battle sent before it ended.
    running.then(handlers.settle, [v.session, v.turn], v.screen, api_visibility="private", show_progress="hidden")
    v.question.submit(None, None, None, js="() => document.querySelector('#send')?.click()",
                      api_visibility="private")
    asking = wire_followups(handlers)
    v.api_question.submit(handlers.battle, [v.api_question, v.session, v.turn], v.battle_outputs,
                          api_name="battle", concurrency_limit=32)
    for button, (_, _, value) in zip(v.vote_buttons, VOTE_BUTTONS):
        # The reveal and the closed controls arrive in one update: no moment where the
        # names are shown and voting still looks open.
        button.click(handlers.vote_button(value), [v.reason, v.consent, v.session, v.browser_key, v.subject_field,
                                                  *v.vote_tail],
                     v.page_vote_outputs, api_visibility="private")
    v.consent.input(None, [v.consent], None, js=REMEMBER_CONSENT_JS, api_visibility="private", queue=False)
    if v.takeaway is not None:
        takeaway.wire(v.takeaway, v.model_names, v.session)
    v.choice.submit(handlers.vote_api, [v.choice, v.reason, v.consent, v.session], v.vote_outputs, api_name="vote")
    # Cancelling stops the running battle's generation; settle (above) then runs and removes any
    # update of it that arrived after this blank screen.
    v.new_battle.click(handlers.new_battle, [v.turn], [v.question, *v.screen, v.turn], api_visibility="private",
                       queue=False, cancels=[running, *asking])


def wire_followups(handlers: ArenaHandlers) -> list:
    """Ask both (or Enter in the follow-up box): close the vote and the box, stream the next turn into both
    panels, then settle opens them again. Returns the running event, for New battle to cancel."""
    v = handlers.view
    if v.followup_send is None or v.followup is None:
        return []
    locked = v.followup_send.click(handlers.follow_up_lock, [v.session],
                                   [*v.controls, *v.followup_outputs, v.question_error, v.vote_error],
                                   api_visibility="private", queue=False)
    asking = locked.then(handlers.follow_up_in_page, [v.followup, v.session, v.turn, v.browser_key],
                         v.page_followup_outputs, api_visibility="private", concurrency_limit=32,
                         show_progress="hidden")
    asking.then(handlers.settle, [v.session, v.turn], v.screen, api_visibility="private", show_progress="hidden")
    v.followup.submit(None, None, None, js="() => document.querySelector('#followup-send')?.click()",
                      api_visibility="private")
    return [asking]


def launch_kwargs(settings: Settings | None = None) -> dict:
    """Options for demo.launch(): Gradio 6 takes theme and css there, and the bound on the sessions it holds.

    Gradio keeps every visitor's session state in memory (their battle, and its own copy of the page's
    configuration, 215 kB) until an hour after the tab closes; ``state_session_capacity`` (SCIARENA_MAX_SESSIONS)
    forgets the least recently used first, so memory has a ceiling whatever the number of visitors."""
    # System fonts: the default theme fetches Google Fonts, which stalls the page when offline.
    theme = gr.themes.Soft(primary_hue="teal", font=["ui-sans-serif", "system-ui", "sans-serif"],
                           font_mono=["ui-monospace", "SFMono-Regular", "monospace"])
    return {"css": CSS + render.ANSWER_CSS + takeaway.CSS + battle_view.CSS, "theme": theme,
            "head": render.ANSWER_HEAD_JS + takeaway.SHORTCUT_JS,
            "state_session_capacity": (settings or Settings()).max_sessions}

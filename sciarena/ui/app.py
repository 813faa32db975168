"""build_app(services) -> gr.Blocks: the page, its stable element ids and its public API.

Stable hooks (scripted clients and browser tests rely on them):
element ids question, send, answer-a, answer-b, vote-a, vote-b, vote-tie, vote-bad,
reason, model-names, new-battle, leaderboard-table; API endpoints /battle and /vote.
"""

from __future__ import annotations

from functools import partial

import gradio as gr

from sciarena.arena import ArenaSession
from sciarena.services import Services
from sciarena.ui import render
from sciarena.ui.about import about_markdown, storage_status
from sciarena.ui.handlers import ArenaHandlers, ArenaView
from sciarena.ui.leaderboard_tab import LeaderboardTab
from sciarena.votes.voter import CONSENT_LABEL

CSS = """
.answer-box { min-height: 14rem; padding: 0.75rem 1rem; border: 1px solid var(--border-color-primary);
              border-radius: 8px; overflow-wrap: anywhere; }
.answer-box p { line-height: 1.6; }
#model-names { font-size: 1.05rem; }
#status { color: var(--body-text-color-subdued); }
"""

VOTE_BUTTONS = (("vote-a", "A is better", "A"), ("vote-b", "B is better", "B"),
                ("vote-tie", "Tie", "tie"), ("vote-bad", "Both are bad", "bad"))


def build_app(services: Services) -> gr.Blocks:
    leaderboard = LeaderboardTab(services)
    with gr.Blocks(title="SciArena — literature QA arena") as demo:
        gr.Markdown("# SciArena\nAsk a question about the scientific literature. Papers are retrieved once; "
                    "two anonymous models answer from the same papers with numbered citations. "
                    "Read both, then vote — the names are revealed after your vote.")
        with gr.Tab("Arena", id="arena"):
            handlers = ArenaHandlers(services.arena, arena_tab(services.settings.oauth_enabled))
            wire_arena(handlers)
        with gr.Tab("Leaderboard", id="leaderboard"):
            board = leaderboard.build()
        with gr.Tab("About", id="about"):
            storage = gr.Markdown(elem_id="storage-status")
            gr.Markdown(about_markdown(services))
        demo.load(partial(leaderboard.refresh, board), None, board.outputs, api_visibility="private")
        demo.load(partial(storage_status, services), None, storage, api_visibility="private", queue=False)
    return demo


def arena_tab(oauth_enabled: bool = False) -> ArenaView:
    """Lay out the Arena tab (inside a Blocks context); returns the components handlers update."""
    session = gr.State(ArenaSession())
    turn = gr.State(0)
    question = gr.Textbox(label="Your question", elem_id="question", lines=3, max_lines=12,
                          placeholder="e.g. How does retrieval-augmented generation reduce hallucination?")
    with gr.Row():
        send = gr.Button("Send", variant="primary", elem_id="send", scale=3)
        new_battle = gr.Button("New battle", elem_id="new-battle", scale=1)
    gr.Examples(examples=[[q] for qs in render.EXAMPLE_QUESTIONS.values() for q in qs],
                inputs=[question], label="Example questions (two per discipline)")
    status = gr.Markdown("", elem_id="status")
    with gr.Row(equal_height=False):
        with gr.Column(min_width=320):
            gr.Markdown("### Model A")
            answer_a = gr.Markdown(elem_id="answer-a", elem_classes="answer-box",
                                   latex_delimiters=render.latex_delimiters())
            refs_a = gr.Markdown(elem_id="references-a")
        with gr.Column(min_width=320):
            gr.Markdown("### Model B")
            answer_b = gr.Markdown(elem_id="answer-b", elem_classes="answer-box",
                                   latex_delimiters=render.latex_delimiters())
            refs_b = gr.Markdown(elem_id="references-b")
    with gr.Row():
        consent = gr.Checkbox(label=CONSENT_LABEL, value=False, elem_id="consent", scale=3)
        if oauth_enabled:
            gr.LoginButton(scale=1)  # optional: a signed-in vote is recorded under the HF username
    with gr.Row():
        buttons = tuple(gr.Button(label, elem_id=eid, interactive=False, min_width=120)
                        for eid, label, _ in VOTE_BUTTONS)
    reason = gr.Textbox(label="Why? (optional — helps others learn from your vote)", elem_id="reason",
                        lines=2, max_lines=6, interactive=False)
    model_names = gr.Markdown("", elem_id="model-names")
    choice = gr.Textbox(visible=False)
    return ArenaView(question=question, send=send, new_battle=new_battle, status=status, answer_a=answer_a,
                     answer_b=answer_b, refs_a=refs_a, refs_b=refs_b, consent=consent, vote_buttons=buttons,
                     reason=reason, model_names=model_names, choice=choice, session=session, turn=turn)


def wire_arena(handlers: ArenaHandlers) -> None:
    """Connect the Arena tab's events to its handlers; defines the public /battle and /vote endpoints."""
    v = handlers.view
    # "always_last": a Send while a battle streams starts the new battle as soon as the old one ends (the
    # default dropped that Send and left the old battle votable under the new question; settle blanks it).
    locked = v.send.click(handlers.clear, [v.turn], [*v.screen, v.turn], api_visibility="private", queue=False)
    running = locked.then(handlers.battle, [v.question, v.session, v.turn], v.battle_outputs, api_name="battle",
                          concurrency_limit=32, trigger_mode="always_last")
    # Queued (not queue=False) so its update reaches the page after any the battle sent before it ended.
    running.then(handlers.settle, [v.session, v.turn], v.screen, api_visibility="private")
    v.question.submit(None, None, None, js="() => document.querySelector('#send')?.click()",
                      api_visibility="private")
    vote_inputs = [v.reason, v.consent, v.session]
    for button, (_, _, value) in zip(v.vote_buttons, VOTE_BUTTONS):
        # The reveal and the closed controls arrive in one update: no moment where the
        # names are shown and voting still looks open.
        button.click(handlers.vote_button(value), vote_inputs, [v.model_names, v.session, *v.controls],
                     api_visibility="private")
    v.choice.submit(handlers.vote_api, [v.choice, *vote_inputs], v.vote_outputs, api_name="vote")
    # Cancelling stops the running battle's generation; settle (above) then runs and removes any
    # update of it that arrived after this blank screen.
    v.new_battle.click(handlers.new_battle, [v.turn], [v.question, *v.screen, v.turn], api_visibility="private",
                       queue=False, cancels=[running])


def launch_kwargs() -> dict:
    """Options for demo.launch(): Gradio 6 takes theme and css there."""
    # System fonts: the default theme fetches Google Fonts, which stalls the page when offline.
    theme = gr.themes.Soft(primary_hue="teal", font=["ui-sans-serif", "system-ui", "sans-serif"],
                           font_mono=["ui-monospace", "SFMono-Regular", "monospace"])
    return {"css": CSS + render.ANSWER_CSS, "theme": theme, "head": render.ANSWER_HEAD_JS}

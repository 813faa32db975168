"""build_app(services) -> gr.Blocks: the page, its stable element ids and its public API.

Stable hooks (scripted clients and browser tests rely on them):
element ids question, send, answer-a, answer-b, vote-a, vote-b, vote-tie, vote-bad,
reason, model-names, new-battle, leaderboard-table; API endpoints /battle and /vote.
"""

from __future__ import annotations

from functools import partial

import gradio as gr

from sciarena.services import Services
from sciarena.ui import render
from sciarena.ui.about import about_markdown, storage_status
from sciarena.ui.handlers import ArenaHandlers, ArenaSession
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
    handlers = ArenaHandlers(services)
    leaderboard = LeaderboardTab(services)
    with gr.Blocks(title="SciArena — literature QA arena") as demo:
        session = gr.State(ArenaSession())
        gr.Markdown("# SciArena\nAsk a question about the scientific literature. Papers are retrieved once; "
                    "two anonymous models answer from the same papers with numbered citations. "
                    "Read both, then vote — the names are revealed after your vote.")
        with gr.Tab("Arena", id="arena"):
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
                if services.settings.oauth_enabled:
                    gr.LoginButton(scale=1)  # optional: a signed-in vote is recorded under the HF username
            with gr.Row():
                buttons = [gr.Button(label, elem_id=eid, interactive=False, min_width=120)
                           for eid, label, _ in VOTE_BUTTONS]
            reason = gr.Textbox(label="Why? (optional — helps others learn from your vote)", elem_id="reason",
                                lines=2, max_lines=6, interactive=False)
            model_names = gr.Markdown("", elem_id="model-names")
            choice = gr.Textbox(visible=False)  # carries the choice for the public /vote endpoint

        with gr.Tab("Leaderboard", id="leaderboard"):
            lb_outputs = leaderboard.build()
        with gr.Tab("About", id="about"):
            storage = gr.Markdown(elem_id="storage-status")
            gr.Markdown(about_markdown(services))

        answers = [answer_a, answer_b, refs_a, refs_b, status, session]
        controls = [*buttons, reason]

        def lock() -> list:
            # Forget the previous battle too: if this question is refused, the old (now cleared)
            # answers must not be votable.
            return [gr.update(interactive=False)] * len(controls) + ["", "", "", "", "", "", ArenaSession()]

        def vote_controls(state: ArenaSession) -> list:
            open_ = bool(state and state.battle and state.battle.votable and not state.voted)
            return [gr.update(interactive=open_) for _ in controls]

        locked = send.click(lock, None, [*controls, answer_a, answer_b, refs_a, refs_b, status, model_names, session],
                            api_visibility="private", queue=False)
        running = locked.then(handlers.battle, [question, session], answers, api_name="battle", concurrency_limit=32)
        running.then(vote_controls, [session], controls, api_visibility="private", queue=False)
        question.submit(None, None, None, js="() => document.querySelector('#send')?.click()",
                        api_visibility="private")

        def vote_and_close(value: str):
            # The reveal and the closed buttons arrive in one update: no moment where the
            # names are shown and voting still looks open.
            def handler(reason_text: str, agreed: bool, state: ArenaSession, request: gr.Request,
                        profile: gr.OAuthProfile | None) -> list:
                reveal, new_state = handlers.vote(value, reason_text, agreed, state, request, profile)
                return [reveal, new_state, *vote_controls(new_state)]
            return handler

        for button, (_, _, value) in zip(buttons, VOTE_BUTTONS):
            button.click(vote_and_close(value), [reason, consent, session], [model_names, session, *controls],
                         api_visibility="private")
        choice.submit(handlers.vote, [choice, reason, consent, session], [model_names, session], api_name="vote")

        def reset() -> list:
            return ["", "", "", "", "", "", ArenaSession(), ""] + [gr.update(interactive=False)] * len(controls)

        # Cancelling the running battle keeps its late updates from bringing old answers back.
        new_battle.click(reset, None, [question, answer_a, answer_b, refs_a, refs_b, status, session,
                                       model_names, *controls], api_visibility="private", queue=False,
                         cancels=[running])
        demo.load(leaderboard.refresh, None, lb_outputs, api_visibility="private")
        demo.load(partial(storage_status, services), None, storage, api_visibility="private", queue=False)
    return demo


def launch_kwargs() -> dict:
    """Options for demo.launch(): Gradio 6 takes theme and css there."""
    # System fonts: the default theme fetches Google Fonts, which stalls the page when offline.
    theme = gr.themes.Soft(primary_hue="teal", font=["ui-sans-serif", "system-ui", "sans-serif"],
                           font_mono=["ui-monospace", "SFMono-Regular", "monospace"])
    return {"css": CSS + render.ANSWER_CSS, "theme": theme, "head": render.ANSWER_HEAD_JS}

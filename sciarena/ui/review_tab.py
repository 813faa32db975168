"""The Review tab: expert reviewers vote stored battles blind, then label the original vote.

Built by app.py inside ``gr.Tab("Review")`` only when SCIARENA_REVIEWERS names someone. The
reviewer is who Hugging Face OAuth says is signed in (Gradio fills ``profile`` on the server; the
browser cannot send one); the rules are in sciarena/science/review.py. The battle stays in a server-side
gr.State: the browser receives the question, the two answers and their references, and only after
the blind vote the original vote — never model names or the battle's id.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import gradio as gr

from sciarena.core.errors import SciArenaError
from sciarena.ui import render
from sciarena.wiring import AUDIT_LABELS, ReviewDesk, ReviewSession, Services

Updates = dict[Any, Any]
REVIEW_VOTES = (("review-vote-a", "A is better", "A"), ("review-vote-b", "B is better", "B"),
                ("review-vote-tie", "Tie", "tie"), ("review-vote-bad", "Both are bad", "bad"))
ORIGINAL = {"A": "Model A is better", "B": "Model B is better", "tie": "a tie", "bad": "both are bad"}
HOW_TO = ("**Expert review.** Read the question, both answers and the passages they cite, and vote as you would "
          "in the Arena — the original vote is hidden until you do. Then label the original vote: *clearly "
          "reasonable* (most experts would agree), *vague* (acceptable, but another vote is defensible) or "
          "*wrong*; *Can't judge* when the topic is outside your field. Model names are never shown.")


@dataclass(frozen=True)
class ReviewView:
    next_battle: gr.Button
    message: gr.Markdown
    question: gr.Markdown
    answer_a: gr.Markdown
    answer_b: gr.Markdown
    refs_a: gr.Markdown
    refs_b: gr.Markdown
    vote_buttons: tuple[gr.Button, ...]  # in the order of REVIEW_VOTES
    original: gr.Markdown
    audit_buttons: tuple[gr.Button, ...]  # in the order of AUDIT_LABELS
    session: gr.State  # ReviewSession | None

    @property
    def outputs(self) -> list[Any]:
        return [self.message, self.question, self.answer_a, self.answer_b, self.refs_a, self.refs_b,
                self.original, *self.vote_buttons, *self.audit_buttons, self.session]


class ReviewHandlers:
    """One method per action; ``profile`` is the signed-in account (Gradio's OAuth; tests pass a plain object)."""

    def __init__(self, desk: ReviewDesk, view: ReviewView) -> None:
        self.desk = desk
        self.view = view

    def next_battle(self, profile: Any = None) -> Updates:
        try:
            session = self.desk.next_battle(_username(profile))
        except SciArenaError as err:
            return {**self._blank(), self.view.message: _message(str(err))}
        # A repeat is not announced: self-consistency asks for a judgement made afresh.
        return self._show(session, "")

    def vote_button(self, choice: str) -> Callable[..., Updates]:
        def review_vote(session: ReviewSession | None, profile: gr.OAuthProfile | None) -> Updates:
            return self.vote(choice, session, profile)
        return review_vote

    def vote(self, choice: str, session: ReviewSession | None, profile: Any = None) -> Updates:
        try:
            voted = self.desk.blind_vote(session, _username(profile), choice)
        except SciArenaError as err:
            return {self.view.message: _message(str(err))}
        v = self.view
        return {v.session: voted, v.message: "Thank you. Now label the original vote.",
                v.original: f"**Your vote:** {ORIGINAL[voted.vote or '']}. "
                            f"**The original voter chose:** {ORIGINAL[voted.battle.original_vote]}.",
                **{b: gr.update(interactive=False) for b in v.vote_buttons},
                **{b: gr.update(interactive=True) for b in v.audit_buttons}}

    def audit_button(self, label: str) -> Callable[..., Updates]:
        def review_audit(session: ReviewSession | None, profile: gr.OAuthProfile | None) -> Updates:
            return self.audit(label, session, profile)
        return review_audit

    def audit(self, label: str, session: ReviewSession | None, profile: Any = None) -> Updates:
        try:
            self.desk.save(session, _username(profile), label)
        except SciArenaError as err:
            return {self.view.message: _message(str(err))}
        return {**self._blank(), self.view.message: "**Review saved.** Press “Next battle” for another."}

    def _show(self, session: ReviewSession, note: str) -> Updates:
        v, battle = self.view, session.battle
        return {v.session: session, v.message: note,
                v.question: f"**Question:** {render.escape(battle.question)}",
                v.answer_a: render.answer_markdown(battle.response_a, references=battle.references_a),
                v.answer_b: render.answer_markdown(battle.response_b, references=battle.references_b),
                v.refs_a: render.references_markdown(battle.references_a),
                v.refs_b: render.references_markdown(battle.references_b), v.original: "",
                **{b: gr.update(interactive=True) for b in v.vote_buttons},
                # "Can't judge" is open from the start: a reviewer outside the field need not vote.
                **{b: gr.update(interactive=key == "cant_judge")
                   for b, key in zip(v.audit_buttons, AUDIT_LABELS)}}

    def _blank(self) -> Updates:
        v = self.view
        return {v.session: None, v.question: "", v.answer_a: "", v.answer_b: "", v.refs_a: "", v.refs_b: "",
                v.original: "", **{b: gr.update(interactive=False) for b in (*v.vote_buttons, *v.audit_buttons)}}


def _username(profile: Any) -> str | None:
    return getattr(profile, "username", None) or None


def _message(text: str) -> str:
    return f"⚠ {render.escape(text)}"


def build(services: Services, desk: ReviewDesk | None = None) -> ReviewHandlers:
    """Lay out and wire the tab inside the current gr.Tab; returns its handlers (tests drive them)."""
    desk = desk or services.review_desk()
    gr.Markdown(HOW_TO)
    if services.settings.oauth_enabled:
        gr.LoginButton()
    next_battle = gr.Button("Next battle", variant="primary", elem_id="review-next")
    message = gr.Markdown("", elem_id="review-message")
    question = gr.Markdown("", elem_id="review-question")
    with gr.Row(equal_height=False):
        with gr.Column(min_width=320):
            gr.Markdown("### Model A")
            answer_a = gr.Markdown(elem_id="answer-review-a", elem_classes="answer-box",
                                   latex_delimiters=render.latex_delimiters())
            refs_a = gr.Markdown(elem_id="references-review-a")  # the citation links open these (render.py)
        with gr.Column(min_width=320):
            gr.Markdown("### Model B")
            answer_b = gr.Markdown(elem_id="answer-review-b", elem_classes="answer-box",
                                   latex_delimiters=render.latex_delimiters())
            refs_b = gr.Markdown(elem_id="references-review-b")
    with gr.Row():
        votes = tuple(gr.Button(label, elem_id=eid, interactive=False) for eid, label, _ in REVIEW_VOTES)
    original = gr.Markdown("", elem_id="review-original")
    with gr.Row():
        audits = tuple(gr.Button(text, elem_id=f"review-audit-{key.replace('_', '-')}", interactive=False)
                       for key, text in AUDIT_LABELS.items())
    view = ReviewView(next_battle=next_battle, message=message, question=question, answer_a=answer_a,
                      answer_b=answer_b, refs_a=refs_a, refs_b=refs_b, vote_buttons=votes, original=original,
                      audit_buttons=audits, session=gr.State(None))
    handlers = ReviewHandlers(desk, view)

    def review_next(profile: gr.OAuthProfile | None) -> Updates:
        return handlers.next_battle(profile)

    next_battle.click(review_next, None, view.outputs, api_visibility="private")
    for button, (_, _, choice) in zip(votes, REVIEW_VOTES):
        button.click(handlers.vote_button(choice), [view.session], view.outputs, api_visibility="private")
    for button, key in zip(audits, AUDIT_LABELS):
        button.click(handlers.audit_button(key), [view.session], view.outputs, api_visibility="private")
    return handlers

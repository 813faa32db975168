"""What each Arena action shows, as plain methods testable without a browser.

The rules live in the ``Arena`` (arena.py); a handler passes the widgets' values to it, turns a
``SciArenaError`` into a short ``gr.Error`` message, renders the records to Markdown (render.py) and
returns updates keyed by component. The battle (models, contexts, answers) is kept in the visitor's
server-side session (``ArenaSession`` in a gr.State); the browser only ever receives the anonymous
texts until the vote is written.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterator

import gradio as gr

from sciarena.arena import Arena, ArenaSession, Ballot
from sciarena.errors import ProviderTimeout, SciArenaError
from sciarena.types import SideResult
from sciarena.ui import render

Updates = dict[Any, Any]  # component → new value or gr.update(...)


@dataclass(frozen=True)
class ArenaView:
    """The Arena tab's components that handlers update; app.py lays them out."""

    question: gr.Textbox
    send: gr.Button
    new_battle: gr.Button
    status: gr.Markdown
    answer_a: gr.Markdown
    answer_b: gr.Markdown
    refs_a: gr.Markdown
    refs_b: gr.Markdown
    consent: gr.Checkbox
    vote_buttons: tuple[gr.Button, ...]  # in the order of app.VOTE_BUTTONS
    reason: gr.Textbox
    model_names: gr.Markdown
    choice: gr.Textbox  # hidden: carries the choice for the public /vote endpoint
    session: gr.State  # ArenaSession
    turn: gr.State  # int: written only by Send and New battle (see ArenaHandlers)

    @property
    def battle_outputs(self) -> list[Any]:
        """What the public /battle endpoint returns, in its order (the session is not sent)."""
        return [self.answer_a, self.answer_b, self.refs_a, self.refs_b, self.status, self.session]

    @property
    def vote_outputs(self) -> list[Any]:
        """What the public /vote endpoint returns: the reveal (the session is not sent)."""
        return [self.model_names, self.session]

    @property
    def controls(self) -> list[Any]:
        """The widgets that are open only while the current battle can be voted on."""
        return [*self.vote_buttons, self.reason]

    @property
    def screen(self) -> list[Any]:
        """What a battle shows: answers, references, status, reveal, controls, session."""
        return [*self.battle_outputs, self.model_names, *self.controls]


class ArenaHandlers:
    """One method per Arena action.

    Every Send and New battle starts a new *turn* (a number in its own gr.State that only these two
    actions write). A battle stamps its session with the turn it started in. Pressing New battle
    cancels the running battle, but an update it had already sent can reach the page after the
    blank screen; ``settle`` runs once the battle has ended or been cancelled and blanks the screen
    again when the session's turn is not the current one, so a cancelled battle never comes back.
    """

    def __init__(self, arena: Arena, view: ArenaView) -> None:
        self.arena = arena
        self.view = view

    def clear(self, turn: int | None) -> Updates:
        """A blank battle in a new turn: no answers, no reveal, closed controls, an empty reason box.

        Forgetting the previous battle matters: if the next question is refused, the old (now
        cleared) answers must not be votable, and a reason typed for it must not travel to the next."""
        following = (turn or 0) + 1
        return {**self._blank(ArenaSession(turn=following)), self.view.turn: following}

    def new_battle(self, turn: int | None) -> Updates:
        """New battle: a blank screen in a new turn, and an empty question box."""
        return {**self.clear(turn), self.view.question: ""}

    def battle(self, question: str, session: ArenaSession | None, turn: int | None = 0) -> Iterator[Updates]:
        """Retrieve once, then stream both anonymous answers side by side."""
        v = self.view
        try:
            progress = self.arena.start_battle(question)
        except SciArenaError as err:
            raise gr.Error(str(err), print_exception=False) from None
        status = ""
        for snapshot in progress:
            battle = snapshot.battle
            current = ArenaSession(battle=battle, turn=turn or 0)
            status = status or render.retrieval_status(battle.retrieval)  # retrieval is done once, before the stream
            if not snapshot.finished:
                yield {v.answer_a: render.answer_markdown(snapshot.text_a),
                       v.answer_b: render.answer_markdown(snapshot.text_b),
                       v.refs_a: "", v.refs_b: "", v.status: status + " Answering…", v.session: current}
                continue
            done = "Both answers are complete — which one is better?" if battle.votable else \
                "One answer failed, so this battle cannot be voted on."
            yield {v.answer_a: render.answer_markdown(snapshot.text_a, shown_error(battle.side_a)),
                   v.answer_b: render.answer_markdown(snapshot.text_b, shown_error(battle.side_b)),
                   v.refs_a: render.cited_markdown(battle.side_a, battle.retrieval),
                   v.refs_b: render.cited_markdown(battle.side_b, battle.retrieval),
                   v.status: f"{status} {done}", v.session: current}

    def settle(self, session: ArenaSession | None, turn: int | None) -> Updates:
        """After a battle ended (or was refused, or cancelled): open voting if this turn's battle can
        be voted on; blank the screen if the session holds nothing current."""
        if session is None or session.battle is None or session.turn != (turn or 0):
            return self._blank(ArenaSession(turn=turn or 0))
        return self.open_controls(session)

    def _blank(self, session: ArenaSession) -> Updates:
        v = self.view
        blank = {component: "" for component in (v.answer_a, v.answer_b, v.refs_a, v.refs_b, v.status,
                                                 v.model_names)}
        closed = {button: gr.update(interactive=False) for button in v.vote_buttons}
        return {**blank, **closed, v.reason: gr.update(value="", interactive=False), v.session: session}

    def open_controls(self, session: ArenaSession | None) -> Updates:
        """Vote buttons and reason box open exactly while this session's battle can be voted on."""
        open_ = bool(session and session.open_for_vote)
        return {control: gr.update(interactive=open_) for control in self.view.controls}

    def vote(self, choice: str, reason: str | None, consent: bool | None, session: ArenaSession | None,
             request: gr.Request | None = None, profile: gr.OAuthProfile | None = None) -> Updates:
        """Record the vote durably, then reveal the names and close voting, in one update."""
        ballot = Ballot(choice=choice, reason=reason, consent=consent, username=getattr(profile, "username", None),
                        session_hash=getattr(request, "session_hash", None))
        try:
            voted = self.arena.vote(session, ballot)
        except SciArenaError as err:
            raise gr.Error(str(err), print_exception=False) from None
        assert voted.vote is not None and voted.battle is not None
        return {self.view.model_names: render.reveal_markdown(voted.battle, voted.vote.choice),
                self.view.session: voted, **self.open_controls(voted)}

    def vote_button(self, choice: str) -> Callable[..., Updates]:
        """The click handler of one vote button (a real function: Gradio fills ``request`` and
        ``profile`` from its type hints, which a functools.partial hides)."""
        # Named apart from "vote": Gradio derives endpoint names from function names, even private ones.
        def vote_by_button(reason: str | None, consent: bool | None, session: ArenaSession | None,
                           request: gr.Request, profile: gr.OAuthProfile | None) -> Updates:
            return self.vote(choice, reason, consent, session, request, profile)
        return vote_by_button

    def vote_api(self, choice: str, reason: str | None, consent: bool | None, session: ArenaSession | None,
                 request: gr.Request | None = None, profile: gr.OAuthProfile | None = None) -> Updates:
        """The public /vote endpoint: the same vote, returning only the reveal (and the session)."""
        updates = self.vote(choice, reason, consent, session, request, profile)
        return {component: updates[component] for component in self.view.vote_outputs}


def shown_error(side: SideResult | None) -> str | None:
    """What the voter sees of a failed side, decided by the error's type: a provider's own message
    can name its vendor (an API key's variable name, a model path), so only timeouts, whose messages
    carry nothing but the limit (the runner's and the providers'), are shown as they are."""
    if side is None or side.error is None:
        return None
    if isinstance(side.error, ProviderTimeout):
        return str(side.error)
    return "This model could not complete its answer."

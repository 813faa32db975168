"""What each Arena action shows, as plain methods testable without a browser.

The rules live in the ``Arena`` (arena/rules.py); a handler passes the widgets' values to it, turns a
``SciArenaError`` into a short ``gr.Error`` message, renders the records to Markdown (render.py) and
returns updates keyed by component. The battle (models, contexts, answers) is kept in the visitor's
server-side session (``ArenaSession`` in a gr.State); the browser only ever receives the anonymous
texts until the vote is written.

The page and the public API share the rules but not the error path: the /battle and /vote endpoints
raise ``gr.Error`` (an API client sees an error), while Send and the vote buttons write the message
next to where it happened, where it stays until the next action (a raised error flashes a toast and
leaves bare "Error" pills on every output).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Callable, Iterator

import gradio as gr

from sciarena.answer.sameness import SAME_ANSWERS, same_answers
from sciarena.core.errors import BattleExpired, ProviderTimeout, SciArenaError
from sciarena.core.types import SideResult
from sciarena.ui import render
from sciarena.ui.stream_render import StreamedAnswer
from sciarena.wiring import EXPIRED, Arena, ArenaSession, Ballot, Visitor, client_address

if TYPE_CHECKING:
    from sciarena.ui.takeaway import TakeawayView

Updates = dict[Any, Any]  # component → new value or gr.update(...)

# The status line once the vote is stored: it asked which answer is better, which is now answered.
VOTED_STATUS = "Your vote is recorded; the names are shown with the answers. Press New battle for another."
SHARE_LOCKED_NOTE = "Recorded with your vote, for this battle only; the next battle asks again."


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
    api_question: gr.Textbox  # hidden: carries the question for the public /battle endpoint
    question_error: gr.Markdown  # why Send was refused, under the question
    vote_error: gr.Markdown  # why a vote was refused, by the vote buttons
    browser_key: gr.Textbox  # hidden: the random key this browser keeps in local storage (app.BROWSER_JS)
    session: gr.State  # ArenaSession
    turn: gr.State  # int: written only by Send and New battle (see ArenaHandlers)
    subject_field: gr.Radio  # the question's field, proposed by the labeller, which the asker may change
    takeaway: "TakeawayView | None" = None  # share choice, link and the after-vote take-away (ui/takeaway.py)
    # A follow-up question: shown once both answers are complete, hidden after the vote or the last one allowed.
    followup_box: gr.Column | None = None
    followup: gr.Textbox | None = None
    followup_send: gr.Button | None = None
    followup_error: gr.Markdown | None = None  # why a follow-up was refused, under its box
    # Hidden: the id of the battle the page shows. The session may have been forgotten since (Gradio holds at most
    # SCIARENA_MAX_SESSIONS); a vote then finds no battle in it, and this says the battle existed: "expired".
    shown_battle: gr.Textbox | None = None

    @property
    def followup_outputs(self) -> list[Any]:
        return [c for c in (self.followup_box, self.followup, self.followup_error) if c is not None]

    @property
    def share_inputs(self) -> list[Any]:
        """The share choice the vote buttons send with the vote (none without a take-away)."""
        return [] if self.takeaway is None else [self.takeaway.share, self.takeaway.share_reason]

    @property
    def vote_tail(self) -> list[Any]:
        """What a vote button sends after the share choice: the battle the page shows (see ``shown_battle``)."""
        return [*self.share_inputs, self.shown_battle] if self.share_inputs and self.shown_battle else \
            self.share_inputs

    @property
    def shown(self) -> list[Any]:
        return [self.shown_battle] if self.shown_battle is not None else []

    @property
    def share_boxes(self) -> list[Any]:
        """The share choice as outputs: ticked afresh for each battle, locked once its vote is stored."""
        return self.share_inputs

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
        return [*self.vote_buttons, self.reason, self.subject_field]

    @property
    def screen(self) -> list[Any]:
        """What a battle shows: answers, references, status, reveal, controls, session, messages."""
        return [*self.battle_outputs, self.model_names, *self.controls, self.question_error, self.vote_error,
                *self.followup_outputs, *self.share_boxes, *self.shown]

    @property
    def page_battle_outputs(self) -> list[Any]:
        """What Send's battle updates in the page: the endpoint's outputs and the question's message."""
        return [*self.battle_outputs, self.question_error, *self.shown]

    @property
    def page_vote_outputs(self) -> list[Any]:
        """What a vote button updates: the reveal, the answers in full (their reference lists now marking what
        a side found itself), the session, the closed controls and the vote's message."""
        return [self.model_names, self.answer_a, self.answer_b, self.refs_a, self.refs_b, self.session, *self.controls, self.vote_error,
                self.status,
                *([self.followup_box] if self.followup_box is not None else []),  # hidden: the vote ends the battle
                *self.share_boxes]

    @property
    def page_followup_outputs(self) -> list[Any]:
        """What a follow-up's stream updates: the battle's outputs and the follow-up's own box and message."""
        return [*self.battle_outputs, *self.followup_outputs, *self.shown]


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
        self._hops = arena.settings.proxy_hops  # proxies whose X-Forwarded-For entries are trusted
        self.view = view

    def clear(self, turn: int | None) -> Updates:
        """Send: a blank battle in a new turn, no messages, and an empty reason box, open to be filled
        while the answers stream.

        Forgetting the previous battle matters: if the next question is refused, the old (now
        cleared) answers must not be votable, and a reason typed for it must not travel to the next."""
        following = (turn or 0) + 1
        return {**self._blank(ArenaSession(turn=following)), **self._no_messages(), self.view.turn: following,
                self.view.reason: gr.update(value="", interactive=True)}

    def new_battle(self, turn: int | None) -> Updates:
        """New battle: a blank screen in a new turn, no messages, an empty question box and a closed
        (empty) reason box, as there is no battle to give a reason for yet."""
        following = (turn or 0) + 1
        return {**self._blank(ArenaSession(turn=following)), **self._no_messages(), self.view.turn: following,
                self.view.question: ""}

    def battle(self, question: str, session: ArenaSession | None, turn: int | None = 0,
               request: gr.Request | None = None, profile: gr.OAuthProfile | None = None) -> Iterator[Updates]:
        """The public /battle endpoint: retrieve once, then stream both anonymous answers side by side;
        a refused question raises gr.Error."""
        try:
            progress = self.arena.start_battle(question, visitor=visitor(request, profile, hops=self._hops))
        except SciArenaError as err:
            raise gr.Error(str(err), print_exception=False) from None
        yield from self._stream(progress, turn)

    def battle_in_page(self, question: str, session: ArenaSession | None, turn: int | None, browser_key: str | None,
                       request: gr.Request, profile: gr.OAuthProfile | None) -> Iterator[Updates]:
        """Send in the page: the same battle; a refusal is written under the question instead."""
        try:
            progress = self.arena.start_battle(question, visitor=visitor(request, profile, browser_key, self._hops))
        except SciArenaError as err:
            yield {self.view.question_error: message_markdown(str(err))}
            return
        yield from self._showing(self._stream(progress, turn))

    def _showing(self, updates: Iterator[Updates]) -> Iterator[Updates]:
        """The page's updates with the id of the battle they show (``ArenaView.shown_battle``). Closing this
        closes ``updates`` at once, so a cancelled battle stops as ``_stream`` promises."""
        try:
            for update in updates:
                session = update.get(self.view.session)
                if self.view.shown_battle is not None and session is not None and session.battle is not None:
                    update = {**update, self.view.shown_battle: session.battle.battle_id}
                yield update
        finally:
            close = getattr(updates, "close", None)
            if close is not None:
                close()

    def follow_up_lock(self, session: ArenaSession | None) -> Updates:
        """Ask (before the stream): voting and the follow-up box close while the next answers are written
        (settle opens them again), so neither a vote nor a second follow-up lands mid-turn."""
        closed = {control: gr.update(interactive=False) for control in self.view.controls}
        return {**closed, **self._followup(None), **self._no_messages()}

    def follow_up_in_page(self, question: str, session: ArenaSession | None, turn: int | None,
                          browser_key: str | None, request: gr.Request,
                          profile: gr.OAuthProfile | None) -> Iterator[Updates]:
        """Ask in the page: the follow-up turn streams into both panels under the earlier turns; a refusal is
        written under the follow-up box (settle then shows the box again, the question still in it)."""
        try:
            progress = self.arena.follow_up(session, question,
                                            visitor=visitor(request, profile, browser_key, self._hops))
        except SciArenaError as err:
            if self.view.followup_error is not None:
                yield {self.view.followup_error: message_markdown(str(err))}
            return
        cleared = {self.view.followup: ""} if self.view.followup is not None else {}
        first = True
        for updates in self._showing(self._stream(progress, turn, session)):
            yield {**updates, **cleared} if first else updates
            first = False

    def _stream(self, progress: Iterator[Any], turn: int | None,
                session: ArenaSession | None = None) -> Iterator[Updates]:
        """The battle's snapshots as updates. Closing this generator (Gradio does when the client goes away
        or cancels) closes the battle at once: its sides stop and its paid slot is freed, not left to the
        garbage collector."""
        try:
            yield from self._updates(progress, turn, session)
        finally:
            close = getattr(progress, "close", None)
            if close is not None:
                close()

    def _updates(self, progress: Iterator[Any], turn: int | None,
                 session: ArenaSession | None = None) -> Iterator[Updates]:
        """Each snapshot as both panels (every turn so far, the last as it streams), the reference lists
        and the status line. ``session``: the follow-up's (its field proposal kept); None for a new battle."""
        v = self.view
        status = ""
        # Each side's answer renders each finished paragraph once (stream_render.py), and a component whose
        # value has not changed since the last update is left out of the next (Gradio keeps what it shows).
        answers = {"a": StreamedAnswer(), "b": StreamedAnswer()}
        sent: dict[Any, Any] = {}

        def changed(updates: Updates) -> Updates:
            fresh = {component: value for component, value in updates.items()
                     if component is v.session or sent.get(component) != value}
            sent.update(fresh)
            return fresh

        for snapshot in progress:
            battle = snapshot.battle
            current = replace(session, battle=battle) if session is not None else \
                ArenaSession(battle=battle, turn=turn or 0)
            # Retrieval is done once per turn, before its stream.
            status = status or render.retrieval_status(battle.turns[-1].retrieval, follow_up=len(battle.turns) > 1)
            last = len(battle.turns) - 1
            if not snapshot.finished:
                # Every reference while streaming: which ones an answer cites is known only at the end.
                yield changed({
                    v.answer_a: render.conversation_markdown(battle, "a", snapshot.text_a,
                                                             references=snapshot.references("a"),
                                                             status=snapshot.status.get("a", ""),
                                                             markdown=answers["a"].markdown),
                    v.answer_b: render.conversation_markdown(battle, "b", snapshot.text_b,
                                                             references=snapshot.references("b"),
                                                             status=snapshot.status.get("b", ""),
                                                             markdown=answers["b"].markdown),
                    v.refs_a: render.conversation_cited(battle, "a"), v.refs_b: render.conversation_cited(battle, "b"),
                    v.status: status + " Answering…", v.session: current})
                continue
            done = "One answer failed, so this battle cannot be voted on." if not battle.votable else \
                SAME_ANSWERS if same_answers(battle) else "Both answers are complete — which one is better?"
            final = battle.turns[-1]
            yield {v.answer_a: render.conversation_markdown(battle, "a", snapshot.text_a, shown_error(final.side_a),
                                                            battle.cited_in("a", last), markdown=answers["a"].markdown),
                   v.answer_b: render.conversation_markdown(battle, "b", snapshot.text_b, shown_error(final.side_b),
                                                            battle.cited_in("b", last), markdown=answers["b"].markdown),
                   v.refs_a: render.conversation_cited(battle, "a"),
                   v.refs_b: render.conversation_cited(battle, "b"),
                   v.status: f"{status} {done}", v.session: current}

    def settle(self, session: ArenaSession | None, turn: int | None) -> Updates:
        """After a battle ended (or was refused, or cancelled): open voting if this turn's battle can
        be voted on; blank the screen if the session holds nothing current (a refusal's message stays)."""
        if session is None or session.battle is None or session.turn != (turn or 0):
            return self._blank(ArenaSession(turn=turn or 0))
        if not session.open_for_vote:
            return {**self.open_controls(session), **self._followup(session)}
        proposed = self.arena.suggest_subject(session)  # the labeller's field, shown as the choice's value
        return {**self.open_controls(proposed), self.view.session: proposed, **self._followup(proposed),
                self.view.subject_field: gr.update(value=proposed.suggested_subject or None, interactive=True)}

    def _followup(self, session: ArenaSession | None, *, clear: bool = False) -> Updates:
        """The follow-up box: shown exactly while this session's battle is open for the vote and has follow-ups
        left (SCIARENA_MAX_FOLLOWUPS); ``clear`` also empties it (a new battle)."""
        v = self.view
        if v.followup_box is None or v.followup is None:
            return {}
        battle = session.battle if session else None
        left = self.arena.settings.max_followups - (len(battle.followups) if battle else 0)
        shown = bool(session and session.open_for_vote and left > 0)
        box = {v.followup_box: gr.update(visible=shown)}
        if shown:
            hint = f"{left} follow-up question{'s' if left != 1 else ''} left; the vote is on the whole conversation"
            box[v.followup] = gr.update(info=hint, **({"value": ""} if clear else {}))
        elif clear:
            box[v.followup] = ""
        return box

    def _blank(self, session: ArenaSession) -> Updates:
        v = self.view
        blank = {component: "" for component in (v.answer_a, v.answer_b, v.refs_a, v.refs_b, v.status,
                                                 v.model_names)}
        closed = {button: gr.update(interactive=False) for button in v.vote_buttons}
        return {**blank, **closed, v.reason: gr.update(value="", interactive=False), **self._followup(None, clear=True),
                v.subject_field: gr.update(value=None, interactive=False), v.session: session,
                **self._share_boxes(locked=False), **({v.shown_battle: ""} if v.shown_battle is not None else {})}

    def _share_boxes(self, *, locked: bool) -> Updates:
        """Consent to publish belongs to one battle: every new screen starts with both boxes unticked and open,
        and once a vote is stored they show what it was recorded with and can no longer be changed (unticking
        afterwards would look like withdrawing a link that stays open)."""
        if not locked:
            return {box: gr.update(value=False, interactive=True, info=None) for box in self.view.share_boxes}
        return {box: gr.update(interactive=False, info=note)
                for box, note in zip(self.view.share_boxes, (SHARE_LOCKED_NOTE, None))}

    def _no_messages(self) -> Updates:
        errors = {self.view.question_error: "", self.view.vote_error: ""}
        return errors | ({self.view.followup_error: ""} if self.view.followup_error is not None else {})

    def open_controls(self, session: ArenaSession | None) -> Updates:
        """Vote buttons and reason box open exactly while this session's battle can be voted on."""
        open_ = bool(session and session.open_for_vote)
        return {control: gr.update(interactive=open_) for control in self.view.controls}

    def vote(self, choice: str, reason: str | None, consent: bool | None, session: ArenaSession | None,
             request: gr.Request | None = None, profile: gr.OAuthProfile | None = None,
             browser_key: str | None = None, subject: str | None = None, shared: bool | None = False,
             shared_reason: bool | None = False) -> Updates:
        """Record the vote durably, then reveal the names and close voting, in one update; a refused
        vote raises gr.Error."""
        try:
            return self._vote(choice, reason, consent, session, request, profile, browser_key, subject, shared,
                              shared_reason)
        except SciArenaError as err:
            raise gr.Error(str(err), print_exception=False) from None

    def _vote(self, choice: str, reason: str | None, consent: bool | None, session: ArenaSession | None,
              request: gr.Request | None, profile: gr.OAuthProfile | None, browser_key: str | None,
              subject: str | None = None, shared: bool | None = False,
              shared_reason: bool | None = False, shown_battle: str | None = "") -> Updates:
        if (session is None or session.battle is None) and (shown_battle or "").strip():
            raise BattleExpired(EXPIRED)  # the page shows a battle this session no longer holds (forgotten)
        who = visitor(request, profile, browser_key, self._hops)
        ballot = Ballot(choice=choice, reason=reason, consent=consent, username=who.username,
                        session_hash=who.session_hash, browser_key=who.browser_key, address=who.address,
                        subject=subject, shared=shared, shared_reason=shared_reason)
        voted = self.arena.vote(session, ballot)
        assert voted.vote is not None and voted.battle is not None
        battle, last = voted.battle, len(voted.battle.turns) - 1
        # With the names, the answers in full: model names the question shared were hidden until now.
        full = {box: render.conversation_markdown(battle, letter, side.answer.text, None,
                                                  battle.cited_in(letter, last), revealed=True)
                for box, letter, side in ((self.view.answer_a, "a", battle.turns[-1].side_a),
                                          (self.view.answer_b, "b", battle.turns[-1].side_b))
                if side is not None and side.answer is not None}
        own = {self.view.refs_a: render.conversation_cited(battle, "a", revealed=True),  # now marked
               self.view.refs_b: render.conversation_cited(battle, "b", revealed=True)}
        return {self.view.model_names: render.reveal_markdown(battle, voted.vote.choice), **full, **own,
                self.view.status: VOTED_STATUS,
                self.view.session: voted, **self.open_controls(voted), **self._followup(voted),
                **self._share_boxes(locked=True)}

    def vote_button(self, choice: str) -> Callable[..., Updates]:
        """The click handler of one vote button: a refusal is written by the buttons and stays until
        the next action (a real function: Gradio fills ``request`` and ``profile`` from its type hints,
        which a functools.partial hides)."""
        # Named apart from "vote": Gradio derives endpoint names from function names, even private ones.
        def vote_by_button(reason: str | None, consent: bool | None, session: ArenaSession | None,
                           browser_key: str | None, subject: str | None, request: gr.Request,
                           profile: gr.OAuthProfile | None, shared: bool | None = False,
                           shared_reason: bool | None = False, shown_battle: str | None = "") -> Updates:
            # shared/shared_reason/shown_battle last: Gradio fills request and profile by type, the inputs in order.
            try:
                updates = self._vote(choice, reason, consent, session, request, profile, browser_key, subject,
                                     shared, shared_reason, shown_battle)
            except SciArenaError as err:
                return {self.view.vote_error: message_markdown(str(err))}
            return {**updates, self.view.vote_error: ""}
        return vote_by_button

    def vote_api(self, choice: str, reason: str | None, consent: bool | None, session: ArenaSession | None,
                 request: gr.Request | None = None, profile: gr.OAuthProfile | None = None) -> Updates:
        """The public /vote endpoint: the same vote, returning only the reveal (and the session)."""
        updates = self.vote(choice, reason, consent, session, request, profile)
        return {component: updates[component] for component in self.view.vote_outputs}


def visitor(request: gr.Request | None, profile: gr.OAuthProfile | None, browser_key: str | None = None,
            hops: int = 0) -> Visitor:
    """Who is acting, as far as the page knows: the signed-in username, the browser's key, the session,
    and the client address behind ``hops`` trusted proxies (only ever hashed, for the limits)."""
    headers = getattr(request, "headers", None)
    forwarded = headers.get("x-forwarded-for") if headers is not None else None
    peer = getattr(getattr(request, "client", None), "host", None)
    return Visitor(username=getattr(profile, "username", None) or None, browser_key=(browser_key or "").strip() or None,
                   session_hash=getattr(request, "session_hash", None) or None,
                   address=client_address(forwarded, peer, hops))


def message_markdown(message: str) -> str:
    """A refusal as the page shows it, beside the control that caused it."""
    return f"⚠ {render.escape(message)}"


def shown_error(side: SideResult | None) -> str | None:
    """What the voter sees of a failed side, decided by the error's type: a provider's own message
    can name its vendor (an API key's variable name, a model path), so only timeouts, whose messages
    carry nothing but the limit (the runner's and the providers'), are shown as they are."""
    if side is None or side.error is None:
        return None
    if isinstance(side.error, ProviderTimeout):
        return str(side.error)
    return "This model could not complete its answer."

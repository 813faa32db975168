"""What happens on each Arena action, as plain methods testable without a browser.

The battle (models, contexts, answers) is kept in the visitor's server-side
session (``ArenaSession`` in a gr.State); the browser only ever receives the
anonymous texts until the vote is written. Every user-facing failure is a
``gr.Error`` with a short message.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, replace
from typing import Iterator

import gradio as gr

from sciarena.errors import SciArenaError
from sciarena.services import Services
from sciarena.types import CHOICES, Battle, Vote
from sciarena.ui import render
from sciarena.votes.store import utc_now_iso
from sciarena.votes.voter import require_consent, voter_id

log = logging.getLogger(__name__)

MAX_REASON_CHARS = 2000


@dataclass(frozen=True)
class ArenaSession:
    """One visitor's current battle. ``battle`` is set as soon as the pair is drawn."""

    battle: Battle | None = None
    voted: bool = False


# (answer-a, answer-b, references-a, references-b, status, session)
BattleOutputs = tuple[str, str, str, str, str, ArenaSession]


class ArenaHandlers:
    def __init__(self, services: Services) -> None:
        self.services = services

    def battle(self, question: str, session: ArenaSession | None) -> Iterator[BattleOutputs]:
        """Retrieve once, then stream both anonymous answers side by side."""
        try:
            progress = self.services.start_battle(question)
        except SciArenaError as err:
            raise gr.Error(str(err), print_exception=False) from None
        status = ""
        current = ArenaSession()
        for snapshot in progress:
            battle = snapshot.battle
            current = ArenaSession(battle=battle)
            status = status or render.retrieval_status(battle.retrieval)  # retrieval is done once, before the stream
            if not snapshot.finished:
                yield (render.answer_markdown(snapshot.text_a), render.answer_markdown(snapshot.text_b),
                       "", "", status + " Answering…", current)
        battle = current.battle
        assert battle is not None and battle.side_a is not None and battle.side_b is not None
        done = "Both answers are complete — which one is better?" if battle.votable else \
            "One answer failed, so this battle cannot be voted on."
        yield (
            render.answer_markdown(snapshot.text_a, _safe_error(battle.side_a.error)),
            render.answer_markdown(snapshot.text_b, _safe_error(battle.side_b.error)),
            render.cited_markdown(battle.side_a, battle.retrieval),
            render.cited_markdown(battle.side_b, battle.retrieval),
            f"{status} {done}",
            current,
        )

    def vote(self, choice: str, reason: str | None, consent: bool | None, session: ArenaSession | None,
             request: gr.Request | None = None, profile: gr.OAuthProfile | None = None,
             ) -> tuple[str, ArenaSession]:
        """Record the vote durably, then reveal the names. Refuses anything but one consented vote per finished battle."""
        normalised = {c.lower(): c for c in CHOICES}.get((choice or "").strip().lower())
        if normalised is None:
            raise gr.Error("A vote must be one of: A, B, tie, bad.", print_exception=False)
        battle = session.battle if session else None
        if battle is None:
            raise gr.Error("There is no battle to vote on yet — ask a question first.", print_exception=False)
        if session.voted:  # type: ignore[union-attr]
            raise gr.Error("You have already voted on this battle. Press New battle for another.",
                           print_exception=False)
        if not battle.finished:
            raise gr.Error("Please wait until both answers are complete.", print_exception=False)
        if not battle.votable:
            raise gr.Error("One of the answers failed, so this battle cannot be voted on.", print_exception=False)
        if time.time() - battle.created_at > self.services.settings.battle_ttl_s:
            raise gr.Error("This battle has expired; please start a new one.", print_exception=False)
        try:
            require_consent(consent)
            who = voter_id(getattr(profile, "username", None), getattr(request, "session_hash", None),
                           self.services.settings.id_salt)
            vote = Vote(battle=battle, choice=normalised, reason=(reason or "").strip()[:MAX_REASON_CHARS],  # type: ignore[arg-type]
                        voter_id=who, consent=True, timestamp=utc_now_iso())
            self.services.record_vote(vote)
        except SciArenaError as err:
            raise gr.Error(str(err), print_exception=False) from None
        return render.reveal_markdown(battle, normalised), replace(session, voted=True)  # type: ignore[arg-type]


def _safe_error(error: str | None) -> str | None:
    """What the voter sees of a failed side. Provider messages can name a vendor (an API key's
    variable name, a model path), so only our own timeout message is shown as it is."""
    if error is None:
        return None
    if error.startswith("This model did not finish within"):
        return error
    return "This model could not complete its answer."

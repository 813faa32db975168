"""Follow-up turns: what a battle's next question adds, what each side receives, and the stream's snapshots.

A visitor may ask follow-up questions once both first answers are complete and until they vote
(``Arena.follow_up``). The vote is then on the whole conversation, as in Chatbot Arena: voting first
would judge answers the visitor had not finished reading, and a follow-up after the vote could no longer
change the judgement, only unmask the models (the names are revealed at the vote).

Per turn: the follow-up question is searched once (with the first question, ``search_text``); the papers found that are not yet in the battle become
new references numbered after every reference so far (1..k stay what they were), shared by both sides.
Each side then receives the conversation as it lived it — its OWN earlier answers — with every reference it
may cite, and the runner applies the timeout and the anonymity policy to this turn as to the first.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Iterator

from sciarena.answer.prompt import answer_request
from sciarena.arena.runner import SIDES, Progress
from sciarena.core.types import Battle, Exchange, GenerationRequest, Reference, Retrieval, Turn
from sciarena.retrieval.bm25 import words_covered
from sciarena.retrieval.notation import searchable

# At most this many new papers join the reference list per follow-up: the papers of the first search stay
# listed, so each turn's prompt grows by a few entries, not by another full search's worth.
NEW_PAPERS_PER_FOLLOWUP = 5
# A follow-up is answered only when some paper, listed or just found, holds a third of its own topic
# words at least: searched with the first question, an unrelated follow-up ("a good recipe for chocolate chip
# cookies?") still found the first question's papers and was answered from them.
FOLLOW_UP_COVERAGE = 1 / 3
NOT_IN_THE_PAPERS = ("None of the papers found speaks to this follow-up question, so no model was asked. Ask "
                     "about this battle's topic, or press New battle to ask a new question.")


def search_text(battle: Battle, question: str) -> str:
    """What a follow-up searches for: its question, then the battle's first question. A follow-up is often
    elliptic ("How are its off-target effects measured?"): searched alone it matched a linguistics paper on
    the word "measured"; with the first question the topic is kept, already-listed papers rank first and
    are skipped (``new_references``), and a follow-up on a new topic still brings that topic's papers."""
    return f"{question}\n{battle.question}"


def answerable(battle: Battle, question: str, retrieval: Retrieval) -> bool:
    """Whether a paper of the battle, or one the follow-up's search found, covers the follow-up's own topic
    words (``FOLLOW_UP_COVERAGE``); checked before any model is called."""
    texts = [f"{r.paper.title} {p.text}" for r in (*battle.references, *retrieval.references) for p in r.passages]
    return words_covered(searchable(question), texts) >= FOLLOW_UP_COVERAGE


def new_references(battle: Battle, retrieval: Retrieval, limit: int = NEW_PAPERS_PER_FOLLOWUP
                   ) -> tuple[Reference, ...]:
    """The papers ``retrieval`` found that the battle does not list yet, best first, renumbered after the
    battle's last number. A paper already listed keeps its number and its passages (renumbering it, or
    changing the passages of [3] mid-conversation, would change what earlier answers cited)."""
    listed = {r.paper.paper_id for r in battle.references}
    fresh = [r for r in retrieval.references if r.paper.paper_id not in listed][:limit]
    start = battle.last_number() + 1
    return tuple(replace(r, number=start + k) for k, r in enumerate(fresh))


def listed_in(battle: Battle, letter: str, index: int) -> tuple[Reference, ...]:
    """The references turn ``index``'s user message lists for side ``letter``: the shared ones it added, and
    the ones this side's own pipeline retrieved in the turn before (its answer cites them; nothing listed
    them yet)."""
    turns = battle.turns
    own = () if index == 0 or turns[index - 1].side(letter) is None else \
        turns[index - 1].side(letter).extra_references  # type: ignore[union-attr]
    return tuple(sorted((*turns[index].added, *own), key=lambda r: r.number))


def side_requests(battle: Battle) -> dict[str, GenerationRequest]:
    """What each side receives for the battle's last turn: the conversation with its own earlier answers."""
    turns = battle.turns
    last = len(turns) - 1
    requests: dict[str, GenerationRequest] = {}
    for letter in SIDES:
        history = []
        for index, turn in enumerate(turns[:last]):
            side = turn.side(letter)
            assert side is not None and side.answer is not None  # a follow-up needs every earlier answer
            history.append(Exchange(turn.question, side.answer.text, listed_in(battle, letter, index)))
        requests[letter] = answer_request(turns[last].question, battle.side_references(letter), history,
                                          listed=listed_in(battle, letter, last))
    return requests


def start_turn(battle: Battle, question: str, retrieval: Retrieval, started_at: float) -> Battle:
    """``battle`` with a new, running turn for ``question`` (its new references numbered)."""
    added = new_references(battle, retrieval)
    turn = Turn(question=question, retrieval=replace(retrieval, references=added), added=added,
                started_at=started_at)
    return replace(battle, followups=battle.followups + (turn,))


def turn_battle(battle: Battle) -> Battle:
    """The record the runner runs for the last turn: the same pair and id, no sides yet."""
    turn = battle.turns[-1]
    return replace(battle, question=turn.question, retrieval=turn.retrieval, side_a=None, side_b=None,
                   followups=())


def follow(battle: Battle, stream: Iterator[Progress]) -> Iterator[Progress]:
    """The runner's snapshots of the last turn as snapshots of the whole battle (that turn's sides filled in
    as they end); closing this closes the stream (its sides stop, its limiter slot is freed)."""
    try:
        for snapshot in stream:
            running = replace(battle.followups[-1], side_a=snapshot.battle.side_a, side_b=snapshot.battle.side_b)
            whole = replace(battle, followups=battle.followups[:-1] + (running,))
            yield replace(snapshot, battle=whole)
    finally:
        close = getattr(stream, "close", None)
        if close is not None:
            close()

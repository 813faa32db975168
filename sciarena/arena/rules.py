"""The arena's rules: which questions start a battle, and which votes count.

``Arena.start_battle`` validates the question, retrieves once, draws a pair and returns the live
battle; ``Arena.follow_up`` adds a follow-up turn to a finished, unvoted battle (arena/followups.py);
``Arena.vote`` accepts one consented vote per finished, votable, unexpired battle and writes
it durably. Every refusal is a typed SciArenaError (core/errors.py) whose message is fit for the voter,
so the UI only shows messages and renders records; these rules are testable without Gradio.
Both enforce the abuse limits (arena/limits/), keyed by the visitor's hashed voter id (votes/voter.py): a
visitor over a limit is refused before retrieval, and a paid battle is counted and given its slot
after the draw, before any model is called. A battle belongs to whoever started it (``Battle.owners``,
their hashed ids): a vote from another browser or account is refused (NotYourBattle), even when it
presents the owner's Gradio session.
"""

from __future__ import annotations

import logging
import random
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Iterator

from sciarena.answer.prompt import answer_request
from sciarena.answer.sameness import SAME_ANSWERS, same_answers
from sciarena.arena import followups
from sciarena.arena.identity import check_identity
from sciarena.arena.labels.at_vote import ArenaLabeller
from sciarena.arena.limits import VisitorLimits, open_limiter
from sciarena.arena.pairing import new_battle, sample_pair, sample_pair_with, with_base_meetings
from sciarena.arena.runner import BattleRunner, Progress
from sciarena.arena.sampling import PairSampler, PairWeights, SamplerState
from sciarena.core.errors import (
    AlreadyVoted,
    BattleExpired,
    BattleNotFinished,
    BattleNotVotable,
    FollowUpRefused,
    InvalidChoice,
    InvalidQuestion,
    NoBattle,
    NotYourBattle,
    RetrievalError,
    SciArenaError,
)
from sciarena.core.settings import Settings
from sciarena.core.text import counted, scrub, storable_text
from sciarena.core.types import CHOICES, Battle, Choice, GenerationRequest, ModelSpec, Retrieval, Vote
from sciarena.pipelines.offline_preview import keeps_base_words, meets_its_offline_base
from sciarena.providers.registry import Pool
from sciarena.retrieval.choose import Retriever
from sciarena.votes.schema import vote_record
from sciarena.votes.store.counts import BattleCounts
from sciarena.votes.store.local import LocalVoteStore, utc_now_iso
from sciarena.votes.store.same_answers import SameAnswerLog
from sciarena.votes.voter import Visitor, check_salt, limit_keys, require_consent, voter_id

log = logging.getLogger(__name__)

MAX_REASON_CHARS = 2000
EXPIRED = "This battle has expired; please start a new one."  # too old, or its session forgotten (ui/handlers.py)
# Draws after an offline pipeline-against-its-base pair that would show equal text; a pool with no other
# pair (those two models alone) keeps the last draw, and the page then withholds the vote.
REDRAWS_FOR_EQUAL_TEXT = 20


@dataclass(frozen=True)
class ArenaSession:
    """One visitor's current battle (set as soon as the pair is drawn) and, once stored, its vote."""

    battle: Battle | None = None
    vote: Vote | None = None
    suggested_subject: str = ""  # the field the vote bar proposed for this battle ("" = none shown)
    turn: int = 0  # which Send / New battle of this visitor the battle belongs to (see ui/handlers.py)

    @property
    def voted(self) -> bool:
        return self.vote is not None

    @property
    def open_for_vote(self) -> bool:
        """What the vote buttons show; ``Arena.vote`` checks the same rules and says which one failed."""
        return (self.battle is not None and self.battle.votable and self.vote is None
                and not same_answers(self.battle))


@dataclass(frozen=True)
class Ballot:
    """What a voter submits, as plain values (the UI reads them from its widgets and request)."""

    choice: str
    reason: str | None = ""
    consent: bool | None = False
    username: str | None = None  # Hugging Face OAuth username when signed in
    session_hash: str | None = None  # the browser session's random id (never an IP address)
    browser_key: str | None = None  # a random token the browser keeps across visits (never stored raw)
    address: str | None = None  # the client address, for the limits only (hashed; never stored)
    subject: str | None = None  # the field the vote bar shows when voting (labels.ASKER_FIELDS); None = not shown
    shared: bool | None = False  # "share": the battle gets a public read-only link
    shared_reason: bool | None = False  # the shared view also shows the reason (only with ``shared``)

    @property
    def visitor(self) -> Visitor:
        return Visitor(username=self.username, browser_key=self.browser_key, session_hash=self.session_hash,
                       address=self.address)


def validate_question(text: str | None, max_chars: int) -> str:
    """The question stripped of surrounding space, or InvalidQuestion with a short reason."""
    question = scrub(text or "").strip()  # lone surrogates cannot be sent to a model or stored
    if not question:
        raise InvalidQuestion("Please type a question first.")
    if len(question) > max_chars:
        raise InvalidQuestion(
            f"Your question is {len(question):,} characters long; the limit is {max_chars:,}. "
            "Please shorten it."
        )
    return question


def identities(visitor: Visitor | None, salt: str) -> tuple[str, ...]:
    """The voter ids that stand for ``visitor``: as signed in, and as their browser (key or session) alone,
    so that signing in or out between asking and voting keeps the battle theirs."""
    if visitor is None:
        return ()
    ids = (voter_id(visitor, salt), voter_id(replace(visitor, username=None), salt))
    return tuple(dict.fromkeys(i for i in ids if i))


def normalise_choice(choice: str | None) -> Choice:
    """'a', ' Tie ' … → one of types.CHOICES, or InvalidChoice."""
    normalised = {c.lower(): c for c in CHOICES}.get((choice or "").strip().lower())
    if normalised is None:
        raise InvalidChoice("A vote must be one of: A, B, tie, bad.")
    return normalised  # type: ignore[return-value]


@dataclass(frozen=True)
class Arena:
    settings: Settings
    retriever: Retriever
    pool: Pool  # which models can battle now, and why the others cannot (About tab)
    runner: BattleRunner
    store: LocalVoteStore
    counts: BattleCounts  # battles per model, so pair sampling can favour newcomers
    rng: random.Random = field(default_factory=random.Random, compare=False)
    clock: Callable[[], float] = time.time  # epoch seconds: when a battle starts, and its voting window
    limiter: VisitorLimits | None = field(default=None, compare=False)  # None: the settings' limits, this clock
    # Labels each voted question (SCIARENA_LABEL_MODEL; default the offline rules), see ``vote``.
    labeller: ArenaLabeller = field(default_factory=ArenaLabeller, compare=False)
    # Pair sampling (SCIARENA_SAMPLER; None: the settings' sampler) and what it knows of the board:
    # the last state the board computed, returned at once (wiring.py's SamplerFeed), never a fit here.
    sampler: PairSampler | None = field(default=None, compare=False)
    sampler_state: Callable[[], SamplerState | None] = field(default=lambda: None, compare=False)
    # Battles withheld from the vote because both answers said the same (None: beside the vote store's folder).
    same_log: SameAnswerLog | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        check_salt(self.settings.id_salt, self.settings.public)
        if self.sampler is None:
            object.__setattr__(self, "sampler", PairSampler(self.settings.sampler, self.settings.sampler_floor))
        if self.limiter is None:  # one per arena, shared by every worker thread
            object.__setattr__(self, "limiter", open_limiter(self.settings, self.clock))
        if self.same_log is None:
            object.__setattr__(self, "same_log", SameAnswerLog(Path(self.store.root).parent))

    def start_battle(self, question_text: str | None, visitor: Visitor | None = None) -> Iterator[Progress]:
        """Validate, retrieve once, draw a pair; return the live battle stream.

        Validation, limits, retrieval and the draw happen in this call (errors are raised here, before
        any generation); the returned iterator runs both sides. ``visitor`` None (a caller that knows
        nobody, e.g. a script) is held only to the cap on concurrent paid battles."""
        question = validate_question(question_text, self.settings.max_question_chars)
        limiter = self._limiter
        key = None if visitor is None else limit_keys(visitor, self.settings.id_salt)  # voter id and address
        if limiter.limits.counts_battle(self.pool.active):  # else no battle this pool can draw is counted
            limiter.check_battle(key)
        retrieval = self._retrieve(question)
        if not retrieval.references:
            # Two answers saying "nothing found" are not worth a vote (or a paid generation).
            raise RetrievalError("No papers matched your question closely enough to answer it, so no model was "
                                 "asked. Try naming the topic in the words a paper would use.")
        request = answer_request(question, retrieval.references)
        pair = self._draw_worth_a_vote(request)
        # Unlabelled: ``vote`` labels, so a labelling model never delays the answers and is paid only
        # for the questions that are voted on (the only ones a label is recorded for).
        battle = replace(new_battle(question, retrieval, pair, created_at=self.clock()),
                         owners=identities(visitor, self.settings.id_salt))
        lease = limiter.reserve_battle(key, pair)  # counted and given its slot, or refused: nothing called yet
        return self._noting_same(lease.wrap(self.runner.run(battle, request)))

    def follow_up(self, session: ArenaSession | None, question_text: str | None,
                  visitor: Visitor | None = None) -> Iterator[Progress]:
        """Ask a follow-up question in the session's battle; return the battle stream of that turn.

        Allowed once every answer so far is complete, before the vote (it is on the whole conversation,
        arena/followups.py says why), up to ``settings.max_followups`` times. Each follow-up calls both models
        again, so the limiter counts it as a battle and gives it its own paid slot; the question is searched
        once (moderation included) and its new papers are shared by both sides."""
        question = validate_question(question_text, self.settings.max_question_chars)
        battle = session.battle if session else None
        if session is None or battle is None:
            raise FollowUpRefused("There is no battle to follow up yet — ask a question first.")
        if not self._owns(battle, visitor):
            raise FollowUpRefused("This battle was started in another browser, so it cannot be continued here.")
        if session.voted:
            raise FollowUpRefused("You have voted on this battle, which ends it. Press New battle for another.")
        if not battle.finished:
            raise FollowUpRefused("Please wait until both answers are complete.")
        if not battle.votable:
            raise FollowUpRefused("One of the answers failed, so this battle cannot be continued.")
        if same_answers(battle):
            raise FollowUpRefused(SAME_ANSWERS)
        if len(battle.followups) >= self.settings.max_followups:
            allowed = self.settings.max_followups
            raise FollowUpRefused(f"A battle takes up to {counted(allowed, 'follow-up question')}"
                                  "; please vote now." if allowed else "Follow-up questions are turned off here.")
        self._check_fresh(battle)
        limiter = self._limiter
        key = None if visitor is None else limit_keys(visitor, self.settings.id_salt)
        pair = (battle.model_a, battle.model_b)
        if limiter.limits.counts_battle(pair):
            limiter.check_battle(key)
        retrieval = self._retrieve(followups.search_text(battle, question))
        if not followups.answerable(battle, question, retrieval):
            raise FollowUpRefused(followups.NOT_IN_THE_PAPERS)
        growing = followups.start_turn(battle, question, retrieval, self.clock())
        requests = followups.side_requests(growing)
        lease = limiter.reserve_battle(key, pair)  # counted and given its slot, or refused: nothing called yet
        stream = self.runner.run(followups.turn_battle(growing), requests["a"], requests)
        return self._noting_same(followups.follow(growing, lease.wrap(stream)))

    def _noting_same(self, stream: Iterator[Progress]) -> Iterator[Progress]:
        """``stream``, recording once (without question, answers or voter) a battle that ends with two answers
        saying the same, which is not offered for a vote; closing this closes ``stream``."""
        noted = False
        try:
            for snapshot in stream:
                if not noted and snapshot.finished and same_answers(snapshot.battle):
                    noted = True
                    battle = snapshot.battle
                    try:
                        assert self.same_log is not None  # set by __post_init__
                        self.same_log.note(battle.battle_id, battle.model_a.name, battle.model_b.name,
                                           len(battle.turns))
                    except SciArenaError:  # a count that cannot be written never ends the battle
                        log.warning("a same-answer battle could not be recorded")
                yield snapshot
        finally:
            close = getattr(stream, "close", None)
            if close is not None:
                close()

    def _owns(self, battle: Battle, visitor: Visitor | None) -> bool:
        """Whether ``visitor`` started ``battle`` (a battle with no owners is anyone's)."""
        return not battle.owners or bool(set(identities(visitor, self.settings.id_salt)) & set(battle.owners))

    def _check_fresh(self, battle: Battle) -> None:
        if self.clock() - battle.created_at > self.settings.battle_ttl_s:
            raise BattleExpired(EXPIRED)

    def _retrieve(self, question: str) -> Retrieval:
        try:
            return self.retriever.retrieve(question)
        except SciArenaError:
            raise
        except Exception as err:  # a backend bug becomes a message, not a trace
            log.exception("retrieval failed")
            raise RetrievalError("Retrieval failed unexpectedly; please try again.") from err

    def _draw_worth_a_vote(self, request: GenerationRequest) -> tuple[ModelSpec, ModelSpec]:
        """A drawn pair, drawn again while it is an offline pipeline against its own base that would answer
        with the base's words (pipelines/offline_preview.py): a battle that cannot be voted on."""
        keeps: dict[str, bool] = {}  # per pipeline: this question's preview, run at most once
        pair = self._draw()
        for _ in range(REDRAWS_FOR_EQUAL_TEXT):
            pipeline = meets_its_offline_base(*pair)
            if pipeline is None:
                break
            if pipeline.name not in keeps:
                keeps[pipeline.name] = keeps_base_words(pipeline, request, self.retriever)
            if not keeps[pipeline.name]:
                break
            pair = self._draw()
        return pair

    def _draw(self) -> tuple:
        sampler = self.pair_sampler
        if sampler.sampler == "inverse_sqrt":  # the original draw, unchanged (seeded runs repeat)
            return sample_pair(self.pool.active, self.rng, self.counts.snapshot(), self.settings.outage)
        return sample_pair_with(sampler, self.pool.active, self.rng, self.sampler_state(),
                                self.counts.snapshot(), self.settings.outage)

    @property
    def pair_sampler(self) -> PairSampler:
        assert self.sampler is not None  # set by __post_init__
        return self.sampler

    def sampling_weights(self) -> dict[str, float]:
        """Each usable model's expected share of the next battles under the current weights (sums to 2,
        two models a battle; a drawn pipeline's meetings with its base included), for the About tab and JSON."""
        weights = self.pair_weights()
        return {} if weights is None else weights.per_model()

    def pair_weights(self) -> PairWeights | None:
        """The probability of each pair of usable models being the next battle, as ``_draw`` draws it (a drawn
        pipeline meeting its base included); None with fewer than two."""
        usable = [m for m in self.pool.active if m.name not in self.settings.outage]
        if len(usable) < 2:
            return None
        drawn = self.pair_sampler.weights([m.name for m in usable], self.sampler_state(), self.counts.snapshot())
        return with_base_meetings(drawn, usable)

    @property
    def _limiter(self) -> VisitorLimits:
        assert self.limiter is not None  # set by __post_init__
        return self.limiter

    def suggest_subject(self, session: ArenaSession) -> ArenaSession:
        """The session with the field the vote bar proposes for its finished battle (the offline labeller's)."""
        if session.battle is None or not session.battle.finished or session.suggested_subject:
            return session
        return replace(session, suggested_subject=self.labeller.suggest_subject(session.battle.question))

    def vote(self, session: ArenaSession | None, ballot: Ballot) -> ArenaSession:
        """Store one consented vote on the session's finished battle; the session now carries the vote.

        The rules are checked in the order a voter can fix them, and each refusal has its own type."""
        choice = normalise_choice(ballot.choice)
        battle = session.battle if session else None
        if session is None or battle is None:
            raise NoBattle("There is no battle to vote on yet — ask a question first.")
        who = voter_id(ballot.visitor, self.settings.id_salt)
        if not self._owns(battle, ballot.visitor):
            raise NotYourBattle("This battle was started in another browser, so it cannot be voted on from here. "
                                "Ask your own question to vote.")
        if session.voted:
            raise AlreadyVoted("You have already voted on this battle. Press New battle for another.")
        if not battle.finished:
            raise BattleNotFinished("Please wait until both answers are complete.")
        if not battle.votable:
            raise BattleNotVotable("One of the answers failed, so this battle cannot be voted on.")
        if same_answers(battle):
            raise BattleNotVotable(SAME_ANSWERS)
        self._check_fresh(battle)
        require_consent(ballot.consent)
        # RateLimitedVisitor over votes_per_day, for the voter id or the address
        undo = self._limiter.reserve_vote(limit_keys(ballot.visitor, self.settings.id_salt) or (who,))
        try:
            # After the limits (a refused vote costs no model call); the rules stand in for a model that
            # fails, times out or answers garbage, so labelling never loses a vote.
            labels = self.labeller.label(battle.question, battle.retrieval).with_asker_subject(
                ballot.subject, session.suggested_subject)
            battle = replace(battle, question_type=labels.question_type, subject=labels.subject)
            reason = storable_text(ballot.reason or "").strip()[:MAX_REASON_CHARS]  # no NUL, ESC or U+202E
            identity = check_identity(battle)
            vote = Vote(battle=battle, choice=choice, reason=reason, voter_id=who, consent=True,
                        timestamp=utc_now_iso(), shared=ballot.shared is True,
                        shared_reason=ballot.shared is True and ballot.shared_reason is True,
                        identity_revealed=identity.revealed, identity_reason=identity.reason)
            self.store.append(vote_record(vote, labels))  # VoteRejected if this battle already has a stored vote
        except BaseException:
            undo()  # a vote not stored does not count against the voter
            raise
        self.counts.add(battle.model_a.name, battle.model_b.name)
        return replace(session, vote=vote)

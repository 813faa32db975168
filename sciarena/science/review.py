"""The rules of expert review (the Review tab): who may review, which stored battle comes next, what is saved.

The paper checks its votes two ways (§4.3): a second expert votes the same battle again
(inter-annotator agreement) and the same expert votes it again after an interval
(self-consistency); community votes are audited as clearly reasonable, vague or wrong, or
"can't judge" when the content is outside the reviewer's field. A review here does both: the
reviewer first votes blind (answers and references only — no model names, no original vote), then
sees the original vote and labels it. One record is written at the end, or nothing.

Sampling is seeded and keeps no state: each reviewer's order of the stored battles is fixed by a
hash of (seed, reviewer id, battle id); the next battle is the first in that order that is due —
a repeat (reviewed once, at least ``repeat_days`` ago) before any new one, since repeats are what
self-consistency needs and are the rarer. A battle is seen at most twice by one reviewer, never
when the reviewer cast the original vote, and never when an answer was redacted.
"""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass, replace
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Iterable, Mapping

from sciarena import __version__
from sciarena.core.errors import ReviewRefused
from sciarena.core.types import Paper, Passage, Reference
from sciarena.votes.schema import OUTCOMES, outcome_of
from sciarena.votes.store.reviews import REVIEW_FIELDS, REVIEW_SCHEMA_VERSION, LocalReviewStore
from sciarena.votes.voter import Visitor, voter_id

# The paper's audit labels (§4.3), as stored → as shown.
AUDIT_LABELS: dict[str, str] = {
    "reasonable": "Clearly reasonable",
    "vague": "Vague (other votes defensible)",
    "wrong": "Wrong",
    "cant_judge": "Can't judge",
}
MAX_ROUNDS = 2  # first look + one repeat


@dataclass(frozen=True)
class StoredBattle:
    """A stored vote's battle as a reviewer may see it, plus what stays on the server."""

    vote_id: str
    question: str
    response_a: str
    response_b: str
    references_a: tuple[Reference, ...]
    references_b: tuple[Reference, ...]
    subject: str | None
    question_type: str | None
    original_vote: str  # never sent to the browser before the blind vote
    voter_id: str | None


@dataclass(frozen=True)
class ReviewSession:
    """One reviewer's current battle (kept server-side in a gr.State)."""

    battle: StoredBattle
    reviewer_id: str
    round: int
    shown_at: str
    vote: str | None = None  # the blind vote, once given; then fixed


def battle_of(record: Mapping[str, Any]) -> StoredBattle | None:
    """The reviewable battle in a vote record, or None (no id, an answer missing or redacted, no outcome)."""
    vote_id, a, b = record.get("id"), record.get("responseA"), record.get("responseB")
    code = outcome_of(record.get("vote"))
    if not vote_id or not isinstance(a, str) or not isinstance(b, str) or not a.strip() or not b.strip():
        return None
    if code is None or record.get("redacted_a") or record.get("redacted_b") or record.get("identity_revealed"):
        return None
    return StoredBattle(
        vote_id=str(vote_id), question=str(record.get("question") or ""), response_a=a, response_b=b,
        references_a=_references(record.get("citations_a")), references_b=_references(record.get("citations_b")),
        subject=record.get("subject") or None, question_type=record.get("question_type") or None,
        original_vote=OUTCOMES[code], voter_id=record.get("voter_id") or None)


def _references(citations: Any) -> tuple[Reference, ...]:
    """Citation records (votes/schema.py citation_record) back into References for ui/render.py."""
    out = []
    for c in citations if isinstance(citations, list) else ():
        if not isinstance(c, dict) or not isinstance(c.get("number"), int):
            continue
        year = c.get("year")
        paper = Paper(paper_id=str(c.get("id") or ""), title=str(c.get("title") or "Untitled"),
                      authors=(str(c["authors"]),) if c.get("authors") else (),
                      year=year if isinstance(year, int) else None, venue=str(c.get("venue") or ""),
                      url=c.get("url") if isinstance(c.get("url"), str) else None)
        text = c.get("content") if isinstance(c.get("content"), str) else ""
        passages = (Passage(passage_id=f"{paper.paper_id}:0", paper=paper, text=text),) if text else ()
        out.append(Reference(number=c["number"], paper=paper, passages=passages))
    return tuple(out)


class ReviewDesk:
    """Hands reviewers battles and saves their reviews."""

    def __init__(self, *, reviewers: frozenset[str], salt: str, store: LocalReviewStore,
                 votes: Callable[[], Iterable[Mapping[str, Any]]], repeat_days: float = 14.0, seed: int | None = None,
                 clock: Callable[[], datetime] | None = None) -> None:
        self.reviewers = reviewers
        self.salt = salt
        self.store = store
        self.votes = votes  # the stored vote records (re-read each time: new votes become reviewable)
        self.repeat_days = repeat_days
        self.seed = 0 if seed is None else seed
        self._clock = clock or (lambda: datetime.now(timezone.utc))

    def reviewer_id(self, username: str | None) -> str:
        """The hashed id of a signed-in reviewer named in SCIARENA_REVIEWERS; ReviewRefused otherwise."""
        name = (username or "").strip()
        if not name:
            raise ReviewRefused("Please sign in with Hugging Face to review.")
        if name not in self.reviewers:
            raise ReviewRefused("This account is not on the list of reviewers (SCIARENA_REVIEWERS).")
        return voter_id(Visitor(username=name), self.salt)

    def next_battle(self, username: str | None) -> ReviewSession:
        reviewer = self.reviewer_id(username)
        now = self._clock()
        seen: dict[str, list[datetime]] = {}
        for review in self.store.records():
            if review.get("reviewer_id") == reviewer:
                seen.setdefault(str(review.get("id")), []).append(_parse_time(review.get("timestamp"), now))
        due, new = [], []
        for record in self.votes():
            battle = battle_of(record)
            if battle is None or battle.voter_id == reviewer:
                continue
            times = seen.get(battle.vote_id, [])
            if not times:
                new.append(battle)
            elif len(times) < MAX_ROUNDS and self.repeat_days > 0 and \
                    now - max(times) >= timedelta(days=self.repeat_days):
                due.append(battle)
        chosen = min(due, key=lambda b: self._order(reviewer, b)) if due else \
            min(new, key=lambda b: self._order(reviewer, b)) if new else None
        if chosen is None:
            raise ReviewRefused("There is no battle to review right now: every stored battle has been reviewed "
                                "by you (repeats come back after "
                                f"{self.repeat_days:g} days), or no votes are stored yet.")
        return ReviewSession(battle=chosen, reviewer_id=reviewer, round=len(seen.get(chosen.vote_id, [])) + 1,
                             shown_at=_iso(now))

    def _order(self, reviewer: str, battle: StoredBattle) -> str:
        return hashlib.sha256(f"{self.seed}:{reviewer}:{battle.vote_id}".encode()).hexdigest()

    def blind_vote(self, session: ReviewSession | None, username: str | None, vote: str) -> ReviewSession:
        """Fix the reviewer's blind vote; the original vote may be shown after this."""
        current = self._current(session, username)
        if current.vote is not None:
            raise ReviewRefused("Your vote on this battle is already given; now label the original vote.")
        if vote not in OUTCOMES:
            raise ReviewRefused("A vote is A, B, tie or bad.")
        return replace(current, vote=vote)

    def save(self, session: ReviewSession | None, username: str | None, audit: str) -> dict[str, Any]:
        """Write the review (durably) and return its record. "cant_judge" may be given before the blind
        vote (the reviewer cannot judge the content at all); every other label needs the vote first."""
        current = self._current(session, username)
        if audit not in AUDIT_LABELS:
            raise ReviewRefused(f"The label must be one of: {', '.join(AUDIT_LABELS.values())}.")
        if current.vote is None and audit != "cant_judge":
            raise ReviewRefused("Give your own vote first; the original vote is shown after it.")
        battle = current.battle
        record: dict[str, Any] = {
            "id": battle.vote_id, "vote": current.vote, "audit": audit, "subject": battle.subject,
            "question_type": battle.question_type, "original_vote": battle.original_vote,
            "review_id": uuid.uuid4().hex, "reviewer_id": current.reviewer_id, "round": current.round,
            "shown_at": current.shown_at, "timestamp": _iso(self._clock()),
            "schema_version": REVIEW_SCHEMA_VERSION, "app_version": __version__,
        }
        assert tuple(record) == REVIEW_FIELDS, "the review record and REVIEW_FIELDS drifted apart"
        self.store.append(record)
        return record

    def _current(self, session: ReviewSession | None, username: str | None) -> ReviewSession:
        reviewer = self.reviewer_id(username)
        if session is None:
            raise ReviewRefused("No battle is open for review: press “Next battle”.")
        if session.reviewer_id != reviewer:  # a session opened by another account (signed out and in)
            raise ReviewRefused("This battle was opened by another account: press “Next battle”.")
        return session


def _iso(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _parse_time(value: Any, now: datetime) -> datetime:
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:  # an unreadable time counts as now: the battle is not repeated too early
        return now


# --- reading reviews back: the sets ``python -m sciarena agreement`` compares -------------------------
@dataclass(frozen=True)
class ReviewSets:
    second: tuple[dict[str, Any], ...]  # one per battle: its earliest first-round review with a vote (id = vote id)
    round1: tuple[dict[str, Any], ...]  # a reviewer's first vote on a battle they voted twice (id = vote id:reviewer)
    round2: tuple[dict[str, Any], ...]  # the same reviewer's repeat, same id
    audits: dict[str, int]  # first-round audit labels, counted


def review_sets(reviews: Iterable[Mapping[str, Any]]) -> ReviewSets:
    """Split review records into the sets agreement compares: ``second`` against the original votes
    (inter-annotator agreement), ``round1`` against ``round2`` (self-consistency). ``agreement`` matches
    by ``id`` and keeps one record per id, so the repeat pairs carry an id per (battle, reviewer)."""
    ordered = sorted((dict(r) for r in reviews), key=lambda r: str(r.get("timestamp") or ""))
    second: dict[str, dict[str, Any]] = {}
    rounds: dict[tuple[str, str], dict[int, dict[str, Any]]] = {}
    audits = {label: 0 for label in AUDIT_LABELS}
    for review in ordered:
        key = (str(review.get("id")), str(review.get("reviewer_id")))
        if review.get("round") == 1 and review.get("audit") in audits:
            audits[review["audit"]] += 1
        if review.get("vote") not in OUTCOMES:
            continue
        if review.get("round") == 1:
            second.setdefault(key[0], review)
        rounds.setdefault(key, {}).setdefault(int(review.get("round") or 0), review)
    pairs = [(f"{battle}:{reviewer}", by_round[1], by_round[2])
             for (battle, reviewer), by_round in rounds.items() if 1 in by_round and 2 in by_round]
    return ReviewSets(second=tuple(second.values()),
                      round1=tuple({**first, "id": key} for key, first, _ in pairs),
                      round2=tuple({**repeat, "id": key} for key, _, repeat in pairs),
                      audits=audits)

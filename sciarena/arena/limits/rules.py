"""The abuse limits' rules, shared by both stores: battles and votes per voter key, and the number of paid battles running at once.

Why these limits. A battle between two language models costs money; a vote moves the leaderboard.
So battles are counted per hashed voter id (``votes.voter.voter_id``: never a raw username, key or
IP) over the last hour and the last 24 hours, votes over the last 24 hours, and paid battles
generating at the same time over all visitors — the cap that bounds the bill even when a client
rotates its keys. A battle is *paid* when either contestant is not offline (``ModelSpec.offline``);
offline demo battles are counted only with ``limit_offline``. Votes count whatever the battle:
they are about the leaderboard, not the bill.

A visitor is counted under several keys at once — its hashed voter id and its hashed client address
(``votes.voter.limit_keys``) — and refused when *any* of them is at a limit, so a client that rotates
sessions or browser keys still meets the limits of its address.

Windows slide: each counted event keeps its time, and a rule counts the events younger than its
window, so there is no reset at midnight to line up for. Over a limit, the check raises a typed
error (core/errors.py) whose message is one sentence for the visitor, before anything is started or
recorded. A paid battle holds a slot (:class:`Lease`) until its stream ends or is closed, and at
most ``lease_s`` seconds, so a stream the caller never reads cannot hold a slot for ever.

The state is in-process (one lock; the app's worker threads share one :class:`Limiter`). Replicas
share nothing that way; with ``SCIARENA_REDIS_URL`` the same rules run in Redis instead
(``redis.RedisLimiter``), so every replica counts against one set of windows.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterable, Iterator, Protocol, Sequence, TypeVar

from sciarena.core.errors import ArenaBusy, RateLimitedVisitor

if TYPE_CHECKING:
    from sciarena.core.settings import Settings
    from sciarena.core.types import ModelSpec

HOUR, DAY = 3600.0, 86400.0
BATTLE, VOTE = "battle", "vote"
_T = TypeVar("_T")
Keys = str | Sequence[str] | None  # one key, several (each counted and checked), or nobody to count


def key_list(keys: Keys) -> tuple[str, ...]:
    """The distinct keys to count, in order; () for nobody."""
    if keys is None:
        return ()
    return tuple(dict.fromkeys([keys] if isinstance(keys, str) else keys))


@dataclass(frozen=True)
class Limits:
    """The limits; 0 = no limit."""

    battles_per_hour: int = 30
    battles_per_day: int = 150
    votes_per_day: int = 150
    max_paid_battles: int = 8
    max_paid_per_visitor: int = 2  # a voter key's fair share of those slots (0 = no share limit)
    limit_offline: bool = False  # also count battles between two offline contestants
    lease_s: float = 600.0  # a paid battle's slot is freed at the latest this long after it started

    @classmethod
    def from_settings(cls, settings: "Settings") -> "Limits":
        return cls(battles_per_hour=settings.battles_per_hour, battles_per_day=settings.battles_per_day,
                   votes_per_day=settings.votes_per_day, max_paid_battles=settings.max_paid_battles,
                   max_paid_per_visitor=settings.max_paid_per_visitor,
                   limit_offline=settings.limit_offline,
                   # a battle ends by its generation timeout; the margin covers retrieval and cleaning
                   lease_s=settings.generation_timeout_s + 120.0)

    def rules(self, kind: str) -> tuple[tuple[str, float, int], ...]:
        """(name, window seconds, limit) of the rules counting events of ``kind``."""
        table = {BATTLE: (("battles_per_hour", HOUR, self.battles_per_hour),
                          ("battles_per_day", DAY, self.battles_per_day)),
                 VOTE: (("votes_per_day", DAY, self.votes_per_day),)}
        return tuple(rule for rule in table[kind] if rule[2] > 0)

    def counts_battle(self, specs: Iterable["ModelSpec"]) -> bool:
        """Whether a battle between ``specs`` is counted (paid, or every battle with limit_offline)."""
        return self.limit_offline or is_paid(specs)


def is_paid(specs: Iterable["ModelSpec"]) -> bool:
    return any(not spec.offline for spec in specs)


def _wait(seconds: float) -> str:
    if seconds <= 60:
        return "in a minute"
    if seconds <= 90:
        return "in a minute or two"
    if seconds < 2 * HOUR:
        return f"in about {math.ceil(seconds / 60)} minutes"
    return f"in about {math.ceil(seconds / HOUR)} hours"


_MESSAGES = {
    "battles_per_hour": "You have started {n} battles in the last hour, the most one visitor can; "
                        "please try again {wait}.",
    "battles_per_day": "You have started {n} battles in the last 24 hours, the most one visitor can; "
                       "please try again {wait}.",
    "votes_per_day": "You have voted {n} times in the last 24 hours, the most one visitor can; "
                     "please try again {wait}.",
}
BUSY_MESSAGE = ("The arena is answering as many questions as it can afford at once right now; a place frees "
                "as soon as one of those battles ends (at the latest {wait}), so please try again in a minute.")
SHARE_MESSAGE = ("You already have {n} battles answering at once, the most one visitor can hold while others "
                 "wait; please try again when one of them has finished (at the latest {wait}).")


def busy(retry_s: float) -> ArenaBusy:
    """The refusal for a full arena whose earliest slot is certainly free in ``retry_s`` seconds (its lease
    ends). Battles usually end well before that, so a client is told to retry after a minute at most."""
    return ArenaBusy(BUSY_MESSAGE.format(wait=_wait(retry_s)), retry_after_s=max(0.0, min(retry_s, 60.0)))


def over_share(limit: int, retry_s: float) -> ArenaBusy:
    """The refusal for a visitor already holding ``limit`` paid slots; the oldest is free in ``retry_s``."""
    return ArenaBusy(SHARE_MESSAGE.format(n=limit, wait=_wait(retry_s)), retry_after_s=max(0.0, retry_s))


def refusal(name: str, limit: int, retry_s: float) -> RateLimitedVisitor:
    """The error for a visitor at rule ``name``'s ``limit``, free again in ``retry_s`` seconds."""
    return RateLimitedVisitor(_MESSAGES[name].format(n=limit, wait=_wait(retry_s)), limit=name,
                              retry_after_s=max(0.0, retry_s))


class Lease:
    """A paid battle's slot: released once, by :meth:`release`, the end of :meth:`wrap`'s stream,
    or expiry."""

    def __init__(self, release: Callable[[], None] | None = None) -> None:
        self._release = release
        self._lock = threading.Lock()

    def release(self) -> None:
        with self._lock:
            release, self._release = self._release, None
        if release is not None:
            release()

    def wrap(self, stream: Iterator[_T]) -> Iterator[_T]:
        """``stream``, releasing the slot when it ends, fails or is closed."""
        if self._release is None:
            return stream
        return self._follow(stream)

    def _follow(self, stream: Iterator[_T]) -> Iterator[_T]:
        try:
            yield from stream
        finally:
            self.release()


class VisitorLimits(Protocol):
    """What the arena asks of a limiter (memory.Limiter or redis.RedisLimiter)."""

    limits: Limits

    def check_battle(self, key: Keys) -> None: ...

    def reserve_battle(self, key: Keys, specs: Iterable["ModelSpec"]) -> Lease: ...

    def reserve_vote(self, key: Keys) -> Callable[[], None]: ...

    def running(self) -> int: ...

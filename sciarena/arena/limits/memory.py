"""Abuse limits: battles and votes per voter key, and the number of paid battles running at once.

Why these limits. A battle between two language models costs money; a vote moves the leaderboard.
So battles are counted per hashed voter id (``votes.voter.voter_id``: never a raw username, key or
IP) over the last hour and the last 24 hours, votes over the last 24 hours, and paid battles
generating at the same time over all visitors — the cap that bounds the bill even when a client
rotates its keys. A battle is *paid* when either contestant is not offline (``ModelSpec.offline``);
offline demo battles are counted only with ``limit_offline``. Votes count whatever the battle:
they are about the leaderboard, not the bill.

Windows slide: each counted event keeps its time, and a rule counts the events younger than its
window, so there is no reset at midnight to line up for. Over a limit, the check raises a typed
error (errors.py) whose message is one sentence for the visitor, before anything is started or
recorded. A paid battle holds a slot (:class:`Lease`) until its stream ends or is closed, and at
most ``lease_s`` seconds, so a stream the caller never reads cannot hold a slot for ever.

The state is in-process (one lock; the app's worker threads share one :class:`Limiter`). Replicas
share nothing that way; with ``SCIARENA_REDIS_URL`` the same rules run in Redis instead
(``limits_redis.RedisLimiter``), so every replica counts against one set of windows.
"""

from __future__ import annotations

import bisect
import itertools
import math
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterable, Iterator, Protocol, TypeVar

from sciarena.core.errors import ArenaBusy, RateLimitedVisitor

if TYPE_CHECKING:
    from sciarena.core.settings import Settings
    from sciarena.core.types import ModelSpec

HOUR, DAY = 3600.0, 86400.0
BATTLE, VOTE = "battle", "vote"
_T = TypeVar("_T")


@dataclass(frozen=True)
class Limits:
    """The limits; 0 = no limit."""

    battles_per_hour: int = 30
    battles_per_day: int = 150
    votes_per_day: int = 150
    max_paid_battles: int = 8
    limit_offline: bool = False  # also count battles between two offline contestants
    lease_s: float = 600.0  # a paid battle's slot is freed at the latest this long after it started

    @classmethod
    def from_settings(cls, settings: "Settings") -> "Limits":
        return cls(battles_per_hour=settings.battles_per_hour, battles_per_day=settings.battles_per_day,
                   votes_per_day=settings.votes_per_day, max_paid_battles=settings.max_paid_battles,
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
BUSY_MESSAGE = ("The arena is answering as many questions as it can afford at once right now; "
                "please try again in a minute.")


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
    """What the arena asks of a limiter (this module's Limiter, or limits_redis.RedisLimiter)."""

    limits: Limits

    def check_battle(self, key: str | None) -> None: ...

    def start_battle(self, key: str | None, specs: Iterable["ModelSpec"]) -> Lease: ...

    def reserve_vote(self, key: str) -> Callable[[], None]: ...

    def running(self) -> int: ...


def open_limiter(settings: "Settings", clock: Callable[[], float]) -> VisitorLimits:
    """The settings' limits, in Redis when SCIARENA_REDIS_URL names a server, else in this process."""
    limits = Limits.from_settings(settings)
    if settings.redis_url:
        from sciarena.arena.limits.redis import RedisLimiter

        return RedisLimiter.from_url(settings.redis_url, limits, clock)
    return Limiter(limits, clock)


class Limiter:
    """Sliding-window counts per voter key and the paid battles running; thread-safe.

    ``clock`` (epoch seconds) is injected so tests move time instead of waiting."""

    def __init__(self, limits: Limits, clock: Callable[[], float]) -> None:
        self.limits = limits
        self._clock = clock
        self._lock = threading.Lock()
        self._events: dict[tuple[str, str], list[float]] = {}  # (kind, voter key) → times, oldest first
        self._running: dict[int, float] = {}  # lease number → expiry time
        self._numbers = itertools.count()
        self._swept = -math.inf

    # --- per-key windows ---------------------------------------------------------------------------
    def _over(self, kind: str, key: str, now: float) -> None:
        """Raise RateLimitedVisitor when one more event of ``kind`` would break a rule (lock held)."""
        times = self._events.get((kind, key), [])
        for name, window, limit in self.limits.rules(kind):
            start = bisect.bisect_right(times, now - window)
            if len(times) - start >= limit:
                raise refusal(name, limit, times[len(times) - limit] + window - now)  # the oldest counted leaves

    def _record(self, kind: str, key: str, now: float) -> float:
        times = self._events.setdefault((kind, key), [])
        bisect.insort(times, now)
        longest = max((window for _, window, _ in self.limits.rules(kind)), default=0.0)
        del times[:bisect.bisect_right(times, now - longest)]  # older than every window: never counted again
        self._sweep(now)
        return now

    def _sweep(self, now: float) -> None:
        """Forget keys with nothing left in any window (hourly), so memory follows active visitors."""
        if now - self._swept < HOUR:
            return
        self._swept = now
        for entry in [e for e, times in self._events.items() if not times or times[-1] <= now - DAY]:
            del self._events[entry]

    def check_battle(self, key: str | None) -> None:
        """Refuse early (before retrieval) a visitor already at a battle limit; records nothing."""
        if key is None:
            return
        with self._lock:
            self._over(BATTLE, key, self._clock())

    def start_battle(self, key: str | None, specs: Iterable["ModelSpec"]) -> Lease:
        """Count a battle between ``specs`` for ``key`` (None: nobody to count it for) and take a slot
        when it is paid; all or nothing, under one lock."""
        specs = tuple(specs)
        counted, paid = self.limits.counts_battle(specs), is_paid(specs)
        if not counted and not paid:
            return Lease()
        with self._lock:
            now = self._clock()
            if counted and key is not None:
                self._over(BATTLE, key, now)
            number = None
            if paid and self.limits.max_paid_battles:
                for lease, expiry in [item for item in self._running.items() if item[1] <= now]:
                    del self._running[lease]
                if len(self._running) >= self.limits.max_paid_battles:
                    raise ArenaBusy(BUSY_MESSAGE)
                number = next(self._numbers)
                self._running[number] = now + self.limits.lease_s
            if counted and key is not None:
                self._record(BATTLE, key, now)
        return Lease(None if number is None else lambda: self._free(number))

    def _free(self, number: int) -> None:
        with self._lock:
            self._running.pop(number, None)

    def tracked(self) -> int:
        """(kind, voter key) pairs with counted events held in memory."""
        with self._lock:
            return len(self._events)

    def running(self) -> int:
        """Paid battles holding a slot now."""
        with self._lock:
            now = self._clock()
            return sum(1 for expiry in self._running.values() if expiry > now)

    def reserve_vote(self, key: str) -> Callable[[], None]:
        """Count one vote for ``key`` or raise RateLimitedVisitor; returns the undo for a vote that
        was then not stored."""
        with self._lock:
            now = self._clock()
            self._over(VOTE, key, now)
            self._record(VOTE, key, now)

        def undo() -> None:
            with self._lock:
                times = self._events.get((VOTE, key), [])
                at = bisect.bisect_left(times, now)
                if at < len(times) and times[at] == now:
                    del times[at]
        return undo

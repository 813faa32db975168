"""The abuse limits (rules.py) counted in this process: one lock, shared by the app's worker threads.

Replicas share nothing this way; redis.py keeps the same counts in Redis for them.
"""

from __future__ import annotations

import bisect
import itertools
import math
import threading
from typing import TYPE_CHECKING, Callable, Iterable

from sciarena.arena.limits.rules import BATTLE, DAY, HOUR, VOTE, Lease, Limits, busy, is_paid, over_share, refusal

if TYPE_CHECKING:
    from sciarena.core.types import ModelSpec


class Limiter:
    """Sliding-window counts per voter key and the paid battles running; thread-safe.

    ``clock`` (epoch seconds) is injected so tests move time instead of waiting."""

    def __init__(self, limits: Limits, clock: Callable[[], float]) -> None:
        self.limits = limits
        self._clock = clock
        self._lock = threading.Lock()
        self._events: dict[tuple[str, str], list[float]] = {}  # (kind, voter key) → times, oldest first
        self._running: dict[int, tuple[float, str | None]] = {}  # lease number → (expiry time, voter key)
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
                for lease in [n for n, (expiry, _) in self._running.items() if expiry <= now]:
                    del self._running[lease]
                share = self.limits.max_paid_per_visitor
                held = sorted(expiry for expiry, holder in self._running.values() if holder == key)
                if key is not None and share and len(held) >= share:
                    raise over_share(share, held[len(held) - share] - now)  # its oldest slot frees one
                if len(self._running) >= self.limits.max_paid_battles:
                    raise busy(min(expiry for expiry, _ in self._running.values()) - now)
                number = next(self._numbers)
                self._running[number] = (now + self.limits.lease_s, key)
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
            return sum(1 for expiry, _ in self._running.values() if expiry > now)

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

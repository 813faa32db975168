"""The abuse limits (rules.py) counted in this process: one lock, shared by the app's worker threads.

Replicas share nothing this way; redis.py keeps the same counts in Redis for them.
"""

from __future__ import annotations

import bisect
import itertools
import math
import threading
from typing import TYPE_CHECKING, Callable, Iterable

from sciarena.arena.limits.rules import (
    BATTLE,
    DAY,
    HOUR,
    VOTE,
    Keys,
    Lease,
    Limits,
    busy,
    is_paid,
    key_list,
    over_share,
    refusal,
)

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
        self._running: dict[int, tuple[float, tuple[str, ...]]] = {}  # lease number → (expiry, holder keys)
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

    def check_battle(self, key: Keys) -> None:
        """Refuse early (before retrieval) a visitor already at a battle limit under any of its keys;
        records nothing."""
        keys = key_list(key)
        with self._lock:
            now = self._clock()
            for k in keys:
                self._over(BATTLE, k, now)

    def reserve_battle(self, key: Keys, specs: Iterable["ModelSpec"]) -> Lease:
        """Count a battle between ``specs`` under every key (None: nobody to count it for) and take a
        slot when it is paid; all or nothing, under one lock."""
        keys = key_list(key)
        specs = tuple(specs)
        counted, paid = self.limits.counts_battle(specs), is_paid(specs)
        if not counted and not paid:
            return Lease()
        with self._lock:
            now = self._clock()
            for k in (keys if counted else ()):
                self._over(BATTLE, k, now)
            number = None
            if paid and self.limits.max_paid_battles:
                for lease in [n for n, (expiry, _) in self._running.items() if expiry <= now]:
                    del self._running[lease]
                share = self.limits.max_paid_per_visitor
                for k in (keys if share else ()):  # a voter id or an address holds at most its share
                    held = sorted(expiry for expiry, holders in self._running.values() if k in holders)
                    if len(held) >= share:
                        raise over_share(share, held[len(held) - share] - now)  # its oldest slot frees one
                if len(self._running) >= self.limits.max_paid_battles:
                    raise busy(min(expiry for expiry, _ in self._running.values()) - now)
                number = next(self._numbers)
                self._running[number] = (now + self.limits.lease_s, keys)
            for k in (keys if counted else ()):
                self._record(BATTLE, k, now)
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

    def reserve_vote(self, key: Keys) -> Callable[[], None]:
        """Count one vote under every key or raise RateLimitedVisitor (nothing counted); returns the
        undo for a vote that was then not stored."""
        keys = key_list(key)
        with self._lock:
            now = self._clock()
            for k in keys:
                self._over(VOTE, k, now)
            for k in keys:
                self._record(VOTE, k, now)

        def undo() -> None:
            with self._lock:
                for k in keys:
                    times = self._events.get((VOTE, k), [])
                    at = bisect.bisect_left(times, now)
                    if at < len(times) and times[at] == now:
                        del times[at]
        return undo

"""The sampler's view of the board: the last computed ``SamplerState``, handed out at once.

A battle must never wait for a fit, so ``current()`` only returns what was last computed; when the
votes have moved on (``version()`` changed) and the last computation is at least ``min_interval_s``
old, it starts one background computation (never two at once), whose result the next battles use.
What computes a state is a callable given by wiring.py (the arena sits below the board).
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Callable

from sciarena.arena.sampling import SamplerState

log = logging.getLogger(__name__)

DEFAULT_MIN_INTERVAL_S = 30.0  # at most one board fit for the sampler per half minute, however busy


class SamplerFeed:
    def __init__(self, compute: Callable[[], SamplerState | None], version: Callable[[], int], *,
                 min_interval_s: float = DEFAULT_MIN_INTERVAL_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._compute = compute
        self._version = version
        self._min_interval_s = min_interval_s
        self._clock = clock
        self._lock = threading.Lock()
        self._state: SamplerState | None = None
        self._seen: int | None = None  # version the current state was computed at
        self._started = -float("inf")
        self._thread: threading.Thread | None = None

    def current(self) -> SamplerState | None:
        """The last computed state (None before the first); may start a background refresh."""
        with self._lock:
            state = self._state
            due = self._seen != self._version() and self._clock() - self._started >= self._min_interval_s
            if due and (self._thread is None or not self._thread.is_alive()):
                self._started = self._clock()
                self._thread = threading.Thread(target=self._run, name="sampler-state", daemon=True)
                self._thread.start()
        return state

    def refresh(self) -> SamplerState | None:
        """Compute a state now, on this thread (start-up, tests, the CLI)."""
        self._run()
        return self._state

    def wait(self, timeout: float | None = None) -> None:
        """Wait for a background refresh (tests)."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout)

    def _run(self) -> None:
        version = self._version()
        try:
            state = self._compute()
        except Exception:  # a board that cannot be computed keeps the last state; the board tab says why
            log.warning("the sampler's board state could not be computed; keeping the last one", exc_info=True)
            return
        with self._lock:
            self._state, self._seen = state, version

"""Stop a streamed call at its deadline or when the caller cancels, wherever the read is blocked.

A client checks its read timeout per socket read, so a server (or proxy) that sends a
``: keep-alive`` comment every few seconds and never a chunk keeps the read alive forever;
a check in the chunk loop never runs either, since no chunk arrives. The guard watches
from its own thread instead and, when time is up or the caller cancels, breaks the
connection (``clients.abort_stream``): the blocked read fails at once, the upstream
connection is closed, and the provider turns the failure into ProviderTimeout or Cancelled.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from sciarena.providers.clients import abort_stream

DEADLINE = "deadline"
CANCELLED = "cancelled"


class StreamGuard:
    """Watches one streamed response from a daemon thread; ``release()`` ends the watch."""

    # How often a caller's cancel event is looked at: it cannot wake the guard itself.
    poll_s = 0.1

    def __init__(self, deadline: float, cancel: threading.Event | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.deadline = deadline
        self.cancel = cancel
        self._clock = clock
        self._released = threading.Event()
        self._lock = threading.Lock()
        self.fired = ""  # DEADLINE or CANCELLED once the guard has broken the connection

    def reason(self) -> str:
        """Why the call must stop now ("" while it may go on)."""
        if self.fired:
            return self.fired
        if self.cancel is not None and self.cancel.is_set():
            return CANCELLED
        return DEADLINE if self._clock() >= self.deadline else ""

    def watch(self, stream: Any) -> None:
        """Start watching ``stream`` (a client's streamed response)."""
        threading.Thread(target=self._run, args=(stream,), name="provider-stream-guard", daemon=True).start()

    def release(self) -> None:
        """The attempt is over (finished, failed or closed): stop watching and leave the connection be."""
        with self._lock:
            self._released.set()

    def _run(self, stream: Any) -> None:
        while True:
            left = self.deadline - self._clock()
            step = left if self.cancel is None else min(left, self.poll_s)
            if self._released.wait(max(step, 0.0)):
                return
            why = self.reason()
            if why:
                break
        with self._lock:
            # Once released, the connection may be back in the client's pool serving another
            # call, and must not be broken. (The client pools it a moment before release(); a
            # socket broken in that moment reads as closed, which the pool checks before reuse.)
            if self._released.is_set():
                return
            self.fired = why
            abort_stream(stream)

"""When a running battle's snapshot goes to the page: at reading speed, not at the models' token speed.

A model streams a few characters every tens of milliseconds; each snapshot the runner yields becomes one page
update that re-renders and re-sends both answers, so passing every piece on spends the server's core on updates
no reader can tell apart. The gate lets a snapshot through at most once per ``min_gap_s`` (both sides in it),
except the ones a voter would notice being late: a side's first words, and a side ending (its answer complete,
or the vote opening), which go out at once. A snapshot held back is not lost: the next one carries its text,
and the runner wakes when the gap is up (``wait_s``) to send it even if nothing else arrives.
"""

from __future__ import annotations

import math
from typing import Hashable, Mapping

MIN_GAP_S = 0.1  # ten updates a second: smooth to the eye, a fraction of a model's 20-40 pieces a second
_EPSILON_S = 1e-9  # a clock stepped by exactly min_gap_s in float sums lands a hair short of it


class SnapshotGate:
    """Decides, snapshot by snapshot, which of a battle's snapshots are sent (one gate per battle turn)."""

    def __init__(self, min_gap_s: float = MIN_GAP_S) -> None:
        self._min_gap_s = min_gap_s
        self._last_sent: float | None = None
        self._pending = False  # a snapshot was held back and nothing sent since
        self._speaking: frozenset[str] = frozenset()  # sides whose text was in a sent snapshot
        self._ended: Hashable = None  # the ended-sides key of the last snapshot sent

    def offer(self, now: float, texts: Mapping[str, str], ended: Hashable) -> bool:
        """Whether the snapshot showing ``texts`` (per side) with ``ended`` (which sides have ended, any
        comparable key) goes out now; if not, it is pending until ``wait_s`` runs out."""
        speaking = frozenset(side for side, text in texts.items() if text)
        urgent = bool(speaking - self._speaking) or ended != self._ended
        if urgent or self._last_sent is None or now - self._last_sent >= self._min_gap_s - _EPSILON_S:
            self.sent(now)
            self._speaking |= speaking
            self._ended = ended
            return True
        self._pending = True
        return False

    def sent(self, now: float) -> None:
        """A snapshot went out at ``now`` (offered, or sent regardless: the runner's keep-alive tick)."""
        self._last_sent = now
        self._pending = False

    @property
    def speaking(self) -> frozenset[str]:
        """The sides whose text has been in a sent snapshot."""
        return self._speaking

    def wait_s(self, now: float) -> float:
        """How long until the held-back snapshot is due (infinite when none is)."""
        if not self._pending or self._last_sent is None:
            return math.inf
        return max(0.0, self._last_sent + self._min_gap_s - now)

"""A computed-once memo for the board service (the Leaderboard tab and its endpoint), keyed by the vote files' fingerprint plus the view.

A vote changes a shard's size and mtime, so the fingerprint changes with every new vote and
the next page load recomputes; until then every load is a lookup. Concurrent loads of the
same key wait for the one computation (a lock per key); different keys run in parallel.
Entries of older fingerprints are dropped once a newer one is computed.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any, Callable, Hashable, Iterable

Fingerprint = tuple[tuple[str, int, int], ...]


def fingerprint(files: Iterable[str | os.PathLike[str]]) -> Fingerprint:
    """(path, size, mtime in ns) of every file; a file that vanished counts as size -1."""
    out = []
    for path in files:
        try:
            st = os.stat(path)
            out.append((str(Path(path)), st.st_size, st.st_mtime_ns))
        except OSError:
            out.append((str(Path(path)), -1, 0))
    return tuple(out)


class _Slot:
    __slots__ = ("lock", "filled", "value")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.filled = False
        self.value: Any = None


class BoardMemo:
    """``get(fingerprint, key, compute)``: compute once per (fingerprint, key), thread-safe."""

    def __init__(self, max_entries: int = 64) -> None:
        self._lock = threading.Lock()
        self._slots: OrderedDict[tuple[Fingerprint, Hashable], _Slot] = OrderedDict()
        self._max = max_entries
        self.computed = 0  # how many computations ran (tests and benchmarks read it)

    def get(self, fp: Fingerprint, key: Hashable, compute: Callable[[], Any]) -> Any:
        with self._lock:
            slot = self._slots.get((fp, key))
            if slot is None:
                slot = self._slots[(fp, key)] = _Slot()
            self._slots.move_to_end((fp, key))
        with slot.lock:
            if not slot.filled:  # an exception leaves the slot empty: the next load tries again
                slot.value = compute()
                slot.filled = True
                with self._lock:
                    self.computed += 1
                    self._evict(fp)
            return slot.value

    def _evict(self, newest: Fingerprint) -> None:
        for old in [k for k in self._slots if k[0] != newest]:
            del self._slots[old]
        while len(self._slots) > self._max:
            self._slots.popitem(last=False)

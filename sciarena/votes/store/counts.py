"""Battles per model, for pair sampling: read once from the stored votes, then kept current.

Pair sampling favours models with fewer battles (battle.sample_pair) so a new model
reaches the leaderboard's listing threshold sooner; it needs these counts on every
battle, so they are read from the votes once (the columnar copy makes that cheap)
and then incremented as votes are recorded.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from pathlib import Path
from typing import Callable

from sciarena.core.errors import SciArenaError
from sciarena.votes.read import read_columns
from sciarena.votes.read.raw import battles_per_model

log = logging.getLogger(__name__)


class BattleCounts:
    def __init__(self, vote_files: Callable[[], list[Path]]) -> None:
        self._vote_files = vote_files
        self._lock = threading.Lock()
        self._counts: Counter[str] | None = None

    def snapshot(self) -> dict[str, int]:
        """Battles per model name (models never voted on are absent)."""
        with self._lock:
            if self._counts is None:
                self._counts = self._read()
            return dict(self._counts)

    def add(self, model_a: str, model_b: str) -> None:
        """Count a just-recorded vote (a later first read would find it in the files anyway)."""
        with self._lock:
            if self._counts is not None:
                self._counts.update((model_a, model_b))

    def _read(self) -> Counter[str]:
        files = self._vote_files()
        if not files:
            return Counter()
        try:
            return Counter(battles_per_model(read_columns(files, strict=False).columns))
        except SciArenaError as err:  # unreadable votes are simply "no history yet"
            log.info("no battle counts from stored votes: %s", err)
            return Counter()

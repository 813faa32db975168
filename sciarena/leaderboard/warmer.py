"""Keep the columnar cache of the vote shards current in the background.

Every reader of the votes (the Leaderboard tab, pair-sampling counts, the
``leaderboard`` CLI) goes through the incremental cache in cache.py, which only
parses bytes appended since its last read. A cold parse of a large shard costs
seconds (about 7 CPU-seconds per million votes); by bringing the cache up to date
once a minute from the process that writes the votes, no reader ever starts cold
on a shard this arena stored, and the CLI on a million stored votes answers in
well under a second.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Callable

from sciarena.leaderboard.cache import read_jsonl

log = logging.getLogger(__name__)


class CacheWarmer:
    def __init__(self, vote_files: Callable[[], list[Path]], every_s: float = 60.0) -> None:
        self._vote_files = vote_files
        self._every_s = every_s
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def warm_once(self) -> int:
        """Bring every shard's cache up to date; returns how many shards were read."""
        done = 0
        for path in self._vote_files():
            if path.suffix != ".jsonl":
                continue
            try:
                read_jsonl(path, cache=True)
                done += 1
            except Exception as err:  # a bad shard must not stop the others (readers report it)
                log.warning("could not refresh the leaderboard cache of %s: %s", path.name, type(err).__name__)
        return done

    def start(self) -> "CacheWarmer":
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="leaderboard-cache", daemon=True)
            self._thread.start()
        return self

    def close(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        while not self._stop.wait(self._every_s):
            self.warm_once()

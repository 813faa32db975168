"""Keep the columnar copy of every vote shard current, from the process that writes the votes.

This is the "store what the leaderboard needs" half of the vote store. Every reader
of the votes (the Leaderboard tab, pair-sampling counts, the ``leaderboard`` CLI)
goes through the columnar copy (``copy.py``), which only parses bytes appended
since the copy was last brought up to date. A first parse of a large shard still costs
a second or more, so the app does it in the background instead of on a reader's time:

* at start (shards left by a process that crashed, Hub copies after a restart);
* every ``every_s`` seconds (by default a minute, so a reader parses at most a
  minute of new votes);
* at a clean exit, after the last vote (the copy on disk then covers every vote).

With this, the CLI on a million votes stored by the arena answers in about a
second (``benchmarks/bench_leaderboard.py``, section 2).
"""

from __future__ import annotations

import atexit
import logging
import threading
from pathlib import Path
from typing import Callable

from sciarena.votes.read.copy import read_jsonl

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
        try:
            paths = self._vote_files()
        except Exception as err:  # e.g. the Hub listing failed: the next round tries again
            log.warning("could not list the vote shards: %s", type(err).__name__)
            return 0
        for path in paths:
            if path.suffix != ".jsonl":
                continue
            try:
                read_jsonl(path, cache=True)
                done += 1
            except Exception as err:  # a bad shard must not stop the others (readers report it)
                log.warning("could not refresh the leaderboard cache of %s: %s", path.name, type(err).__name__)
        return done

    def start(self, after: threading.Thread | None = None) -> "CacheWarmer":
        """Warm now (once ``after`` — e.g. a Hub download — has finished), then every ``every_s``
        seconds, and once more at exit."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, args=(after,), name="leaderboard-cache",
                                            daemon=True)
            self._thread.start()
            atexit.register(self.close)
        return self

    def close(self, timeout_s: float = 5.0) -> None:
        """Stop the schedule and bring the copies up to date one last time.

        If a round is still running after ``timeout_s`` (a first parse of a large shard), the final
        round is skipped rather than making the exit wait: the next start brings the copies up to date."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout_s)
            atexit.unregister(self.close)
            if self._thread.is_alive():
                log.info("leaderboard cache refresh still running at exit; the next start finishes it")
                return
        self.warm_once()

    def _run(self, after: threading.Thread | None) -> None:
        if after is not None:
            after.join()
        while True:
            self.warm_once()
            if self._stop.wait(self._every_s):
                return

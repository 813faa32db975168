"""The local append-only vote store.

Layout: ``<data_dir>/votes/<YYYY-MM-DD>/votes-<uuid>.jsonl`` — one file per
process and day, so processes and replicas never write to the same file and
the folder maps one-to-one onto the Hub dataset's ``data/`` tree.

A vote is confirmed to the user only after its line is written, flushed and
fsync'ed, so a crash after the reveal cannot lose it.

Exactly once: battle ids are random and born in this process, and a battle can
only be voted through the session that holds it, so remembering the ids this
process has written is enough to refuse a second record for the same battle.
"""

from __future__ import annotations

import json
import os
import threading
import uuid
from contextlib import AbstractContextManager, nullcontext
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator

from sciarena.errors import AlreadyVoted, VoteStoreError
from sciarena.text import scrub_value
from sciarena.votes.schema import VOTE_FIELDS

VOTES_SUBDIR = "votes"


class LocalVoteStore:
    """Appends vote records as JSON lines; thread-safe; refuses a second record per battle."""

    def __init__(self, data_dir: Path, external_lock: AbstractContextManager[Any] | None = None) -> None:
        self.root = self.folder_for(data_dir)
        self._process_tag = uuid.uuid4().hex
        self._lock = threading.Lock()
        # The Hub scheduler's lock, when syncing: a push never sees half a line.
        self._external_lock = external_lock or nullcontext()
        self._written: set[str] = set()

    @staticmethod
    def folder_for(data_dir: Path) -> Path:
        """Where a store under ``data_dir`` keeps its shards (the folder the Hub sync pushes)."""
        return Path(data_dir) / VOTES_SUBDIR

    def path_for(self, day: str) -> Path:
        return self.root / day / f"votes-{self._process_tag}.jsonl"

    def append(self, record: dict[str, Any]) -> Path:
        """Write one record durably; AlreadyVoted if this battle was already recorded."""
        missing = [f for f in VOTE_FIELDS if f not in record]
        if missing:
            raise VoteStoreError(f"vote record is missing fields: {', '.join(missing)}")
        # Any text a visitor or a model produced may hold lone surrogates (JSON carries them, UTF-8
        # cannot): they are stored as U+FFFD rather than failing the vote.
        line = json.dumps(scrub_value(record), ensure_ascii=False, allow_nan=False) + "\n"
        day = _day_of(record.get("timestamp"))
        with self._lock:
            if record["id"] in self._written:
                raise AlreadyVoted("This battle has already been voted on.")
            path = self.path_for(day)
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                with self._external_lock, open(path, "a", encoding="utf-8") as handle:
                    handle.write(line)
                    handle.flush()
                    os.fsync(handle.fileno())
            except OSError as err:
                raise VoteStoreError("Your vote could not be saved; please try again.") from err
            self._written.add(record["id"])
        return path

    def files(self) -> list[Path]:
        """Every vote file under the store, from any process, oldest day first."""
        if not self.root.exists():
            return []
        return sorted(self.root.glob("*/votes-*.jsonl"))

    def records(self) -> Iterator[dict[str, Any]]:
        """All stored records (for tests and small exports; the leaderboard reads columns instead)."""
        for path in self.files():
            with open(path, encoding="utf-8") as handle:
                for line in handle:
                    if line.strip():
                        yield json.loads(line)


def _day_of(timestamp: object) -> str:
    if isinstance(timestamp, str) and len(timestamp) >= 10:
        return timestamp[:10]
    return datetime.now(timezone.utc).strftime("%Y-%m-%d")


def utc_now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")

"""The local append-only vote store (``ShardStore`` keeps the expert reviews of votes/store/reviews.py the same way).

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

from sciarena.core.errors import AlreadyVoted, VoteStoreError
from sciarena.core.text import scrub_value
from sciarena.votes.schema import VOTE_FIELDS

VOTES_SUBDIR = "votes"


class ShardStore:
    """Appends JSON-line records to one file per process and day under ``root``; thread-safe.

    A record is confirmed only after its line is written, flushed and fsync'ed, under the Hub
    scheduler's lock when syncing (a push never sees half a line). Votes and expert reviews
    (votes/store/reviews.py) are both kept this way; subclasses add their own admission rules."""

    def __init__(self, root: Path, prefix: str, fields: tuple[str, ...], what: str,
                 external_lock: AbstractContextManager[Any] | None = None) -> None:
        self.root = root
        self._prefix, self._fields, self._what = prefix, fields, what
        self._process_tag = uuid.uuid4().hex
        self._lock = threading.Lock()
        self._external_lock = external_lock or nullcontext()

    def path_for(self, day: str) -> Path:
        return self.root / day / f"{self._prefix}-{self._process_tag}.jsonl"

    def append(self, record: dict[str, Any]) -> Path:
        """Write one record durably (one whole line or nothing); VoteStoreError when it cannot be saved."""
        missing = [f for f in self._fields if f not in record]
        if missing:
            raise VoteStoreError(f"{self._what} record is missing fields: {', '.join(missing)}")
        # Any text a visitor or a model produced may hold lone surrogates (JSON carries them, UTF-8
        # cannot): they are stored as U+FFFD rather than failing the write.
        line = json.dumps(scrub_value(record), ensure_ascii=False, allow_nan=False) + "\n"
        day = self._day(record)
        with self._lock:
            self._admit(record)
            path = self.path_for(day)
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                with self._external_lock, open(path, "a", encoding="utf-8") as handle:
                    handle.write(line)
                    handle.flush()
                    os.fsync(handle.fileno())
            except OSError as err:
                raise VoteStoreError(f"Your {self._what} could not be saved; please try again.") from err
            self._recorded(record)
        return path

    def files(self) -> list[Path]:
        """Every file of this store, from any process, oldest day first."""
        if not self.root.exists():
            return []
        return sorted(self.root.glob(f"*/{self._prefix}-*.jsonl"))

    def records(self) -> Iterator[dict[str, Any]]:
        """All stored records (tests, small exports); a last line cut short by a crash is skipped."""
        for path in self.files():
            with open(path, encoding="utf-8") as handle:
                for line in handle:
                    if line.endswith("\n") and line.strip():
                        yield json.loads(line)

    def _day(self, record: dict[str, Any]) -> str:
        return _day_of(record.get("timestamp"))

    def _admit(self, record: dict[str, Any]) -> None:
        """Raise to refuse ``record`` (called under the store's lock, before writing)."""

    def _recorded(self, record: dict[str, Any]) -> None:
        """``record`` is on disk (called under the store's lock)."""


class LocalVoteStore(ShardStore):
    """The vote shards; refuses a second record per battle."""

    def __init__(self, data_dir: Path, external_lock: AbstractContextManager[Any] | None = None) -> None:
        super().__init__(self.folder_for(data_dir), "votes", VOTE_FIELDS, "vote", external_lock)
        self._written: set[str] = set()

    @staticmethod
    def folder_for(data_dir: Path) -> Path:
        """Where a store under ``data_dir`` keeps its shards (the folder the Hub sync pushes)."""
        return Path(data_dir) / VOTES_SUBDIR

    def _admit(self, record: dict[str, Any]) -> None:
        if record["id"] in self._written:
            raise AlreadyVoted("This battle has already been voted on.")

    def _recorded(self, record: dict[str, Any]) -> None:
        self._written.add(record["id"])


def _day_of(timestamp: object) -> str:
    if isinstance(timestamp, str) and len(timestamp) >= 10:
        return timestamp[:10]
    return datetime.now(timezone.utc).strftime("%Y-%m-%d")


def utc_now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")

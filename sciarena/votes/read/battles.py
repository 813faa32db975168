"""Single battles out of the vote files: one shared battle by id, and the battles one voter voted on.

The files are the ones the leaderboard reads (``VoteSource.files()``: this machine's shards and the
public dataset's copies). Each file is summarised once per version — (size, modification time) —
into a few short fields per record; a whole record is read again from its file only when one battle
is opened, so a large dataset costs a scan per changed file, not one per page view.

What leaves this module is decided here: a shared record has ``voter_id`` removed and ``reason``
kept only when the voter shared it too (:func:`public_view`).
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

from sciarena.core.errors import VoteStoreError
from sciarena.votes.read.records import read_records

log = logging.getLogger(__name__)

QUESTION_CHARS = 300  # how much of a question a listing keeps


@dataclass(frozen=True)
class BattleSummary:
    """What a listing of battles shows, and where the whole record is."""

    battle_id: str
    voter_id: str
    shared: bool
    timestamp: str
    question: str
    model_a: str
    model_b: str
    vote: str
    path: Path


class BattleArchive:
    """Finds battles in ``files()``; thread-safe (one per app)."""

    def __init__(self, files: Callable[[], Iterable[Path]]) -> None:
        self._files = files
        self._lock = threading.Lock()
        self._summaries: dict[Path, tuple[tuple[int, int], tuple[BattleSummary, ...]]] = {}

    def summaries(self) -> list[BattleSummary]:
        """Every battle once (the first file naming an id wins, as ``read_records`` does)."""
        seen: set[str] = set()
        out: list[BattleSummary] = []
        for path in self._files():
            for summary in self._summaries_of(Path(path)):
                if summary.battle_id not in seen:
                    seen.add(summary.battle_id)
                    out.append(summary)
        return out

    def _summaries_of(self, path: Path) -> tuple[BattleSummary, ...]:
        try:
            stat = path.stat()
        except OSError:
            return ()
        stamp = (stat.st_size, stat.st_mtime_ns)
        with self._lock:
            cached = self._summaries.get(path)
            if cached is not None and cached[0] == stamp:
                return cached[1]
        try:
            records = read_records([path])
        except VoteStoreError as err:  # one unreadable file must not hide the others
            log.warning("battle archive skipped %s: %s", path, err)
            records = []
        summaries = tuple(_summary(record, path) for record in records if record.get("id"))
        with self._lock:
            self._summaries[path] = (stamp, summaries)
        return summaries

    def record(self, battle_id: str) -> dict[str, Any] | None:
        """The whole stored record of ``battle_id`` (voter id and all: callers decide what to show)."""
        wanted = (battle_id or "").strip()
        if not wanted:
            return None
        for summary in self.summaries():
            if summary.battle_id == wanted:
                return next((r for r in read_records([summary.path]) if str(r.get("id")) == wanted), None)
        return None

    def shared(self, battle_id: str) -> dict[str, Any] | None:
        """The public view of a battle its voter shared; None when unknown or not shared."""
        record = self.record(battle_id)
        return public_view(record) if record is not None and record.get("shared") is True else None

    def for_voter(self, voter_ids: Iterable[str]) -> list[BattleSummary]:
        """The battles voted by any of ``voter_ids`` (hashed ids; empty ones match nothing), newest first."""
        wanted = {v for v in voter_ids if v}
        mine = [s for s in self.summaries() if s.voter_id in wanted]
        return sorted(mine, key=lambda s: s.timestamp, reverse=True)

    def own(self, battle_id: str, voter_ids: Iterable[str]) -> dict[str, Any] | None:
        """A battle as its own voter sees it (shared or not; their reason shown); None when not theirs."""
        wanted = {v for v in voter_ids if v}
        record = self.record(battle_id)
        if record is None or not wanted or record.get("voter_id") not in wanted:
            return None
        view = public_view(record)
        view["reason"] = record.get("reason")
        return view


def _summary(record: dict[str, Any], path: Path) -> BattleSummary:
    return BattleSummary(
        battle_id=str(record["id"]), voter_id=str(record.get("voter_id") or ""),
        shared=record.get("shared") is True, timestamp=str(record.get("timestamp") or ""),
        question=str(record.get("question") or "")[:QUESTION_CHARS], model_a=str(record.get("modelA") or ""),
        model_b=str(record.get("modelB") or ""), vote=str(record.get("vote") or ""), path=path)


def public_view(record: dict[str, Any]) -> dict[str, Any]:
    """A record as anyone may see it: no voter id; the reason only when the voter shared it."""
    view = {k: v for k, v in record.items() if k != "voter_id"}
    if record.get("shared_reason") is not True:
        view["reason"] = None
    return view

"""The board service: what the Leaderboard tab and the public ``/leaderboard`` endpoint ask for.

It owns everything about the board that is not a widget: reading the current vote files, the
vouching step the wiring chose (``vouch``: the board never imports the voter checks), the memo (one
computation per vote fingerprint and view, LRU-bounded), the background style fit that makes the
toggle instant, the download files, the Data section's statistics (``data_stats``, also injected) and
the endpoint's JSON with bounds on every knob a caller sets. The UI renders what it returns.

It is the one owner of "which votes count": ``vouching(snap)`` runs the injected vouch once per
snapshot (campaign detection and the voter checks are its slow part), and every reader of counted
votes — the board's views, the endpoint, the Data section, the sampler's state and the published
battle shares (wiring.py) — takes its table or its mask from here.
"""

from __future__ import annotations

import itertools
import json
import re
import tempfile
import threading
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Hashable, Mapping, Sequence

import numpy as np

from sciarena.board import history
from sciarena.board.board import OVERALL, Board, ModelFacts, board_rows, build_board, rows_csv, view_choices
from sciarena.board.compute import PROVISIONAL_BATTLES, compute_leaderboard, to_json
from sciarena.board.memo import BoardMemo, Fingerprint, fingerprint
from sciarena.board.style import STYLE_FEATURES
from sciarena.board.table import Exclusions, VoteTable, leave_out, read_table
from sciarena.core.errors import BoardRequestError, LeaderboardInputError

__all__ = ["PROVISIONAL_BATTLES", "BoardService", "ShownBoard", "Snapshot"]

Vouching = tuple[np.ndarray, Exclusions]  # (which votes of a table are left out, what and why)
Vouch = Callable[[VoteTable], Vouching]  # which votes count (science.quality.vouch.vouch_mask)
# (vote files, ranked models, the board's vouching of those files' votes) → statistics
DataStats = Callable[[Sequence[Path], Sequence[str], Vouching], Any]

# The public endpoint's bounds: generous for a researcher, small enough that one request cannot hold a
# worker for long (20,000 rounds took 42 s on one core) and cannot fill the memo with fresh seeds.
MAX_BOOTSTRAP = 1000
MAX_MIN_BATTLES = 1_000_000
MAX_SEED = 2**32 - 1
API_MEMO_ENTRIES = 16  # endpoint results have their own memo, so callers cannot evict the page's boards
METHODS = ("bt", "elo")
RATINGS = ("bootstrap-mean", "point")
BREAKDOWNS = ("subject", "question_type", "turns")


@dataclass(frozen=True)
class Snapshot:
    """The vote files at one moment and their fingerprint (path, size, mtime of each)."""

    files: tuple[Path, ...]
    fp: Fingerprint


@dataclass(frozen=True)
class ShownBoard:
    """One view of the board, computed once per snapshot: the fit, its rows and its download files."""

    board: Board
    table: VoteTable
    rows: list[dict[str, Any]]
    csv_path: str
    json_path: str
    computed_at: float


class BoardService:
    def __init__(self, files: Callable[[], Sequence[Path]], *, vouch: Vouch,
                 facts: Callable[[], Mapping[str, ModelFacts]], data_stats: DataStats | None = None,
                 data_min_battles: int = 100, clock: Callable[[], float] | None = None, warm_style: bool = True) -> None:
        self._files = files
        self._vouch = vouch
        self._facts = facts
        self._data_stats = data_stats
        self._data_min_battles = data_min_battles  # the failure cases name the top models with this many battles
        self._clock = clock or (lambda: datetime.now(timezone.utc).timestamp())
        # The style-controlled fit takes seconds on 100k votes (the plain board tens of ms): after a
        # plain board is computed, one background thread fits the style view of it, so the toggle
        # finds it ready; a toggle before it ends waits for that same computation (the memo's lock).
        self._warm_style = warm_style
        self._warming: threading.Thread | None = None
        self.memo = BoardMemo()
        self.api_memo = BoardMemo(max_entries=API_MEMO_ENTRIES)
        self.vouch_memo = BoardMemo(max_entries=2)  # ``vouching``: one mask per snapshot, whoever asks
        self._files_dir: Path | None = None
        self._lock = threading.Lock()
        self._stems = itertools.count()

    # ---- the current votes ---------------------------------------------------------------------
    def snapshot(self, files: Sequence[Path] | None = None) -> Snapshot | None:
        """The vote files now (or ``files``, e.g. a listing that does not wait on the Hub), or None
        when there are none yet."""
        files = tuple(Path(f) for f in (self._files() if files is None else files))
        return Snapshot(files, fingerprint(files)) if files else None

    def cached(self, snap: Snapshot, key: Hashable, compute: Callable[[], Any]) -> Any:
        """``compute()`` once per snapshot and ``key`` (the UI memoises its rendered parts here)."""
        return self.memo.get(snap.fp, key, compute)

    def table(self, snap: Snapshot, *, texts: bool = False) -> VoteTable:
        """The votes that count (vouched), read once per snapshot; ``texts`` for style features."""
        return self.memo.get(snap.fp, ("table", texts), lambda: self._counted(snap, texts))

    def vouching(self, snap: Snapshot) -> Vouching:
        """Which of the snapshot's usable votes the board leaves out (a mask over them, in file order)
        and why: the injected vouch, run once per snapshot whichever reader asks first."""
        return self.vouch_memo.get(snap.fp, "vouching", lambda: self._vouch(read_table(snap.files, strict=False)))

    def _counted(self, snap: Snapshot, texts: bool) -> VoteTable:
        table = read_table(snap.files, strict=False, texts=texts)
        drop, excluded = self.vouch_memo.get(snap.fp, "vouching", lambda: self._vouch(table))
        if len(drop) != table.n_votes:  # a shard grew between two reads of one snapshot: vouch this read
            drop, excluded = self._vouch(table)
        return leave_out(table, drop, excluded)

    def views(self, snap: Snapshot) -> list[tuple[str, str]]:
        return view_choices(self.table(snap))

    # ---- the page's board ----------------------------------------------------------------------
    def shown(self, snap: Snapshot, view_key: str = OVERALL, *, style: bool = False,
              rating: str = "bootstrap-mean") -> ShownBoard:
        """One view of the board (an unknown view falls back to the overall one)."""
        table = self.table(snap)
        if view_key not in {key for _, key in view_choices(table)}:
            view_key = OVERALL
        shown = self.memo.get(snap.fp, ("shown", view_key, bool(style), rating),
                              lambda: self._compute(table, view_key, bool(style), rating))
        if not style and self._warm_style:
            self._warm(snap, table, view_key, rating)
        return shown

    def ranked(self, snap: Snapshot, min_battles: int) -> list[str]:
        """The overall board's models with at least ``min_battles`` battles, best rating first."""
        rows = [r for r in self.shown(snap).rows if r["battles"] >= min_battles]
        return [r["model"] for r in sorted(rows, key=lambda r: -r["rating"])]

    def data(self, snap: Snapshot) -> Any:
        """The data statistics of the current votes (the injected ``data_stats``), once per snapshot."""
        if self._data_stats is None:
            raise BoardRequestError("This arena computes no data statistics.")
        return self.memo.get(snap.fp, ("data",),
                             lambda: self._data_stats(snap.files, self.ranked(snap, self._data_min_battles),
                                                      self.vouching(snap), len(self.shown(snap).rows)))

    def wait_warm(self, timeout: float | None = None) -> None:
        """Wait for the background style fit (tests, benchmarks)."""
        thread = self._warming
        if thread is not None:
            thread.join(timeout)

    # ---- the public endpoint -------------------------------------------------------------------
    def api(self, min_battles: int = 0, method: str = "bt", style: str = "", rating: str = "bootstrap-mean",
            as_of: str = "", by: str = "subject", bootstrap: int = 100, seed: int = 0) -> dict[str, Any]:
        """The leaderboard as the CLI's ``--format json`` prints it for the same options; a parameter
        out of bounds raises BoardRequestError naming it and what is accepted."""
        request = _checked_request(min_battles, method, style, rating, as_of, by, bootstrap, seed)
        snap = self.snapshot()
        if snap is None:
            raise BoardRequestError("No votes yet: the leaderboard has nothing to rank.")

        def compute() -> dict[str, Any]:
            table = self.table(snap, texts=bool(request.style))
            if request.as_of:
                table = history.as_of(table, history.parse_cutoff(request.as_of)).table
            board = compute_leaderboard(table, bootstrap=request.bootstrap, seed=request.seed,
                                        min_battles=request.min_battles, by=request.by, method=request.method,
                                        style=request.style, rating=request.rating)
            return json.loads(to_json(board, getattr(table, "excluded", None)))

        return self.api_memo.get(snap.fp, request, compute)

    # ---- computed once per (votes, view) -------------------------------------------------------
    def _compute(self, table: VoteTable, view_key: str, style: bool, rating: str) -> ShownBoard:
        board = build_board(table, view_key, style=style, rating=rating)
        rows = board_rows(board, self._facts())
        now = self._clock()
        # one folder per computation keeps two computations of a view on one day apart (votes changed)
        folder = self._dir() / str(next(self._stems))
        folder.mkdir()
        stem = folder / _download_stem(view_key, style, now)
        csv_path, json_path = stem.with_suffix(".csv"), stem.with_suffix(".json")
        csv_path.write_text(rows_csv(rows), encoding="utf-8")
        json_path.write_text(to_json(board.styled or board.plain, getattr(table, "excluded", None)),
                             encoding="utf-8")
        return ShownBoard(board=board, table=table, rows=rows, csv_path=str(csv_path), json_path=str(json_path),
                          computed_at=now)

    def _warm(self, snap: Snapshot, table: VoteTable, view_key: str, rating: str) -> None:
        key = ("shown", view_key, True, rating)
        with self._lock:
            if self._warming is not None and self._warming.is_alive():
                return  # one at a time: a busy arena must not start a fit per vote

            def run() -> None:
                try:
                    self.memo.get(snap.fp, key, lambda: self._compute(table, view_key, True, rating))
                except LeaderboardInputError:
                    pass  # the toggle will show the reason

            self._warming = threading.Thread(target=run, name="board-style-warmup", daemon=True)
            self._warming.start()

    def _dir(self) -> Path:
        with self._lock:
            if self._files_dir is None:
                self._files_dir = Path(tempfile.mkdtemp(prefix="sciarena-board-"))
            return self._files_dir


@dataclass(frozen=True)
class _Request:
    min_battles: int
    method: str
    style: tuple[str, ...]
    rating: str
    as_of: str
    by: tuple[str, ...]
    bootstrap: int
    seed: int


def _whole(name: str, value: object, low: int, high: int) -> int:
    try:
        number = int(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise BoardRequestError(f"{name} must be a whole number from {low:,} to {high:,}.") from None
    if not low <= number <= high:
        raise BoardRequestError(f"{name} must be from {low:,} to {high:,} (got {number:,}).")
    return number


def _one_of(name: str, value: object, allowed: Sequence[str]) -> str:
    text = str(value).strip()
    if text not in allowed:
        raise BoardRequestError(f"{name} must be one of {', '.join(allowed)} (got {text[:40]!r}).")
    return text


def _checked_request(min_battles: object, method: object, style: object, rating: object, as_of: object,
                     by: object, bootstrap: object, seed: object) -> _Request:
    features = tuple(dict.fromkeys(f.strip() for f in str(style).split(",") if f.strip()))
    for feature in features:
        _one_of("style", feature, STYLE_FEATURES)
    groups = tuple(dict.fromkeys(b.strip() for b in str(by).split(",") if b.strip() and b.strip() != "none"))
    for group in groups:
        _one_of("by", group, BREAKDOWNS + ("none",))
    cutoff = str(as_of).strip()[:40]
    if cutoff:
        try:
            history.parse_cutoff(cutoff)
        except LeaderboardInputError:
            raise BoardRequestError(f"as_of must be a date such as 2026-11-30 (got {cutoff!r}).") from None
    return _Request(min_battles=_whole("min_battles", min_battles, 0, MAX_MIN_BATTLES),
                    method=_one_of("method", method, METHODS), style=features,
                    rating=_one_of("rating", rating, RATINGS), as_of=cutoff, by=groups,
                    bootstrap=_whole("bootstrap", bootstrap, 1, MAX_BOOTSTRAP),
                    seed=_whole("seed", seed, 0, MAX_SEED))


_UNSAFE = re.compile(r"[^a-z0-9]+")


def _download_stem(view_key: str, style: bool, when: float) -> str:
    """A download's name says what it holds: 'sciarena-board-overall-2026-12-01', '…-discipline-healthcare-style…'."""
    view = _UNSAFE.sub("-", view_key.lower()).strip("-") or "overall"
    day = datetime.fromtimestamp(when, timezone.utc).strftime("%Y-%m-%d")
    return f"sciarena-board-{view}{'-style' if style else ''}-{day}"

"""The board as it stood: votes up to a moment, and ratings recomputed at each day or week boundary.

Timestamps are the votes' own (UTC seconds). ``as_of`` keeps the votes cast before the end of
a date (``2025-06-10`` = up to 2025-06-10 23:59:59 UTC) or up to an exact ISO instant; a vote
without a timestamp cannot be placed in time, so a cut-off leaves it out and says how many.
A history point is a plain Bradley–Terry point fit of the cumulative votes up to that
boundary (no bootstrap: a trend line, not an interval), from one bincount per boundary.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone

import numpy as np

from sciarena.board import bradley_terry as bt
from sciarena.board.table import VoteTable
from sciarena.core.errors import LeaderboardInputError

DAY = 86_400.0
STEPS = {"day": DAY, "week": 7 * DAY}
MAX_POINTS = 60  # more day boundaries than this are drawn as weeks


def parse_cutoff(text: str) -> float:
    """Epoch seconds of a cut-off: the end of a date (YYYY-MM-DD) or an ISO instant (UTC if no zone)."""
    text = text.strip()
    try:
        if len(text) == 10:
            day = date.fromisoformat(text)
            return datetime(day.year, day.month, day.day, tzinfo=timezone.utc).timestamp() + DAY
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise LeaderboardInputError(f"expected a date YYYY-MM-DD or an ISO time, got {text!r}") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.timestamp()


@dataclass(frozen=True, eq=False)
class Cutoff:
    table: VoteTable
    undated: int  # votes left out because they carry no timestamp


def as_of(table: VoteTable, cutoff: float) -> Cutoff:
    """The votes cast before ``cutoff`` (epoch seconds); raises when none are left."""
    dated = np.isfinite(table.timestamp)
    keep = dated & (table.timestamp < cutoff)
    if not keep.any():
        when = datetime.fromtimestamp(cutoff, timezone.utc).isoformat(timespec="seconds")
        raise LeaderboardInputError(f"no votes before {when}")
    return Cutoff(table.subset(keep), int((~dated).sum()))


def last_vote(table: VoteTable) -> float | None:
    """The newest vote's timestamp, None when no vote has one."""
    dated = table.timestamp[np.isfinite(table.timestamp)]
    return float(dated.max()) if dated.size else None


@dataclass(frozen=True, eq=False)
class History:
    """ratings[t, i]: model i's rating from the votes before ``boundaries[t]`` (NaN before its first vote)."""

    step: str  # "day" or "week"
    boundaries: tuple[float, ...]  # epoch seconds (exclusive end of each period)
    models: tuple[str, ...]
    ratings: np.ndarray  # (T, M)
    votes: tuple[int, ...]  # cumulative votes at each boundary


def rating_history(table: VoteTable, step: str = "auto") -> History | None:
    """Ratings at each day (or week) boundary from the votes up to it; None without dated votes."""
    if step not in STEPS and step != "auto":
        raise LeaderboardInputError(f"unknown step {step!r}; use day, week or auto")
    dated = np.isfinite(table.timestamp)
    if not dated.any():
        return None
    ts = table.timestamp[dated]
    start = np.floor(ts.min() / DAY) * DAY
    if step == "auto":
        step = "day" if (ts.max() - start) / DAY < MAX_POINTS else "week"
    width = STEPS[step]
    bucket = ((ts - start) // width).astype(np.int64)
    n_buckets = int(bucket.max()) + 1
    m = len(table.models)
    cell = (table.a[dated].astype(np.int64) * m + table.b[dated]) * 4 + table.outcome[dated]
    per_bucket = np.bincount(bucket * (m * m * 4) + cell, minlength=n_buckets * m * m * 4)
    cumulative = per_bucket.reshape(n_buckets, m * m * 4).cumsum(axis=0)
    ratings = np.full((n_buckets, m), np.nan)
    for t, cells in enumerate(cumulative):
        block = cells.reshape(m, m, 4)
        present = np.flatnonzero(block.sum(axis=(1, 2)) + block.sum(axis=(0, 2)))
        if present.size < 2:
            continue
        theta, _ = bt.fit_counts(bt.from_cells(block[np.ix_(present, present)].ravel(), present.size))
        ratings[t, present] = bt.to_elo(theta)
    boundaries = tuple(float(start + (t + 1) * width) for t in range(n_buckets))
    return History(step, boundaries, table.models, ratings, tuple(int(v) for v in cumulative.sum(axis=1)))


def boundary_label(seconds: float) -> str:
    """The last day a boundary covers (a boundary is the exclusive end of its period)."""
    return (datetime.fromtimestamp(seconds, timezone.utc) - timedelta(seconds=1)).date().isoformat()

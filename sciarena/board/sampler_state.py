"""What the pair sampler needs from the board, and how battles were shared out: from one vote table.

``sampler_state`` turns a table and its computed leaderboard into the arena's ``SamplerState`` (the
arena sits below the board and never fits anything itself); ``battle_shares`` counts each model's
share of the battles of the last ``days`` days, which the About tab and the JSON publish beside the
sampler's current weights (an arena's sampling rates should be public, not only its ratings).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sciarena.arena.sampling import SamplerState
from sciarena.board.compute import PROVISIONAL_BATTLES, Leaderboard
from sciarena.board.table import VoteTable

SHARE_WINDOW_DAYS = 30


def pair_battles(table: VoteTable) -> np.ndarray:
    """(M, M) symmetric battles per pair of ``table.models``."""
    m = len(table.models)
    cells = np.bincount(table.a.astype(np.int64) * m + table.b, minlength=m * m).reshape(m, m)
    return (cells + cells.T).astype(np.float64)


def sampler_state(table: VoteTable, board: Leaderboard, now: float) -> SamplerState:
    """The board's ratings (its shown rating, NaN for a model it could not rate) with the table's counts."""
    rating = {row.model: row.rating for row in board.rows}
    return SamplerState(
        models=table.models,
        ratings=np.array([rating.get(name, np.nan) for name in table.models], dtype=np.float64),
        pair_battles=pair_battles(table),
        battles=table.battles().astype(np.float64),
        listing_threshold=PROVISIONAL_BATTLES,
        version=table.n_votes,
        computed_at=now,
    )


@dataclass(frozen=True)
class BattleShare:
    model: str
    battles: int  # battles in the window
    share: float  # of the window's battles (each battle counts for both its models: shares sum to 2)


def battle_shares(table: VoteTable, now: float, days: float = SHARE_WINDOW_DAYS) -> tuple[BattleShare, ...]:
    """Each model's battles over the ``days`` before ``now`` (epoch seconds), most battles first.

    Votes without a time stamp (NaN) are outside every window."""
    recent = table.timestamp >= now - days * 86400.0
    m = len(table.models)
    counts = np.bincount(table.a[recent], minlength=m) + np.bincount(table.b[recent], minlength=m)
    total = int(recent.sum())
    shares = [BattleShare(name, int(n), float(n) / total if total else 0.0)
              for name, n in zip(table.models, counts.tolist()) if n]
    return tuple(sorted(shares, key=lambda s: (-s.battles, s.model)))

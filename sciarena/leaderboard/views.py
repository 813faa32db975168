"""Tables derived from votes: head-to-head matrices, mean tokens and cost (display rows: ``board``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from sciarena.leaderboard.table import VoteTable
from sciarena.votes.schema import OUTCOME_A, OUTCOME_B


@dataclass(frozen=True, eq=False)
class HeadToHead:
    """wins[i, j]: votes where model i beat model j; battles[i, j]: all their battles
    (ties and both-bad included); win_rate[i, j] = wins[i, j] / (wins[i, j] + wins[j, i]),
    ties excluded, NaN when the two never had a decisive battle."""

    models: tuple[str, ...]
    wins: np.ndarray
    battles: np.ndarray
    win_rate: np.ndarray


def head_to_head(table: VoteTable, models: Sequence[str] | None = None) -> HeadToHead:
    """Head-to-head matrices, for ``models`` in that order (default: all, table order)."""
    m = len(table.models)
    order = (list(range(m)) if models is None
             else [table.models.index(name) for name in models])
    a, b, o = table.a.astype(np.int64), table.b.astype(np.int64), table.outcome
    wins = (np.bincount(a[o == OUTCOME_A] * m + b[o == OUTCOME_A], minlength=m * m)
            + np.bincount(b[o == OUTCOME_B] * m + a[o == OUTCOME_B], minlength=m * m)).reshape(m, m)
    battles = np.bincount(a * m + b, minlength=m * m).reshape(m, m)
    battles = battles + battles.T
    idx = np.ix_(order, order)
    wins, battles = wins[idx], battles[idx]
    decisive = wins + wins.T
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(decisive > 0, wins / decisive, np.nan)
    return HeadToHead(tuple(table.models[i] for i in order), wins, battles, rate)


def cost_per_100_calls(price_in_per_m: float, price_out_per_m: float,
                       mean_input_tokens: float, mean_output_tokens: float) -> float:
    """US dollars for 100 calls at the given prices (per million tokens) and mean tokens."""
    return 100.0 * (mean_input_tokens * price_in_per_m + mean_output_tokens * price_out_per_m) / 1e6


def mean_tokens(table: VoteTable) -> dict[str, tuple[float, float]]:
    """Mean (input, output) tokens per call for each model, from votes that record them."""
    m = len(table.models)
    out: dict[str, tuple[float, float]] = {}
    tokens_in, tokens_out = table.features["input_tokens"], table.features["output_tokens"]
    sums = np.zeros((m, 2))
    counts = np.zeros(m)
    for side, idx in ((0, table.a), (1, table.b)):
        ok = np.isfinite(tokens_in[:, side]) & np.isfinite(tokens_out[:, side])
        sums[:, 0] += np.bincount(idx[ok], tokens_in[ok, side], minlength=m)
        sums[:, 1] += np.bincount(idx[ok], tokens_out[ok, side], minlength=m)
        counts += np.bincount(idx[ok], minlength=m)
    for i in np.flatnonzero(counts):
        out[table.models[i]] = (float(sums[i, 0] / counts[i]), float(sums[i, 1] / counts[i]))
    return out

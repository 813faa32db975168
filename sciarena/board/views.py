"""Tables derived from votes: head-to-head matrices, mean tokens and cost (display rows: ``board``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from sciarena.board.table import VoteTable
from sciarena.votes.schema import OUTCOME_A, OUTCOME_B, OUTCOME_BAD, OUTCOME_TIE, score_of_a


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


@dataclass(frozen=True)
class PairRecord:
    """How ``first`` fared against ``second`` in their direct battles (e.g. a pipeline against its base).

    ``score`` is ``first``'s share of the points, a tie and "both bad" counting half a win each way (the
    board's rule); ``ci_low``/``ci_high`` its 2.5–97.5 percentiles over ``rounds`` seeded bootstrap
    resamples of those battles (None without battles)."""

    first: str
    second: str
    battles: int
    first_wins: int
    second_wins: int
    ties: int
    both_bad: int
    score: float | None
    ci_low: float | None
    ci_high: float | None


def pair_record(table: VoteTable, first: str, second: str, *, rounds: int = 1000, seed: int = 0) -> PairRecord:
    """``first`` against ``second`` over the votes of ``table`` where exactly these two met."""

    names = {name: k for k, name in enumerate(table.models)}
    i, j = names.get(first, -1), names.get(second, -1)  # -1 matches no vote: a model never seen met no one
    as_a = (table.a == i) & (table.b == j)
    met = as_a | ((table.a == j) & (table.b == i))
    outcome, first_is_a = table.outcome[met], as_a[met]
    n = int(outcome.size)
    if n == 0:
        return PairRecord(first, second, 0, 0, 0, 0, 0, None, None, None)
    points = np.where(first_is_a, score_of_a(outcome), 1.0 - score_of_a(outcome))
    won = np.where(first_is_a, outcome == OUTCOME_A, outcome == OUTCOME_B)
    lost = np.where(first_is_a, outcome == OUTCOME_B, outcome == OUTCOME_A)
    # Resampling battles only changes how many of them gave 1, ½ or 0 points: draw those counts (one
    # multinomial per round) instead of n indices per round, which 100k battles would make 800 MB.
    shares = np.array([(points == v).mean() for v in (1.0, 0.5, 0.0)])
    counts = np.random.default_rng(seed).multinomial(n, shares / shares.sum(), size=rounds)
    means = (counts[:, 0] + 0.5 * counts[:, 1]) / n
    return PairRecord(first, second, n, int(won.sum()), int(lost.sum()), int((outcome == OUTCOME_TIE).sum()),
                      int((outcome == OUTCOME_BAD).sum()), float(points.mean()),
                      float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5)))

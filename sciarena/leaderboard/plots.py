"""Matplotlib figures for the leaderboard.

Figures are built with ``matplotlib.figure.Figure`` and an Agg canvas attached inside
each function: no pyplot, no global backend switch, nothing done at import time,
safe in server threads. ``gr.Plot`` accepts the returned Figure.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Sequence

import numpy as np

from sciarena.leaderboard.compute import Leaderboard
from sciarena.leaderboard.history import History
from sciarena.leaderboard.views import HeadToHead


def _figure(width: float, height: float) -> Any:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def ratings_figure(lb: Leaderboard, *, top: int | None = None) -> Any:
    """Ratings with 95% interval bars, best first (horizontal, readable model names)."""
    rows = lb.rows[:top] if top else lb.rows
    # Narrow, with large text: on a 390 px phone the image is scaled to about 0.6 of its width.
    fig = _figure(5.0, max(2.5, 0.34 * len(rows) + 1.2))
    ax = fig.add_subplot()
    y = np.arange(len(rows))[::-1]
    ratings = np.array([r.rating for r in rows])
    # With few votes the bootstrap mean can fall outside its own 2.5–97.5% band
    # (a skewed resample distribution); draw a zero-length bar then rather than fail.
    err = np.clip(np.array([[r.rating - r.ci_lower for r in rows], [r.ci_upper - r.rating for r in rows]]), 0, None)
    colors = ["#9aa5b1" if r.provisional else "#1f6feb" for r in rows]
    ax.errorbar(ratings, y, xerr=err, fmt="none", ecolor="#57606a", capsize=3, linewidth=1)
    ax.scatter(ratings, y, c=colors, zorder=3, s=22)
    ax.set_yticks(y, [r.model for r in rows], fontsize=11)
    ax.tick_params(axis="x", labelsize=10)
    ax.set_xlabel(f"Rating ({lb.rating}, 95% interval)", fontsize=11)
    ax.grid(axis="x", alpha=0.3)
    ax.set_title("Style-controlled ratings" if lb.style else "Model ratings", fontsize=12)
    return fig


MIN_DECISIVE = 5  # fewer decisive battles than this: show the count, not a rate


def _square(n: int) -> Any:
    size = max(4.0, 0.42 * n + 1.8)
    return _figure(size + 0.8, size)


def _matrix_axes(ax: Any, models: tuple[str, ...]) -> None:
    n = len(models)
    ax.set_xticks(range(n), models, rotation=60, ha="right", fontsize=9)
    ax.set_yticks(range(n), models, fontsize=9)


def win_rate_figure(h2h: HeadToHead, *, top: int = 15) -> Any:
    """Head-to-head win rates (row beats column; ties excluded) with the decisive-battle count in
    each cell; pairs with fewer than MIN_DECISIVE decisive battles show "w–l", uncoloured."""
    n = min(top, len(h2h.models))
    rate, wins = h2h.win_rate[:n, :n], h2h.wins[:n, :n]
    decisive = wins + wins.T
    fig = _square(n)
    ax = fig.add_subplot()
    shown = np.where(decisive >= MIN_DECISIVE, rate, np.nan)
    image = ax.imshow(np.ma.masked_invalid(shown), cmap="RdBu", vmin=0.0, vmax=1.0)
    _matrix_axes(ax, h2h.models[:n])
    for i in range(n):
        for j in range(n):
            if i == j or not decisive[i, j]:
                continue
            text = (f"{rate[i, j]:.2f}\n{decisive[i, j]}" if decisive[i, j] >= MIN_DECISIVE
                    else f"{wins[i, j]}–{wins[j, i]}")
            ax.text(j, i, text, ha="center", va="center", fontsize=7 if n > 10 else 8,
                    color="black" if decisive[i, j] >= MIN_DECISIVE else "#57606a")
    fig.colorbar(image, ax=ax, label="win rate of row model", shrink=0.8)
    ax.set_title("Win rate (row beats column), decisive battles below")
    return fig


def battle_count_figure(h2h: HeadToHead, *, top: int = 15) -> Any:
    """How many battles each pair had (every outcome counts)."""
    n = min(top, len(h2h.models))
    counts = h2h.battles[:n, :n]
    fig = _square(n)
    ax = fig.add_subplot()
    image = ax.imshow(np.ma.masked_equal(counts, 0), cmap="Greens")
    _matrix_axes(ax, h2h.models[:n])
    high = counts.max() * 0.6 if counts.size else 0
    for i in range(n):
        for j in range(n):
            if counts[i, j]:
                ax.text(j, i, str(counts[i, j]), ha="center", va="center", fontsize=7 if n > 10 else 8,
                        color="white" if counts[i, j] > high else "black")
    fig.colorbar(image, ax=ax, label="battles", shrink=0.8)
    ax.set_title("Battles per pair")
    return fig


def history_figure(hist: History, models: Sequence[str]) -> Any:
    """Rating of each of ``models`` at every boundary (cumulative votes up to it)."""
    from matplotlib.dates import AutoDateLocator, ConciseDateFormatter

    fig = _figure(5.5, 5.0)
    ax = fig.add_subplot()
    when = np.array([datetime.fromtimestamp(t - 1, timezone.utc) for t in hist.boundaries])
    for name in models:
        i = hist.models.index(name)
        ax.plot(when, hist.ratings[:, i], marker="o", markersize=3, linewidth=1.5, label=name)
    locator = AutoDateLocator(maxticks=6)
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(ConciseDateFormatter(locator))
    ax.set_ylabel("Rating (point fit)", fontsize=11)
    ax.tick_params(labelsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=10, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=2, frameon=False)
    ax.set_title(f"Rating at the end of each {hist.step}", fontsize=12)
    return fig

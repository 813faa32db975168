"""Matplotlib figures for the leaderboard.

Figures are built with ``matplotlib.figure.Figure`` and an Agg canvas attached inside
each function: no pyplot, no global backend switch, nothing done at import time,
safe in server threads. ``gr.Plot`` accepts the returned Figure.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sciarena.leaderboard.compute import Leaderboard
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
    fig = _figure(8.0, max(2.5, 0.32 * len(rows) + 1.2))
    ax = fig.add_subplot()
    y = np.arange(len(rows))[::-1]
    ratings = np.array([r.rating for r in rows])
    # With few votes the bootstrap mean can fall outside its own 2.5–97.5% band
    # (a skewed resample distribution); draw a zero-length bar then rather than fail.
    err = np.clip(np.array([[r.rating - r.ci_lower for r in rows], [r.ci_upper - r.rating for r in rows]]), 0, None)
    colors = ["#9aa5b1" if r.provisional else "#1f6feb" for r in rows]
    ax.errorbar(ratings, y, xerr=err, fmt="none", ecolor="#57606a", capsize=3, linewidth=1)
    ax.scatter(ratings, y, c=colors, zorder=3, s=22)
    ax.set_yticks(y, [r.model for r in rows])
    ax.set_xlabel(f"Rating ({lb.rating}, 95% interval)")
    ax.grid(axis="x", alpha=0.3)
    ax.set_title("Model ratings")
    return fig


def win_rate_figure(h2h: HeadToHead) -> Any:
    """Heat map of head-to-head win rates (row model beats column model; ties excluded)."""
    n = len(h2h.models)
    size = max(4.0, 0.45 * n + 2.0)
    fig = _figure(size + 1.0, size)
    ax = fig.add_subplot()
    image = ax.imshow(np.ma.masked_invalid(h2h.win_rate), cmap="RdBu", vmin=0.0, vmax=1.0)
    ax.set_xticks(range(n), h2h.models, rotation=60, ha="right")
    ax.set_yticks(range(n), h2h.models)
    if n <= 20:
        for i in range(n):
            for j in range(n):
                if np.isfinite(h2h.win_rate[i, j]):
                    ax.text(j, i, f"{h2h.win_rate[i, j]:.2f}", ha="center", va="center",
                            fontsize=7, color="black")
    fig.colorbar(image, ax=ax, label="win rate of row model")
    ax.set_title("Head-to-head win rate (ties excluded)")
    return fig

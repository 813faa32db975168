"""The data statistics as matplotlib figures, sized for a phone (390 px wide) and up.

Each function takes a :class:`~sciarena.science.stats.stats.DataStats` and returns a Figure, or
None when the votes hold nothing to draw (no timestamps, no citation counts: ``stats.notes``
then says why). As in ``sciarena/board/plots.py``: ``matplotlib.figure.Figure`` with an
Agg canvas, no pyplot, nothing at import time, safe in server threads; ``gr.Plot`` takes
the Figure. Figures are 4 inches wide with 9-point text and horizontal bars, so labels
stay readable when the page scales a figure down to a phone's width.
"""

from __future__ import annotations

import re
from types import MappingProxyType
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from sciarena.core.text import counted
from sciarena.science.stats.stats import DataStats, Tally
from sciarena.votes.schema import OUTCOME_NAMES

WIDTH = 4.0  # inches: ~390 px at the 96–100 dpi a browser shows a figure at
TEXT = 9  # points
BAR, MUTED = "#1f6feb", "#57606a"
LABEL_WIDTH = 18  # characters per line of a bar's label


def _figure(rows: int) -> Any:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(WIDTH, max(1.8, 0.4 * rows + 1.0)), layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _title(fig: Any, title: str) -> None:
    """The title over the whole figure, not over the axes: long model names push a 4-inch figure's
    axes to the right, and a title centred on them ran off the image's right edge."""
    fig.suptitle(title, fontsize=TEXT + 1)


def _label(name: str) -> str:
    """A long label on two or three lines, broken after a hyphen, underscore or space where it can be,
    so the model names leave the bars most of a phone-width figure."""
    if len(name) <= LABEL_WIDTH:
        return name
    lines, line = [], ""
    for piece in re.findall(r"[^-_ ]+[-_ ]?", name):
        if line and len(line) + len(piece) > LABEL_WIDTH:
            lines.append(line)
            line = ""
        while len(piece) > LABEL_WIDTH:  # one unbroken run longer than a line
            lines.append(piece[:LABEL_WIDTH])
            piece = piece[LABEL_WIDTH:]
        line += piece
    return "\n".join(part.rstrip() for part in (lines + [line] if line else lines))


def _bars(title: str, xlabel: str, labels: Sequence[str], values: Sequence[float],
          annotations: Sequence[str]) -> Any:
    """Horizontal bars, first label on top, each annotated at its end."""
    fig = _figure(len(labels))
    ax = fig.add_subplot()
    y = np.arange(len(labels))[::-1]
    ax.barh(y, values, color=BAR, height=0.65)
    top = max(values, default=0.0) or 1.0
    for yy, value, text in zip(y, values, annotations):
        ax.text(value + 0.02 * top, yy, text, va="center", fontsize=TEXT - 1, color=MUTED)
    ax.set_xlim(0, top * 1.45)  # room for the annotations
    ax.set_yticks(y, [_label(t) for t in labels], fontsize=TEXT)
    ax.tick_params(axis="x", labelsize=TEXT - 1)
    ax.set_xlabel(xlabel, fontsize=TEXT)
    _title(fig, title)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    return fig


def _share(count: int, total: int) -> str:
    return f"{count:,} ({100.0 * count / total:.1f}%)" if total else f"{count:,}"


def outcomes_figure(stats: DataStats) -> Any:
    """Votes per outcome (Figure 3's "A : B : Tie : Both Bad")."""
    labels = [OUTCOME_NAMES.get(k, k) for k in stats.outcomes]
    counts = list(stats.outcomes.values())
    return _bars(f"Vote outcomes ({counted(stats.votes, 'vote')})", "votes", labels, counts,
                 [_share(c, stats.votes) for c in counts])


def _tally_figure(title: str, tally: Tally, total: int) -> Any:
    items = list(tally.counts.items()) + ([("(no label)", tally.missing)] if tally.missing else [])
    return _bars(title, "votes", [k for k, _ in items], [v for _, v in items],
                 [_share(v, total) for _, v in items])


def question_types_figure(stats: DataStats) -> Any:
    """Votes per question category (Figure 3)."""
    return _tally_figure("Question categories", stats.question_types, stats.votes)


def subjects_figure(stats: DataStats) -> Any:
    """Votes per discipline (Figure 3)."""
    return _tally_figure("Disciplines", stats.subjects, stats.votes)


def _per_model(stats: DataStats, feature: str, title: str, xlabel: str, digits: int) -> Any:
    rows = [(m.model, getattr(m, feature)) for m in stats.models if getattr(m, feature) is not None]
    if not rows:
        return None
    rows.sort(key=lambda r: -r[1].mean)
    return _bars(title, xlabel, [m for m, _ in rows], [s.mean for _, s in rows],
                 [f"{s.mean:,.{digits}f}" for _, s in rows])


def citations_figure(stats: DataStats) -> Any:
    """Average citation count per answer, per model (appendix B.2, Figure 8)."""
    return _per_model(stats, "citations", "Average citations per answer", "citations", 2)


def lengths_figure(stats: DataStats) -> Any:
    """Average answer length per model."""
    return _per_model(stats, "length", "Average answer length", "characters", 0)


def citation_spread_figure(stats: DataStats) -> Any:
    """Citation counts per answer as box plots per model (appendix B.2, Figures 6–7):
    box = quartiles, line = median, diamond = mean, whiskers = range."""
    rows = [(m.model, m.citations) for m in stats.models if m.citations is not None]
    if not rows:
        return None
    rows.sort(key=lambda r: -r[1].mean)
    fig = _figure(len(rows))
    ax = fig.add_subplot()
    boxes = [{"label": model, "whislo": s.minimum, "q1": s.q1, "med": s.median, "q3": s.q3,
              "whishi": s.maximum, "mean": s.mean, "fliers": []} for model, s in rows]
    positions = np.arange(len(rows))[::-1]
    ax.bxp(boxes, positions=positions, orientation="horizontal", showmeans=True, widths=0.6,
           medianprops={"color": BAR}, meanprops={"marker": "D", "markersize": 4,
                                                  "markerfacecolor": MUTED, "markeredgecolor": MUTED})
    ax.set_yticks(positions, [_label(model) for model, _ in rows], fontsize=TEXT)
    ax.tick_params(axis="x", labelsize=TEXT - 1)
    ax.set_xlabel("citations per answer", fontsize=TEXT)
    _title(fig, "Citation counts per answer")
    ax.grid(axis="x", alpha=0.3)
    return fig


def votes_per_day_figure(stats: DataStats) -> Any:
    """Votes per UTC day (days without votes are gaps); None when no vote has a timestamp."""
    if not stats.days:
        return None
    from matplotlib.dates import AutoDateLocator, ConciseDateFormatter

    days = np.array([d for d, _ in stats.days], dtype="datetime64[D]")
    counts = np.array([c for _, c in stats.days])
    fig = _figure(6)
    ax = fig.add_subplot()
    ax.bar(days, counts, width=0.8, color=BAR)
    locator = AutoDateLocator(minticks=3, maxticks=5)  # few ticks: a phone has room for few dates
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(ConciseDateFormatter(locator))
    ax.tick_params(labelsize=TEXT - 1)
    ax.set_ylabel("votes", fontsize=TEXT)
    _title(fig, f"Votes per day (UTC; {counted(len(stats.days), 'day')} with votes)")
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    return fig


# name → figure function, in the order a page shows them (the CLI's --plots file names).
FIGURES: Mapping[str, Callable[[DataStats], Any]] = MappingProxyType({
    "outcomes": outcomes_figure,
    "question_types": question_types_figure,
    "subjects": subjects_figure,
    "citations": citations_figure,
    "citation_spread": citation_spread_figure,
    "lengths": lengths_figure,
    "votes_per_day": votes_per_day_figure,
})

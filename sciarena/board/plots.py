"""Leaderboard charts as SVG and HTML text: ratings with intervals, head-to-head matrices, history.

Text, not images: drawing is string formatting (milliseconds where matplotlib took about a
second per figure), the browser scales the vector and the page's own font stays readable on
a phone. Class names are styled by ``sciarena.ui.board_html.CSS``; every name is escaped.
"""

from __future__ import annotations

import math
import re
from datetime import datetime, timezone
from html import escape
from typing import Sequence

import numpy as np

from sciarena.board.compute import Leaderboard
from sciarena.board.history import History
from sciarena.board.views import HeadToHead

MIN_DECISIVE = 5  # fewer decisive battles than this: show the count "w–l", not a rate
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
           "#bcbd22", "#17becf")
WIDTH = 360  # viewBox units: 13-unit text is about 11 px on a 390 px phone (the chart spans ~300 px)


def nice_ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    span = max(hi - lo, 1e-9)
    step = 10 ** math.floor(math.log10(span / n))
    for mult in (1, 2, 5, 10):
        if span / (step * mult) <= n:
            step *= mult
            break
    return [t for t in np.arange(math.ceil(lo / step) * step, hi + 1e-9, step)]


NAME_CHARS = 20  # a label line's most characters: the left margin stays under half a phone-width chart
LINE_H = 13  # viewBox units between the lines of a wrapped name


def wrap_name(name: str, width: int = NAME_CHARS) -> list[str]:
    """``name`` in lines of at most ``width`` characters, broken after a space, hyphen, slash or before a
    bracket where it can be and inside a word only when a word is longer than a line: nothing is cut."""
    pieces = [p for p in re.split(r"(?<=[ \-/_])|(?=\()", name) if p]
    lines = [""]
    for piece in pieces:
        while len(piece) > width:  # a word longer than a line: break it where the line ends
            room = width - len(lines[-1])
            lines[-1] += piece[:room]
            lines.append("")
            piece = piece[room:]
        if len(lines[-1]) + len(piece.rstrip()) > width and lines[-1]:
            lines.append("")
        lines[-1] += piece
    return [line.strip() for line in lines if line.strip()]


def ratings_svg(lb: Leaderboard, *, top: int | None = None) -> str:
    """Ratings as dots with 95% interval bars, best first; long names wrap onto more lines."""
    rows = lb.rows[:top] if top else lb.rows
    if not rows:
        return ""
    names = [wrap_name(r.model) for r in rows]
    longest = max(len(line) for lines in names for line in lines)
    left, right, row_h, top_pad = min(150, 16 + int(6.6 * longest)), 12, 22, 10  # room for the names
    heights = [row_h + LINE_H * (len(lines) - 1) for lines in names]
    starts = np.concatenate([[0], np.cumsum(heights)])
    height = top_pad + int(starts[-1]) + 34
    lo = min(min(r.ci_lower, r.rating) for r in rows)
    hi = max(max(r.ci_upper, r.rating) for r in rows)
    pad = (hi - lo) * 0.05 or 10.0
    lo, hi = lo - pad, hi + pad

    def x(v: float) -> float:
        return left + (v - lo) / (hi - lo) * (WIDTH - left - right)

    parts = [f'<svg class="board-chart" width="100%" viewBox="0 0 {WIDTH} {height}" role="img" '
             f'aria-label="ratings with 95% intervals">']
    axis_y = top_pad + int(starts[-1])
    for t in nice_ticks(lo, hi):
        parts.append(f'<line class="grid" x1="{x(t):.1f}" x2="{x(t):.1f}" y1="{top_pad}" y2="{axis_y}"/>'
                     f'<text class="tick" font-size="12" fill="currentColor" opacity="0.75" x="{x(t):.1f}" y="{axis_y + 14}" text-anchor="middle">{t:g}</text>')
    for k, r in enumerate(rows):
        y = top_pad + float(starts[k]) + heights[k] / 2
        first = y + 4 - LINE_H * (len(names[k]) - 1) / 2  # the lines centred on the row's bar
        label = "".join(f'<tspan x="{left - 6}" y="{first + LINE_H * j:.1f}">{escape(line)}</tspan>'
                        for j, line in enumerate(names[k]))
        cls = "dot provisional" if r.provisional else "dot"
        parts.append(
            f'<text class="label" font-size="12" fill="currentColor" text-anchor="end">{label}</text>'
            f'<line class="bar" x1="{x(r.ci_lower):.1f}" x2="{x(r.ci_upper):.1f}" y1="{y:.1f}" y2="{y:.1f}"/>'
            f'<circle class="{cls}" cx="{x(r.rating):.1f}" cy="{y:.1f}" r="4">'
            f'<title>{escape(r.model)}: {r.rating:.1f} ({r.ci_lower:.1f}–{r.ci_upper:.1f})</title></circle>')
    parts.append(f'<text class="axis" font-size="12" fill="currentColor" x="{WIDTH / 2:.0f}" y="{height - 2}" text-anchor="middle">'
                 f'Rating ({escape(lb.rating)}, 95% interval)</text></svg>')
    return "".join(parts)


def _blend(rate: float) -> str:
    """Red (0) – white (0.5) – blue (1), as in a diverging colour map."""
    red, white, blue = np.array([202, 0, 32]), np.array([247, 247, 247]), np.array([5, 113, 176])
    c = red + (white - red) * rate * 2 if rate < 0.5 else white + (blue - white) * (rate - 0.5) * 2
    return "#%02x%02x%02x" % tuple(int(v) for v in c)


def _matrix(models: Sequence[str], cell) -> str:
    n = len(models)
    head = "".join(f'<th class="num" title="{escape(m)}">{j + 1}</th>' for j, m in enumerate(models))
    body = []
    for i in range(n):
        cells = "".join(cell(i, j) for j in range(n))
        body.append(f'<tr><th class="rowname">{i + 1}. {escape(models[i])}</th>{cells}</tr>')
    return (f'<div class="board-wrap all"><table class="board-matrix"><thead><tr><th></th>{head}</tr></thead>'
            f'<tbody>{"".join(body)}</tbody></table></div>')


def win_rate_html(h2h: HeadToHead, *, top: int = 15) -> str:
    """Win rate of the row model over the column model (ties excluded) with the number of decisive
    battles under it; pairs with fewer than MIN_DECISIVE decisive battles show "wins–losses"."""
    n = min(top, len(h2h.models))
    wins = h2h.wins[:n, :n]

    def cell(i: int, j: int) -> str:
        w, lost = int(wins[i, j]), int(wins[j, i])
        if i == j or w + lost == 0:
            return '<td class="empty"></td>'
        if w + lost < MIN_DECISIVE:
            return f'<td class="few" title="{w} wins, {lost} losses">{w}–{lost}</td>'
        rate = w / (w + lost)
        return (f'<td style="background:{_blend(rate)}" title="{w} wins, {lost} losses">'
                f'{rate:.2f}<small>{w + lost}</small></td>')

    return _matrix(h2h.models[:n], cell)


def battle_count_html(h2h: HeadToHead, *, top: int = 15) -> str:
    """Battles per pair (every outcome counts), shaded by count."""
    n = min(top, len(h2h.models))
    counts = h2h.battles[:n, :n]
    high = max(int(counts.max()), 1)

    def cell(i: int, j: int) -> str:
        c = int(counts[i, j])
        if i == j or c == 0:
            return '<td class="empty"></td>'
        shade = 0.12 + 0.5 * c / high
        return f'<td style="background:rgba(45,164,78,{shade:.2f})">{c:,}</td>'

    return _matrix(h2h.models[:n], cell)


def history_svg(hist: History, models: Sequence[str]) -> str:
    """Each model's rating at every boundary (cumulative votes up to it), with an HTML legend."""
    idx = [hist.models.index(m) for m in models]
    values = hist.ratings[:, idx]
    if not np.isfinite(values).any():
        return ""
    left, right, top_pad, bottom, height = 40, 10, 8, 30, 240
    lo, hi = float(np.nanmin(values)), float(np.nanmax(values))
    pad = (hi - lo) * 0.05 or 10.0
    lo, hi = lo - pad, hi + pad
    t = np.array(hist.boundaries) - 1.0
    t0, t1 = float(t[0]), float(t[-1]) if t[-1] > t[0] else float(t[0]) + 1.0

    def x(v: float) -> float:
        return left + (v - t0) / (t1 - t0) * (WIDTH - left - right)

    def y(v: float) -> float:
        return top_pad + (hi - v) / (hi - lo) * (height - top_pad - bottom)

    parts = [f'<svg class="board-chart" width="100%" viewBox="0 0 {WIDTH} {height}" role="img" aria-label="rating history">']
    for tick in nice_ticks(lo, hi, 4):
        parts.append(f'<line class="grid" x1="{left}" x2="{WIDTH - right}" y1="{y(tick):.1f}" y2="{y(tick):.1f}"/>'
                     f'<text class="tick" font-size="12" fill="currentColor" opacity="0.75" x="{left - 4}" y="{y(tick) + 4:.1f}" text-anchor="end">{tick:g}</text>')
    for k in sorted({0, len(t) // 2, len(t) - 1}):
        label = datetime.fromtimestamp(t[k], timezone.utc).strftime("%Y-%m-%d")
        anchor = "start" if k == 0 else "end" if k == len(t) - 1 else "middle"
        parts.append(f'<text class="tick" font-size="12" fill="currentColor" opacity="0.75" x="{x(t[k]):.1f}" y="{height - 12}" text-anchor="{anchor}">{label}</text>')
    legend = []
    for k, name in enumerate(models):
        colour = PALETTE[k % len(PALETTE)]
        col = values[:, k]
        points = " ".join(f"{x(tt):.1f},{y(v):.1f}" for tt, v in zip(t, col) if np.isfinite(v))
        parts.append(f'<polyline class="line" stroke="{colour}" points="{points}"><title>{escape(name)}</title>'
                     '</polyline>')
        legend.append(f'<span><i style="background:{colour}"></i>{escape(name)}</span>')
    parts.append("</svg>")
    return "".join(parts) + f'<div class="board-legend history-legend">{"".join(legend)}</div>'

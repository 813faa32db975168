"""The Leaderboard tab's "Data" section: the data statistics (``sciarena.science.stats.stats``) as SVG and HTML.

The same figures as ``sciarena.science.stats.plots`` (outcomes, question categories, disciplines,
average citations and answer length per model, votes per day) and the failure-case counts,
drawn as text like the board's own charts (``sciarena.board.plots``): string formatting
takes milliseconds where a matplotlib figure took about a second here. The bar charts are HTML
rows (label, bar, count) so their text is page text at the page's size on any screen; votes per
day is an SVG whose 14-unit text stays above 8 pt when a phone scales it down. Every label is
escaped.
"""

from __future__ import annotations

from html import escape
from typing import Sequence

from sciarena.board.plots import WIDTH, nice_ticks
from sciarena.core.text import counted
from sciarena.ui import board_html
from sciarena.wiring import BOTH_BAD, OUTCOME_NAMES, TOP_MODEL_LOST, DataStats, Tally

FONT = 14  # viewBox units: the chart spans ~278 px of a 390 px phone, so 14 units ≈ 10.8 px ≈ 8 pt
CSS = """
.data-chart .databar { fill: #1f6feb; }
.board-chart.data-chart { margin: 0; }  /* left, under its heading like the bars */
.data-bars { max-width: 640px; font-size: 0.85rem; }
.data-row { display: grid; grid-template-columns: minmax(4.5em, 11em) minmax(3em, 1fr) auto; gap: 6px;
            align-items: center; padding: 1px 0; }
.data-label { text-align: right; line-height: 1.15; overflow-wrap: anywhere; }  /* wraps: phones have no tooltips */
.data-track i { display: block; height: 0.8em; background: #1f6feb; border-radius: 2px; min-width: 1px; }
.data-note { font-variant-numeric: tabular-nums; color: var(--body-text-color-subdued); white-space: nowrap; }
.data-section h4 { margin: 14px 0 2px; font-size: 0.95rem; }
.data-section p { margin: 2px 0 6px; }
.data-defs { font-size: 0.85rem; margin: 4px 0 8px 1.1em; padding: 0; }
"""


def _share(count: int, total: int) -> str:
    return f"{count:,} ({100.0 * count / total:.1f}%)" if total else f"{count:,}"


def bars_html(labels: Sequence[str], values: Sequence[float], notes: Sequence[str]) -> str:
    """Horizontal bars, first label on top, each with its note after the bar. HTML, not SVG: the
    labels are page text at the page's size, which a scaled-down SVG's are not on a phone."""
    if not labels:
        return ""
    top = max(values, default=0.0) or 1.0
    rows = "".join(
        f'<div class="data-row"><span class="data-label">{escape(label)}</span>'
        f'<span class="data-track"><i style="width:{100.0 * max(value, 0.0) / top:.1f}%"></i></span>'
        f'<span class="data-note">{escape(note)}</span></div>'
        for label, value, note in zip(labels, values, notes))
    return f'<div class="data-bars">{rows}</div>'


def days_svg(days: Sequence[tuple[str, int]]) -> str:
    """Votes per UTC day as columns (days without votes are gaps), first, middle and last date named."""
    if not days:
        return ""
    import numpy as np

    dates = np.array([d for d, _ in days], dtype="datetime64[D]").astype(np.int64)
    counts = [c for _, c in days]
    left, right, top_pad, bottom, height = 44, 10, 8, 30, 200
    first, last = int(dates[0]), int(dates[-1])
    n_days = last - first + 1
    slot = (WIDTH - left - right) / n_days
    high = max(counts)
    ticks = [t for t in nice_ticks(0, high, 4) if t <= high]

    def y(v: float) -> float:
        return top_pad + (high - v) / high * (height - top_pad - bottom)

    parts = [f'<svg class="board-chart data-chart" width="100%" viewBox="0 0 {WIDTH} {height}" role="img" '
             'aria-label="votes per day">']
    for t in ticks:
        parts.append(f'<line class="grid" x1="{left}" x2="{WIDTH - right}" y1="{y(t):.1f}" y2="{y(t):.1f}"/>'
                     f'<text font-size="{FONT}" fill="currentColor" opacity="0.75" x="{left - 4}" y="{y(t) + 4:.1f}" '
                     f'text-anchor="end">{t:g}</text>')
    for (label, count), day in zip(days, dates.tolist()):
        x = left + (day - first) * slot
        parts.append(f'<rect class="databar" x="{x + slot * 0.1:.2f}" y="{y(count):.1f}" width="{slot * 0.8:.2f}" '
                     f'height="{y(0) - y(count):.1f}"><title>{label}: {counted(count, "vote")}</title></rect>')
    marks = sorted({0, len(days) // 2, len(days) - 1})
    for k in marks if len(days) > 2 else range(len(days)):
        x = left + (int(dates[k]) - first + 0.5) * slot
        anchor = "start" if k == 0 and len(days) > 1 else "end" if k == len(days) - 1 and len(days) > 1 else "middle"
        parts.append(f'<text font-size="{FONT}" fill="currentColor" opacity="0.75" x="{x:.1f}" y="{height - 12}" '
                     f'text-anchor="{anchor}">{days[k][0]}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _tally(tally: Tally, total: int) -> str:
    items = [(k, v) for k, v in tally.counts.items()] + ([("(no label)", tally.missing)] if tally.missing else [])
    return bars_html([k for k, _ in items], [v for _, v in items], [_share(v, total) for _, v in items])


def _per_model(stats: DataStats, feature: str, digits: int) -> str:
    rows = sorted(((m.model, getattr(m, feature)) for m in stats.models if getattr(m, feature) is not None),
                  key=lambda r: -r[1].mean)
    return bars_html([m for m, _ in rows], [s.mean for _, s in rows],
                    [f"{s.mean:,.{digits}f}" for _, s in rows])


def _failures(stats: DataStats) -> str:
    """Each case's count with its definition in one sentence, then the top models' losses as bars."""
    f = stats.failures
    top = ", ".join(f.top_models) if f.top_models else "none (too few ranked models)"
    lost = (f"{_share(f.count(TOP_MODEL_LOST), f.top_vs_other)} of {f.top_vs_other:,} such votes"
            if f.top_models else board_html.DASH)
    cases = (f'<ul class="data-defs"><li><strong>Both bad: {_share(f.count(BOTH_BAD), stats.votes)}</strong> '
             f'of the counted votes; the voter judged both answers poor.</li>'
             f'<li><strong>Top-{f.top} model voted worse: {lost}</strong>; a decisive vote between one of the '
             f"leaderboard's top {f.top} models and a model outside them went to the model outside.</li></ul>")
    losses = f.losses_by_model()
    per_model = "" if not f.top_models else (
        f"<p>Votes each top model lost to a model outside the top {f.top}:</p>"
        + bars_html(list(losses), list(losses.values()), [f"{c:,}" for c in losses.values()]))
    return f"<h4>Failure cases</h4><p>Top {f.top} models: {escape(top)}.</p>{cases}{per_model}"


def data_html(stats: DataStats) -> str:
    """The whole section as one HTML string."""
    def block(heading: str, body: str, empty: str) -> str:
        return f"<h4>{escape(heading)}</h4>" + (body or f'<p class="board-legend">{escape(empty)}</p>')

    outcomes = [OUTCOME_NAMES.get(k, k) for k in stats.outcomes]
    counts = list(stats.outcomes.values())
    skipped = "".join(f", {v:,} {escape(k)}" for k, v in stats.skipped.items() if v)
    parts = [
        f'<div class="data-section"><p>{escape(stats.counted_sentence())}'
        f'{" Records that are not votes: " + skipped.lstrip(", ") + "." if skipped else ""}</p>',
        block("Vote outcomes", bars_html(outcomes, counts,
                                        [_share(c, stats.votes) for c in counts]), ""),
        block("Question categories", _tally(stats.question_types, stats.votes), ""),
        block("Disciplines", _tally(stats.subjects, stats.votes), ""),
        block("Average citations per answer", _per_model(stats, "citations", 2),
              "No answer carries a citation count."),
        block("Average answer length (characters)", _per_model(stats, "length", 0),
              "No answer carries a text or length."),
        block("Votes per day (UTC)", days_svg(stats.days), "No vote carries a timestamp."),
        _failures(stats),
    ]
    parts += [f'<p class="board-legend">{escape(n)}</p>' for n in stats.notes]
    parts.append("</div>")
    return "".join(parts)

"""The leaderboard table as HTML: badges, open / proprietary highlighting, "—" for empty cells,
and columns that step aside on a phone (the "All columns" toggle brings them back).

Gradio's Dataframe cannot colour a row, put a badge beside a name or drop columns by screen
width, so the tab renders this table itself; the CSV download carries the same rows.
``gradio_leaderboard`` (a Dataframe with search, filters and a column picker) was not taken:
its last release predates Gradio 6, it would add a dependency for a table of a few dozen
models, and it inherits the Dataframe's limits above (no row highlight, badge, phone layout).
"""

from __future__ import annotations

from html import escape
from typing import Any, Mapping, Sequence

from sciarena.board.board import NO_INTERVAL, has_interval
from sciarena.board.service import PROVISIONAL_BATTLES
from sciarena.core.text import number

DASH = "—"

CSS = """
.board-wrap { overflow-x: auto; }
.board-table { border-collapse: collapse; width: 100%; font-size: 0.88rem; }
.board-table td.model { min-width: 9em; }  /* a long name wraps rather than push the table past its box */
.board-table.compact { width: auto; min-width: 50%; }
.board-table th { white-space: nowrap; word-break: keep-all; text-align: left; padding: 6px 8px;
                  border-bottom: 2px solid var(--border-color-primary); font-weight: 600; }
.board-table td { padding: 5px 8px; border-bottom: 1px solid var(--border-color-primary);
                  vertical-align: top; }
.board-table td.num, .board-table th.num { text-align: right; font-variant-numeric: tabular-nums;
                                           white-space: nowrap; }
.board-table tr.open td:first-child { box-shadow: inset 4px 0 0 #2da44e; }
.board-table tr.prop td:first-child { box-shadow: inset 4px 0 0 #8250df; }
.board-table tr.open { background: rgba(45, 164, 78, 0.06); }
.board-table tr.prop { background: rgba(130, 80, 223, 0.05); }
.badge { display: inline-block; font-size: 0.72rem; padding: 0 6px; margin-left: 4px; border-radius: 9px;
         border: 1px solid var(--border-color-primary); color: var(--body-text-color-subdued);
         white-space: nowrap; }
.ci-inline, .ci-inline-note { display: none; }
.board-legend { font-size: 0.85rem; color: var(--body-text-color-subdued); margin: 4px 0; }
.swatch { display: inline-block; width: 10px; height: 10px; margin: 0 4px 0 8px; vertical-align: middle; }
.board-chart { width: 100%; max-width: 460px; height: auto; display: block; margin: 0 auto;
               color: var(--body-text-color); }
.board-chart .grid { stroke: var(--border-color-primary); stroke-width: 0.6; }
.board-chart .bar { stroke: #57606a; stroke-width: 1.5; }
.board-chart .dot { fill: #1f6feb; }
.board-chart .dot.provisional { fill: #9aa5b1; }
.board-chart .line { fill: none; stroke-width: 1.8; }
.history-legend span { display: inline-block; margin-right: 12px; white-space: nowrap; }
.history-legend i { display: inline-block; width: 14px; height: 3px; margin-right: 4px; vertical-align: middle; }
.board-matrix { border-collapse: collapse; font-size: 0.78rem; font-variant-numeric: tabular-nums; }
.board-matrix th { padding: 2px 4px; white-space: nowrap; font-weight: 600; }
.board-matrix th.rowname { text-align: left; }
.board-matrix td { padding: 2px 4px; text-align: center; min-width: 2.6em; color: #1b1f24;
                   border: 1px solid var(--border-color-primary); }
.board-matrix td small { display: block; font-size: 0.68rem; opacity: 0.75; }
.board-matrix td.few { color: #57606a; background: transparent; }
.board-matrix td.empty { background: transparent; }
@media (max-width: 1400px) {
  /* with style control, two ratings and two intervals beside the catalogue columns overflowed a 1280 px
     box: each interval goes under its rating, as on a phone */
  .board-wrap.styled:not(.all) .ci { display: none; }
  .board-wrap.styled:not(.all) .ci-inline { display: block; font-size: 0.72rem; opacity: 0.8; }
  .board-wrap.styled:not(.all) .ci-inline-note { display: inline; }
}
@media (max-width: 700px) {
  .board-wrap:not(.all) .x { display: none; }
  /* two ratings and two intervals do not fit side by side: each interval goes under its rating */
  .board-wrap.styled:not(.all) .ci { display: none; }
  /* an interval may break after its dash: two ratings, two intervals and a badged name overflowed 302 px */
  .board-wrap.styled:not(.all) .ci-inline { display: block; font-size: 0.68rem; opacity: 0.8; white-space: normal; }
  .board-wrap.styled:not(.all) .badge { margin-left: 0; padding: 0 4px; }
  .board-wrap.styled:not(.all) .board-table { font-size: 0.76rem; }
  .board-wrap.styled:not(.all) .board-table td.model { min-width: 0; }
  .board-wrap.styled:not(.all) .board-table th, .board-wrap.styled:not(.all) .board-table td { padding: 3px; }
  .board-table { font-size: 0.8rem; }
  .board-table td.model { white-space: normal; min-width: 4.5em; }
  .board-table th, .board-table td { padding: 3px 4px; }
}
"""


def _rating(value: float | None) -> str:
    return DASH if value is None else number(value, 1)


def _ci(lo: float | None, hi: float | None) -> str:
    """The interval, or a dash when there is none (a one-number interval from a handful of votes)."""
    if lo is None or hi is None or not has_interval(lo, hi):
        return DASH
    return f"{number(lo, 1)}–{number(hi, 1)}"


def _no_interval(rows: Sequence[Mapping[str, Any]]) -> bool:
    """Whether some row has a rating but no interval to show for it."""
    pairs = [(r["ci_lower"], r["ci_upper"]) for r in rows]
    pairs += [(r["style_ci_lower"], r["style_ci_upper"]) for r in rows
              if "style_ci_lower" in r and r["style_rating"] is not None]
    return any(lo is not None and hi is not None and not has_interval(lo, hi) for lo, hi in pairs)


def _text(value: Any) -> str:
    return DASH if value in (None, "") else escape(str(value))


def _inline_ci(lo: float | None, hi: float | None) -> str:
    """The interval under the rating: shown only on a phone with style control on (see CSS)."""
    return f'<small class="ci-inline">{_ci(lo, hi)}</small>'


def _kind(open_weights: bool | None) -> str:
    return DASH if open_weights is None else ("Open" if open_weights else "Proprietary")


def unplayed_note(models: Sequence[str]) -> str:
    """The sentence naming a view's models that have no battle in it (left out of its ranking)."""
    return (f"Not ranked in this view (no battles in it): {', '.join(models)}." if models else "")


def _legend(rows: Sequence[Mapping[str, Any]], styled: bool) -> str:
    """Swatches only for the kinds of row the table has (none when the catalogue knows neither)."""
    kinds = {r["open_weights"] for r in rows}
    parts = ([('#8250df', 'proprietary')] if False in kinds else []) + (
        [('#2da44e', 'open weights')] if True in kinds else [])
    text = "".join(f'<span class="swatch" style="background:{colour}"></span>{name}' for colour, name in parts)
    if styled:
        text += (("; " if text else "") + "SC = style-controlled"
                 + '<span class="ci-inline-note">; the small numbers under a rating are its 95% CI</span>')
    return f'<div class="board-legend">{text}</div>' if text else ""


def render_table(rows: Sequence[Mapping[str, Any]], *, all_columns: bool = False,
                 unplayed: Sequence[str] = ()) -> str:
    """HTML for :func:`sciarena.board.board.board_rows` records; ``unplayed`` (models with no battle in
    the view, not ranked) are named under the table."""
    styled = bool(rows) and "style_rank" in rows[0]
    # (header, css class, cell function); class "x" = hidden on a phone unless all columns are asked for
    columns: list[tuple[str, str, Any]] = [
        ("Rank", "num", lambda r: str(r["rank"])),
        ("Model", "model", lambda r: escape(r["model"])
         + (f' <span class="badge" title="fewer than {PROVISIONAL_BATTLES} battles in this view">provisional</span>' if r["provisional"] else "")),
        ("Rating", "num", lambda r: _rating(r["rating"]) + _inline_ci(r["ci_lower"], r["ci_upper"])),
        ("95% CI", "num ci", lambda r: _ci(r["ci_lower"], r["ci_upper"])),
    ]
    if styled:
        columns += [
            ("SC rank", "num x", lambda r: _text(r["style_rank"])),
            ("SC rating", "num", lambda r: _rating(r["style_rating"])
             + _inline_ci(r["style_ci_lower"], r["style_ci_upper"])),
            ("SC 95% CI", "num ci", lambda r: _ci(r["style_ci_lower"], r["style_ci_upper"])),
        ]
    columns += [
        ("Battles", "num x", lambda r: f"{r['battles']:,}"),
        ("Organisation", "x", lambda r: _text(r["organisation"])),
        ("Weights", "x", lambda r: _kind(r["open_weights"])),
        ("Release", "num x", lambda r: _text(r["release"])),
        ("Licence", "x", lambda r: _text(r["licence"])),
        ("$ / 100 calls", "num x",
         lambda r: DASH if r["cost_per_100_calls"] is None else f"${r['cost_per_100_calls']:.3f}"),
    ]
    head = "".join(f'<th class="{cls}">{escape(name)}</th>' for name, cls, _ in columns)
    body = []
    for r in rows:
        kind = "" if r["open_weights"] is None else (" class=\"open\"" if r["open_weights"] else " class=\"prop\"")
        body.append(f"<tr{kind}>" + "".join(f'<td class="{cls}">{cell(r)}</td>' for _, cls, cell in columns)
                    + "</tr>")
    wrap = "board-wrap" + (" all" if all_columns else "") + (" styled" if styled else "")
    notes = ([f"{DASH} in a 95% CI: {NO_INTERVAL}."] if _no_interval(rows) else []) + (
        [unplayed_note(unplayed)] if unplayed else [])
    note = "".join(f'<p class="board-legend">{escape(n)}</p>' for n in notes)
    return (f'<div class="{wrap}">{_legend(rows, styled)}<table class="board-table"><thead><tr>{head}</tr></thead>'
            f'<tbody>{"".join(body)}</tbody></table></div>{note}')


def simple_table(headers: Sequence[str], rows: Sequence[Sequence[str]], *, numeric: Sequence[int] = (),
                 intro: str = "", notes: Sequence[str] = ()) -> str:
    """A small table in the board's style (headers never break); cells are escaped text."""
    def cls(k: int) -> str:
        return ' class="num"' if k in numeric else ""

    head = "".join(f"<th{cls(k)}>{escape(h)}</th>" for k, h in enumerate(headers))
    body = "".join("<tr>" + "".join(f"<td{cls(k)}>{escape(c)}</td>" for k, c in enumerate(r)) + "</tr>"
                   for r in rows)
    extra = "".join(f'<p class="board-legend">{escape(n)}</p>' for n in notes)
    lead = f"<p>{intro}</p>" if intro else ""
    return (f'{lead}<div class="board-wrap all"><table class="board-table compact"><thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table></div>{extra}")

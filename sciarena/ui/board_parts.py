"""The Leaderboard tab's layout and the pieces of a shown board (γ table, Elo table, plot images).

Plots are drawn once per board and served as PNG files: a ``gr.Plot`` would re-encode the
matplotlib figure on every page load, which the memo exists to avoid.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gradio as gr

from sciarena.leaderboard.board import ELO_VS_BT, OVERALL, Board
from sciarena.leaderboard.plots import battle_count_figure, history_figure, ratings_figure, win_rate_figure
from sciarena.ui import board_html

RATING_CHOICES = [("Bootstrap mean", "bootstrap-mean"), ("Point estimate", "point")]
HISTORY_TOP = 8
DPI = 110


@dataclass(frozen=True)
class BoardView:
    """The tab's components; ``outputs`` are the ones ``refresh`` fills."""

    summary: gr.Markdown
    view_select: gr.Dropdown
    style: gr.Checkbox
    rating: gr.Radio
    all_columns: gr.Checkbox
    table: gr.HTML
    style_info: gr.Markdown
    csv: gr.DownloadButton
    json: gr.DownloadButton
    ratings_plot: gr.Image
    win_plot: gr.Image
    battles_plot: gr.Image
    elo_info: gr.Markdown
    history_plot: gr.Image
    refresh: gr.Button

    @property
    def outputs(self) -> list[Any]:
        return [self.summary, self.view_select, self.table, self.style_info, self.ratings_plot, self.win_plot,
                self.battles_plot, self.elo_info, self.history_plot, self.csv, self.json]

    def empty(self, message: str) -> dict[Any, Any]:
        return {self.summary: f"*{message}*", self.view_select: gr.update(), self.table: "",
                self.style_info: "", self.ratings_plot: None, self.win_plot: None, self.battles_plot: None,
                self.elo_info: "", self.history_plot: None, self.csv: None, self.json: None}


def _image(elem_id: str) -> gr.Image:
    return gr.Image(show_label=False, interactive=False, elem_id=elem_id, type="filepath",
                    buttons=["download", "fullscreen"])


def build_layout(method: str) -> BoardView:
    """Components of the tab, in page order (inside a Blocks context)."""
    with gr.Row(equal_height=True):
        view_select = gr.Dropdown(choices=[("Overall", OVERALL)], value=OVERALL, label="View", scale=3,
                                  min_width=200, elem_id="board-view")
        rating = gr.Radio(RATING_CHOICES, value="bootstrap-mean", label="Rating", scale=2, min_width=200,
                          elem_id="board-rating")
    with gr.Row(equal_height=True):
        style = gr.Checkbox(label="Style control", value=False, elem_id="board-style", min_width=140)
        all_columns = gr.Checkbox(label="All columns (phone)", value=False, elem_id="board-all-columns",
                                  min_width=140)
    summary = gr.Markdown(elem_id="leaderboard-summary")
    table = gr.HTML("", elem_id="leaderboard-table", css_template=board_html.CSS, js_on_load=None)
    style_info = gr.Markdown(elem_id="board-style-info")
    with gr.Row():
        csv = gr.DownloadButton("Download CSV", size="sm", elem_id="board-csv", min_width=120)
        json = gr.DownloadButton("Download JSON", size="sm", elem_id="board-json", min_width=120)
        refresh = gr.Button("Refresh", size="sm", min_width=100)
    # Accordions, not nested tabs: on a phone Gradio folds extra tabs into a menu; sections stack.
    with gr.Accordion("Ratings with 95% intervals", open=True, elem_id="board-ratings"):
        ratings_plot = _image("ratings-plot")
    with gr.Accordion("Head-to-head: win rates and battle counts", open=False, elem_id="board-h2h"):
        with gr.Row():
            win_plot = _image("winrate-plot")
            battles_plot = _image("battles-plot")
    with gr.Accordion("Online Elo beside Bradley–Terry", open=False, elem_id="board-elo"):
        elo_info = gr.Markdown(elem_id="board-elo-info")
    with gr.Accordion("Over time: rating history", open=False, elem_id="board-history"):
        history_plot = _image("history-plot")
    gr.Markdown(method)
    return BoardView(summary=summary, view_select=view_select, style=style, rating=rating, all_columns=all_columns,
                     table=table, style_info=style_info, csv=csv, json=json, ratings_plot=ratings_plot,
                     win_plot=win_plot, battles_plot=battles_plot, elo_info=elo_info, history_plot=history_plot,
                     refresh=refresh)


def figures_png(board: Board, stem: Path) -> dict[str, str]:
    """The board's figures written next to ``stem`` as PNG; name → path."""
    figures = {"ratings": ratings_figure(board.styled or board.plain), "win": win_rate_figure(board.h2h),
               "battles": battle_count_figure(board.h2h)}
    if board.history is not None and len(board.history.boundaries) > 1:
        top = [r.model for r in board.plain.rows[:HISTORY_TOP]]
        figures["history"] = history_figure(board.history, top)
    out = {}
    for name, fig in figures.items():
        path = Path(f"{stem}-{name}.png")
        fig.savefig(path, dpi=DPI)
        out[name] = str(path)
    return out


def style_markdown(board: Board, asked: bool) -> str:
    """γ with 95% intervals for the style-controlled fit (or why there is none)."""
    if not asked:
        return ""
    lb = board.styled
    if lb is None:
        return "*Style control: the votes of this view record no style feature.*"
    lines = [f"**Style control** ({lb.style_votes_used:,} votes carry the features): "
             "γ > 0 means voters favour the side with more of it.", "",
             "| Feature | γ | 95% CI |", "|---|---:|---:|"]
    for c in lb.style:
        lines.append(f"| {c.feature} | {c.coefficient:+.3f} | {c.ci_lower:+.3f} to {c.ci_upper:+.3f} |")
    lines.extend(f"*{note}*" for note in lb.notes)
    return "\n".join(lines)


def elo_markdown(board: Board) -> str:
    """Online Elo beside Bradley–Terry, with why they differ."""
    elo = {r.model: r for r in board.elo.rows}
    elo_rank = {r.model: k + 1 for k, r in enumerate(board.elo.rows)}
    lines = [ELO_VS_BT, "", "| Model | BT rank | BT rating | Elo order | Online Elo |", "|---|---:|---:|---:|---:|"]
    for r in board.plain.rows:
        e = elo.get(r.model)
        lines.append(f"| {r.model} | {r.rank} | {r.rating:.1f} | {elo_rank.get(r.model, '—')} | "
                     f"{'—' if e is None else f'{e.rating:.1f}'} |")
    return "\n".join(lines)

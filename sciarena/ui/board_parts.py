"""The Leaderboard tab's layout and the pieces of a shown board (γ table, Elo table, plot images).

Charts are SVG / HTML text (``sciarena.board.plots``), drawn once per board and served
from the memo.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

import gradio as gr

from sciarena.board.board import ELO_VS_BT, OVERALL, Board
from sciarena.board.plots import (
    battle_count_html,
    history_svg,
    ratings_svg,
    win_rate_html,
)
from sciarena.board.views import pair_record
from sciarena.core.text import counted
from sciarena.ui import board_data, board_html

RATING_CHOICES = [("Bootstrap mean", "bootstrap-mean"), ("Point estimate", "point")]
HISTORY_TOP = 8


@dataclass(frozen=True)
class BoardView:
    """The tab's components; ``outputs`` are the ones ``refresh`` fills."""

    summary: gr.Markdown
    view_select: gr.Dropdown
    style: gr.Checkbox
    rating: gr.Radio
    all_columns: gr.Checkbox
    show_deprecated: gr.Checkbox  # shown when the catalogue retires a model ("deprecated": true)
    table: gr.HTML
    style_info: gr.HTML
    csv: gr.DownloadButton
    json: gr.DownloadButton
    ratings_plot: gr.HTML
    win_plot: gr.HTML
    battles_plot: gr.HTML
    elo_info: gr.HTML
    history_plot: gr.HTML
    refresh: gr.Button
    data_section: gr.Accordion  # closed; filled when opened (LeaderboardTab.data), never by refresh
    data_plot: gr.HTML
    pipelines_info: gr.HTML  # pipelines against their base models (its section shows only when there are any)

    @property
    def outputs(self) -> list[Any]:
        return [self.summary, self.view_select, self.table, self.style_info, self.ratings_plot, self.win_plot,
                self.battles_plot, self.elo_info, self.history_plot, self.csv, self.json, self.pipelines_info]

    def empty(self, message: str) -> dict[Any, Any]:
        return {self.summary: f"*{message}*", self.view_select: gr.update(), self.table: "",
                self.style_info: "", self.ratings_plot: "", self.win_plot: "", self.battles_plot: "",
                self.elo_info: "", self.history_plot: "", self.csv: None, self.json: None, self.pipelines_info: ""}


def _chart(elem_id: str) -> gr.HTML:
    return gr.HTML("", elem_id=elem_id, css_template=board_html.CSS, js_on_load=None)


def build_layout(method: str, pipelines: bool = False, deprecated: bool = False) -> BoardView:
    """Components of the tab, in page order (inside a Blocks context); ``pipelines``: the catalogue has
    pipeline contestants, so the section comparing each with its base model is shown; ``deprecated``: it
    retires some models, so the switch that shows them again is shown."""
    with gr.Row(equal_height=True):
        view_select = gr.Dropdown(choices=[("Overall", OVERALL)], value=OVERALL, label="View", scale=3,
                                  min_width=200, elem_id="board-view")
        rating = gr.Radio(RATING_CHOICES, value="bootstrap-mean", label="Rating", scale=2, min_width=200,
                          elem_id="board-rating")
    with gr.Row(equal_height=True):
        style = gr.Checkbox(label="Style control", value=False, elem_id="board-style", min_width=140)
        all_columns = gr.Checkbox(label="All columns (phone)", value=False, elem_id="board-all-columns",
                                  min_width=140)
        show_deprecated = gr.Checkbox(label="Show deprecated models", value=False, elem_id="board-deprecated",
                                      min_width=140, visible=deprecated)
    summary = gr.Markdown(elem_id="leaderboard-summary")
    table = gr.HTML("", elem_id="leaderboard-table", css_template=board_html.CSS, js_on_load=None)
    style_info = gr.HTML("", elem_id="board-style-info", css_template=board_html.CSS, js_on_load=None)
    with gr.Row():
        csv = gr.DownloadButton("Download CSV", size="sm", elem_id="board-csv", min_width=120)
        json = gr.DownloadButton("Download JSON", size="sm", elem_id="board-json", min_width=120)
        refresh = gr.Button("Refresh", size="sm", min_width=100)
    # Accordions, not nested tabs: on a phone Gradio folds extra tabs into a menu; sections stack.
    with gr.Accordion("Ratings with 95% intervals", open=True, elem_id="board-ratings"):
        ratings_plot = _chart("ratings-plot")
    with gr.Accordion("Head-to-head: win rates and battle counts", open=False, elem_id="board-h2h"):
        win_plot = _chart("winrate-plot")
        battles_plot = _chart("battles-plot")
    with gr.Accordion("Pipelines against their base models", open=False, elem_id="board-pipelines",
                      visible=pipelines):
        pipelines_info = gr.HTML("", elem_id="board-pipelines-info", css_template=board_html.CSS, js_on_load=None)
    with gr.Accordion("Online Elo beside Bradley–Terry", open=False, elem_id="board-elo"):
        elo_info = gr.HTML("", elem_id="board-elo-info", css_template=board_html.CSS, js_on_load=None)
    with gr.Accordion("Over time: rating history", open=False, elem_id="board-history"):
        history_plot = _chart("history-plot")
    with gr.Accordion("Data: votes, questions, models, failure cases", open=False,
                      elem_id="board-data") as data_section:
        data_plot = gr.HTML("", elem_id="data-plot", css_template=board_html.CSS + board_data.CSS, js_on_load=None)
    gr.Markdown(method)
    return BoardView(summary=summary, view_select=view_select, style=style, rating=rating, all_columns=all_columns,
                     show_deprecated=show_deprecated, table=table, style_info=style_info, csv=csv, json=json, ratings_plot=ratings_plot,
                     win_plot=win_plot, battles_plot=battles_plot, elo_info=elo_info, history_plot=history_plot,
                     refresh=refresh, data_section=data_section, data_plot=data_plot,
                     pipelines_info=pipelines_info)


def charts(board: Board) -> dict[str, str]:
    """The board's charts as HTML text; name → markup ("" when there is nothing to draw)."""
    out = {"ratings": ratings_svg(board.styled or board.plain),
           "win": "<p><strong>Win rate</strong> of the row model over the column model (ties excluded); "
                  "the small number is how many decisive battles it rests on.</p>" + win_rate_html(board.h2h),
           "battles": "<p><strong>Battles per pair</strong> (every outcome counts).</p>"
                      + battle_count_html(board.h2h),
           "history": ""}
    if board.history is not None and len(board.history.boundaries) > 1:
        top = [r.model for r in board.plain.rows[:HISTORY_TOP]]
        out["history"] = (f"<p>Rating at the end of each {board.history.step}, refitted on the votes up to it "
                          f"(top {len(top)} models).</p>" + history_svg(board.history, top))
    else:
        out["history"] = f'<p class="board-legend">{history_absent(board)}</p>'
    return out


def history_absent(board: Board) -> str:
    """Why "Over time" has no chart: one history point is a dot, not a history."""
    if board.last_vote is None:
        return "No vote in this view carries a timestamp, so there is no rating history to draw."
    day = datetime.fromtimestamp(board.last_vote, timezone.utc).strftime("%Y-%m-%d")
    step = board.history.step if board.history is not None else "day"
    return (f"Every vote in this view was cast in one {step} (up to {day}, UTC): the history draws the rating "
            f"at the end of each {step} and needs votes from at least two. It appears once there are.")


def style_html(board: Board, asked: bool) -> str:
    """γ with 95% intervals for the style-controlled fit (or why there is none), as HTML."""
    if not asked:
        return ""
    lb = board.styled
    if lb is None:
        return "<p><em>Style control: the votes of this view record no style feature that varies.</em></p>"
    rows = [(c.feature, f"{c.coefficient:+.3f}", f"{c.ci_lower:+.3f} to {c.ci_upper:+.3f}") for c in lb.style]
    intro = (f"<strong>Style control</strong> ({counted(lb.style_votes_used, 'vote')} carry the features): "
             "γ &gt; 0 means voters favour the side with more of it.")
    return board_html.simple_table(("Feature", "γ", "95% CI"), rows, numeric=(1, 2), intro=intro, notes=lb.notes)


PIPELINES_INTRO = ("Each pipeline (an OpenScholar-style loop around a model) against the very model it wraps, "
                   "in the battles where the two met (a drawn pipeline meets its base half the time). "
                   "<strong>Score</strong>: the pipeline's share of the points, a tie or <em>both bad</em> "
                   "counting half; 95% interval from 1,000 seeded bootstrap resamples of those battles. "
                   "<strong>Rating gap</strong>: pipeline minus base on this board, over all their battles.")


def pipelines_html(board: Board, pairs: Sequence[tuple[str, str]]) -> str:
    """Pipeline against base for each (pipeline, base) name pair, over the board's votes, as HTML."""
    if not pairs:
        return ""
    rating = {r.model: r.rating for r in board.plain.rows}
    rows = []
    for pipeline, base in pairs:
        record = pair_record(board.table, pipeline, base)
        gap = (f"{rating[pipeline] - rating[base]:+.1f}" if pipeline in rating and base in rating
               else board_html.DASH)
        score = board_html.DASH if record.score is None else (
            f"{record.score:.2f} ({record.ci_low:.2f}–{record.ci_high:.2f})")
        rows.append((pipeline, base, f"{record.battles:,}",
                     f"{record.first_wins}–{record.second_wins}–{record.ties}–{record.both_bad}", score, gap))
    return board_html.simple_table(("Pipeline", "Base model", "Battles", "Won–lost–tie–both bad", "Score (95% CI)",
                                    "Rating gap"), rows, numeric=(2, 3, 4, 5), intro=PIPELINES_INTRO)


def elo_html(board: Board) -> str:
    """Online Elo beside Bradley–Terry, with why they differ, as HTML."""
    elo = {r.model: r for r in board.elo.rows}
    elo_rank = {r.model: k + 1 for k, r in enumerate(board.elo.rows)}
    rows = [(r.model, str(r.rank), f"{r.rating:.1f}", str(elo_rank.get(r.model, board_html.DASH)),
             board_html.DASH if r.model not in elo else f"{elo[r.model].rating:.1f}") for r in board.plain.rows]
    return board_html.simple_table(("Model", "BT rank", "BT rating", "Elo order", "Online Elo"), rows,
                                   numeric=(1, 2, 3, 4), intro=ELO_VS_BT)

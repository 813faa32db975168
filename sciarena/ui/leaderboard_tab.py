"""The Leaderboard tab: recomputed from every stored vote on each page load."""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import partial
from typing import Any

import gradio as gr
import pandas as pd

from sciarena.errors import LeaderboardInputError
from sciarena.leaderboard import PROVISIONAL_BATTLES, compute_leaderboard, load_votes
from sciarena.leaderboard.plots import ratings_figure, win_rate_figure
from sciarena.leaderboard.views import head_to_head, mean_tokens, table_rows
from sciarena.services import Services

EMPTY_COLUMNS = ["Rank", "Model", "Rating", "95% CI", "Battles", "Cost / 100 calls"]

METHOD = f"""
**How ratings are computed.** A Bradley–Terry model fitted to all votes, on the Elo scale (base 10, scale
400, average model = 1000). *Tie* and *Both are bad* count as half a win for each side. The 95% interval
comes from 100 seeded bootstrap resamples of the votes; **rank** is 1 + the number of models whose interval
lies entirely above this one. The paper lists a model from 100 battles on; here every model is shown, and
those with fewer than {PROVISIONAL_BATTLES} battles are marked *(provisional)*. Per-discipline columns use
only the votes of that discipline. Cost per 100 calls uses catalogue prices and the mean tokens recorded
in votes.
"""


@dataclass(frozen=True)
class LeaderboardView:
    """The tab's components that ``refresh`` fills."""

    summary: gr.Markdown
    table: gr.Dataframe
    ratings_plot: gr.Plot
    win_plot: gr.Plot

    @property
    def outputs(self) -> list[Any]:
        return [self.summary, self.table, self.ratings_plot, self.win_plot]


class LeaderboardTab:
    def __init__(self, services: Services) -> None:
        self.services = services

    def build(self) -> LeaderboardView:
        """Lay out the tab (inside a Blocks context); its Refresh button is wired here, page loads by app.py."""
        summary = gr.Markdown(elem_id="leaderboard-summary")
        table = gr.Dataframe(pd.DataFrame(columns=EMPTY_COLUMNS), elem_id="leaderboard-table",
                             interactive=False, wrap=True, label="Leaderboard")
        with gr.Row():
            with gr.Column(min_width=320):
                gr.Markdown("**Ratings with 95% intervals**")
                ratings_plot = gr.Plot(show_label=False, elem_id="ratings-plot")
            with gr.Column(min_width=320):
                gr.Markdown("**Head-to-head win rate** (row model beats column model; ties excluded)")
                win_plot = gr.Plot(show_label=False, elem_id="winrate-plot")
        gr.Markdown(METHOD)
        refresh = gr.Button("Refresh", size="sm")
        view = LeaderboardView(summary=summary, table=table, ratings_plot=ratings_plot, win_plot=win_plot)
        refresh.click(partial(self.refresh, view), None, view.outputs, api_visibility="private")
        return view

    def refresh(self, view: LeaderboardView) -> dict[Any, Any]:
        """Summary, table and plots from the votes on disk; a friendly empty state when there are none."""
        started = time.perf_counter()
        files = self.services.votes.files()
        if not files:
            return self._empty(view, "No votes yet. Votes appear here as soon as battles are voted on.")
        try:
            votes = load_votes(files, strict=False)
            board = compute_leaderboard(votes, bootstrap=100, seed=0, min_battles=0, by=("subject",))
        except LeaderboardInputError as err:
            return self._empty(view, f"The leaderboard cannot be computed yet: {err}")
        rows = table_rows(board, prices=self._prices(), tokens=mean_tokens(votes))
        seconds = time.perf_counter() - started
        summary = (f"**{board.total_votes:,} votes** over {len(board.rows)} models "
                   f"({', '.join(f'{k} {v:,}' for k, v in board.outcomes.items())}). "
                   f"Computed in {seconds * 1000:.0f} ms.")
        if board.skipped:
            summary += f" Skipped: {', '.join(f'{v} {k}' for k, v in board.skipped.items())}."
        return {view.summary: summary, view.table: pd.DataFrame(rows), view.ratings_plot: ratings_figure(board),
                view.win_plot: win_rate_figure(head_to_head(votes))}

    def _prices(self) -> dict[str, tuple[float, float]]:
        specs = list(self.services.pool.active) + [spec for spec, _ in self.services.pool.inactive]
        return {s.name: (s.price_input_per_m, s.price_output_per_m) for s in specs
                if s.price_input_per_m is not None and s.price_output_per_m is not None}

    @staticmethod
    def _empty(view: LeaderboardView, message: str) -> dict[Any, Any]:
        return {view.summary: f"*{message}*", view.table: pd.DataFrame(columns=EMPTY_COLUMNS),
                view.ratings_plot: None, view.win_plot: None}

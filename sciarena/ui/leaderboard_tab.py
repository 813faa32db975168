"""The Leaderboard tab: recomputed from every stored vote on each page load."""

from __future__ import annotations

import logging
import time
from typing import Any

import gradio as gr
import pandas as pd

from sciarena.errors import LeaderboardInputError
from sciarena.leaderboard import PROVISIONAL_BATTLES, compute_leaderboard, load_votes
from sciarena.leaderboard.plots import ratings_figure, win_rate_figure
from sciarena.leaderboard.views import head_to_head, mean_tokens, table_rows
from sciarena.services import Services

log = logging.getLogger(__name__)

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


class LeaderboardTab:
    def __init__(self, services: Services) -> None:
        self.services = services

    def build(self) -> list[Any]:
        """Lay out the tab; returns the components ``refresh`` fills, in order."""
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
        outputs = [summary, table, ratings_plot, win_plot]
        refresh.click(self.refresh, None, outputs, api_visibility="private")
        return outputs

    def refresh(self) -> list[Any]:
        """Summary, table and plots from the votes on disk; a friendly empty state when there are none."""
        started = time.perf_counter()
        files = self.services.votes.files()
        if not files:
            return [self._empty("No votes yet. Votes appear here as soon as battles are voted on."), *self._blank()]
        try:
            votes = load_votes(files, strict=False)
            board = compute_leaderboard(votes, bootstrap=100, seed=0, min_battles=0, by=("subject",))
        except LeaderboardInputError as err:
            return [self._empty(f"The leaderboard cannot be computed yet: {err}"), *self._blank()]
        rows = table_rows(board, prices=self._prices(), tokens=mean_tokens(votes))
        frame = pd.DataFrame(rows)
        seconds = time.perf_counter() - started
        summary = (f"**{board.total_votes:,} votes** over {len(board.rows)} models "
                   f"({', '.join(f'{k} {v:,}' for k, v in board.outcomes.items())}). "
                   f"Computed in {seconds * 1000:.0f} ms.")
        if board.skipped:
            summary += f" Skipped: {', '.join(f'{v} {k}' for k, v in board.skipped.items())}."
        return [summary, frame, ratings_figure(board), win_rate_figure(head_to_head(votes))]

    def _prices(self) -> dict[str, tuple[float, float]]:
        specs = list(self.services.pool.active) + [spec for spec, _ in self.services.pool.inactive]
        return {s.name: (s.price_input_per_m, s.price_output_per_m) for s in specs
                if s.price_input_per_m is not None and s.price_output_per_m is not None}

    @staticmethod
    def _empty(message: str) -> str:
        return f"*{message}*"

    @staticmethod
    def _blank() -> list[Any]:
        return [pd.DataFrame(columns=EMPTY_COLUMNS), None, None]

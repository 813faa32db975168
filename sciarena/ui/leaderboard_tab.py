"""The Leaderboard tab: widgets over the board service (``sciarena.board.service``).

Page load, opening the tab and Refresh all call :meth:`LeaderboardTab.refresh`; the service looks the
board up for the current vote files (computed once per change of the votes) and this module renders
it. The public ``/leaderboard`` endpoint is the service's ``api``, its refusals shown as sentences.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import partial
from html import escape
from typing import Any, Callable, Sequence

import gradio as gr

from sciarena.board.board import OVERALL, Board, few_votes_note, outcome_words
from sciarena.board.fields import fields_line
from sciarena.board.service import PROVISIONAL_BATTLES, BoardService, ShownBoard, Snapshot
from sciarena.core.errors import LeaderboardInputError, StatsInputError
from sciarena.core.text import counted
from sciarena.ui import board_data, board_html
from sciarena.ui.board_parts import (
    RATING_CHOICES,
    BoardView,
    build_layout,
    charts,
    elo_html,
    pipelines_html,
    style_html,
)

METHOD = f"""
**How ratings are computed.** A Bradley–Terry model fitted to the votes of the selected view, on the Elo
scale (base 10, scale 400, average model = 1000). *Tie* and *Both are bad* count as half a win for each
side. The 95% interval is the 2.5–97.5 percentiles of 100 seeded bootstrap resamples of the votes; **rank**
is 1 + the number of models whose interval lies entirely above this one. **Rating** is either the
bootstrap mean (what the SciArena authors' released code shows; the default) or the fitted coefficient
itself (how the paper's text defines it); the interval is the same either way, and the CLI's
`--rating point|bootstrap-mean` gives the same numbers. The paper lists a model from 100 battles on; here
every model is shown, and those with fewer than {PROVISIONAL_BATTLES} battles carry a *provisional* badge.
**Style control** adds the answers' style features (length, citation count, and supporting / irrelevant
citation counts when recorded) to the fit, so a model is not ranked up for writing longer or citing more;
γ is the fitted effect of each feature. Cost per 100 calls uses catalogue prices and the mean tokens
recorded in votes. `python -m sciarena leaderboard --as-of DATE` prints the board as it stood on a day.
"""


class LeaderboardTab:
    def __init__(self, board: BoardService, pipeline_pairs: Sequence[tuple[str, str]] = (), *,
                 deprecated: frozenset[str] = frozenset(),
                 sampling: Callable[[float], dict[str, Any]] | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.board = board
        self._pipeline_pairs = list(pipeline_pairs)  # (pipeline, base) display names
        self._deprecated = deprecated  # catalogue models retired from battles (kept in the fit)
        self._sampling = sampling  # how battles are shared out (Services.sampling_report), for the JSON
        self._clock = clock  # the sampling shares' 30-day window ends now

    # ---- layout and wiring -------------------------------------------------------------------
    def build(self, tab: gr.Tab | None = None) -> BoardView:
        """Lay out the tab inside a Blocks context and wire its controls, its Refresh, opening the
        tab (``tab``, or the gr.Tab this is built in) and the public /leaderboard endpoint."""
        from gradio.context import Context

        tab = tab or (Context.block if isinstance(Context.block, gr.Tab) else None)
        view = build_layout(METHOD, pipelines=bool(self._pipeline_pairs), deprecated=bool(self._deprecated))
        controls = [view.view_select, view.style, view.rating, view.all_columns, view.show_deprecated]
        show = partial(self.refresh, view)
        for control in (view.view_select, view.style, view.rating):
            control.change(show, controls, view.outputs, api_visibility="private", show_progress="minimal")
        for control in (view.all_columns, view.show_deprecated):
            control.change(partial(self.table_only, view), controls, [view.table], api_visibility="private",
                           show_progress="hidden")
        # The Data section is computed when opened (never on the board's first load); once open,
        # Refresh and reopening the tab bring it up to date too (a memo lookup when no vote came).
        data_open = gr.State(False)
        view.data_section.expand(self.data, None, [view.data_plot], api_visibility="private") \
            .then(lambda: True, None, [data_open], api_visibility="private", show_progress="hidden")
        view.data_section.collapse(lambda: False, None, [data_open], api_visibility="private",
                                   show_progress="hidden")
        view.refresh.click(show, controls, view.outputs, api_visibility="private") \
            .then(self.data_if_open, [data_open], [view.data_plot], api_visibility="private")
        if tab is not None:
            tab.select(show, controls, view.outputs, api_visibility="private", show_progress="minimal") \
                .then(self.data_if_open, [data_open], [view.data_plot], api_visibility="private")
        gr.api(self.api, api_name="leaderboard")
        return view

    # ---- what the page shows -----------------------------------------------------------------
    def refresh(self, view: BoardView, view_key: str = OVERALL, style: bool = False,
                rating: str = "bootstrap-mean", all_columns: bool = False,
                show_deprecated: bool = False) -> dict[Any, Any]:
        """Every output of the tab for the current votes and the chosen view (dict keyed by component)."""
        snap = self.board.snapshot()
        if snap is None:
            return view.empty("No votes yet. Votes appear here as soon as battles are voted on.")
        try:
            choices = self.board.views(snap)
            shown = self.board.shown(snap, view_key, style=bool(style), rating=rating)
            parts = self.board.cached(snap, ("rendered", shown.board.view, bool(style), rating),
                                      lambda: self._render(shown, bool(style), rating))
        except LeaderboardInputError as err:
            return view.empty(f"The leaderboard cannot be computed yet: {err}")
        return {
            view.summary: parts.summary, view.view_select: gr.update(choices=choices, value=shown.board.view),
            view.table: board_html.render_table(self._listed(shown.rows, bool(show_deprecated)),
                                                all_columns=bool(all_columns), unplayed=shown.board.unplayed),
            view.style_info: parts.style_info, view.ratings_plot: parts.charts["ratings"],
            view.win_plot: parts.charts["win"], view.battles_plot: parts.charts["battles"],
            view.elo_info: parts.elo_info, view.history_plot: parts.charts["history"],
            view.csv: shown.csv_path, view.json: shown.json_path, view.pipelines_info: parts.pipelines_info,
        }

    def _listed(self, rows: list[dict[str, Any]], show_deprecated: bool) -> list[dict[str, Any]]:
        """The board's rows without the deprecated models unless asked (they stay in the fit either way)."""
        deprecated = self._deprecated
        return rows if show_deprecated or not deprecated else [r for r in rows if r["model"] not in deprecated]

    def data(self) -> str:
        """The Data section's HTML for the current votes: computed once per change of the votes."""
        snap = self.board.snapshot()
        if snap is None:
            return "<p><em>No votes yet.</em></p>"
        try:
            return self.board.cached(snap, ("data-html",), lambda: self._data_html(snap))
        except (LeaderboardInputError, StatsInputError) as err:
            return f"<p><em>The data statistics cannot be computed yet: {escape(str(err))}</em></p>"

    def data_if_open(self, is_open: bool) -> Any:
        return self.data() if is_open else gr.update()

    def table_only(self, view: BoardView, view_key: str, style: bool, rating: str,
                   all_columns: bool, show_deprecated: bool = False) -> dict[Any, Any]:
        updates = self.refresh(view, view_key, style, rating, all_columns, show_deprecated)
        return {view.table: updates[view.table]}

    def api(self, min_battles: int = 0, method: str = "bt", style: str = "", rating: str = "bootstrap-mean",
            as_of: str = "", by: str = "subject", bootstrap: int = 100, seed: int = 0,
            show_deprecated: bool = False) -> dict[str, Any]:
        """The leaderboard as the CLI's ``--format json`` prints it for the same options, plus how
        battles are shared out (``"sampling"``: ``Services.sampling_report``).

        ``style``: comma-separated features; ``by``: comma-separated breakdowns or "none";
        ``bootstrap`` at most 1,000 rounds. Deprecated catalogue models stay in the fit; their rows are
        left out unless ``show_deprecated``."""
        try:
            board = self.board.api(min_battles=min_battles, method=method, style=style, rating=rating,
                                   as_of=as_of, by=by, bootstrap=bootstrap, seed=seed)
        except LeaderboardInputError as err:
            raise gr.Error(str(err)) from None
        out = dict(board)
        if not show_deprecated:
            out["models"] = [m for m in board["models"] if m["model"] not in self._deprecated]
        out["deprecated_models"] = sorted(self._deprecated)
        if self._sampling is not None:
            out["sampling"] = self._sampling(self._clock())
        return out

    # ---- rendered once per (votes, view) -----------------------------------------------------
    def _render(self, shown: ShownBoard, style: bool, rating: str) -> "_Rendered":
        board = shown.board
        return _Rendered(summary=self._summary(shown, rating), style_info=style_html(board, style),
                         elo_info=elo_html(board), charts=charts(board),
                         pipelines_info=pipelines_html(board, self._pipeline_pairs))

    def _data_html(self, snap: Snapshot) -> str:
        return board_data.data_html(self.board.data(snap))

    def _summary(self, shown: ShownBoard, rating: str) -> str:
        board: Board = shown.board
        table = shown.table
        lb = board.plain
        up_to = "" if board.last_vote is None else (
            " up to " + datetime.fromtimestamp(board.last_vote, timezone.utc).strftime("%Y-%m-%d %H:%M UTC"))
        now = datetime.fromtimestamp(shown.computed_at, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
        kind = "bootstrap mean of 100 rounds" if rating == "bootstrap-mean" else "point estimate (fitted coefficient)"
        text = (f"Computed from **{counted(lb.total_votes, 'vote')}** ({outcome_words(lb)}) "
                f"on {counted(len(lb.rows), 'model')}{up_to}, at {now}. "
                f"Rating shown: **{kind}**; 95% CI: 2.5–97.5 bootstrap percentiles.")
        if board.view != OVERALL:
            text += f" View: votes of {board.view.split(':', 1)[1]} only ({counted(table.n_votes, 'vote')} in all)."
        if note := few_votes_note(lb.total_votes):
            text += f" **{note}**"
        if board.unplayed:
            text += f" {board_html.unplayed_note(board.unplayed)}"
        if lb.skipped:
            text += f" Skipped: {', '.join(f'{v:,} {k}' for k, v in lb.skipped.items())}."
        excluded = getattr(table, "excluded", None)
        if excluded and (note := excluded.describe()):
            text += f" {note}"
        if board.view.startswith("subject:"):  # a discipline's board stands on its votes' fields: say how decided
            text += f"\n\n{fields_line(board.table)}"
        return text


@dataclass(frozen=True)
class _Rendered:
    summary: str
    style_info: str
    elo_info: str
    charts: dict[str, str]
    pipelines_info: str


__all__ = ["LeaderboardTab", "BoardView", "RATING_CHOICES"]

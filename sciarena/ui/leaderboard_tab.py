"""The Leaderboard tab: one board per (votes on disk, view), computed once and served from a memo.

Page load, opening the tab and Refresh all call :meth:`LeaderboardTab.refresh`; it lists the
vote files, fingerprints them (path, size, mtime) and looks the board up, so a new vote is
on the board the next time anyone opens the tab and nothing is recomputed until then. The
public ``/leaderboard`` endpoint answers with the CLI's JSON for the same votes.
"""

from __future__ import annotations

import itertools
import json
import tempfile
import threading
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import partial
from html import escape
from pathlib import Path
from typing import Any, Callable

import gradio as gr

from sciarena.science.stats.stats import DEFAULT_MIN_BATTLES, StatsInputError, stats_from_columns
from sciarena.core.errors import LeaderboardInputError
from sciarena.board import (
    PROVISIONAL_BATTLES,
    compute_leaderboard,
    history,
    load_votes,
    to_json,
)
from sciarena.board.board import (
    OVERALL,
    Board,
    ModelFacts,
    board_rows,
    build_board,
    rows_csv,
    view_choices,
)
from sciarena.wiring import Services
from sciarena.votes.read.columns import read_columns
from sciarena.ui import board_data, board_html
from sciarena.ui.board_memo import BoardMemo, fingerprint
from sciarena.ui.sampling_info import sampling_report
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
    def __init__(self, services: Services, *, clock: Callable[[], float] | None = None,
                 warm_style: bool = True) -> None:
        self.services = services
        # The style-controlled fit takes seconds on 100k votes (the plain board tens of ms): after a
        # plain board is computed, one background thread fits the style view of it, so the toggle
        # finds it ready; a toggle before it ends waits for that same computation (the memo's lock).
        self._warm_style = warm_style
        self._warming: threading.Thread | None = None
        self.memo = BoardMemo()
        self._clock = clock or (lambda: datetime.now(timezone.utc).timestamp())
        self._files_dir: Path | None = None
        self._lock = threading.Lock()
        self._stems = itertools.count()

    # ---- layout and wiring -------------------------------------------------------------------
    def build(self, tab: gr.Tab | None = None) -> BoardView:
        """Lay out the tab inside a Blocks context and wire its controls, its Refresh, opening the
        tab (``tab``, or the gr.Tab this is built in) and the public /leaderboard endpoint."""
        from gradio.context import Context

        tab = tab or (Context.block if isinstance(Context.block, gr.Tab) else None)
        view = build_layout(METHOD, pipelines=bool(self._pipeline_pairs()),
                            deprecated=bool(self.services.pool.deprecated))
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
        files = self.services.votes.files()
        if not files:
            return view.empty("No votes yet. Votes appear here as soon as battles are voted on.")
        fp = fingerprint(files)
        try:
            table = self.memo.get(fp, ("table", False), lambda: load_votes(files, strict=False))
            choices = view_choices(table)
            if view_key not in {key for _, key in choices}:
                view_key = OVERALL
            shown = self.memo.get(fp, ("shown", view_key, bool(style), rating),
                                  lambda: self._shown(table, view_key, bool(style), rating))
        except LeaderboardInputError as err:
            return view.empty(f"The leaderboard cannot be computed yet: {err}")
        if not style and self._warm_style:
            self._warm(fp, table, view_key, rating)
        return {
            view.summary: shown.summary, view.view_select: gr.update(choices=choices, value=view_key),
            view.table: board_html.render_table(self._listed(shown.rows, bool(show_deprecated)),
                                                all_columns=bool(all_columns)),
            view.style_info: shown.style_info, view.ratings_plot: shown.charts["ratings"],
            view.win_plot: shown.charts["win"], view.battles_plot: shown.charts["battles"],
            view.elo_info: shown.elo_info, view.history_plot: shown.charts["history"],
            view.csv: shown.csv_path, view.json: shown.json_path, view.pipelines_info: shown.pipelines_info,
        }

    def _listed(self, rows: list[dict[str, Any]], show_deprecated: bool) -> list[dict[str, Any]]:
        """The board's rows without the deprecated models unless asked (they stay in the fit either way)."""
        deprecated = self.services.pool.deprecated
        return rows if show_deprecated or not deprecated else [r for r in rows if r["model"] not in deprecated]

    def data(self) -> str:
        """The Data section's HTML for the current votes: computed once per change of the votes."""
        files = self.services.votes.files()
        if not files:
            return "<p><em>No votes yet.</em></p>"
        fp = fingerprint(files)

        def compute() -> str:
            # the columnar copy with texts: the same numbers as the `stats` CLI from its records,
            # 0.03 s warm on 100,000 votes instead of 7.5 s for the records
            raw = read_columns(files, copy=True, strict=False, texts=True).columns
            return board_data.data_html(stats_from_columns(raw, ranked=self._ranked(fp, files)))

        try:
            return self.memo.get(fp, ("data",), compute)
        except (LeaderboardInputError, StatsInputError) as err:
            return f"<p><em>The data statistics cannot be computed yet: {escape(str(err))}</em></p>"

    def data_if_open(self, is_open: bool) -> Any:
        return self.data() if is_open else gr.update()

    def _ranked(self, fp: Any, files: Any) -> list[str]:
        """The overall board's models with at least DEFAULT_MIN_BATTLES battles, best rating first
        (what the stats CLI ranks by), from the memo: the top models the failure cases name."""
        table = self.memo.get(fp, ("table", False), lambda: load_votes(files, strict=False))
        shown = self.memo.get(fp, ("shown", OVERALL, False, "bootstrap-mean"),
                              lambda: self._shown(table, OVERALL, False, "bootstrap-mean"))
        rows = [r for r in shown.rows if r["battles"] >= DEFAULT_MIN_BATTLES]
        return [r["model"] for r in sorted(rows, key=lambda r: -r["rating"])]

    def table_only(self, view: BoardView, view_key: str, style: bool, rating: str,
                   all_columns: bool, show_deprecated: bool = False) -> dict[Any, Any]:
        updates = self.refresh(view, view_key, style, rating, all_columns, show_deprecated)
        return {view.table: updates[view.table]}

    def api(self, min_battles: int = 100, method: str = "bt", style: str = "", rating: str = "bootstrap-mean",
            as_of: str = "", by: str = "subject", bootstrap: int = 100, seed: int = 0,
            show_deprecated: bool = False) -> dict[str, Any]:
        """The leaderboard as the CLI's ``--format json`` prints it for the same options, plus how
        battles are shared out (``"sampling"``, ui/sampling_info.py).

        ``style``: comma-separated features; ``by``: comma-separated breakdowns or "none". Deprecated
        catalogue models stay in the fit; their rows are left out unless ``show_deprecated``."""
        board = self._api_board(min_battles, method, style, rating, as_of, by, bootstrap, seed)
        deprecated = self.services.pool.deprecated
        out = dict(board)
        if not show_deprecated:
            out["models"] = [m for m in board["models"] if m["model"] not in deprecated]
        out["deprecated_models"] = sorted(deprecated)
        out["sampling"] = sampling_report(self.services, self._clock())
        return out

    def _api_board(self, min_battles: int, method: str, style: str, rating: str, as_of: str, by: str,
                   bootstrap: int, seed: int) -> dict[str, Any]:
        files = self.services.votes.files()
        if not files:
            raise gr.Error("No votes yet.")
        features = tuple(f.strip() for f in style.split(",") if f.strip())
        groups = tuple(b.strip() for b in by.split(",") if b.strip() and b.strip() != "none")
        fp = fingerprint(files)
        key = ("api", int(min_battles), method, features, rating, as_of.strip(), groups, int(bootstrap), int(seed))
        try:
            def compute() -> dict[str, Any]:
                table = self.memo.get(fp, ("table", bool(features)),
                                      lambda: load_votes(files, strict=False, texts=bool(features)))
                if as_of.strip():
                    table = history.as_of(table, history.parse_cutoff(as_of)).table
                board = compute_leaderboard(table, bootstrap=int(bootstrap), seed=int(seed),
                                            min_battles=int(min_battles), by=groups, method=method,
                                            style=features, rating=rating)
                return json.loads(to_json(board, getattr(table, "excluded", None)))

            return self.memo.get(fp, key, compute)
        except LeaderboardInputError as err:
            raise gr.Error(str(err)) from None

    def _warm(self, fp: Any, table: Any, view_key: str, rating: str) -> None:
        key = ("shown", view_key, True, rating)
        with self._lock:
            if self._warming is not None and self._warming.is_alive():
                return  # one at a time: a busy arena must not start a fit per vote

            def run() -> None:
                try:
                    self.memo.get(fp, key, lambda: self._shown(table, view_key, True, rating))
                except LeaderboardInputError:
                    pass  # the toggle will show the reason

            self._warming = threading.Thread(target=run, name="board-style-warmup", daemon=True)
            self._warming.start()

    def wait_warm(self, timeout: float | None = None) -> None:
        """Wait for the background style fit (tests, benchmarks)."""
        thread = self._warming
        if thread is not None:
            thread.join(timeout)

    # ---- computed once per (votes, view) -----------------------------------------------------
    def _shown(self, table: Any, view_key: str, style: bool, rating: str) -> "_Shown":
        board = build_board(table, view_key, style=style, rating=rating)
        rows = board_rows(board, self._facts())
        stem = self._dir() / f"board-{next(self._stems)}"
        csv_path, json_path = stem.with_suffix(".csv"), stem.with_suffix(".json")
        csv_path.write_text(rows_csv(rows), encoding="utf-8")
        json_path.write_text(to_json(board.styled or board.plain, getattr(table, "excluded", None)), encoding="utf-8")
        return _Shown(summary=self._summary(board, table, rating), rows=rows,
                      style_info=style_html(board, style), elo_info=elo_html(board),
                      charts=charts(board), csv_path=str(csv_path), json_path=str(json_path),
                      pipelines_info=pipelines_html(board, self._pipeline_pairs()))

    def _summary(self, board: Board, table: Any, rating: str) -> str:
        lb = board.plain
        up_to = "" if board.last_vote is None else (
            " up to " + datetime.fromtimestamp(board.last_vote, timezone.utc).strftime("%Y-%m-%d %H:%M UTC"))
        now = datetime.fromtimestamp(self._clock(), timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
        shown = "bootstrap mean of 100 rounds" if rating == "bootstrap-mean" else "point estimate (fitted coefficient)"
        votes = f"{lb.total_votes:,} vote" + ("" if lb.total_votes == 1 else "s")
        text = (f"Computed from **{votes}**{up_to}, at {now}. {len(lb.rows)} models "
                f"({', '.join(f'{k} {v:,}' for k, v in lb.outcomes.items())}). "
                f"Rating shown: **{shown}**; 95% CI: 2.5–97.5 bootstrap percentiles.")
        if board.view != OVERALL:
            text += f" View: votes of {board.view.split(':', 1)[1]} only ({table.n_votes:,} votes in all)."
        if lb.skipped:
            text += f" Skipped: {', '.join(f'{v:,} {k}' for k, v in lb.skipped.items())}."
        excluded = getattr(table, "excluded", None)
        if excluded and (note := excluded.describe()):
            text += f" {note}"
        return text

    def _pipeline_pairs(self) -> list[tuple[str, str]]:
        """(pipeline, base) display names of the catalogue's pipeline contestants, active or not."""
        specs = list(self.services.pool.active) + [spec for spec, _ in self.services.pool.inactive]
        return [(s.name, s.base.name) for s in specs if s.base is not None]

    def _facts(self) -> dict[str, ModelFacts]:
        specs = list(self.services.pool.active) + [spec for spec, _ in self.services.pool.inactive]
        return {s.name: ModelFacts(organisation=s.organisation, open_weights=None if s.offline else s.open_weights,
                                   release=getattr(s, "release", None), licence=getattr(s, "licence", None),
                                   price_input_per_m=s.price_input_per_m, price_output_per_m=s.price_output_per_m)
                for s in specs}

    def _dir(self) -> Path:
        with self._lock:
            if self._files_dir is None:
                self._files_dir = Path(tempfile.mkdtemp(prefix="sciarena-board-"))
            return self._files_dir


@dataclass(frozen=True)
class _Shown:
    summary: str
    rows: list[dict[str, Any]]
    style_info: str
    elo_info: str
    charts: dict[str, str]
    csv_path: str
    json_path: str
    pipelines_info: str


__all__ = ["LeaderboardTab", "BoardView", "RATING_CHOICES"]

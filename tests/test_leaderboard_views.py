"""Head-to-head matrices, board rows with catalogue facts and cost, the HTML table, views and charts."""

from __future__ import annotations

import csv
import dataclasses
import io
import math
import re

import numpy as np
import pytest

from sciarena.board import compute_leaderboard, table_from_arrays
from sciarena.board.board import ModelFacts, board_rows, build_board, rows_csv, select_view, view_choices
from sciarena.board.bradley_terry import needs_ridge
from sciarena.board.synthetic import simulate
from sciarena.board.views import cost_per_100_calls, head_to_head, mean_tokens
from sciarena.core.errors import LeaderboardInputError
from sciarena.ui.board_html import render_table


def small_table():
    # x beat y once, y beat x twice (as A, then as B), one tie x–y, both bad y–z, z beat x
    return table_from_arrays(
        ["x", "y", "z"], a=[0, 1, 0, 0, 1, 2], b=[1, 0, 1, 1, 2, 0], outcome=[0, 0, 1, 2, 3, 0],
        features={"input_tokens": [[1000, 2000]] * 6, "output_tokens": [[300, 500]] * 6},
    )


def test_head_to_head_by_hand():
    h2h = head_to_head(small_table())
    assert h2h.wins.tolist() == [[0, 1, 0], [2, 0, 0], [1, 0, 0]]
    assert h2h.battles.tolist() == [[0, 4, 1], [4, 0, 1], [1, 1, 0]]
    assert h2h.win_rate[0, 1] == pytest.approx(1 / 3) and h2h.win_rate[1, 0] == pytest.approx(2 / 3)
    assert h2h.win_rate[2, 0] == 1.0 and math.isnan(h2h.win_rate[1, 2])  # only a both-bad vote
    assert math.isnan(h2h.win_rate[0, 0])
    ordered = head_to_head(small_table(), models=["z", "x"])
    assert ordered.models == ("z", "x") and ordered.wins.tolist() == [[0, 1], [0, 0]]


def test_cost_and_mean_tokens():
    assert cost_per_100_calls(2.0, 8.0, 1000, 300) == pytest.approx(100 * (0.002 + 0.0024))
    tokens = mean_tokens(small_table())
    # x is side a three times (1000 in, 300 out) and side b twice (2000 in, 500 out)
    assert tokens["x"] == pytest.approx((1400.0, 380.0))
    table = simulate([100, 0, -100], 600)
    n = table.n_votes
    table = dataclasses.replace(table, features={
        **table.features, "input_tokens": np.full((n, 2), 1000.0), "output_tokens": np.full((n, 2), 300.0)})
    facts = {"model-00": ModelFacts("Org", True, "2025-04", "MIT", 2.0, 8.0), "model-01": ModelFacts("Other", False)}
    rows = board_rows(build_board(table, bootstrap=10), facts)
    first = rows[0]
    assert first["model"] == "model-00" and first["cost_per_100_calls"] == pytest.approx(0.44)
    assert (first["organisation"], first["open_weights"], first["release"], first["licence"]) == \
        ("Org", True, "2025-04", "MIT")
    assert rows[1]["cost_per_100_calls"] is None and rows[1]["licence"] is None  # no price, no licence
    assert rows[2]["open_weights"] is None  # not in the catalogue
    html = render_table(rows)
    assert html.count('class="open"') == 1 and html.count('class="prop"') == 1
    assert "$0.440" in html and "—" in html
    back = list(csv.DictReader(io.StringIO(rows_csv(rows))))
    assert back[0]["Model"] == "model-00" and back[0]["Cost / 100 calls (USD)"] == "0.4400"
    assert back[1]["Licence"] == "" and float(back[0]["Rating"]) == round(first["rating"], 1)


def test_provisional_marked_in_rows():
    table = simulate([100, 0, -100, 50], 400, seed=1)
    rare = (table.a == 3) | (table.b == 3)
    table = table.subset(~rare | (np.cumsum(rare) <= 60))  # model-03: 60 battles
    lb = compute_leaderboard(table, bootstrap=0, by=())
    flags = {r.model: r.provisional for r in lb.rows}
    assert flags == {"model-00": False, "model-01": False, "model-02": False, "model-03": True}
    html = render_table(board_rows(build_board(table, bootstrap=0), {}))
    assert "(provisional)" not in html and html.count('class="badge"') == 1
    assert re.search(r"model-03 <span class=\"badge\"", html)


def test_views_fit_only_their_votes():
    table = simulate([100, 0, -100], 900, seed=2)
    choices = dict((key, label) for label, key in view_choices(table))
    assert next(iter(choices)) == "overall"
    key = next(k for k in choices if k.startswith("subject:"))
    sub = select_view(table, key)
    name = key.split(":", 1)[1]
    assert sub.n_votes == int((table.subject == table.subjects.index(name)).sum()) < table.n_votes
    assert f"({sub.n_votes:,} votes)" in choices[key]
    assert build_board(table, key, bootstrap=0).plain.total_votes == sub.n_votes
    assert any(k.startswith("question_type:") for k in choices)
    with pytest.raises(LeaderboardInputError):
        select_view(table, "subject:Astrology")


def test_charts_are_svg_and_html_best_first_with_counts_in_cells():
    from sciarena.board.plots import MIN_DECISIVE, battle_count_html, ratings_svg, win_rate_html

    table = simulate(np.linspace(-100, 100, 6), 1500)
    lb = compute_leaderboard(table, bootstrap=20)
    svg = ratings_svg(lb)
    assert svg.startswith("<svg") and svg.endswith("</svg>")
    positions = [svg.index(f">{r.model}</tspan></text>") for r in lb.rows]
    assert positions == sorted(positions)  # drawn best first, top to bottom
    h2h = head_to_head(table, [r.model for r in lb.rows])
    heat = win_rate_html(h2h)
    won, lost = int(h2h.wins[0, 1]), int(h2h.wins[1, 0])
    assert f"{won / (won + lost):.2f}<small>{won + lost}</small>" in heat
    assert f"{int(h2h.battles[0, 1]):,}</td>" in battle_count_html(h2h)
    few = head_to_head(table.subset(np.arange(table.n_votes) < 12))  # a handful of battles per pair
    cell = win_rate_html(few)
    assert 'class="few"' in cell
    assert not [n for n in re.findall(r"<small>(\d+)</small>", cell) if int(n) < MIN_DECISIVE]


def test_needs_ridge_detects_groups_that_never_met():
    i, j = np.array([0, 2]), np.array([1, 3])
    wins, battles = np.array([[3.0, 2.0]]), np.array([[5.0, 5.0]])
    assert needs_ridge(i, j, wins, battles, 4).tolist() == [True]
    i, j = np.array([0, 1, 0]), np.array([1, 2, 2])  # pairs 0–1, 1–2, 0–2
    wins = np.array([[3.0, 2.0, 1.0],  # everyone scored both ways
                     [5.0, 5.0, 5.0],  # 0 beat everyone and never lost: no MLE
                     [5.0, 5.0, 0.0]])  # 0 > 1 > 2 > 0: a cycle, the MLE exists
    battles = np.full((3, 3), 5.0)
    assert needs_ridge(i, j, wins, battles, 3).tolist() == [False, True, False]


def test_catalogue_release_and_licence_reach_the_board(tmp_path):
    import json as _json

    from sciarena.core.errors import CatalogueError
    from sciarena.core.settings import DEFAULT_CATALOGUE
    from sciarena.providers.catalogue import load_catalogue_files

    shipped = {m.name: m for m in load_catalogue_files([DEFAULT_CATALOGUE]).models}
    assert (shipped["o3"].release, shipped["o3"].licence) == ("2025-04", "Proprietary")
    assert shipped["Qwen3-32B"].licence == "Apache-2.0" and shipped["Qwen3-32B"].open_weights
    assert shipped["DeepSeek-V3"].licence is None  # not known for certain: unknown, not guessed
    bad = tmp_path / "models.json"
    bad.write_text(_json.dumps({"version": 1, "models": [
        {"name": "x", "provider": "offline", "model_id": "x", "offline": True, "licence": 3}]}))
    with pytest.raises(CatalogueError, match="'licence' must be a non-empty string or null"):
        load_catalogue_files([bad])


def _view_with_a_bystander():
    """Three models in "Engineering" (one vote each way), a fourth that only ever played in "Physics"."""
    return table_from_arrays(
        ["w", "x", "y", "z"], a=[0, 1, 0, 3, 3, 3], b=[1, 2, 2, 0, 1, 2], outcome=[0, 0, 1, 0, 1, 0],
        subjects=["Engineering", "Physics"], subject=[0, 0, 0, 1, 1, 1])


def test_a_view_does_not_rank_models_that_never_played_in_it():
    table = _view_with_a_bystander()
    board = build_board(table, "subject:Engineering", bootstrap=20)
    ranked = [r.model for r in board.plain.rows]
    assert sorted(ranked) == ["w", "x", "y"] and board.unplayed == ("z",)
    rows = board_rows(board, {})
    assert all(r["ci_lower"] < r["ci_upper"] for r in rows)  # no zero-width "certainty" interval
    assert "z" not in {r["model"] for r in rows} and "z" not in rows_csv(rows)
    html = render_table(rows, unplayed=board.unplayed)
    assert "Not ranked in this view (no battles in it): z." in html
    assert [r.model for r in build_board(table, bootstrap=0).plain.rows].count("z") == 1  # overall keeps it


def test_view_labels_say_vote_or_votes():
    table = table_from_arrays(["x", "y"], a=[0, 0, 1], b=[1, 1, 0], outcome=[0, 1, 0],
                              subjects=["Engineering", "Physics"], subject=[0, 1, 1])
    labels = [label for label, _ in view_choices(table)]
    assert "Discipline: Engineering (1 vote)" in labels and "Discipline: Physics (2 votes)" in labels


def test_legend_names_only_the_kinds_the_table_has():
    table = simulate([100, 0, -100], 300, seed=3)
    board = build_board(table, bootstrap=0)
    unknown = render_table(board_rows(board, {}))
    assert "swatch" not in unknown and "board-legend" not in unknown
    only_open = render_table(board_rows(board, {"model-00": ModelFacts("Org", True)}))
    assert "open weights" in only_open and "proprietary" not in only_open
    both = render_table(board_rows(board, {"model-00": ModelFacts("Org", True), "model-01": ModelFacts("O", False)}))
    assert "open weights" in both and "proprietary" in both

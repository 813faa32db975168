"""Head-to-head matrices, display rows with cost, and figures."""

from __future__ import annotations

import io
import math

import numpy as np
import pytest

from sciarena.leaderboard import compute_leaderboard, table_from_arrays
from sciarena.leaderboard.bradley_terry import needs_ridge
from sciarena.leaderboard.synthetic import simulate
from sciarena.leaderboard.views import cost_per_100_calls, head_to_head, mean_tokens, table_rows


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
    lb = compute_leaderboard(simulate([100, 0, -100], 600), bootstrap=10, by=("subject",))
    rows = table_rows(lb, prices={"model-00": (2.0, 8.0)},
                      tokens={"model-00": (1000.0, 300.0), "model-01": (10.0, 10.0)})
    first = rows[0]
    assert first["Model"] == "model-00" and first["Cost / 100 calls"] == pytest.approx(0.44)
    assert rows[1]["Cost / 100 calls"] is None  # no price
    assert set(lb.groups["subject"]) <= set(first)
    assert "Cost / 100 calls" not in table_rows(lb)[0]


def test_provisional_marked_in_rows():
    table = simulate([100, 0, -100, 50], 400, seed=1)
    rare = (table.a == 3) | (table.b == 3)
    table = table.subset(~rare | (np.cumsum(rare) <= 60))  # model-03: 60 battles
    lb = compute_leaderboard(table, bootstrap=0, by=())
    flags = {r.model: r.provisional for r in lb.rows}
    assert flags == {"model-00": False, "model-01": False, "model-02": False, "model-03": True}
    rows = table_rows(lb)
    assert [r["Model"].endswith("(provisional)") for r in rows] == [r.provisional for r in lb.rows]


def test_figures_render_without_pyplot():
    from matplotlib.figure import Figure

    from sciarena.leaderboard.plots import ratings_figure, win_rate_figure

    table = simulate(np.linspace(-100, 100, 6), 1500)
    lb = compute_leaderboard(table, bootstrap=20)
    fig = ratings_figure(lb)
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    by_height = sorted(zip(ax.get_yticks(), (t.get_text() for t in ax.get_yticklabels())),
                       reverse=True)
    assert [name for _, name in by_height] == [r.model for r in lb.rows]  # best on top
    heat = win_rate_figure(head_to_head(table, [r.model for r in lb.rows]))
    for figure in (fig, heat):
        buffer = io.BytesIO()
        figure.savefig(buffer, format="png")
        assert buffer.getvalue().startswith(b"\x89PNG")


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

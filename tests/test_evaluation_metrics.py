"""SciArena-Eval metrics on data small enough to check by hand."""

from __future__ import annotations

import math

import pytest

from sciarena.science.evaluation.metrics import (
    accuracy,
    accuracy_all,
    bootstrap_interval,
    per_discipline,
    position_stats,
    score,
    score_to_json,
    wilson_interval,
)
from sciarena.science.evaluation.runner import Prediction

FLIP = {"A": "B", "B": "A"}


def pred(human: str, verdict: str | None, subject: str = "Healthcare", *, status: str | None = None,
         positions: tuple | None = None) -> Prediction:
    status = status or ("ok" if verdict else "invalid")
    return Prediction(id=f"{len(human)}", judge="j", swap=False, subject=subject, human=human, verdict=verdict,
                      status=status, positions=positions if positions is not None else (verdict,))


def ten() -> list[Prediction]:
    """6 agreements, 2 disagreements, 1 unparseable reply, 1 failed call."""
    return ([pred("A", "A", "Healthcare")] * 4 + [pred("B", "B", "Engineering")] * 2
            + [pred("A", "B", "Engineering"), pred("B", "A", "Healthcare"), pred("A", None, "Healthcare"),
               pred("B", None, "Engineering", status="error", positions=())])


def test_accuracy_counts_valid_verdicts_and_accuracy_all_counts_every_item():
    items = ten()
    assert accuracy(items) == pytest.approx(6 / 8)
    assert accuracy_all(items) == pytest.approx(6 / 10)
    assert math.isnan(accuracy([pred("A", None)]))
    assert math.isnan(accuracy([]))


def test_per_discipline_keeps_the_paper_order_and_counts():
    groups = per_discipline(ten() + [pred("A", "A", "Zoology")])
    assert list(groups) == ["Healthcare", "Engineering", "Zoology"]
    health = groups["Healthcare"]
    assert (health.items, health.valid, health.agreements) == (6, 5, 4)
    assert health.accuracy == pytest.approx(0.8) and health.accuracy_all == pytest.approx(4 / 6)
    engineering = groups["Engineering"]
    assert (engineering.items, engineering.valid, engineering.agreements) == (4, 3, 2)


def test_score_counts_each_kind_of_missing_verdict():
    items = ten() + [pred("A", None, status="inconsistent", positions=("A", "A"))]
    result = score(items, rounds=200, seed=1)
    assert (result.items, result.valid, result.agreements) == (11, 8, 6)
    assert (result.invalid, result.inconsistent, result.failed) == (1, 1, 1)
    assert result.ci_low <= result.accuracy <= result.ci_high
    assert "bootstrap" in result.ci_method and "seed 1" in result.ci_method
    data = score_to_json(score([pred("A", None)], rounds=10))
    assert data["accuracy"] is None and data["ci_low"] is None  # nan → null in JSON


def test_wilson_interval_matches_the_textbook_value():
    low, high = wilson_interval(8, 10)
    assert (round(low, 4), round(high, 4)) == (0.4902, 0.9433)
    assert all(math.isnan(x) for x in wilson_interval(0, 0))
    assert score(ten(), ci="wilson").ci_method == "Wilson score interval"
    with pytest.raises(ValueError):
        score(ten(), ci="normal")


def test_bootstrap_interval_is_seeded_and_close_to_wilson_for_a_large_sample():
    agree = [k % 10 < 6 for k in range(1000)]  # 60% agreement, every verdict valid
    valid = [True] * 1000
    first = bootstrap_interval(agree, valid, rounds=2000, seed=0)
    assert first == bootstrap_interval(agree, valid, rounds=2000, seed=0)
    assert first != bootstrap_interval(agree, valid, rounds=2000, seed=1)
    low, high = wilson_interval(600, 1000)
    assert first[0] == pytest.approx(low, abs=0.01) and first[1] == pytest.approx(high, abs=0.01)
    assert bootstrap_interval([True] * 5, [True] * 5, rounds=50) == (1.0, 1.0)
    assert all(math.isnan(x) for x in bootstrap_interval([False], [False]))


def test_position_stats_expose_a_judge_that_always_says_a():
    items = [pred("A", "A")] * 5 + [pred("B", "A")] * 5
    stats = position_stats(items)
    assert (stats.letters, stats.said_a, stats.said_a_rate) == (10, 10, 1.0)
    assert (stats.accuracy_human_a, stats.accuracy_human_b) == (1.0, 0.0)
    assert stats.swap_pairs == 0 and math.isnan(stats.swap_consistency)


def test_position_stats_with_swap_count_pairs_naming_the_same_answer():
    consistent = pred("A", "A", positions=("A", "B"))  # answer A first, then answer A shown second
    biased = pred("B", None, status="inconsistent", positions=("A", "A"))
    half = pred("A", None, positions=("A", None))
    stats = position_stats([consistent, consistent, biased, half])
    assert (stats.swap_pairs, stats.swap_consistent) == (3, 2)
    assert stats.swap_consistency == pytest.approx(2 / 3)
    assert (stats.letters, stats.said_a) == (7, 5)

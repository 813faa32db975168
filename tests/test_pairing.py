"""Pair sampling and call cost (pairing.py)."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from sciarena.arena.pairing import cost_usd, sample_pair
from sciarena.core.errors import SciArenaError
from sciarena.core.settings import Settings
from sciarena.core.types import ModelSpec, Usage


def test_cost_of_offline_contestants_is_zero():
    assert cost_usd(ModelSpec("x", "offline", "x", offline=True), Usage()) == 0.0


def test_cost_from_catalogue_prices_and_unknown_without_usage():
    priced = ModelSpec("x", "p", "x", price_input_per_m=2.0, price_output_per_m=8.0)
    assert cost_usd(priced, Usage(1000, 500)) == pytest.approx(0.006)
    assert cost_usd(priced, Usage()) is None


def test_sample_pair_gives_distinct_models_in_both_orders(specs):
    pool = [specs(m) for m in "abcd"]
    rng = random.Random(0)
    pairs = [sample_pair(pool, rng) for _ in range(400)]
    assert all(a.name != b.name for a, b in pairs)
    firsts = Counter(a.name for a, _ in pairs)
    assert set(firsts) == {"A", "B", "C", "D"}


def test_sample_pair_favours_models_with_fewer_battles_and_skips_outages(specs):
    pool = [specs(m) for m in "abc"]
    rng = random.Random(1)
    counts = {"A": 10_000, "B": 0, "C": 0}
    seen: Counter[str] = Counter()
    for _ in range(600):
        a, b = sample_pair(pool, rng, counts)
        seen.update([a.name, b.name])
    assert seen["A"] < seen["B"] / 2
    for _ in range(50):
        pair = sample_pair(pool, rng, outage=frozenset({"B"}))
        assert {m.name for m in pair} == {"A", "C"}


def test_sample_pair_with_too_few_models_is_a_clear_error(specs):
    with pytest.raises(SciArenaError, match="Fewer than two models"):
        sample_pair([specs("a")], random.Random(0))
    with pytest.raises(SciArenaError):
        sample_pair([], random.Random(0))


@pytest.mark.parametrize("sampler", ["inverse_sqrt", "adaptive", "order", "uniform"])
def test_the_published_chances_are_what_the_arena_draws_with_the_offline_pipeline(tmp_path, sampler, wire):
    """The About table's "chance of being in the next battle" against 3,000 draws of the arena's own pair draw
    over the offline pool (three baselines and a pipeline around one of them). The sampler's weights alone
    said 50% for the base model, which meets its pipeline in half the pipeline's battles: it is drawn 67%."""
    services = wire(Settings(data_dir=tmp_path / "data", seed=3, sampler=sampler))
    arena = services.arena
    [pipeline] = [m for m in arena.pool.active if m.base is not None]
    draws = 3000
    seen: Counter[str] = Counter()
    pairs: Counter[frozenset[str]] = Counter()
    for _ in range(draws):
        a, b = arena._draw()  # what start_battle draws, without answering
        seen.update((a.name, b.name))
        pairs[frozenset((a.name, b.name))] += 1
    published = arena.sampling_weights()
    assert set(published) == set(seen) and sum(published.values()) == pytest.approx(2.0)
    for name, share in published.items():  # 4 standard errors at most: sqrt(0.25 / 3000) = 0.009
        assert seen[name] / draws == pytest.approx(share, abs=0.037), name
    chances = {frozenset((a, b)): p for a, b, p in arena.pair_weights().pairs()}
    meeting = frozenset((pipeline.name, pipeline.base.name))
    assert pairs[meeting] / draws == pytest.approx(chances[meeting], abs=0.035)
    report = services.sampling_report(0.0)["models"]
    assert {m["model"]: m["sampling_weight"] for m in report}[pipeline.name] == pytest.approx(published[pipeline.name],
                                                                                              abs=1e-4)

"""The pair samplers (arena/sampling.py), their feed of board states, and their settings."""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest

from sciarena.arena.pairing import sample_pair, sample_pair_with
from sciarena.arena.sampler_feed import SamplerFeed
from sciarena.arena.sampling import PairSampler, SamplerState, pair_weights
from sciarena.core.errors import SciArenaError
from sciarena.core.settings import Settings
from sciarena.core.types import ModelSpec

NAMES = ("A", "B", "C", "D")


def state(ratings, pair_n, version=1):
    pair_n = np.asarray(pair_n, dtype=float)
    return SamplerState(NAMES[:len(ratings)], np.asarray(ratings, dtype=float), pair_n, pair_n.sum(axis=1),
                        version=version)


def full(n, m=4):
    counts = np.full((m, m), float(n))
    np.fill_diagonal(counts, 0)
    return counts


def test_an_uncertain_adjacent_pair_outweighs_pairs_whose_order_is_settled():
    # A ≫ B ≫ {C ≈ D}: every order is certain except C against D.
    settled = state([1400, 1200, 1001, 999], full(400))
    w = pair_weights("adaptive", NAMES, settled, floor=0.2)
    assert max(((a, b) for a in NAMES for b in NAMES if a < b), key=lambda p: w.pair(*p)) == ("C", "D")
    assert w.pair("C", "D") > 5 * w.pair("A", "B")


def test_every_pair_keeps_at_least_the_floor():
    lopsided = state([1400, 1200, 1001, 999], full(5000))
    for floor in (0.05, 0.2, 1.0):
        w = pair_weights("adaptive", NAMES, lopsided, floor=floor)
        assert w.probability.sum() == pytest.approx(1.0)
        assert w.probability.min() >= floor / 6 - 1e-12
    assert np.allclose(pair_weights("adaptive", NAMES, lopsided, floor=1.0).probability, 1 / 6)


def test_a_model_the_board_has_not_seen_is_drawn_most_until_it_can_be_listed():
    known = SamplerState(NAMES[:3], np.array([1100.0, 1000.0, 900.0]), full(300, 3), full(300, 3).sum(axis=1))
    shares = pair_weights("adaptive", NAMES, known).per_model()
    assert max(shares, key=shares.get) == "D"
    assert sum(shares.values()) == pytest.approx(2.0)  # two models a battle


def test_inverse_sqrt_weights_are_the_distribution_sample_pair_draws():
    specs = [ModelSpec(n, "offline", n) for n in NAMES]
    counts = {"A": 900, "B": 100, "C": 0, "D": 20}
    rng = random.Random(5)
    seen = Counter(frozenset(m.name for m in sample_pair(specs, rng, counts)) for _ in range(20_000))
    w = pair_weights("inverse_sqrt", NAMES, None, counts)
    for a in NAMES:
        for b in NAMES:
            if a < b:
                assert seen[frozenset((a, b))] / 20_000 == pytest.approx(w.pair(a, b), abs=0.012)


def test_draws_follow_the_weights_skip_outages_and_let_a_pipeline_meet_its_base():
    base = ModelSpec("A", "offline", "a")
    pool = [base, ModelSpec("B", "offline", "b"), ModelSpec("C", "offline", "c"),
            ModelSpec("P", "pipeline", "p", base=base)]
    sampler, rng = PairSampler("uniform"), random.Random(2)
    pairs = [sample_pair_with(sampler, pool, rng, None, outage=frozenset({"C"})) for _ in range(3000)]
    assert all("C" not in (x.name, y.name) and x.name != y.name for x, y in pairs)
    with_p = [frozenset((x.name, y.name)) for x, y in pairs if "P" in (x.name, y.name)]
    # uniform over A, B, P gives P–A half of P's pairs; P–B turns into P–A half the time: 3/4
    assert with_p.count(frozenset(("P", "A"))) / len(with_p) == pytest.approx(3 / 4, abs=0.04)
    assert Counter(x.name for x, _ in pairs)["B"] > 500  # both A/B orders
    with pytest.raises(SciArenaError, match="Fewer than two"):
        sample_pair_with(sampler, pool[:2], rng, None, outage=frozenset({"A"}))


def test_weights_are_computed_once_per_board_state():
    sampler = PairSampler("adaptive")
    first = state([1100, 1000, 950, 900], full(50))
    w1 = sampler.weights(NAMES, first)
    assert sampler.weights(NAMES, first) is w1
    assert sampler.weights(NAMES, state([1100, 1000, 950, 900], full(500), version=2)) is not w1


def test_bad_sampler_names_and_floors_are_refused_with_the_variable_named():
    with pytest.raises(SciArenaError, match="unknown sampler"):
        PairSampler("greedy")
    with pytest.raises(SciArenaError, match="floor"):
        PairSampler("adaptive", floor=0.0)
    with pytest.raises(ValueError, match="SCIARENA_SAMPLER must be one of"):
        Settings.from_env({"SCIARENA_SAMPLER": "greedy"})
    with pytest.raises(ValueError, match="SCIARENA_SAMPLER_FLOOR"):
        Settings.from_env({"SCIARENA_SAMPLER_FLOOR": "0"})
    chosen = Settings.from_env({"SCIARENA_SAMPLER": " Adaptive ", "SCIARENA_SAMPLER_FLOOR": "0.3"})
    assert (chosen.sampler, chosen.sampler_floor) == ("adaptive", 0.3)
    assert Settings.from_env({}).sampler == "inverse_sqrt"


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_the_feed_hands_out_the_last_state_and_refreshes_in_the_background_when_votes_moved():
    version, computed, clock = [0], [], Clock()

    def compute():
        computed.append(version[0])
        return state([1000, 1000, 1000, 1000], full(version[0]), version=version[0])

    feed = SamplerFeed(compute, lambda: version[0], min_interval_s=30.0, clock=clock)
    assert feed.current() is None  # nothing computed yet: the caller does not wait
    feed.wait()
    first = feed.current()
    assert first is not None and computed == [0]
    version[0] = 5  # votes came in, but the last computation is too recent
    assert feed.current() is first
    clock.now = 31.0
    feed.current()
    feed.wait()
    assert feed.current().version == 5 and computed == [0, 5]
    clock.now = 100.0
    feed.current()  # votes unchanged: no computation
    feed.wait()
    assert computed == [0, 5]


def test_a_failing_board_keeps_the_last_state():
    calls = []

    def compute():
        calls.append(1)
        if len(calls) > 1:
            raise RuntimeError("broken votes")
        return state([1000, 1000], full(1, 2))

    version = [0]
    feed = SamplerFeed(compute, lambda: version[0], min_interval_s=0.0)
    kept = feed.refresh()
    version[0] = 1
    assert feed.refresh() is kept and len(calls) == 2

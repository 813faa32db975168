"""The ``order`` pair sampler (arena/order_weights.py): its guarantees over generated board states, and
the pairs it favours on boards whose open questions are known."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sciarena.arena.sampling import PairSampler, SamplerState, pair_weights


@st.composite
def board_states(draw):
    """A board of 2–12 models: ratings (some unrated), symmetric pair counts, battles, a pool and a floor."""
    m = draw(st.integers(2, 12))
    ratings = draw(st.lists(st.one_of(st.floats(600, 1600), st.just(float("nan"))), min_size=m, max_size=m))
    upper = draw(st.lists(st.integers(0, 3000), min_size=m * (m - 1) // 2, max_size=m * (m - 1) // 2))
    counts = np.zeros((m, m))
    counts[np.triu_indices(m, 1)] = upper
    counts = counts + counts.T
    models = tuple(f"m{k}" for k in range(m))
    state = SamplerState(models, np.array(ratings), counts, counts.sum(axis=1), version=draw(st.integers(0, 99)))
    # The pool may hold a model the board has never seen, and leave out some it has.
    pool = [name for name in models if draw(st.booleans())] + draw(st.lists(st.just("newcomer"), max_size=1))
    if len(pool) < 2:
        pool = list(models[:2])
    floor = draw(st.floats(0.01, 1.0))
    return state, pool, floor


@settings(max_examples=150, deadline=None)
@given(board_states())
def test_every_pair_keeps_the_floor_the_weights_sum_to_one_and_the_state_decides_them(case):
    state, pool, floor = case
    w = pair_weights("order", pool, state, floor=floor)
    n_pairs = len(pool) * (len(pool) - 1) // 2
    assert w.probability.size == n_pairs
    assert np.isfinite(w.probability).all()
    assert w.probability.sum() == pytest.approx(1.0, abs=1e-9)
    assert w.probability.min() >= floor / n_pairs - 1e-12
    again = pair_weights("order", list(pool), state, floor=floor)
    assert np.array_equal(again.probability, w.probability)  # deterministic: no randomness, same state
    assert PairSampler("order", floor).weights(pool, state).probability.tolist() == w.probability.tolist()


NAMES = ("A", "B", "C", "D", "E", "F", "G", "H")


def board(ratings, n):
    m = len(ratings)
    counts = np.full((m, m), float(n))
    np.fill_diagonal(counts, 0)
    return SamplerState(NAMES[:m], np.asarray(ratings, dtype=float), counts, counts.sum(axis=1), version=1)


def test_an_open_question_at_the_top_outweighs_the_same_question_lower_down():
    # Two near-ties, A–B for first place and G–H at the bottom, every other order settled.
    state = board([1500, 1495, 1350, 1200, 1050, 900, 755, 750], 300)
    w = pair_weights("order", NAMES, state, floor=0.2)
    assert max(w.pairs(), key=lambda p: p[2])[:2] == ("A", "B")
    assert w.pair("A", "B") > 1.5 * w.pair("G", "H")
    assert w.pair("G", "H") > 2 * w.pair("A", "H")  # an open pair still beats a settled one


def test_a_model_below_the_listing_threshold_is_in_most_draws():
    state = board([1100, 1050, 1000, 950, 900], 400)
    pool = NAMES[:6]
    shares = pair_weights("order", pool, state, floor=0.2).per_model()  # F: never seen by the board
    assert max(shares, key=shares.get) == "F" and shares["F"] > 0.3
    assert sum(shares.values()) == pytest.approx(2.0)  # two models a battle
    seen = board([1100, 1050, 1000, 950, 900, 1020.0], 400)
    assert pair_weights("order", pool, seen, floor=0.2).per_model()["F"] < 0.75 * shares["F"]  # listed: no boost


def test_weights_follow_the_board_state_and_are_kept_per_state():
    sampler = PairSampler("order")
    first = board([1100, 1000, 950, 900], 50)
    w1 = sampler.weights(NAMES[:4], first)
    assert sampler.weights(NAMES[:4], first) is w1
    assert sampler.weights(NAMES[:4], board([1100, 1000, 950, 900], 500)) is not w1

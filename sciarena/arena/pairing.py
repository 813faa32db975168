"""Who battles whom, and what a call costs: pair sampling, a new battle record, cost from prices.

Pure functions over catalogue records; the concurrent generation itself is runner.py's job.
"""

from __future__ import annotations

import math
import random
import uuid
from typing import Mapping, Sequence

import numpy as np

from sciarena.arena.sampling import PairSampler, PairWeights, SamplerState
from sciarena.core.errors import SciArenaError
from sciarena.core.types import Battle, ModelSpec, Retrieval, Usage


def sample_pair(
    pool: Sequence[ModelSpec],
    rng: random.Random,
    battle_counts: Mapping[str, int] | None = None,
    outage: frozenset[str] = frozenset(),
) -> tuple[ModelSpec, ModelSpec]:
    """Two distinct contestants in random A/B order.

    Models with fewer battles are drawn more often (weight 1/sqrt(1+battles)) so a
    new model reaches the leaderboard's listing threshold sooner. A pipeline contestant drawn
    meets its own base model half the time (``PIPELINE_MEETS_BASE``), when the base can battle. Models on the
    outage list are skipped. Fewer than two usable models is a clear error rather
    than a crash on empty weights (a FastChat defect).
    """
    usable = [m for m in pool if m.name not in outage]
    if len(usable) < 2:
        raise SciArenaError("Fewer than two models are available right now; please try again later.")
    counts = battle_counts or {}
    weights = [1.0 / math.sqrt(1.0 + counts.get(m.name, 0)) for m in usable]
    first = rng.choices(range(len(usable)), weights=weights)[0]
    rest = [i for i in range(len(usable)) if i != first]
    second = rng.choices(rest, weights=[weights[i] for i in rest])[0]
    pair = [usable[first], usable[second]]
    pair = _with_base(pair, usable, rng)
    rng.shuffle(pair)
    return pair[0], pair[1]


def sample_pair_with(
    sampler: PairSampler,
    pool: Sequence[ModelSpec],
    rng: random.Random,
    state: SamplerState | None,
    battle_counts: Mapping[str, int] | None = None,
    outage: frozenset[str] = frozenset(),
) -> tuple[ModelSpec, ModelSpec]:
    """Two distinct contestants drawn by ``sampler`` (sampling.py) over the usable pool, in random A/B order.

    The same rules as :func:`sample_pair` around the draw: outage models skipped, a drawn pipeline
    meets its base ``PIPELINE_MEETS_BASE`` of the time, fewer than two models a clear error."""
    usable = [m for m in pool if m.name not in outage]
    if len(usable) < 2:
        raise SciArenaError("Fewer than two models are available right now; please try again later.")
    by_name = {m.name: m for m in usable}
    first, second = sampler.draw([m.name for m in usable], rng, state, battle_counts)
    pair = _with_base([by_name[first], by_name[second]], usable, rng)
    rng.shuffle(pair)
    return pair[0], pair[1]


# How often a drawn pipeline meets the very model it wraps: the comparison the pipeline exists for
# (does the loop beat its own base?), which uniform pairs would make rare in a large pool.
PIPELINE_MEETS_BASE = 0.5


def _usable_base(spec: ModelSpec, names: Mapping[str, ModelSpec]) -> ModelSpec | None:
    return names.get(spec.base.name) if spec.base is not None else None


def with_base_meetings(weights: PairWeights, usable: Sequence[ModelSpec]) -> PairWeights:
    """The chance of each pair being the next battle once :func:`_with_base` has run on the drawn pair: the
    sampler's weights alone undercount a pipeline's base and overcount everyone else (measured on the offline
    pool: base 50% published, 67% drawn). A pipeline's own share is unchanged (it stays in the battle).

    The drawn pair is taken in ``weights``' order (lower index first, as ``sample_pair_with`` draws); only a
    pair of two pipelines whose bases both battle depends on that order."""
    names = {m.name: m for m in usable}
    index = {name: k for k, name in enumerate(weights.models)}
    chance = dict.fromkeys(zip(weights.pair_i.tolist(), weights.pair_j.tolist()), 0.0)

    def add(x: str, y: str, p: float) -> None:
        i, j = sorted((index[x], index[y]))
        chance[(i, j)] += p

    for i, j, p in zip(weights.pair_i.tolist(), weights.pair_j.tolist(), weights.probability.tolist()):
        pair = (names[weights.models[i]], names[weights.models[j]])
        left = p  # what is still this drawn pair after each side's chance to meet its base
        for k, spec in enumerate(pair):
            base = _usable_base(spec, names)
            if base is not None and pair[1 - k].name != base.name:
                add(spec.name, base.name, left * PIPELINE_MEETS_BASE)
                left *= 1.0 - PIPELINE_MEETS_BASE
        add(pair[0].name, pair[1].name, left)
    probability = np.array(list(chance.values()))
    return PairWeights(weights.models, weights.pair_i, weights.pair_j, probability, np.cumsum(probability))


def _with_base(pair: list[ModelSpec], usable: Sequence[ModelSpec], rng: random.Random) -> list[ModelSpec]:
    """``pair``, or a drawn pipeline with its base model instead of the other contestant."""
    names = {m.name: m for m in usable}
    for k, spec in enumerate(pair):
        other = pair[1 - k]
        base = _usable_base(spec, names)
        if base is not None and other.name != base.name and rng.random() < PIPELINE_MEETS_BASE:
            return [spec, base]
    return pair


def new_battle(question: str, retrieval: Retrieval, pair: tuple[ModelSpec, ModelSpec], created_at: float,
               subject: str = "", question_type: str = "") -> Battle:
    """A fresh, unanswered battle with a random id; ``created_at`` (epoch seconds) starts its voting window."""
    return Battle(
        battle_id=uuid.uuid4().hex,
        question=question,
        retrieval=retrieval,
        model_a=pair[0],
        model_b=pair[1],
        created_at=created_at,
        subject=subject,
        question_type=question_type,
    )


def cost_usd(spec: ModelSpec, usage: Usage) -> float | None:
    """Cost of one call from catalogue prices (USD per million tokens); None when unknown."""
    if spec.offline:
        return 0.0
    if spec.price_input_per_m is None or spec.price_output_per_m is None:
        return None
    if usage.input_tokens is None or usage.output_tokens is None:
        return None
    return (usage.input_tokens * spec.price_input_per_m + usage.output_tokens * spec.price_output_per_m) / 1e6

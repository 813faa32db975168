"""Through the real services (wiring.py): the adaptive sampler's weights follow the stored votes."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from sciarena.board import table_from_arrays
from sciarena.board.synthetic import write_jsonl
from sciarena.core.settings import Settings


def votes_between(names, pairs, folder, name):
    """``pairs``: (winner index, loser index, how many) — decisive votes, written as the arena stores them."""
    a = np.concatenate([np.full(n, w) for w, _, n in pairs])
    b = np.concatenate([np.full(n, lo) for _, lo, n in pairs])
    table = table_from_arrays(list(names), a, b, np.zeros(a.size, dtype=np.int64))
    folder.mkdir(parents=True, exist_ok=True)
    write_jsonl(table, folder / name, day_of=["2026-01-05"] * a.size)


def test_weights_move_to_the_one_uncertain_pair_once_votes_settle_the_rest(tmp_path, wire):
    settings = replace(Settings.from_env({"SCIARENA_SAMPLER": "adaptive"}), data_dir=tmp_path, seed=1)
    services = wire(settings)
    names = [m.name for m in services.pool.active]  # the offline pool: three baselines and a pipeline
    x, y, z, w = range(4)
    folder = tmp_path / "votes" / "2026-01-05"
    # A few split votes on every pair: every order is open.
    votes_between(names, [(i, j, 3) for i in range(4) for j in range(4) if i != j], folder, "votes-early.jsonl")
    before = services.sampler_feed.refresh()
    weights = services.arena.pair_sampler.weights(names, before)
    uncertain = weights.pair(names[z], names[w])

    # Then x beats everyone, y beats z and w, all many times, and z and w stay split: only z–w is open.
    votes_between(names, [(x, j, 60) for j in (y, z, w)] + [(j, x, 6) for j in (y, z, w)]
                  + [(y, j, 60) for j in (z, w)] + [(j, y, 6) for j in (z, w)]
                  + [(z, w, 3), (w, z, 3)], folder, "votes-late.jsonl")
    after = services.sampler_feed.refresh()
    assert after.version > before.version
    moved = services.arena.pair_sampler.weights(names, after)
    assert moved.pair(names[z], names[w]) > 2 * uncertain
    assert moved.pair(names[z], names[w]) == max(moved.probability)
    # The arena draws from those weights (the stored votes stay as they were: drawing stores nothing).
    shares = services.arena.sampling_weights()
    assert set(shares) == set(names) and abs(sum(shares.values()) - 2.0) < 1e-9
    battle = next(iter(services.arena.start_battle("How does CRISPR-Cas9 edit genomes?"))).battle
    assert {battle.model_a.name, battle.model_b.name} <= set(names)

"""Battle counts feed pair sampling; the outage list keeps models out of battles."""

from __future__ import annotations

from dataclasses import replace

from sciarena.core.settings import Settings
from sciarena.core.types import Vote
from sciarena.votes.schema import vote_record
from sciarena.votes.store.counts import BattleCounts
from sciarena.votes.store.local import LocalVoteStore


def test_counts_are_read_from_stored_votes_then_kept_current(tmp_path, finished_battle):
    store = LocalVoteStore(tmp_path)
    for k in range(3):
        store.append(vote_record(Vote(finished_battle(f"b{k}"), "A", timestamp="2026-11-30T06:00:00.000Z")))
    counts = BattleCounts(store.files)
    assert counts.snapshot() == {"Alpha": 3, "Beta": 3}
    counts.add("Alpha", "Gamma")
    assert counts.snapshot() == {"Alpha": 4, "Beta": 3, "Gamma": 1}


def test_no_votes_means_no_counts(tmp_path):
    assert BattleCounts(LocalVoteStore(tmp_path).files).snapshot() == {}


def test_models_on_the_outage_list_are_never_drawn(tmp_path, wire):
    settings = Settings.from_env({"SCIARENA_OUTAGE": "Claim Clusters (offline)"})
    services = wire(replace(settings, data_dir=tmp_path, seed=3))
    for _ in range(12):
        progress = services.arena.start_battle("How does CRISPR-Cas9 edit genomes?")
        battle = next(iter(progress)).battle
        assert "Claim Clusters (offline)" not in (battle.model_a.name, battle.model_b.name)

"""The background cache warmer leaves every stored shard with an up-to-date columnar cache."""

from __future__ import annotations

from sciarena.leaderboard import load_votes
from sciarena.leaderboard.cache import cache_path
from sciarena.leaderboard.warmer import CacheWarmer
from sciarena.types import Vote
from sciarena.votes.schema import vote_record
from sciarena.votes.store import LocalVoteStore
from test_vote_store import finished_battle


def test_warm_once_caches_each_shard_and_follows_appends(tmp_path):
    store = LocalVoteStore(tmp_path)
    for k in range(3):
        store.append(vote_record(Vote(finished_battle(f"b{k}"), "A", timestamp="2026-11-30T06:00:00.000Z")))
    warmer = CacheWarmer(store.files)
    assert warmer.warm_once() == 1
    shard = store.files()[0]
    first = cache_path(shard).stat().st_mtime_ns
    store.append(vote_record(Vote(finished_battle("b3"), "B", timestamp="2026-11-30T06:01:00.000Z")))
    assert warmer.warm_once() == 1
    assert cache_path(shard).stat().st_mtime_ns != first
    assert load_votes(store.files()).n_votes == 4

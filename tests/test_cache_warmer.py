"""The background cache warmer leaves every stored shard with an up-to-date columnar cache."""

from __future__ import annotations

import time

from sciarena.core.types import Vote
from sciarena.science.quality.vouch import load_votes
from sciarena.votes.read.copy import cache_path
from sciarena.votes.read.warmer import CacheWarmer
from sciarena.votes.schema import vote_record
from sciarena.votes.store.local import LocalVoteStore


def test_warm_once_caches_each_shard_and_follows_appends(tmp_path, finished_battle):
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
    assert load_votes(store.files(), include_redacted=True).n_votes == 4


def _covers_whole_file(shard) -> bool:
    from sciarena.votes.read.copy import _load

    cached = _load(cache_path(shard), shard)
    return cached is not None and cached.consumed == shard.stat().st_size


def test_started_warmer_warms_at_once_and_again_at_close(tmp_path, finished_battle):
    store = LocalVoteStore(tmp_path)
    store.append(vote_record(Vote(finished_battle("b0"), "A", timestamp="2026-11-30T06:00:00.000Z")))
    shard = store.files()[0]
    warmer = CacheWarmer(store.files, every_s=3600).start()  # the schedule alone would wait an hour
    deadline = time.monotonic() + 10
    while not cache_path(shard).exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert _covers_whole_file(shard)
    store.append(vote_record(Vote(finished_battle("b1"), "tie", timestamp="2026-11-30T06:01:00.000Z")))
    assert not _covers_whole_file(shard)
    warmer.close()  # what a clean exit runs: the copy now covers the last vote too
    assert _covers_whole_file(shard)
    assert load_votes(store.files(), include_redacted=True).n_votes == 2


def test_a_failing_shard_listing_is_logged_and_retried_next_round(tmp_path, caplog):
    calls = []

    def listing():
        calls.append(1)
        if len(calls) == 1:
            raise OSError("hub down")
        return []

    warmer = CacheWarmer(listing)
    assert warmer.warm_once() == 0 and "could not list the vote shards" in caplog.text
    assert warmer.warm_once() == 0 and len(calls) == 2


class Download:
    """Stands in for the Hub download thread: records when the warmer starts waiting on it, and
    finishes when the test says so (event ordering instead of sleeps)."""

    def __init__(self) -> None:
        import threading

        self.joined = threading.Event()
        self.done = threading.Event()

    def join(self, timeout: float | None = None) -> None:
        self.joined.set()
        self.done.wait(timeout)


def test_first_round_waits_for_the_hub_download_it_is_given(tmp_path, finished_battle):
    store = LocalVoteStore(tmp_path)
    store.append(vote_record(Vote(finished_battle("b0"), "A", timestamp="2026-11-30T06:00:00.000Z")))
    shard = store.files()[0]
    listed: list[bool] = []  # for each listing of the shards: had the download finished?
    download = Download()

    def listing():
        listed.append(download.done.is_set())
        return store.files()

    warmer = CacheWarmer(listing, every_s=3600).start(after=download)  # type: ignore[arg-type]
    assert download.joined.wait(10), "the warmer never waited for the download"
    assert listed == [] and not cache_path(shard).exists()  # nothing warmed while it waits
    download.done.set()
    deadline = time.monotonic() + 10
    while not cache_path(shard).exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert listed and all(listed)  # every listing came after the download
    assert _covers_whole_file(shard)
    warmer.close()

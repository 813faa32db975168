"""Twenty voters at once through the real app (gradio_client), with Hub sync: every confirmed vote once."""

from __future__ import annotations

import dataclasses
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest
from arena_server import running_arena
from fake_hub import FakeHub
from gradio_client import Client
from huggingface_hub import HfApi

from sciarena.core.settings import Settings
from sciarena.votes.read import VoteSource, read_records
from sciarena.votes.store.hub import HubSync
from sciarena.votes.store.local import LocalVoteStore

pytestmark = pytest.mark.slow  # a server or a subprocess: `pytest -m "not slow"` skips it

VOTERS = 20
QUESTION = "How do transformers use attention to model long-range dependencies?"


def test_twenty_concurrent_voters_are_each_stored_and_pushed_exactly_once(tmp_path, wire):
    data_dir = tmp_path / "data"
    with FakeHub() as hub:
        services = wire(Settings(data_dir=data_dir, seed=0))
        sync = HubSync(services.arena.store.root, "org/votes", api=HfApi(endpoint=hub.endpoint, token="hf_test"),
                       every_minutes=10, retry_base_s=0.05)
        # The wiring the app needs: the store writes under the sync's lock.
        arena = dataclasses.replace(services.arena, store=LocalVoteStore(data_dir, external_lock=sync.lock))
        services = dataclasses.replace(services, arena=arena)
        hub.fail(3, 500, "/commit/")  # and the Hub has a bad moment while people vote
        sync.start()
        with running_arena(data_dir, services=services) as arena:

            def voter(k: int) -> tuple[str, str]:
                client = Client(arena.url, verbose=False)
                client.predict(f"{QUESTION} ({k})", api_name="/battle")
                choice = ("A", "B", "tie", "bad")[k % 4]
                reveal = client.predict(choice, "", True, api_name="/vote")
                sync.request_push()  # pushes run while others are still voting
                try:  # a double click: must be refused, not stored twice
                    client.predict(choice, "", True, api_name="/vote")
                    second = "stored"
                except Exception as err:  # gradio_client raises the gr.Error message
                    second = str(err)
                return reveal, second

            with ThreadPoolExecutor(VOTERS) as pool:
                results = list(pool.map(voter, range(VOTERS)))
        assert all("already voted" in second for _, second in results)
        local = list(services.arena.store.records())
        assert len(local) == VOTERS and len({r["id"] for r in local}) == VOTERS
        assert Counter(r["vote"] for r in local) == Counter(("A", "B", "tie", "bad")[k % 4] for k in range(VOTERS))

        sync.request_push()
        deadline = time.monotonic() + 30  # the thread retries through the outage (0.05 s, 0.1 s, … backoff)
        while len(hub.records("org/votes")) < VOTERS and time.monotonic() < deadline:
            time.sleep(0.05)
        assert sum(1 for _, path in hub.requests if "/commit/" in path) > 3  # the outage was met
        assert sync.close(timeout_s=10)
        on_hub = [r["id"] for r in hub.records("org/votes")]
        assert Counter(on_hub) == Counter(r["id"] for r in local)  # confirmed == stored == pushed, once each

        source = VoteSource(services.arena.store.root, repo_id="org/votes", api=HfApi(endpoint=hub.endpoint),
                            cache_dir=data_dir / "hub-votes")
        assert len(read_records(source.files())) == VOTERS
        lines = sum(len(path.read_bytes().splitlines()) for path in source.files())
        assert lines == VOTERS  # Hub copy + local copy of the same shard are handed over once

"""Hub sync against a loopback Hub with the real huggingface_hub client: delivery, outages, the card."""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path

import pytest
from fake_hub import FakeHub, make_record
from huggingface_hub import CommitOperationAdd, HfApi, metadata_load

from sciarena.core.settings import Settings
from sciarena.votes.schema import VOTE_FIELDS
from sciarena.votes.store.hub import HubSync, dataset_card, open_hub_sync
from sciarena.votes.store.local import LocalVoteStore

REPO = "org/votes"


def wait_for(predicate, timeout_s: float = 20.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(0.02)


@pytest.fixture()
def hub():
    with FakeHub() as server:
        yield server


def make_sync(hub: FakeHub, data_dir: Path, **kwargs) -> tuple[HubSync, LocalVoteStore]:
    api = HfApi(endpoint=hub.endpoint, token="hf_test")
    sync = HubSync(data_dir / "votes", REPO, api=api, card=dataset_card(REPO), **kwargs)
    return sync, LocalVoteStore(data_dir, external_lock=sync.lock)


def test_votes_reach_the_hub_as_json_lines_under_their_shard_names(hub, tmp_path):
    sync, store = make_sync(hub, tmp_path)
    paths = {store.append(make_record(i)) for i in range(5)}
    assert sync.pending_votes() == 5
    assert sync.push_now()
    files = hub.files(REPO)
    local_names = {f"data/{p.relative_to(store.root).as_posix()}" for p in paths}
    assert local_names <= set(files) and len(local_names) == 1
    for name in local_names:
        lines = files[name].decode().splitlines()
        records = [json.loads(line) for line in lines]
        assert [r["id"] for r in records] == [f"b{i}" for i in range(5)]
        assert all(tuple(r) == VOTE_FIELDS for r in records)
    assert "last push" in sync.status() and "0 vote(s) pending" in sync.status()
    assert sync.pending_votes() == 0


def test_dataset_card_is_written_once_and_never_over_the_owners(hub, tmp_path):
    sync, store = make_sync(hub, tmp_path)
    store.append(make_record(1))
    assert sync.push_now()
    card = hub.files(REPO)["README.md"]
    meta = metadata_load(_write(tmp_path / "card.md", card))
    assert meta["license"] == "cc-by-4.0"
    assert "org/votes" in card.decode() and "$repo_id" not in card.decode()
    for field in VOTE_FIELDS:
        assert f"`{field}`" in card.decode(), field

    owner = HfApi(endpoint=hub.endpoint, token="hf_test")
    owner.create_commit(REPO, [CommitOperationAdd("README.md", b"# my own card\n")], commit_message="mine",
                        repo_type="dataset")
    second_sync, second_store = make_sync(hub, tmp_path / "other")  # a new process: checks again
    second_store.append(make_record(2))
    assert second_sync.push_now()
    assert hub.files(REPO)["README.md"] == b"# my own card\n"
    # the owner's card declares no features: load_dataset would fail on files of two versions, so say so
    assert "does not declare the current vote schema's features" in second_sync.status()
    assert "does not declare" not in sync.status()


def test_a_card_written_before_a_schema_change_is_reported_and_kept(hub, tmp_path):
    old_card = dataset_card(REPO).replace("  - name: num_turns\n    dtype: int64\n", "")  # as a version 4 app wrote
    assert old_card != dataset_card(REPO)
    owner = HfApi(endpoint=hub.endpoint, token="hf_test")
    owner.create_repo(REPO, repo_type="dataset")
    owner.create_commit(REPO, [CommitOperationAdd("README.md", old_card.encode())], commit_message="old card",
                        repo_type="dataset")
    sync, store = make_sync(hub, tmp_path)
    store.append(make_record(1))
    assert sync.push_now()
    assert hub.files(REPO)["README.md"].decode() == old_card
    assert "replace its header with the one `python -m sciarena card` writes" in sync.status()
    owner.create_commit(REPO, [CommitOperationAdd("README.md", dataset_card(REPO).encode())],
                        commit_message="current card", repo_type="dataset")
    fresh, _ = make_sync(hub, tmp_path)  # the next process finds the current card
    assert fresh.push_now() and "does not declare" not in fresh.status()


def test_nothing_is_resent_when_nothing_grew_and_a_restart_sends_only_the_new_lines(hub, tmp_path):
    sync, store = make_sync(hub, tmp_path)
    path = store.append(make_record(1))
    assert sync.push_now()
    commits = hub.commit_count(REPO)
    assert sync.push_now() and hub.commit_count(REPO) == commits  # no change, no commit

    restarted, _ = make_sync(hub, tmp_path)  # knows nothing locally: asks the Hub what it holds
    assert restarted.push_now() and hub.commit_count(REPO) == commits
    store.append(make_record(2))
    assert restarted.push_now() and hub.commit_count(REPO) == commits + 1
    name = f"data/{path.relative_to(store.root).as_posix()}"
    assert [json.loads(x)["id"] for x in hub.files(REPO)[name].splitlines()] == ["b1", "b2"]


def test_a_line_being_written_is_not_pushed_until_complete(hub, tmp_path):
    sync, store = make_sync(hub, tmp_path)
    path = store.append(make_record(1))
    line = json.dumps(make_record(2)).encode()
    with open(path, "ab") as handle:  # a writer that has not finished its line (no store lock here)
        handle.write(line[:40])
    assert sync.push_now()
    name = f"data/{path.relative_to(store.root).as_posix()}"
    assert hub.files(REPO)[name].count(b"\n") == 1 and hub.files(REPO)[name].endswith(b"\n")
    with open(path, "ab") as handle:
        handle.write(line[40:] + b"\n")
    assert sync.push_now()
    assert [json.loads(x)["id"] for x in hub.files(REPO)[name].splitlines()] == ["b1", "b2"]


def test_failures_are_reported_then_recovered_with_nothing_lost_or_doubled(hub, tmp_path):
    sync, store = make_sync(hub, tmp_path)
    hub.fail(2, 500, "/commit/")
    hub.fail(1, 429, "/commit/")
    confirmed = [store.append(make_record(i)) and f"b{i}" for i in range(3)]
    assert not sync.push_now()
    status = sync.status()
    assert "push failing since" in status and "HTTP 500" in status and "3 vote(s) pending" in status
    confirmed += [store.append(make_record(i)) and f"b{i}" for i in range(3, 6)]
    assert not sync.push_now()
    assert not sync.push_now()
    assert "429" in sync.status() and "(3 attempt(s))" in sync.status()
    assert hub.records(REPO) == []
    assert sync.push_now()
    stored = [r["id"] for r in hub.records(REPO)]
    assert Counter(stored) == Counter(confirmed) and len(stored) == 6
    assert "last push" in sync.status() and "failing" not in sync.status()


@pytest.mark.slow
def test_the_background_thread_retries_an_outage_and_pushes_at_close(hub, tmp_path):
    sync, store = make_sync(hub, tmp_path, every_minutes=10, retry_base_s=0.05)
    hub.fail(3, 500, "/commit/")
    hub.fail(2, 429, "/commit/")
    confirmed = []
    for i in range(8):
        store.append(make_record(i))
        confirmed.append(f"b{i}")
    sync.start()  # the start push fails, then backs off 0.05 s, 0.1 s, … until the Hub answers
    wait_for(lambda: sync.state().last_push is not None)
    assert sync.state().failures == 0 and len(hub.records(REPO)) == 8
    commit_calls = sum(1 for method, path in hub.requests if method == "POST" and "/commit/" in path)
    assert commit_calls >= 6  # five refused, then accepted

    for i in range(8, 12):  # written after the last scheduled push: the tick is 10 min away
        store.append(make_record(i))
        confirmed.append(f"b{i}")
    assert sync.close(timeout_s=10)
    stored = [r["id"] for r in hub.records(REPO)]
    assert Counter(stored) == Counter(confirmed)  # confirmed == stored, each once


def test_an_unreachable_hub_at_start_is_not_fatal(tmp_path):
    api = HfApi(endpoint="http://127.0.0.1:9", token="hf_test")  # nothing listens on the discard port
    sync = HubSync(tmp_path / "votes", REPO, api=api, every_minutes=10, retry_base_s=30)
    store = LocalVoteStore(tmp_path, external_lock=sync.lock)
    store.append(make_record(1))
    assert not sync.push_now()
    assert "push failing since" in sync.status() and "1 vote(s) pending" in sync.status()


def test_open_hub_sync_needs_both_the_token_and_the_repo(hub, tmp_path):
    folder = tmp_path / "votes"
    assert open_hub_sync(Settings(data_dir=tmp_path), folder) is None
    assert open_hub_sync(Settings(data_dir=tmp_path, votes_repo=REPO), folder) is None
    assert open_hub_sync(Settings(data_dir=tmp_path, secrets={"HF_TOKEN": "hf_x"}), folder) is None
    settings = Settings(data_dir=tmp_path, votes_repo=REPO, push_every_minutes=7, secrets={"HF_TOKEN": "hf_x"})
    sync = open_hub_sync(settings, folder, endpoint=hub.endpoint)
    assert sync is not None and sync.every_s == 420
    LocalVoteStore(tmp_path, external_lock=sync.lock).append(make_record(3))
    assert sync.push_now() and [r["id"] for r in hub.records(REPO)] == ["b3"]


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


@pytest.fixture()
def short_hub_timeouts():
    """The shared huggingface_hub client with a 0.5 s read timeout, restored afterwards."""
    from huggingface_hub import set_client_factory
    from huggingface_hub.utils._http import default_client_factory

    from sciarena.votes.store.hub import use_hub_timeouts

    use_hub_timeouts(connect_s=2.0, read_s=0.5)
    yield
    set_client_factory(default_client_factory)


def test_a_request_the_hub_never_answers_times_out_as_a_failure(hub, tmp_path, short_hub_timeouts):
    sync, store = make_sync(hub, tmp_path)
    store.append(make_record(1))
    hub.hang("/api/repos/create")
    assert not sync.push_now()  # without a timeout this call would never return
    assert "push failing since" in sync.status() and "1 vote(s) pending" in sync.status()
    hub.release_hangs()
    assert sync.push_now() and [r["id"] for r in hub.records(REPO)] == ["b1"]


def test_a_stalled_push_is_reported_and_cannot_hold_the_exit_and_loses_nothing(hub, tmp_path):
    from datetime import datetime, timedelta, timezone

    now = [datetime(2026, 12, 1, 9, 0, tzinfo=timezone.utc)]
    sync, store = make_sync(hub, tmp_path, clock=lambda: now[0], every_minutes=10)
    for i in range(3):
        store.append(make_record(i))
    hub.hang("/commit/")  # the Hub takes the commit and never answers (no client timeout here)
    sync.start()
    wait_for(lambda: hub.hanging == 1)
    assert "first push pending" in sync.status()
    store.append(make_record(3))  # voting goes on while the push hangs
    now[0] += timedelta(seconds=50)  # under a minute later, the About tab says it is failing
    status = sync.status()
    assert "push failing" in status and "stalled since 09:00 UTC" in status and "4 vote(s) pending" in status

    assert sync.close(timeout_s=0.5) is False  # returns while the Hub still holds the request
    assert hub.hanging >= 1 and hub.records(REPO) == []
    hub.release_hangs()
    restarted, _ = make_sync(hub, tmp_path)  # the next start sends what the stalled exit could not
    wait_for(lambda: hub.hanging == 0)
    assert restarted.push_now()
    assert Counter(r["id"] for r in hub.records(REPO)) == Counter(["b0", "b1", "b2", "b3"])


SIGTERM_WORKER = r"""
import signal, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from fake_hub import make_record
from sciarena.core.settings import Settings
from sciarena.votes.store.hub import open_hub_sync
from sciarena.votes.store.local import LocalVoteStore

settings = Settings.from_env()
sync = open_hub_sync(settings, LocalVoteStore.folder_for(settings.data_dir))
store = LocalVoteStore(settings.data_dir, external_lock=sync.lock)
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # as app.py does
for i in range(3):
    store.append(make_record(i))
sync.start()
print("ready", flush=True)
while True:
    time.sleep(0.05)
"""


@pytest.mark.slow
def test_sigterm_exits_within_10_s_while_the_hub_hangs_and_the_next_start_sends_the_votes(hub, tmp_path):
    import os
    import signal
    import subprocess
    import sys

    tests = Path(__file__).resolve().parent
    script = tmp_path / "worker.py"
    script.write_text(SIGTERM_WORKER)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "SCIARENA_"))}
    env.update(HF_ENDPOINT=hub.endpoint, HF_TOKEN="hf_test", SCIARENA_VOTES_REPO=REPO,
               SCIARENA_DATA_DIR=str(tmp_path / "data"), SCIARENA_PUSH_EVERY_MINUTES="60",
               PYTHONPATH=str(tests.parent))
    hub.hang("/commit/")
    proc = subprocess.Popen([sys.executable, str(script), str(tests)], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        wait_for(lambda: hub.hanging >= 1)  # the start push is stuck inside the Hub
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0  # the platform's grace period after SIGTERM
    finally:
        proc.kill()
    assert hub.records(REPO) == []
    hub.release_hangs()
    wait_for(lambda: hub.hanging == 0)
    restarted, _ = make_sync(hub, tmp_path / "data")
    assert restarted.push_now()
    assert Counter(r["id"] for r in hub.records(REPO)) == Counter(["b0", "b1", "b2"])

"""Reading votes back: load() for consumers, the Hub mirror and VoteSource for the leaderboard, voter ids."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from fake_hub import FakeHub, make_record
from huggingface_hub import HfApi

from sciarena.core.errors import VoteRejected, VoteStoreError
from sciarena.core.settings import Settings
from sciarena.votes.read import VoteSource, load, open_vote_source, read_records
from sciarena.votes.schema import RELEASED_FIELDS, VOTE_FIELDS
from sciarena.votes.store.hub import HubSync
from sciarena.votes.store.local import LocalVoteStore
from sciarena.votes.voter import require_consent

REPO = "org/votes"


def write_lines(path: Path, records: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


@pytest.fixture()
def hub():
    with FakeHub() as server:
        yield server


def test_load_dedupes_by_id_across_files_and_fills_fields_of_older_versions(tmp_path):
    write_lines(tmp_path / "votes/2026-11-29/votes-a.jsonl", [make_record(i) for i in range(4)])
    write_lines(tmp_path / "votes/2026-11-30/votes-b.jsonl", [make_record(i) for i in range(2, 6)])  # 2, 3 again
    old = {k: v for k, v in make_record(9).items() if k in RELEASED_FIELDS + ("timestamp",)}
    old["schema_version"] = 0
    write_lines(tmp_path / "votes/2026-11-28/votes-old.jsonl", [old])
    records = load(tmp_path / "votes")
    assert sorted(r["id"] for r in records) == sorted(f"b{i}" for i in (0, 1, 2, 3, 4, 5, 9))
    assert all(tuple(r)[: len(VOTE_FIELDS)] == VOTE_FIELDS for r in records)
    oldest = next(r for r in records if r["id"] == "b9")
    assert oldest["schema_version"] == 0 and oldest["consent"] is None and oldest["latency_s_a"] is None
    assert oldest["modelA"] == old["modelA"]


def test_load_reads_the_released_json_array_and_single_files(tmp_path):
    released = [{k: make_record(i)[k] for k in RELEASED_FIELDS} for i in range(3)]
    path = tmp_path / "train.json"
    path.write_text(json.dumps(released))
    records = load(path)
    assert [r["id"] for r in records] == ["b0", "b1", "b2"]
    assert records[0]["schema_version"] is None and records[0]["vote"] == released[0]["vote"]


def test_an_incomplete_last_line_is_skipped_but_a_corrupt_line_is_an_error(tmp_path):
    path = write_lines(tmp_path / "votes-a.jsonl", [make_record(1)])
    with open(path, "a") as handle:
        handle.write('{"id": "b2", "quest')  # a writer killed mid-line
    assert [r["id"] for r in load(path)] == ["b1"]
    with open(path, "a") as handle:
        handle.write("\n" + json.dumps(make_record(3)) + "\n")
    with pytest.raises(VoteStoreError, match=r"votes-a.jsonl.*line 2"):
        load(path)


def test_bad_inputs_are_clear_errors(hub, tmp_path):
    with pytest.raises(VoteStoreError, match="not a Hub dataset id"):
        load(tmp_path / "missing" / "folder")
    (tmp_path / "list.json").write_text("[1, 2]")
    with pytest.raises(VoteStoreError, match="not a JSON object"):
        load(tmp_path / "list.json")
    with pytest.raises(VoteStoreError, match="could not read the dataset"):
        load("org/missing", endpoint=hub.endpoint, cache_dir=tmp_path / "cache")


def push(hub: FakeHub, data_dir: Path, records: list[dict]) -> LocalVoteStore:
    sync = HubSync(data_dir / "votes", REPO, api=HfApi(endpoint=hub.endpoint, token="hf_test"))
    store = LocalVoteStore(data_dir, external_lock=sync.lock)
    for record in records:
        store.append(record)
    assert sync.push_now()
    return store


def downloads(hub: FakeHub) -> int:
    return sum(1 for method, path in hub.requests if method == "GET" and "/resolve/" in path)


def test_load_from_a_hub_repo_downloads_only_new_or_changed_files(hub, tmp_path):
    push(hub, tmp_path / "replica1", [make_record(i) for i in range(3)])
    push(hub, tmp_path / "replica2", [make_record(i, prefix="c") for i in range(2)])
    cache = tmp_path / "cache"
    records = load(REPO, endpoint=hub.endpoint, token="hf_test", cache_dir=cache)
    assert sorted(r["id"] for r in records) == ["b0", "b1", "b2", "c0", "c1"]
    assert downloads(hub) == 2
    assert len(load(REPO, endpoint=hub.endpoint, cache_dir=cache)) == 5
    assert downloads(hub) == 2  # unchanged: nothing fetched again
    push(hub, tmp_path / "replica3", [make_record(7, prefix="d")])
    assert len(load(REPO, endpoint=hub.endpoint, cache_dir=cache)) == 6
    assert downloads(hub) == 3


def test_datasets_load_dataset_reads_a_snapshot_of_the_pushed_files(hub, tmp_path):
    from datasets import load_dataset

    push(hub, tmp_path / "replica1", [make_record(i) for i in range(6)])
    push(hub, tmp_path / "replica2", [make_record(i, prefix="c", day="2026-12-01") for i in range(3)])
    snapshot = hub.snapshot(REPO, tmp_path / "snapshot")
    data_files = sorted(str(p) for p in snapshot.glob("data/**/*.jsonl"))
    assert len(data_files) == 2
    dataset = load_dataset("json", data_files=data_files, split="train", cache_dir=str(tmp_path / "hf-cache"))
    assert dataset.num_rows == 9
    assert tuple(dataset.column_names) == VOTE_FIELDS
    assert Counter(dataset["vote"]) == Counter(r["vote"] for r in load(snapshot / "data"))


def test_vote_source_hands_each_shard_once_local_copy_first(hub, tmp_path):
    data_dir = tmp_path / "app"
    store = push(hub, data_dir, [make_record(i) for i in range(3)])   # pushed by this app
    store.append(make_record(3))                                       # … and one more, not yet pushed
    push(hub, tmp_path / "replica2", [make_record(i, prefix="c") for i in range(2)])  # another replica's
    now = [0.0]
    source = VoteSource(store.root, repo_id=REPO, api=HfApi(endpoint=hub.endpoint), cache_dir=data_dir / "hub-votes",
                        refresh_s=60, clock=lambda: now[0])
    files = source.files()
    assert len(files) == 2
    assert sum(1 for f in files if f.is_relative_to(store.root)) == 1  # the local copy of our own shard
    records = read_records(files)
    assert sorted(r["id"] for r in records) == ["b0", "b1", "b2", "b3", "c0", "c1"]
    lines = sum(len(f.read_text().splitlines()) for f in files)
    assert lines == 6  # no record counted twice even without dedupe by id

    trees = sum(1 for m, p in hub.requests if "/tree/" in p)
    source.files()
    assert sum(1 for m, p in hub.requests if "/tree/" in p) == trees  # within refresh_s: no Hub call
    hub.fail(1, 403, "/tree/")  # e.g. a revoked token (5xx would be retried by the client first)
    now[0] = 61.0  # a refresh is due: files() would start this one and answer at once from the copies
    source.refresh_in_background().join(10)
    assert "403" in source.last_error
    assert [f.name for f in source.files()] == [f.name for f in files]  # the failed refresh changed nothing

    now[0] = 150.0  # due again, but background upkeep lists what is here without reading the Hub
    trees = sum(1 for m, p in hub.requests if "/tree/" in p)
    assert [f.name for f in source.files(refresh=False)] == [f.name for f in files]
    assert source._refreshed_at == 61.0  # no refresh was started (it would set this at once)
    assert sum(1 for m, p in hub.requests if "/tree/" in p) == trees

    push(hub, tmp_path / "replica3", [make_record(1, prefix="d")])
    now[0] = 200.0
    source.refresh_in_background().join(10)
    assert source.last_error == "" and len(read_records(source.files())) == 7


def test_the_apps_vote_source_keeps_hub_copies_where_a_folder_scan_does_not_count_them_twice(hub, tmp_path):
    from sciarena.science.quality.vouch import load_votes

    data_dir = tmp_path / "data"
    store = push(hub, data_dir, [make_record(i) for i in range(4)])
    settings = Settings(data_dir=data_dir, votes_repo=REPO, secrets={"HF_TOKEN": "hf_test"})
    source = open_vote_source(settings, store.root, endpoint=hub.endpoint)
    assert load_votes(source.files()).n_votes == 4
    assert source.cache_dir is not None and source.cache_dir.is_relative_to(data_dir)
    assert any(source.cache_dir.rglob("*.jsonl"))  # the Hub copy is there …
    assert load_votes(data_dir).n_votes == 4  # … but a scan of the whole data folder reads each vote once
    assert len(load(data_dir)) == 4
    assert open_vote_source(Settings(data_dir=data_dir), store.root).repo_id is None


def test_local_only_vote_source(tmp_path):
    store = LocalVoteStore(tmp_path)
    store.append(make_record(1))
    assert VoteSource(store.root).files() == store.files()
    assert VoteSource(tmp_path / "nothing").files() == []


def test_a_vote_without_consent_is_refused():
    require_consent(True)
    for value in (False, None):
        with pytest.raises(VoteRejected, match="I agree to the terms"):
            require_consent(value)

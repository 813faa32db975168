"""The one vote reader: every layout, Hub dataset ids as sources, duplicates dropped by id."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from fake_hub import FakeHub, make_record
from huggingface_hub import HfApi

from sciarena.board.synthetic import simulate, write_jsonl
from sciarena.science.quality.vouch import load_votes
from sciarena.votes.read import load, read_columns
from sciarena.votes.read.copy import cache_path
from sciarena.votes.read.duck import read_lines
from sciarena.votes.read.parse import SMALL_INPUT_BYTES, leading_keys, parse_lines_python
from sciarena.votes.read.raw import battles_per_model

ROOT = Path(__file__).resolve().parents[1]

# A Chatbot Arena / FastChat battle file (clean_battle layout): names and winner only.
BATTLES = [
    {"question_id": "q1", "model_a": "vicuna-13b", "model_b": "koala-13b", "winner": "model_a",
     "judge": "arena_user_1", "turn": 1, "anony": True, "language": "English", "tstamp": 1682351591.1},
    {"question_id": "q2", "model_a": "koala-13b", "model_b": "alpaca-13b", "winner": "model_b",
     "judge": "arena_user_2", "turn": 1, "anony": True, "language": "English", "tstamp": 1682351592.5},
    {"question_id": "q3", "model_a": "alpaca-13b", "model_b": "vicuna-13b", "winner": "tie",
     "judge": "arena_user_3", "turn": 1, "anony": True, "language": "English", "tstamp": 1682351593.0},
    {"question_id": "q4", "model_a": "vicuna-13b", "model_b": "alpaca-13b", "winner": "tie (bothbad)",
     "judge": "arena_user_4", "turn": 1, "anony": True, "language": "English", "tstamp": 1682351594.0},
]


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sciarena", "leaderboard", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, env=env)


@pytest.mark.slow  # starts a subprocess or a loopback server
@pytest.mark.parametrize("name", ["battles.json", "battles.jsonl"])
def test_a_fastchat_battles_file_is_read_like_our_votes(tmp_path, name):
    path = tmp_path / name
    text = json.dumps(BATTLES) if name.endswith(".json") else "".join(json.dumps(b) + "\n" for b in BATTLES)
    path.write_text(text)
    table = load_votes(path)
    assert table.models == ("alpaca-13b", "koala-13b", "vicuna-13b")
    assert table.outcome.tolist() == [0, 1, 2, 3]  # model_a, model_b, tie, tie (bothbad)
    assert table.timestamp[1] == 1682351592.5
    proc = cli("--votes", str(path), "--format", "json", "--min-battles", "0", "--bootstrap", "5")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["total_votes"] == 4 and {m["model"] for m in out["models"]} == set(table.models)
    records = load(path)  # consumers see our field names too
    assert [(r["modelA"], r["vote"], r["id"]) for r in records][0] == ("vicuna-13b", "model_a", "q1")


def test_a_large_fastchat_file_takes_the_fast_reader_and_gives_the_same_table(tmp_path):
    rows = [dict(BATTLES[k % 4], question_id=f"q{k}", conversation_a=[{"role": "user", "content": "x" * 400}])
            for k in range(6000)]
    data = "".join(json.dumps(r) + "\n" for r in rows)
    assert len(data) > SMALL_INPUT_BYTES
    path = tmp_path / "battles.jsonl"
    path.write_text(data)
    view = memoryview(path.read_bytes())
    fast = read_lines(view, leading_keys(view), "f")
    assert fast is not None, "DuckDB should take these lines"
    slow = parse_lines_python(bytes(view), "f")
    for name in ("model_a", "model_b", "vote", "timestamp", "ids"):
        assert np.array_equal(getattr(fast, name), getattr(slow, name)), name
    table = load_votes(path, cache=False)
    assert table.n_votes == 6000 and np.array_equal(table.outcome[:4], [0, 1, 2, 3])


@pytest.mark.slow  # starts a subprocess or a loopback server
def test_repeated_lines_and_overlapping_sources_count_each_battle_once(tmp_path):
    records = [make_record(i) for i in range(6)]
    first = tmp_path / "a" / "votes-1.jsonl"
    first.parent.mkdir()
    first.write_text("".join(json.dumps(r) + "\n" for r in records + records[:2]))  # two lines repeated
    second = tmp_path / "b.json"
    second.write_text(json.dumps(records[3:]))  # overlaps the first source in three votes
    no_id = {k: v for k, v in records[0].items() if k != "id"}
    third = tmp_path / "c.jsonl"
    third.write_text(json.dumps(no_id) + "\n" + json.dumps(no_id) + "\n")  # without an id: both kept
    table = load_votes([first.parent, second, third])
    assert table.n_votes == 6 + 2 and table.skipped == {"duplicate id": 5}
    proc = cli("--votes", str(first.parent), "--votes", str(second), "--format", "json", "--min-battles", "0",
               "--bootstrap", "0")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["total_votes"] == 6 and out["skipped"] == {"duplicate id": 5}
    assert sum(m["battles"] for m in out["models"]) == 12


def test_duplicates_are_caught_between_the_columnar_copy_and_a_fresh_parse(tmp_path):
    path = tmp_path / "votes-1.jsonl"
    table = simulate([0, 50, 100], 400, seed=2)
    write_jsonl(table, path, stop=300)
    load_votes(path)  # builds the copy
    assert cache_path(path).exists()
    write_jsonl(table, path, start=250, mode="a")  # 50 votes written again, then 100 new
    grown = load_votes(path)
    assert grown.n_votes == 400 and grown.skipped == {"duplicate id": 50}
    fresh = load_votes(path, cache=False)
    assert np.array_equal(grown.a, fresh.a) and grown.skipped == fresh.skipped


def test_a_copy_made_without_texts_is_rebuilt_when_lengths_are_asked_for(tmp_path):
    released = [{"id": f"r{i}", "question": "Q?", "responseA": "a" * (i + 1), "responseB": "bb",
                 "modelA": "X", "modelB": "Y", "vote": "A", "citations_a": [{"content": "c"}] * i,
                 "citations_b": [], "question_type": None, "subject": None} for i in range(5)]
    path = tmp_path / "train.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in released))
    assert np.isnan(load_votes(path).features["length"]).all()
    styled = load_votes(path, texts=True)
    assert styled.features["length"][:, 0].tolist() == [1, 2, 3, 4, 5]
    assert styled.features["citations"][:, 0].tolist() == [0, 1, 2, 3, 4]
    assert load_votes(path, texts=True).features["length"][:, 1].tolist() == [2] * 5  # now from the copy


def test_battle_counts_use_only_usable_votes(tmp_path):
    path = tmp_path / "v.jsonl"
    rows = BATTLES + [dict(BATTLES[0], question_id="q9", winner="maybe")]
    path.write_text("".join(json.dumps(b) + "\n" for b in rows))
    counts = battles_per_model(read_columns(path).columns)
    assert counts == {"vicuna-13b": 3, "koala-13b": 2, "alpaca-13b": 3}


@pytest.fixture()
def hub():
    with FakeHub() as server:
        yield server


def _upload(hub: FakeHub, repo: str, files: dict[str, bytes]) -> None:
    api = HfApi(endpoint=hub.endpoint, token="hf_test")
    api.create_repo(repo, repo_type="dataset", exist_ok=True)
    for name, data in files.items():
        api.upload_file(path_or_fileobj=data, path_in_repo=name, repo_id=repo, repo_type="dataset")


def _hub_env(hub: FakeHub, home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    env.update(HF_ENDPOINT=hub.endpoint, HF_HOME=str(home))
    return env


@pytest.mark.slow  # starts a subprocess or a loopback server
def test_the_leaderboard_command_reads_a_hub_dataset_id(hub, tmp_path):
    records = [make_record(i) for i in range(9)]
    _upload(hub, "org/votes", {
        "data/2026-11-30/votes-a.jsonl": "".join(json.dumps(r) + "\n" for r in records[:6]).encode(),
        "data/2026-11-30/votes-b.jsonl": "".join(json.dumps(r) + "\n" for r in records[4:]).encode(),
    })
    proc = cli("--votes", "org/votes", "--format", "json", "--min-battles", "0", "--bootstrap", "0",
               env=_hub_env(hub, tmp_path / "hf"))
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["total_votes"] == 9 and out["skipped"] == {"duplicate id": 2}
    # a released-style dataset: one JSON array at the top of the repo, no data/ folder
    _upload(hub, "yale/arena", {"train.json": json.dumps(BATTLES).encode()})
    proc = cli("--votes", "yale/arena", "--votes", "org/votes", "--format", "json", "--min-battles", "0",
               "--bootstrap", "0", "--cache-dir", str(tmp_path / "cache"), env=_hub_env(hub, tmp_path / "hf"))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["total_votes"] == 13


@pytest.mark.slow  # starts a subprocess or a loopback server
def test_a_missing_hub_dataset_is_one_line_and_exit_code_2(hub, tmp_path):
    proc = cli("--votes", "org/nothing-here", env=_hub_env(hub, tmp_path / "hf"))
    assert proc.returncode == 2 and "could not read the dataset" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_vote_table_takes_records_as_well_as_columns(tmp_path):
    from sciarena.board import vote_table

    path = tmp_path / "votes-1.jsonl"
    path.write_text("".join(json.dumps(make_record(i)) + "\n" for i in range(12)))
    from_records = vote_table(load(path))
    from_columns = load_votes(path, texts=True, include_flagged=True)  # the readers, not which votes count
    assert from_records.models == from_columns.models
    for name in ("a", "b", "outcome", "subject", "timestamp"):
        assert np.array_equal(getattr(from_records, name), getattr(from_columns, name), equal_nan=True), name
    assert np.array_equal(from_records.features["length"], from_columns.features["length"])


def test_every_reader_gives_the_same_voter_ids_and_redaction_flags(tmp_path):
    """Python, DuckDB and Parquet paths agree; only JSON true marks a redacted answer."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from sciarena.votes.read.arrow_io import read_parquet

    odd = [True, False, None, "true", 1, [True], {"x": True}]
    rows = [{"id": f"v{k}", "modelA": "Alpha", "modelB": "Beta", "vote": "A", "padding": "x" * 400,
             "voter_id": [f"anon-{k % 7}", None, "", "  hf-abc  ", 5][k % 5],
             "redacted_a": odd[k % 7], "redacted_b": odd[(k * 3) % 7] if k % 11 else True}
            for k in range(6000)]
    data = "".join(json.dumps(r) + "\n" for r in rows).encode()
    assert len(data) > SMALL_INPUT_BYTES
    view = memoryview(data)
    fast, slow = read_lines(view, leading_keys(view), "f"), parse_lines_python(data, "f")
    assert fast is not None, "DuckDB should take these lines"
    expected = [r["redacted_a"] is True or r["redacted_b"] is True for r in rows]
    for raw in (fast, slow):
        ids = [raw.voters[c] if c >= 0 else None for c in raw.voter]
        assert ids == [v.strip() if isinstance(v, str) and v.strip() else None  # a number is no voter id
                       for v in (r["voter_id"] for r in rows)]
        assert raw.redacted.tolist() == expected
    parquet = tmp_path / "votes.parquet"
    pq.write_table(pa.table({"id": [r["id"] for r in rows[:50]], "modelA": ["Alpha"] * 50, "modelB": ["Beta"] * 50,
                             "vote": ["A"] * 50, "voter_id": [f"anon-{k % 3}" for k in range(50)],
                             "redacted_a": [k % 4 == 0 for k in range(50)],
                             "redacted_b": [None if k % 5 else True for k in range(50)]}), parquet)
    raw = read_parquet(parquet)
    assert [raw.voters[c] for c in raw.voter] == [f"anon-{k % 3}" for k in range(50)]
    assert raw.redacted.tolist() == [k % 4 == 0 or k % 5 == 0 for k in range(50)]


def test_a_columnar_copy_without_voter_columns_is_not_trusted(tmp_path):
    """A copy written before voter ids were read gives the file's own voter ids, not none."""
    path = tmp_path / "votes-1.jsonl"
    records = [dict(make_record(i), redacted_b=i % 3 == 0) for i in range(12)]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    first = read_columns(path).columns
    assert first.has_voters and set(first.voters) == {f"anon-{k}" for k in range(5)}
    again = read_columns(path).columns  # through the copy, whatever version it is
    assert again.voters == first.voters and np.array_equal(again.voter, first.voter)
    assert again.redacted.tolist() == first.redacted.tolist() == [i % 3 == 0 for i in range(12)]

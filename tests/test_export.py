"""`sciarena export`: our votes in the released SciArena layout, readable by the leaderboard."""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from fake_hub import FakeHub, make_record
from huggingface_hub import HfApi

from sciarena.cli import export as cli
from sciarena.votes.schema import RELEASED_FIELDS
from sciarena.votes.store.hub import HubSync
from sciarena.votes.store.local import LocalVoteStore


def run_export(*argv: str) -> int:
    parser = argparse.ArgumentParser()
    cli.add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["export", *argv])
    return args.run(args)


def votes_folder(root: Path, n: int) -> Path:
    store = LocalVoteStore(root)
    for i in range(n):
        store.append(make_record(i))
    # a copy of some records made by hand in a second file: the export keeps one per id
    copy = root / "votes" / "2026-11-30" / "votes-copy.jsonl"
    copy.write_text("".join(json.dumps(make_record(i)) + "\n" for i in range(5)))
    return store.root


def test_export_writes_the_released_schema_once_per_id(tmp_path, capsys):
    folder = votes_folder(tmp_path, 12)
    out = tmp_path / "release.json"
    assert run_export("--votes", str(folder), "--to", "sciarena-release", "--out", str(out)) == 0
    assert "wrote 12 vote(s)" in capsys.readouterr().out
    rows = json.loads(out.read_text())
    assert isinstance(rows, list) and len(rows) == 12
    assert all(tuple(row) == RELEASED_FIELDS for row in rows)
    assert Counter(r["vote"] for r in rows) == Counter(make_record(i)["vote"] for i in range(12))
    # what released-data analysis code reads from each citation
    cited = [c for r in rows for c in r["citations_a"] + r["citations_b"]]
    assert cited and all({"concise_authors", "content", "title", "authors", "id"} <= set(c) for c in cited)


def test_the_leaderboard_reads_the_export(tmp_path):
    from sciarena.board import compute_leaderboard
    from sciarena.science.quality.vouch import load_votes

    folder = votes_folder(tmp_path, 30)
    out = tmp_path / "release.json"
    assert run_export("--votes", str(folder), "--out", str(out)) == 0
    board = compute_leaderboard(load_votes(out), bootstrap=0)
    rows = json.loads(out.read_text())
    battles: Counter[str] = Counter()
    for r in rows:
        battles[r["modelA"]] += 1
        battles[r["modelB"]] += 1
    assert board.total_votes == len(rows) == 30
    assert {row.model: row.battles for row in board.rows} == dict(battles)
    assert sum(board.outcomes.values()) == 30


def test_export_from_a_hub_repo_and_as_json_lines(tmp_path, capsys):
    with FakeHub() as hub:
        sync = HubSync(tmp_path / "votes", "org/votes", api=HfApi(endpoint=hub.endpoint, token="hf_test"))
        store = LocalVoteStore(tmp_path, external_lock=sync.lock)
        for i in range(4):
            store.append(make_record(i))
        assert sync.push_now()
        from sciarena.votes.read import load

        records = load("org/votes", endpoint=hub.endpoint, cache_dir=tmp_path / "cache")
    out = tmp_path / "all.jsonl"
    assert run_export("--votes", str(tmp_path / "cache" / "data"), "--to", "jsonl", "--out", str(out)) == 0
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert lines == records and [r["id"] for r in lines] == ["b0", "b1", "b2", "b3"]


def test_export_errors_are_one_line_messages(tmp_path, capsys):
    assert run_export("--votes", str(tmp_path / "nowhere" / "x"), "--out", str(tmp_path / "o.json")) == 2
    err = capsys.readouterr().err
    assert err.startswith("sciarena export: ") and "Traceback" not in err
    folder = votes_folder(tmp_path, 2)
    assert run_export("--votes", str(folder), "--out", str(tmp_path / "no-dir" / "o.json")) == 2
    assert "no such folder" in capsys.readouterr().err

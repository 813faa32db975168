"""Multi-turn vote records (schema 5) through every reader: the leaderboard's turns breakdown, export,
eval build, 🤗 datasets, a reader of the released schema that knows nothing of turns, and older records."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from sciarena.arena.rules import ArenaSession, Ballot
from sciarena.board.board import select_view, view_choices
from sciarena.board.table import vote_table
from sciarena.cli.main import main
from sciarena.core.settings import Settings
from sciarena.science.evaluation.benchmark import build_benchmark
from sciarena.ui.battle_view import record_turns
from sciarena.votes.export import render
from sciarena.votes.read import load
from sciarena.votes.schema import RELEASED_FIELDS, VOTE_FIELDS, turn_count
from sciarena.votes.voter import Visitor

QUESTIONS = (
    ("How does CRISPR-Cas9 achieve targeted genome editing, and what limits its precision?",
     ("What did the first direct detection of gravitational waves observe?",)),
    ("What did the first direct detection of gravitational waves observe?", ()),
    ("How does CRISPR-Cas9 achieve targeted genome editing, and what limits its precision?",
     ("How are its off-target effects measured?", "Has it been tried for sickle cell disease?")),
    ("How do transformers use self-attention to model long-range dependencies?", ()),
    ("How does CRISPR-Cas9 achieve targeted genome editing, and what limits its precision?", ()),
    ("What did the first direct detection of gravitational waves observe?",
     ("What did the second detection, of a neutron star merger, add?",)),
)


@pytest.fixture(scope="module")
def votes(tmp_path_factory, wire):
    """Six votes of the offline arena, three of them with follow-ups, in one vote file."""
    data = tmp_path_factory.mktemp("data")
    arena = wire(Settings(data_dir=data, seed=0)).arena
    for n, (question, followups) in enumerate(QUESTIONS):
        me = Visitor(session_hash=f"visitor-{n}")
        session = ArenaSession(battle=list(arena.start_battle(question, visitor=me))[-1].battle)
        for follow_up in followups:
            session = replace(session, battle=list(arena.follow_up(session, follow_up, visitor=me))[-1].battle)
        arena.vote(session, Ballot(choice="AB"[n % 2], consent=True, session_hash=f"visitor-{n}"))
    files = sorted((data / "votes").rglob("*.jsonl"))
    assert len(files) == 1
    return files[0]


def lines(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_the_file_mixes_one_and_multi_turn_records(votes):
    records = lines(votes)
    assert [r["num_turns"] for r in records] == [1 + len(f) for _, f in QUESTIONS]
    assert [turn_count(r) for r in records] == [len(r["turns"]) for r in records]


def test_a_released_schema_reader_that_knows_nothing_of_turns_reads_the_first_turn(votes):
    for record, (question, _) in zip(lines(votes), QUESTIONS):
        released = {k: record[k] for k in RELEASED_FIELDS}  # what analysis code for yale-nlp/SciArena takes
        assert released["question"] == question == record["turns"][0]["question"]
        assert released["responseA"] == record["turns"][0]["responseA"]
        assert released["citations_b"] == record["turns"][0]["citations_b"]


def test_datasets_load_dataset_reads_a_file_of_mixed_records(votes, tmp_path):
    from datasets import load_dataset  # a test-only dependency of the dataset card's promise

    dataset = load_dataset("json", data_files=str(votes), split="train", cache_dir=str(tmp_path / "hf"))
    assert dataset.num_rows == len(QUESTIONS) and tuple(dataset.column_names) == VOTE_FIELDS
    assert dataset["num_turns"] == [1 + len(f) for _, f in QUESTIONS]
    turns = dataset["turns"]
    assert [len(t) for t in turns] == dataset["num_turns"]
    assert turns[2][2]["question"] == QUESTIONS[2][1][1]
    assert turns[0][1]["references_added"][0]["title"].startswith("Observation of Gravitational Waves")


def test_the_leaderboard_breaks_ratings_down_by_turns(votes, capsys):
    code = main(["leaderboard", "--votes", str(votes), "--by", "turns", "--format", "json", "--bootstrap", "0",
                 "--include-flagged", "--no-cache"])
    out = capsys.readouterr().out
    assert code == 0, out
    board = json.loads(out)
    assert board["total_votes"] == len(QUESTIONS)
    groups = {g for m in board["models"] for g in m["by_turns"]}
    assert groups == {"single-turn", "multi-turn"}


def test_an_older_record_without_turns_is_one_question(votes, tmp_path):
    old = dict(lines(votes)[0])
    for name in ("num_turns", "turns"):
        del old[name]
    old["schema_version"] = 4
    path = tmp_path / "old.jsonl"
    path.write_text(json.dumps(old) + "\n", encoding="utf-8")
    [read] = load(path)
    assert read["num_turns"] is None and read["turns"] is None and turn_count(read) == 1
    assert record_turns(read) == [read]  # the shared view shows its one question


def test_export_keeps_the_first_turn_in_the_release_layout_and_every_turn_in_jsonl(votes):
    records = load(votes)
    release = json.loads(render(records, "sciarena-release"))
    assert [tuple(r) for r in release] == [RELEASED_FIELDS] * len(QUESTIONS)
    assert [r["question"] for r in release] == [q for q, _ in QUESTIONS]
    full = [json.loads(line) for line in render(records, "jsonl").splitlines()]
    assert [len(r["turns"]) for r in full] == [1 + len(f) for _, f in QUESTIONS]


def test_eval_build_leaves_multi_turn_battles_out_and_counts_them(votes):
    records = load(votes)
    bench = build_benchmark(records, per_side=5)
    multi = sum(1 for _, f in QUESTIONS if f)
    assert bench.report.excluded["multi-turn battle"] == multi
    assert {item.id for item in bench.items} <= {r["id"] for r in records if r["num_turns"] == 1}


def test_the_leaderboard_tab_offers_single_and_multi_turn_views_once_both_have_votes(votes):
    records = load(votes)
    both = view_choices(vote_table(records))
    keys = [key for _, key in both]
    assert "turns:single-turn" in keys and "turns:multi-turn" in keys
    multi = select_view(vote_table(records), "turns:multi-turn")
    assert multi.n_votes == sum(1 for _, f in QUESTIONS if f)
    single_only = [r for r in records if r["num_turns"] == 1]
    assert not any(key.startswith("turns:") for _, key in view_choices(vote_table(single_only)))

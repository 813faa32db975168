"""The votes dataset's features (votes/features.py) and the card that declares them: a record with every field
filled has exactly the features' keys and types, nested ones included, and a folder laid out like the dataset,
with files written by every schema version, loads with ``load_dataset`` as the card says."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import replace
from typing import Any

import pytest
from datasets import Dataset, List, Value, load_dataset
from datasets.info import DatasetInfosDict
from fake_hub import FakeHub
from huggingface_hub import DatasetCardData, HfApi, metadata_load

from sciarena.arena.rules import ArenaSession, Ballot
from sciarena.core.settings import Settings
from sciarena.core.types import QuestionLabels, Usage, Vote
from sciarena.votes.features import vote_features
from sciarena.votes.schema import SCHEMA_VERSION, VOTE_FIELDS, vote_record
from sciarena.votes.store.hub import HubSync, dataset_card
from sciarena.votes.voter import Visitor

REPO = "org/votes"
QUESTION = "How does CRISPR-Cas9 achieve targeted genome editing, and what limits its precision?"
FOLLOW_UP = "What did the first direct detection of gravitational waves observe?"

# The fields each schema version's writer added, read from the history of sciarena/votes/schema.py on main
# (git log --first-parent): the first writer (2283775) wrote the rest; the labellers came with 2eb3a97 (still
# version 1) and became version 2 in fdcbcde; 3 is a0d06f0; 4 is a6e4599, and masked_a/b joined version-4
# records later (9d57689) without a new version; 5 is 6bb8deb; 6 is issue 30's identity check. Every writer wrote the same types as today's.
ADDED = {
    2: ("question_type_labeller", "subject_labeller"),
    3: ("pipeline_a", "pipeline_b"),
    4: ("subject_source", "subject_labelled", "shared", "shared_reason"),
    4.1: ("masked_a", "masked_b"),  # a later version-4 writer
    5: ("num_turns", "turns"),
    6: ("identity_revealed", "identity_reason"),
}


def as_written_by(record: dict[str, Any], version: float) -> dict[str, Any]:
    """``record`` as the writer of schema ``version`` wrote it: without the fields later versions added."""
    later = {name for v, names in ADDED.items() if v > version for name in names}
    old = {k: v for k, v in record.items() if k not in later}
    old["schema_version"] = int(version)
    return old


@pytest.fixture(scope="module")
def arena_records(tmp_path_factory, wire):
    """What the offline arena records for a battle with one follow-up, and the battle itself."""
    data = tmp_path_factory.mktemp("arena")
    arena = wire(Settings(data_dir=data, seed=0)).arena
    me = Visitor(session_hash="visitor-1")
    session = ArenaSession(battle=list(arena.start_battle(QUESTION, visitor=me))[-1].battle)
    session = replace(session, battle=list(arena.follow_up(session, FOLLOW_UP, visitor=me))[-1].battle)
    arena.vote(session, Ballot(choice="A", reason="A cites the guide RNA paper.", consent=True,
                               session_hash="visitor-1", shared=True, shared_reason=True))
    (path,) = sorted((data / "votes").rglob("*.jsonl"))
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()], session.battle


@pytest.fixture(scope="module")
def full_record(arena_records):
    """The arena's battle with what the offline models leave empty filled in (token counts, a pipeline report
    on the plain side), through the real vote_record: every field, nested ones included, has a value."""
    _, battle = arena_records

    def filled(side, other):
        return replace(side, usage=Usage(1200, 240), cost_usd=side.cost_usd or 0.0021,
                       report=side.report or other.report, first_token_s=side.first_token_s or 0.25)

    turns = [replace(t, side_a=filled(t.side_a, t.side_b), side_b=filled(t.side_b, t.side_a)) for t in battle.turns]
    first, *followups = turns
    battle = replace(battle, side_a=first.side_a, side_b=first.side_b, followups=tuple(followups))
    labels = QuestionLabels("Conceptual Explanation", "offline:rules:category", "Healthcare",
                            "offline:classifier:discipline", subject_source="asker", subject_labelled="Natural Science")
    return vote_record(Vote(battle, "A", reason="A cites the guide RNA paper.", voter_id="anon-1f2e",
                            timestamp="2026-12-02T06:00:00.000Z", shared=True, shared_reason=True,
                            identity_revealed=True, identity_reason="turn 2: the voter asked a contestant who it is"),
                       labels)


def check(value: Any, feature: Any, path: str, filled: set[str]) -> None:
    """Fail unless ``value`` has exactly ``feature``'s keys and types; add every path holding a value to
    ``filled``."""
    if value is None:
        return
    filled.add(path)
    if isinstance(feature, dict):
        assert isinstance(value, dict) and set(value) == set(feature), (path, sorted(set(value) ^ set(feature)))
        for key, sub in feature.items():
            check(value[key], sub, f"{path}.{key}", filled)
    elif isinstance(feature, List):
        assert isinstance(value, list), path
        for item in value:
            check(item, feature.feature, f"{path}[]", filled)
    else:
        assert isinstance(feature, Value), path
        kinds = {"string": (str,), "int64": (int,), "float64": (float, int), "bool": (bool,)}[feature.dtype]
        assert isinstance(value, kinds) and (feature.dtype == "bool") == isinstance(value, bool), (path, value)


def paths(feature: Any, path: str) -> set[str]:
    """Every path of a feature tree, as ``check`` names them."""
    out = {path}
    if isinstance(feature, dict):
        for key, sub in feature.items():
            out |= paths(sub, f"{path}.{key}")
    elif isinstance(feature, List):
        out |= paths(feature.feature, f"{path}[]")
    return out


def test_the_features_cover_exactly_a_full_records_fields_with_their_types(full_record):
    features = vote_features()
    assert tuple(features) == VOTE_FIELDS == tuple(full_record)
    filled: set[str] = set()
    check(full_record, dict(features), "", filled)
    # every field of the tree was checked against a value: a field the features miss, or one whose type they
    # get wrong, fails above; one the record stopped filling fails here
    assert filled == paths(dict(features), ""), sorted(paths(dict(features), "") - filled)
    assert full_record["num_turns"] == 2 and full_record["turns"][1]["references_added"]
    # and Arrow stores the record in these features without losing anything
    assert Dataset.from_list([full_record], features=features).to_list() == [full_record]


def test_what_the_arena_writes_has_the_features_keys(arena_records):
    (record,), _ = arena_records
    check(record, dict(vote_features()), "", set())
    assert record["schema_version"] == SCHEMA_VERSION


def test_the_card_header_declares_the_features_in_the_form_datasets_reads(tmp_path):
    card = dataset_card(REPO)
    (tmp_path / "README.md").write_text(card, encoding="utf-8")
    data = DatasetCardData(**metadata_load(tmp_path / "README.md"))  # the header, as huggingface_hub reads it
    assert DatasetInfosDict.from_dataset_card_data(data)["default"].features == vote_features()
    assert data.configs == [{"config_name": "default", "data_files": [{"split": "train", "path": "data/**/*.jsonl"}]}]
    assert "$" not in card.split("---\n")[1]


# --- the card's promise, end to end ----------------------------------------------------------------------
DAYS = {1: "2026-10-02", 2: "2026-11-03", 3: "2026-11-20", 4: "2026-12-01", 4.1: "2026-12-02", 5: "2026-12-03"}


@pytest.fixture(scope="module")
def dataset_folder(tmp_path_factory, full_record, arena_records):
    """A folder laid out like the votes dataset: the generated card, one file per schema version's writer."""
    (arena_record,), _ = arena_records
    root = tmp_path_factory.mktemp("dataset")
    (root / "README.md").write_text(dataset_card(REPO), encoding="utf-8")
    written = []
    for n, (version, day) in enumerate(DAYS.items()):
        records = [as_written_by({**base, "id": f"v{version}-{k}"}, version)
                   for k, base in enumerate((full_record, arena_record))]
        shard = root / "data" / day / f"votes-{n:08x}-0000-4000-8000-000000000000.jsonl"
        shard.parent.mkdir(parents=True)
        shard.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
        written.extend((day, r) for r in records)
    return root, written


def assert_rows_match(dataset, written) -> None:
    records = [r for _, r in written]
    assert dataset.num_rows == len(records)
    assert tuple(dataset.column_names) == VOTE_FIELDS
    rows = {row["id"]: row for row in dataset.to_list()}
    for record in records:
        row = rows[record["id"]]
        assert {k: row[k] for k in record} == record  # every value read as written
        assert all(row[k] is None for k in set(VOTE_FIELDS) - set(record)), record["schema_version"]


def loading_blocks() -> list[str]:
    """The card's Python blocks that load with 🤗 Datasets: the whole dataset, and one month of it."""
    blocks = [b for b in re.findall(r"```python\n(.*?)```", dataset_card(REPO), re.S) if "from datasets" in b]
    assert len(blocks) == 2
    return blocks


def in_december(written):
    """What the card's one-month example reads: the files of three writers (two schema versions)."""
    december = [(day, r) for day, r in written if day.startswith("2026-12")]
    assert {r["schema_version"] for _, r in december} == {4, 5}
    return december


def test_without_the_cards_features_files_of_two_versions_do_not_load_together(dataset_folder, tmp_path):
    from datasets.exceptions import DatasetGenerationError

    root, _ = dataset_folder
    files = [str(p) for p in sorted(root.glob("data/**/*.jsonl"))]
    with pytest.raises(DatasetGenerationError):  # the defect the features fix, so this test can fail
        load_dataset("json", data_files=files, split="train", cache_dir=str(tmp_path / "hf"))


def test_the_folder_loads_every_version_with_missing_columns_null(dataset_folder, tmp_path):
    root, written = dataset_folder
    assert {r["schema_version"] for _, r in written} == {1, 2, 3, 4, 5}
    dataset = load_dataset(str(root), split="train", cache_dir=str(tmp_path / "hf"))
    assert_rows_match(dataset, written)
    assert dataset.features == vote_features()


def test_the_cards_own_loading_lines_read_every_row(dataset_folder, tmp_path, monkeypatch):
    import datasets

    root, written = dataset_folder
    blocks = loading_blocks()
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "hf")  # the lines name no cache
    names: dict[str, Any] = {}
    for block in blocks:
        exec(block.replace(f'"{REPO}"', repr(str(root))), names)  # the card's exact lines, on the folder
    assert_rows_match(names["votes"], written)
    december = in_december(written)
    assert_rows_match(names["december"], december)


def test_the_cards_loading_lines_read_every_row_from_a_loopback_hub(dataset_folder, tmp_path):
    """The same files pushed by the app's own HubSync (which writes the card) and read back through the Hub
    API by the card's exact lines, repo id included, in a process whose HF_ENDPOINT is the loopback Hub."""
    root, written = dataset_folder
    blocks = loading_blocks()
    script = "\n".join(blocks) + (
        "\nimport json, sys\njson.dump({'votes': votes.to_list(), 'december': december.to_list()}, sys.stdout)\n")
    with FakeHub() as hub:
        sync = HubSync(root / "data", REPO, api=HfApi(endpoint=hub.endpoint, token="hf_test"),
                       card=dataset_card(REPO))
        assert sync.push_now() and sync.pending_votes() == 0
        assert hub.files(REPO)["README.md"].decode() == dataset_card(REPO)
        env = {**os.environ, "HF_ENDPOINT": hub.endpoint, "HF_HOME": str(tmp_path / "hf"), "HF_TOKEN": "hf_test",
               "HF_HUB_DISABLE_TELEMETRY": "1"}
        env.pop("HF_HUB_OFFLINE", None), env.pop("HF_DATASETS_OFFLINE", None)
        done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    loaded = json.loads(done.stdout)
    assert_rows_match(Dataset.from_list(loaded["votes"], features=vote_features()), written)
    december = in_december(written)
    assert_rows_match(Dataset.from_list(loaded["december"], features=vote_features()), december)


def test_the_card_command_writes_the_card_the_app_publishes(tmp_path, capsys):
    from sciarena.cli.main import main

    assert main(["card", "--repo", "me/my-votes", "--out", str(tmp_path / "README.md")]) == 0
    assert (tmp_path / "README.md").read_text(encoding="utf-8") == dataset_card("me/my-votes")
    assert "me/my-votes" in capsys.readouterr().out

"""``label categories|disciplines`` accept the labellers the app records (issue 34, item 6): run with the name
a vote's ``subject_labeller`` / ``question_type_labeller`` holds, the command gives every vote the field the
app recorded for it, so anyone can label a vote file as the app does."""

from __future__ import annotations

import argparse
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from sciarena.arena.labels.labellers import CLASSIFIER_NAME
from sciarena.arena.rules import ArenaSession, Ballot
from sciarena.cli import label as label_cli
from sciarena.core.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
QUESTIONS = (
    "Which randomised trials compare SGLT2 inhibitors with metformin for heart failure outcomes?",
    "How do transformers use self-attention to replace recurrence in sequence models?",
    "What explains the observed rotation curves of spiral galaxies without dark matter?",
    "How does minimum wage policy affect youth employment according to recent econometric studies?",
    "What limits the fatigue life of additively manufactured titanium parts?",
)


def _app_records(scripted, make_services) -> tuple[Path, list[dict]]:
    scripted.add("a", "A [1].")
    scripted.add("b", "B [1].")
    services = make_services()
    for question in QUESTIONS:
        battle = list(services.arena.start_battle(question))[-1].battle
        services.arena.vote(ArenaSession(battle=battle), Ballot(choice="A", consent=True))
    return services.arena.store.root, list(services.arena.store.records())


def _labels(path: Path) -> dict[str, str]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return {row["vote_id"]: row["label"] for row in rows if row["status"] == "ok"}


def _run(*argv: str) -> tuple[int, str, str]:
    parser = argparse.ArgumentParser()
    label_cli.add_subcommands(parser.add_subparsers(dest="label_command", required=True))
    args = parser.parse_args(list(argv))
    out, err = io.StringIO(), io.StringIO()
    code = args.run(args, settings=Settings(), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.slow  # starts a subprocess: the command line as a user runs it
def test_the_command_labels_disciplines_with_the_apps_classifier(scripted, make_services, tmp_path):
    folder, records = _app_records(scripted, make_services)
    assert {r["subject_labeller"] for r in records} == {CLASSIFIER_NAME}
    out = tmp_path / "disciplines.jsonl"
    # The command line itself, in its own process (the classifier is fitted there, not in this one).
    done = subprocess.run([sys.executable, "-m", "sciarena", "label", "disciplines", "--votes", str(folder),
                           "--model", CLASSIFIER_NAME, "--out", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "with 0 model call(s); estimated cost $0.00" in done.stdout
    assert _labels(out) == {r["id"]: r["subject_labelled"] for r in records}
    assert f"agrees with the stored subject on {len(records)} of {len(records)} votes (100.0%)" in done.stdout


def test_the_command_takes_the_rules_by_their_recorded_name(scripted, make_services, tmp_path):
    folder, records = _app_records(scripted, make_services)
    recorded = {r["question_type_labeller"] for r in records}
    assert recorded == {"offline:rules:category"}
    out = tmp_path / "categories.jsonl"
    code, text, err = _run("categories", "--votes", str(folder), "--model", recorded.pop(), "--out", str(out))
    assert code == 0, err
    assert _labels(out) == {r["id"]: r["question_type"] for r in records}


def test_the_classifier_is_refused_for_categories_with_a_clear_message(scripted, make_services, tmp_path):
    folder, _ = _app_records(scripted, make_services)
    code, _, err = _run("categories", "--votes", str(folder), "--model", CLASSIFIER_NAME,
                        "--out", str(tmp_path / "x.jsonl"))
    assert code == 2
    assert err.strip() == (f"sciarena label categories: {CLASSIFIER_NAME} labels disciplines only; use "
                           "offline:rules for category labels")

"""`label attribution` end to end: votes the offline arena stored, a released-schema file, the lexical
baseline and a catalogue model on the loopback OpenAI-compatible server (resume, garbage, timeouts),
the leaderboard reading the counts, and bad input."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import random
from pathlib import Path
from typing import Any

import pytest
from fake_openai import FakeOpenAI

from sciarena.cli import label as label_cli
from sciarena.cli import main as sciarena_cli
from sciarena.core.settings import Settings
from sciarena.science.labelling.attribution import IRRELEVANT, LEXICAL_THRESHOLD, SUPPORTING, record_pairs
from sciarena.votes.read import load

MODEL = "Loop Judge"
QUESTIONS = ("How does CRISPR-Cas9 gene editing work?", "What limits the efficiency of perovskite solar cells?",
             "What are the effects of minimum wage on employment?")


def arena_votes(data_dir: Path, wire) -> Path:
    """Votes stored by the real services with the offline contestants, as the app stores them."""
    from sciarena.core.types import Vote
    from sciarena.votes.schema import vote_record

    # Seeded: three votes between random pairs can, by chance, give a style feature no variance at all.
    arena = wire(Settings.from_env({"SCIARENA_DATA_DIR": str(data_dir), "SCIARENA_SEED": "0"})).arena
    rng = random.Random(0)
    for k, question in enumerate(QUESTIONS):
        *_, last = arena.start_battle(question)
        vote = Vote(battle=last.battle, choice=rng.choice(["A", "B", "tie", "bad"]), voter_id=f"u{k}")
        arena.store.append(vote_record(vote))
    return data_dir / "votes"


def released_votes(path: Path) -> Path:
    """Two votes in the released schema: author–year citations, no numbers, mixed-case labels."""
    cite = [{"concise_authors": "Komor et al. 2016", "title": "Base editing", "id": "1",
             "content": "Base editors convert cytidine to thymidine without double-stranded DNA breaks."},
            {"concise_authors": "Anzalone et al. 2019", "title": "Prime editing", "id": "2",
             "content": "We describe how soil bacteria fix nitrogen in alpine meadows."}]
    answer = ("Base editing converts cytidine to thymidine without double-strand breaks (Komor et al., 2016). "
              "Prime editing extends this (Anzalone et al. 2019; Komor et al. 2016).")
    records = [{"id": f"r{k}", "question": "How do base editors work?", "responseA": answer, "responseB": "No cites.",
                "modelA": "GPT-4.1", "modelB": "o3", "vote": vote, "citations_a": cite, "citations_b": [],
                "question_type": "Conceptual Explanation", "subject": "Natural Science"}
               for k, vote in enumerate(("A", "b"))]
    path.write_text(json.dumps(records), encoding="utf-8")
    return path


def run_cli(argv: list[str], settings: Settings | None = None) -> tuple[int, str, str]:
    parser = argparse.ArgumentParser()
    label_cli.add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["label", "attribution", *argv])
    out, err = io.StringIO(), io.StringIO()
    code = args.run(args, settings=settings or Settings.from_env({}), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def settings_for(tmp_path: Path, server: FakeOpenAI) -> Settings:
    path = tmp_path / "models.json"
    path.write_text(json.dumps({
        "endpoints": {"loop": {"base_url": server.base_url, "key_env": "LOOP_API_KEY"}},
        "models": [{"name": MODEL, "provider": "loop", "model_id": "judge",
                    "price_input_per_m": 1.0, "price_output_per_m": 4.0}],
    }))
    return Settings.from_env({"SCIARENA_MODELS": str(path), "LOOP_API_KEY": "sk-test"})


def passage_of(body: dict[str, Any]) -> str:
    return body["messages"][-1]["content"].split("Cited passage:\n", 1)[1].rsplit("\n\nVerdict:", 1)[0]


def rule(passage: str) -> str:
    """The scripted judge's verdict: any fixed function of the passage the test can recompute."""
    if "nitrogen" in passage:
        return IRRELEVANT
    return SUPPORTING if "cytidine" in passage or len(passage) % 3 else IRRELEVANT


def scripted(body: dict[str, Any]) -> list[str]:
    return [rule(passage_of(body))]


def expected_counts(records: list[dict[str, Any]]) -> list[tuple[int, ...]]:
    out = []
    for record in records:
        row: tuple[int, ...] = ()
        for side in record_pairs(record).values():
            verdicts = [rule(p.passage) for p in side.pairs]
            row += (verdicts.count(SUPPORTING), verdicts.count(IRRELEVANT))
        out.append(row)
    return out


def written_counts(path: Path) -> list[tuple[int | None, ...]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return [(r["num_supporting_a"], r["num_irrelevant_a"], r["num_supporting_b"], r["num_irrelevant_b"])
            for r in rows]


def test_the_lexical_baseline_on_arena_votes_feeds_the_leaderboards_style_control(tmp_path: Path, wire) -> None:
    votes = arena_votes(tmp_path / "arena", wire)
    out_file = tmp_path / "attributed.jsonl"
    code, out, err = run_cli(["--votes", str(votes), "--judge", "offline:lexical", "--out", str(out_file)])
    assert code == 0, err
    assert "0 model call(s); estimated cost $0.00" in out and "6 of 6 answers have counts" in out
    rows = load(out_file)
    assert len(rows) == 3 and all(r["attribution_judge"] == f"offline:lexical@{LEXICAL_THRESHOLD:g}" for r in rows)
    assert all(isinstance(r[f"num_{k}_{s}"], int) for r in rows for k in ("supporting", "irrelevant") for s in "ab")
    assert [r["id"] for r in rows] == [r["id"] for r in load(votes)]  # every vote, every field kept

    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout):
        code = sciarena_cli.main(["leaderboard", "--votes", str(out_file), "--style", "supporting,irrelevant",
                                  "--min-battles", "1", "--format", "json", "--bootstrap", "10"])
    assert code == 0
    style = json.loads(stdout.getvalue())["style"]
    assert style["votes_used"] == 3
    assert [c["feature"] for c in style["coefficients"]] == ["supporting", "irrelevant"]


def test_a_model_judges_each_distinct_pair_once_and_a_rerun_calls_nothing(tmp_path: Path,
                                                                          fake_openai: FakeOpenAI, wire) -> None:
    fake_openai.add_script("judge", respond=scripted)
    votes = arena_votes(tmp_path / "arena", wire)
    records = load(votes)
    distinct = {p.key for r in records for side in record_pairs(r).values() for p in side.pairs}
    out_file = tmp_path / "attributed.jsonl"
    argv = ["--votes", str(votes), "--judge", MODEL, "--out", str(out_file)]
    settings = settings_for(tmp_path, fake_openai)
    code, out, err = run_cli(argv, settings)
    assert code == 0, err
    assert f"{len(distinct)} to judge with {len(distinct)} model call(s); estimated cost $0.0" in out
    assert len(fake_openai.requests("judge")) == len(distinct)
    assert written_counts(out_file) == expected_counts(records)

    first = out_file.read_text(encoding="utf-8")
    code, out, _ = run_cli(argv, settings)
    assert code == 0 and "0 to judge with 0 model call(s)" in out
    assert len(fake_openai.requests("judge")) == len(distinct)
    assert out_file.read_text(encoding="utf-8") == first


def test_a_released_schema_file_is_judged_through_its_author_year_citations(tmp_path: Path,
                                                                            fake_openai: FakeOpenAI) -> None:
    fake_openai.add_script("judge", respond=scripted)
    votes = released_votes(tmp_path / "train.json")
    out_file = tmp_path / "attributed.jsonl"
    code, out, err = run_cli(["--votes", str(votes), "--judge", MODEL, "--out", str(out_file)],
                             settings_for(tmp_path, fake_openai))
    assert code == 0, err
    assert "6 (sentence, citation) pairs (3 distinct" in out  # both votes share the answer
    assert written_counts(out_file) == [(2, 1, 0, 0), (2, 1, 0, 0)]  # Anzalone's passage is off-topic
    assert {r["vote"] for r in load(out_file)} == {"A", "b"}  # the records are kept as they were


def test_garbage_replies_are_invalid_and_leave_that_answers_counts_null(tmp_path: Path,
                                                                        fake_openai: FakeOpenAI) -> None:
    def answers(body: dict[str, Any]) -> list[str]:
        return ["I think it", " partly supports it."] if "nitrogen" in passage_of(body) else ["supporting"]

    fake_openai.add_script("judge", respond=answers)
    out_file = tmp_path / "attributed.jsonl"
    code, out, err = run_cli(["--votes", str(released_votes(tmp_path / "v.json")), "--judge", MODEL,
                              "--out", str(out_file)], settings_for(tmp_path, fake_openai))
    assert code == 0, err
    assert "supporting 2, invalid 1" in out and "2 of 4 answers have counts" in out
    assert written_counts(out_file) == [(None, None, 0, 0), (None, None, 0, 0)]


def test_timed_out_calls_are_retried_on_the_next_run_and_nothing_is_half_written(tmp_path: Path,
                                                                                 fake_openai: FakeOpenAI) -> None:
    # The judge never answers (the server only keeps the stream alive until the client hangs up), so every
    # call ends at the --timeout deadline however busy the machine; the rerun has the default deadline.
    fake_openai.add_script("judge", keep_alive_only=True)
    out_file = tmp_path / "out" / "attributed.jsonl"
    argv = ["--votes", str(released_votes(tmp_path / "v.json")), "--judge", MODEL, "--out", str(out_file)]
    settings = settings_for(tmp_path, fake_openai)
    code, out, err = run_cli([*argv, "--timeout", "0.2"], settings)
    assert code == 1
    assert "3 pair(s) without a verdict because calls failed; rerun with the same --out and --log" in err
    assert "Traceback" not in err
    assert written_counts(out_file) == [(None, None, 0, 0), (None, None, 0, 0)]
    assert sorted(p.name for p in out_file.parent.iterdir()) == ["attributed.jsonl", "attributed.jsonl.verdicts"]

    fake_openai.add_script("judge", respond=scripted)
    code, out, err = run_cli(argv, settings)
    assert code == 0, err
    assert "0 already judged" in out and "3 to judge with 3 model call(s)" in out
    assert written_counts(out_file) == [(2, 1, 0, 0), (2, 1, 0, 0)]


def test_dry_run_prints_the_calls_and_cost_and_writes_nothing(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    out_file = tmp_path / "attributed.jsonl"
    code, out, _ = run_cli(["--votes", str(released_votes(tmp_path / "v.json")), "--judge", MODEL, "--out",
                            str(out_file), "--dry-run"], settings_for(tmp_path, fake_openai))
    assert code == 0
    assert "3 to judge with 3 model call(s); estimated cost $0.00 (~" in out
    assert fake_openai.requests("judge") == [] and not out_file.exists()
    assert not out_file.with_name(out_file.name + ".verdicts").exists()


@pytest.mark.parametrize("case, message", [
    ("no votes", "no votes in"),
    ("no citations", "no (sentence, citation) pairs"),
    ("missing passages", "3 citation(s) without a passage or a citation list"),
    ("unknown judge", "unknown judge 'No Such Model'"),
    ("out inside votes", "is inside the votes read"),
    ("foreign log", "is not an attribution verdict"),
    ("missing votes", "no such file or folder"),
])
def test_bad_input_is_one_line_exit_2_and_writes_nothing(tmp_path: Path, case: str, message: str) -> None:
    votes = released_votes(tmp_path / "votes" / "v.json") if (tmp_path / "votes").mkdir() is None else None
    out_file, judge, extra = tmp_path / "attributed.jsonl", "offline:lexical", []
    record = json.loads(votes.read_text(encoding="utf-8"))[0]
    if case == "no votes":
        votes.write_text("[]", encoding="utf-8")
    elif case == "no citations":
        votes.write_text(json.dumps([{**record, "responseA": "Nothing cited.", "citations_b": []}]))
    elif case == "missing passages":
        stripped = [{**c, "content": None} for c in record["citations_a"]]
        votes.write_text(json.dumps([{**record, "citations_a": stripped}]))
    elif case == "unknown judge":
        judge = "No Such Model"
    elif case == "out inside votes":
        out_file = tmp_path / "votes" / "attributed.jsonl"
        votes = votes.parent
    elif case == "foreign log":
        log_file = tmp_path / "labels.jsonl"
        log_file.write_text(json.dumps({"vote_id": "v1", "task": "category"}) + "\n")
        extra = ["--log", str(log_file)]
    else:
        votes = tmp_path / "nowhere.json"
    code, out, err = run_cli(["--votes", str(votes), "--judge", judge, "--out", str(out_file), *extra])
    assert code == 2 and out == ""
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not out_file.exists() and not out_file.with_name(out_file.name + ".verdicts").exists()

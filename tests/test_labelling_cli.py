"""`label categories|disciplines` end to end: offline rules, a catalogue model on a loopback
OpenAI-compatible server (resume, shared questions, garbage replies, timeouts), bad input."""

from __future__ import annotations

import argparse
import io
import json
from pathlib import Path
from typing import Any

import pytest
from fake_openai import FakeOpenAI

from sciarena.cli import label as label_cli
from sciarena.core.settings import Settings
from sciarena.science.labelling.store import LabelLog, question_hash

MODEL = "Loop Labeller"
QUESTIONS = {
    "Which paper introduced the Adam optimizer?": ("Paper Finding", "Engineering"),
    "Why does batch normalization make deep networks train faster?": ("Conceptual Explanation", "Engineering"),
    "What limits the effectiveness of CAR-T therapy in solid tumours?": ("Challenges & Limitations", "Healthcare"),
    "How should a stepped-wedge cluster randomized trial be analysed?": ("Methodology Inquiry", "Healthcare"),
}


def run_cli(argv: list[str], settings: Settings | None = None) -> tuple[int, str, str]:
    parser = argparse.ArgumentParser()
    label_cli.add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    out, err = io.StringIO(), io.StringIO()
    code = args.run(args, settings=settings, out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def write_votes(path: Path, questions: list[str], stored: str = "Others") -> Path:
    lines = [{"id": f"v{k}", "question": q, "question_type": stored, "subject": "Engineering", "vote": "A",
              "modelA": "M1", "modelB": "M2"} for k, q in enumerate(questions)]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def settings_for(tmp_path: Path, server: FakeOpenAI, *, priced: bool = True) -> Settings:
    path = tmp_path / "models.json"
    prices = {"price_input_per_m": 2.0, "price_output_per_m": 8.0} if priced else {}
    path.write_text(json.dumps({
        "endpoints": {"loop": {"base_url": server.base_url, "key_env": "LOOP_API_KEY"}},
        "models": [{"name": MODEL, "provider": "loop", "model_id": "labeller", **prices}],
    }))
    return Settings.from_env({"SCIARENA_MODELS": str(path), "LOOP_API_KEY": "sk-test"})


def answers(body: dict[str, Any]) -> list[str]:
    """Reply with the right label, except garbage for the CAR-T question."""
    user = body["messages"][-1]["content"]
    question = user.split("Question:\n", 1)[1].rsplit("\n\n", 1)[0]
    if "CAR-T" in question:
        return ["This question is about", " oncology, I believe."]
    category, discipline = QUESTIONS[question]
    return [category if "Category:" in user else discipline]


def test_offline_rules_label_every_vote_without_calls(tmp_path: Path) -> None:
    votes = write_votes(tmp_path / "votes.jsonl", list(QUESTIONS), stored="Paper Finding")
    out_file = tmp_path / "labels.jsonl"
    code, out, err = run_cli(["label", "categories", "--votes", str(votes), "--model", "offline:rules",
                              "--out", str(out_file)])
    assert code == 0, err
    assert "4 to label with 0 model call(s); estimated cost $0.00" in out
    saved = {v.vote_id: v for v in LabelLog(out_file).read()}
    assert {k: v.label for k, v in saved.items()} == {f"v{k}": c for k, (c, _) in enumerate(QUESTIONS.values())}
    assert {v.labeller for v in saved.values()} == {"offline:rules:category"}
    assert saved["v0"].question_hash == question_hash(list(QUESTIONS)[0])
    assert "agrees with the stored question_type on 1 of 4 votes (25.0%)" in out


def test_a_model_labels_votes_once_per_question_and_a_rerun_calls_nothing(tmp_path: Path,
                                                                         fake_openai: FakeOpenAI) -> None:
    fake_openai.add_script("labeller", respond=answers)
    questions = list(QUESTIONS) + [list(QUESTIONS)[0]]  # v4 repeats v0's question
    votes = write_votes(tmp_path / "votes.jsonl", questions)
    out_file = tmp_path / "labels.jsonl"
    settings = settings_for(tmp_path, fake_openai)
    argv = ["label", "disciplines", "--votes", str(votes), "--model", MODEL, "--out", str(out_file)]
    code, out, err = run_cli(argv, settings)
    assert code == 0, err
    assert "5 to label with 4 model call(s); estimated cost $0.00 (~" in out
    assert len(fake_openai.requests("labeller")) == 4
    saved = {v.vote_id: v for v in LabelLog(out_file).read()}
    assert len(saved) == 5 and saved["v4"].label == saved["v0"].label == "Engineering"
    assert (saved["v2"].status, saved["v2"].label) == ("invalid", "")
    assert saved["v2"].raw == "This question is about oncology, I believe."
    assert {v.labeller for v in saved.values()} == {MODEL}
    assert "ok 4, invalid 1" in out and "agrees with the stored subject on 3 of 4 votes (75.0%)" in out

    code, out, err = run_cli(argv, settings)
    assert code == 0, err
    assert "5 already labelled by Loop Labeller" in out and "0 model call(s)" in out
    assert len(fake_openai.requests("labeller")) == 4
    assert len(LabelLog(out_file).read()) == 5


def test_the_cost_estimate_uses_catalogue_prices_and_says_when_there_are_none(tmp_path: Path,
                                                                           fake_openai: FakeOpenAI) -> None:
    questions = [f"What is the role of protein {k} in cell signalling?" for k in range(300)]
    votes = write_votes(tmp_path / "votes.jsonl", questions)
    argv = ["label", "categories", "--votes", str(votes), "--model", MODEL, "--out", str(tmp_path / "l.jsonl"),
            "--dry-run"]
    code, out, _ = run_cli(argv, settings_for(tmp_path, fake_openai))
    assert code == 0 and "300 model call(s)" in out
    tokens_in = int(out.split("(~")[1].split(" input")[0].replace(",", ""))
    expected = (tokens_in * 2.0 + 8 * 300 * 8.0) / 1e6
    assert f"estimated cost ${expected:.2f}" in out and 300 * 200 < tokens_in < 300 * 400
    code, out, _ = run_cli(argv, settings_for(tmp_path, fake_openai, priced=False))
    assert code == 0 and "unknown (the catalogue has no prices for Loop Labeller)" in out
    assert not (tmp_path / "l.jsonl").exists() and fake_openai.requests("labeller") == []


def test_timed_out_calls_are_recorded_and_retried_on_the_next_run(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    fake_openai.add_script("labeller", chunks=("Others",), first_token_delay_s=1.0)
    votes = write_votes(tmp_path / "votes.jsonl", list(QUESTIONS)[:2])
    out_file = tmp_path / "labels.jsonl"
    argv = ["label", "categories", "--votes", str(votes), "--model", MODEL, "--out", str(out_file),
            "--timeout", "0.2"]
    settings = settings_for(tmp_path, fake_openai)
    code, out, err = run_cli(argv, settings)
    assert code == 1
    assert "2 vote(s) without a label because calls failed; rerun with the same --out file" in err
    assert "Traceback" not in err
    assert [v.status for v in LabelLog(out_file).read()] == ["error", "error"]

    fake_openai.add_script("labeller", respond=answers)
    code, out, err = run_cli(argv, settings)
    assert code == 0, err
    assert "2 to label with 2 model call(s)" in out
    latest = LabelLog(out_file).latest("category", MODEL)
    assert sorted(v.label for v in latest.values()) == ["Conceptual Explanation", "Paper Finding"]


@pytest.mark.parametrize("case", ["missing", "empty", "no questions"])
def test_unusable_votes_are_one_line_and_write_nothing(tmp_path: Path, case: str) -> None:
    votes = tmp_path / "votes.jsonl"
    if case == "empty":
        votes.write_text("", encoding="utf-8")
    elif case == "no questions":
        votes.write_text(json.dumps({"id": "v1", "question": "  ", "vote": "A"}) + "\n", encoding="utf-8")
    out_file = tmp_path / "labels.jsonl"
    code, out, err = run_cli(["label", "categories", "--votes", str(votes), "--model", "offline:rules",
                              "--out", str(out_file)])
    assert code == 2 and err.startswith("sciarena label categories: ") and len(err.strip().splitlines()) == 1
    assert "Traceback" not in err and not out_file.exists()


def test_unknown_model_and_foreign_out_file_are_refused(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    votes = write_votes(tmp_path / "votes.jsonl", list(QUESTIONS))
    settings = settings_for(tmp_path, fake_openai)
    code, _, err = run_cli(["label", "categories", "--votes", str(votes), "--model", "no-such-model",
                            "--out", str(tmp_path / "l.jsonl")], settings)
    assert code == 2 and "unknown model 'no-such-model'" in err
    foreign = tmp_path / "predictions.jsonl"
    foreign.write_text(json.dumps({"id": "x", "verdict": "A"}) + "\n", encoding="utf-8")
    code, _, err = run_cli(["label", "categories", "--votes", str(votes), "--model", "offline:rules",
                            "--out", str(foreign)], settings)
    assert code == 2 and "line 1 is not a vote label" in err
    assert foreign.read_text(encoding="utf-8").count("\n") == 1


def test_label_votes_stops_after_a_run_of_failures_and_saves_calls_in_flight_on_ctrl_c() -> None:
    from sciarena.arena.labels.labellers import CATEGORY, LLMLabeller
    from sciarena.core.errors import ProviderError
    from sciarena.science.labelling.store import VoteQuestion, label_votes

    items = [VoteQuestion(f"v{k}", f"Question {k}?") for k in range(10)]

    def failing(messages: list[dict[str, str]]) -> str:
        raise ProviderError("key revoked")

    outcome = label_votes(items, LLMLabeller(CATEGORY, failing, "M"), concurrency=1, max_consecutive_errors=3)
    assert [v.status for v in outcome.labels] == ["error"] * 3 and "3 failed calls in a row" in outcome.stopped
    assert outcome.labels[0].error == "key revoked" and outcome.labels[0].labeller == "M"

    def interrupted_on_second(messages: list[dict[str, str]]) -> str:
        if "Question 1?" in messages[-1]["content"]:
            raise KeyboardInterrupt
        return "Others"

    seen: list[str] = []
    with pytest.raises(KeyboardInterrupt):
        label_votes(items, LLMLabeller(CATEGORY, interrupted_on_second, "M"), concurrency=1,
                    on_label=lambda v: seen.append(v.vote_id))
    assert seen == ["v0"]


def test_a_torn_last_line_is_skipped_and_the_next_label_starts_a_fresh_line(tmp_path: Path) -> None:
    votes = write_votes(tmp_path / "votes.jsonl", list(QUESTIONS)[:2])
    out_file = tmp_path / "labels.jsonl"
    argv = ["label", "categories", "--votes", str(votes), "--model", "offline:rules", "--out", str(out_file)]
    assert run_cli(argv + ["--limit", "1"])[0] == 0
    out_file.write_text(out_file.read_text(encoding="utf-8") + '{"vote_id": "v1", "quest', encoding="utf-8")
    code, out, err = run_cli(argv)
    assert code == 0, err
    assert "1 already labelled" in out
    assert [v.vote_id for v in LabelLog(out_file).read()] == ["v0", "v1"]

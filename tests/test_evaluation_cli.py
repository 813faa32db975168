"""`python -m sciarena eval build|run` end to end: baselines offline, model judges on a loopback
OpenAI-compatible server (resume, swap, garbage replies, 429 retries, failures, bad input)."""

from __future__ import annotations

import dataclasses
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fake_openai import FakeOpenAI

from sciarena.cli.main import build_parser
from sciarena.core.settings import Settings
from sciarena.core.types import DISCIPLINES
from sciarena.science.evaluation.benchmark import EvalItem, read_benchmark, write_benchmark
from sciarena.science.evaluation.judge import build_judge_messages
from sciarena.science.evaluation.runner import PredictionLog, run_judge

ROOT = Path(__file__).resolve().parents[1]
JUDGE = "Loop Judge"


def run_cli(argv: list[str], settings: Settings | None = None) -> tuple[int, str, str]:
    args = build_parser().parse_args(argv)
    out, err = io.StringIO(), io.StringIO()
    code = args.run(args, settings=settings, out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def marker_bench(tmp_path: Path, n: int = 8, wrong_every: int = 4) -> tuple[Path, list[EvalItem]]:
    """Items whose better answer (per a marker-seeking judge) is the human's, except every ``wrong_every``-th."""
    items = []
    for k in range(n):
        human = "AB"[k % 2]
        marked = human if k % wrong_every else {"A": "B", "B": "A"}[human]
        a = f"First answer to item {k}." + (" MARKER" if marked == "A" else "")
        b = f"Second answer to item {k}." + (" MARKER" if marked == "B" else "")
        items.append(EvalItem(id=f"it{k}", question=f"Question {k}?", response_a=a, response_b=b, human=human,
                              subject=DISCIPLINES[k % 4]))
    path = tmp_path / "bench.jsonl"
    write_benchmark(items, path)
    return path, items


def prefers_marker(items: list[EvalItem]):
    """A judge that names whichever shown answer contains MARKER (so it is right where the human marked it)."""
    def respond(body: dict) -> list[str]:
        text = body["messages"][-1]["content"]
        for it in items:
            if it.response_a in text and it.response_b in text:
                good, other = (it.response_a, it.response_b) if "MARKER" in it.response_a else (it.response_b, it.response_a)
                return ["Verdict: ", "A" if text.index(good) < text.index(other) else "B"]
        return ["no idea"]
    return respond


def settings_for(tmp_path: Path, server: FakeOpenAI, key: str | None = "sk-test") -> Settings:
    path = tmp_path / "models.json"
    path.write_text(json.dumps({
        "endpoints": {"loop": {"base_url": server.base_url, "key_env": "LOOP_API_KEY"}},
        "models": [{"name": JUDGE, "provider": "loop", "model_id": "judge"}],
    }))
    env = {"SCIARENA_MODELS": str(path), **({"LOOP_API_KEY": key} if key else {})}
    return Settings.from_env(env)


def run_json(argv: list[str], settings: Settings | None = None) -> tuple[int, dict, str]:
    code, out, err = run_cli(argv + ["--format", "json"], settings)
    return code, json.loads(out) if out.strip() else {}, err


def write_votes(path: Path, n_per: int = 12) -> Path:
    lines = []
    for d, subject in enumerate(DISCIPLINES):
        for k in range(n_per):
            label = ("A", "b", "Tie", "B", "a", "bad")[k % 6]
            lines.append({"id": f"{d}-{k}", "question": f"Q {d}-{k}?", "subject": subject, "vote": label,
                          "responseA": "word " * (5 + (k * 7) % 11) + "[1]", "responseB": "word " * (3 + (k * 5) % 13),
                          "modelA": "M1", "modelB": "M2"})
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def test_build_then_a_baseline_run_scores_every_item(tmp_path):
    votes = write_votes(tmp_path / "votes.jsonl")
    bench = tmp_path / "bench.jsonl"
    code, out, err = run_cli(["eval", "build", "--votes", str(votes), "--out", str(bench), "--per-side", "3"])
    assert code == 0, err
    assert "wrote 24 items" in out and "excluded: both bad 8, tie 8" in out
    assert "only 2 vote(s) preferring A" not in out  # 4 A per discipline: enough for 3
    items = read_benchmark(bench)
    decided = [it for it in items if len(it.response_a) != len(it.response_b)]
    expected = sum((len(it.response_a) > len(it.response_b)) == (it.human == "A") for it in decided) / len(decided)
    code, report, err = run_json(["eval", "run", "--bench", str(bench), "--judge", "baseline:longer"])
    assert code == 0, err
    score = report["score"]
    assert report["kind"] == "baseline" and score["items"] == 24 and score["valid"] == len(decided)
    assert score["accuracy"] == pytest.approx(expected)
    assert list(score["per_discipline"]) == list(DISCIPLINES)
    code, table, _ = run_cli(["eval", "run", "--bench", str(bench), "--judge", "baseline:longer"])
    assert code == 0 and "a fixed rule, not a model" in table
    assert all(d in table for d in DISCIPLINES) and f"{100 * expected:.1f}%" in table


def test_a_model_judge_is_scored_against_the_human_votes(tmp_path, fake_openai):
    bench, items = marker_bench(tmp_path)
    fake_openai.add_script("judge", respond=prefers_marker(items))
    code, report, err = run_json(["eval", "run", "--bench", str(bench), "--judge", JUDGE, "--concurrency", "3"],
                                 settings_for(tmp_path, fake_openai))
    assert code == 0, err
    assert report["score"]["accuracy"] == pytest.approx(6 / 8) and report["score"]["valid"] == 8
    assert fake_openai.attempts("judge") == 8
    sent = [r.body["messages"] for r in fake_openai.requests("judge")]
    assert all(build_judge_messages(it) in sent for it in items)


def test_predictions_are_appended_as_they_arrive_and_a_rerun_resumes(tmp_path, fake_openai):
    bench, items = marker_bench(tmp_path)
    fake_openai.add_script("judge", respond=prefers_marker(items))
    settings = settings_for(tmp_path, fake_openai)
    preds = tmp_path / "preds.jsonl"
    base = ["eval", "run", "--bench", str(bench), "--judge", JUDGE, "--predictions", str(preds)]
    code, first, _ = run_json(base + ["--limit", "3"], settings)
    assert code == 0 and first["judged_now"] == 3 and fake_openai.attempts("judge") == 3
    assert [p.id for p in PredictionLog(preds).read()] and len(preds.read_text().splitlines()) == 3
    code, full, _ = run_json(base, settings)
    assert (full["judged_now"], full["from_earlier"]) == (5, 3) and fake_openai.attempts("judge") == 8
    code, again, _ = run_json(base, settings)
    assert code == 0 and again["judged_now"] == 0 and fake_openai.attempts("judge") == 8
    assert again["score"] == full["score"]
    # Another judge mode in the same file is judged separately.
    code, swapped, _ = run_json(base + ["--swap"], settings)
    assert swapped["judged_now"] == 8 and fake_openai.attempts("judge") == 8 + 16


def test_a_prediction_is_reused_only_for_the_same_item_not_the_same_id(tmp_path):
    # two benchmarks built from different votes reuse ids ("it0"…): one predictions file must not mix them
    first_dir, second_dir = tmp_path / "one", tmp_path / "two"
    first_dir.mkdir(), second_dir.mkdir()
    bench_one, items = marker_bench(first_dir)
    flipped = [dataclasses.replace(it, response_a=it.response_b, response_b=it.response_a,
                                   human={"A": "B", "B": "A"}[it.human], subject=DISCIPLINES[3])
               for it in items[:4]] + [dataclasses.replace(it, question=it.question + " (v2)") for it in items[4:]]
    bench_two = second_dir / "bench.jsonl"
    write_benchmark(flipped, bench_two)
    preds = tmp_path / "preds.jsonl"
    run = ["eval", "run", "--judge", "baseline:longer", "--predictions", str(preds)]
    code, one, _ = run_json(run + ["--bench", str(bench_one)])
    assert code == 0 and one["judged_now"] == 8
    code, two, _ = run_json(run + ["--bench", str(bench_two)])
    assert code == 0 and two["judged_now"] == 8 and two["from_earlier"] == 0
    code, fresh, _ = run_json(["eval", "run", "--judge", "baseline:longer", "--bench", str(bench_two)])
    assert two["score"] == fresh["score"]  # scored against the second benchmark's own votes
    code, again, _ = run_json(run + ["--bench", str(bench_one)])
    assert again["judged_now"] == 0 and again["score"] == one["score"]


def test_a_torn_last_line_is_ignored_and_the_next_prediction_starts_a_new_line(tmp_path):
    bench, items = marker_bench(tmp_path, n=4)
    preds = tmp_path / "preds.jsonl"
    run_cli(["eval", "run", "--bench", str(bench), "--judge", "baseline:longer", "--predictions", str(preds),
             "--limit", "2"])
    preds.write_text(preds.read_text() + '{"id": "it2", "judge": "basel')
    code, report, _ = run_json(["eval", "run", "--bench", str(bench), "--judge", "baseline:longer",
                                "--predictions", str(preds)])
    assert code == 0 and report["judged_now"] == 2 and report["score"]["items"] == 4
    assert len(PredictionLog(preds).read()) == 4


def test_swap_counts_a_verdict_only_when_both_orders_agree(tmp_path, fake_openai):
    bench, items = marker_bench(tmp_path)
    fake_openai.add_script("judge", respond=prefers_marker(items))
    fake_openai.add_script("judge-first", chunks=("A",))
    settings = settings_for(tmp_path, fake_openai)
    code, fair, _ = run_json(["eval", "run", "--bench", str(bench), "--judge", JUDGE, "--swap"], settings)
    assert code == 0 and fake_openai.attempts("judge") == 16
    assert fair["score"]["accuracy"] == pytest.approx(6 / 8)
    assert fair["score"]["position"]["swap_consistency"] == 1.0
    assert fair["score"]["position"]["said_a_rate"] == pytest.approx(0.5)
    # A judge that always names the first answer shown: consistent never, so no verdict counts.
    models = json.loads((tmp_path / "models.json").read_text())
    models["models"].append({"name": "Loop First", "provider": "loop", "model_id": "judge-first"})
    (tmp_path / "models.json").write_text(json.dumps(models))
    code, biased, _ = run_json(["eval", "run", "--bench", str(bench), "--judge", "Loop First", "--swap"], settings)
    assert code == 0
    assert (biased["score"]["valid"], biased["score"]["inconsistent"]) == (0, 8)
    assert biased["score"]["position"]["said_a_rate"] == 1.0 and biased["score"]["accuracy_all"] == 0.0


def test_garbage_replies_are_counted_invalid(tmp_path, fake_openai):
    bench, _ = marker_bench(tmp_path)
    fake_openai.add_script("judge", chunks=("Both answers have merit; ", "it depends on the reader."))
    code, report, err = run_json(["eval", "run", "--bench", str(bench), "--judge", JUDGE],
                                 settings_for(tmp_path, fake_openai))
    assert code == 0, err
    assert (report["score"]["invalid"], report["score"]["valid"], report["score"]["accuracy"]) == (8, 0, None)
    code, table, _ = run_cli(["eval", "run", "--bench", str(bench), "--judge", JUDGE],
                             settings_for(tmp_path, fake_openai))
    assert "8 invalid" in table


def test_a_429_is_retried_and_then_succeeds(tmp_path, fake_openai):
    bench, items = marker_bench(tmp_path, n=4)
    fake_openai.add_script("judge", respond=prefers_marker(items), faults=(429,), retry_after="0")
    code, report, err = run_json(["eval", "run", "--bench", str(bench), "--judge", JUDGE, "--concurrency", "1"],
                                 settings_for(tmp_path, fake_openai))
    assert code == 0, err
    assert report["score"]["valid"] == 4 and report["score"]["failed"] == 0
    assert fake_openai.attempts("judge") == 5


def test_failed_calls_are_recorded_reported_and_retried_on_the_next_run(tmp_path, fake_openai):
    bench, items = marker_bench(tmp_path, n=4)
    fake_openai.add_script("judge", fail_forever=401)
    settings = settings_for(tmp_path, fake_openai)
    preds = tmp_path / "preds.jsonl"
    argv = ["eval", "run", "--bench", str(bench), "--judge", JUDGE, "--predictions", str(preds)]
    code, report, err = run_json(argv, settings)
    assert code == 1 and report["score"]["failed"] == 4
    assert "4 item(s) without a verdict" in err and "Traceback" not in err
    assert all("API key" in p.error for p in PredictionLog(preds).read())
    fake_openai.add_script("judge", respond=prefers_marker(items))
    code, report, err = run_json(argv, settings)
    assert code == 0 and report["judged_now"] == 4 and report["score"]["failed"] == 0
    assert fake_openai.attempts("judge") == 4 + 4  # the failed four, then each asked once more


def test_a_slow_judge_times_out_per_call(tmp_path, fake_openai):
    bench, _ = marker_bench(tmp_path, n=2)
    fake_openai.add_script("judge", chunks=("A",), first_token_delay_s=3.0)
    code, report, err = run_json(["eval", "run", "--bench", str(bench), "--judge", JUDGE, "--timeout", "0.4"],
                                 settings_for(tmp_path, fake_openai))
    assert code == 1 and report["score"]["failed"] == 2


def test_a_run_stops_starting_items_after_many_failures_in_a_row(tmp_path, fake_openai):
    bench, _ = marker_bench(tmp_path, n=8)
    fake_openai.add_script("judge", fail_forever=401)
    from sciarena.science.evaluation.judge import resolve_judge

    judge = resolve_judge(JUDGE, settings_for(tmp_path, fake_openai))
    outcome = run_judge(read_benchmark(bench), judge, concurrency=1, max_consecutive_errors=3)
    assert len(outcome.predictions) == 3 and "3 failed items in a row" in outcome.stopped
    assert fake_openai.attempts("judge") == 3


@pytest.mark.parametrize("case", ["missing bench", "empty bench", "unknown judge", "missing key", "catalogue typo"])
def test_bad_input_is_one_line_and_exit_code_2(tmp_path, fake_openai, case):
    bench, _ = marker_bench(tmp_path, n=2)
    settings = settings_for(tmp_path, fake_openai, key=None if case == "missing key" else "sk-test")
    judge = {"unknown judge": "Nobody", "catalogue typo": JUDGE}.get(case, JUDGE)
    if case == "missing bench":
        bench = tmp_path / "nope.jsonl"
    elif case == "empty bench":
        bench.write_text("")
    elif case == "catalogue typo":
        (tmp_path / "models.json").write_text("{not json")
    code, out, err = run_cli(["eval", "run", "--bench", str(bench), "--judge", judge], settings)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and err.startswith("sciarena eval run: ")
    assert {"missing bench": "no such benchmark", "empty bench": "empty", "unknown judge": "unknown judge",
            "missing key": "set LOOP_API_KEY", "catalogue typo": "not valid JSON"}[case] in err
    assert fake_openai.attempts("judge") == 0


@pytest.mark.parametrize("content", [None, "", '{"id": "x", "vote": "tie", "question": "q", '
                                              '"responseA": "a", "responseB": "b", "subject": "Healthcare"}\n'])
def test_build_with_no_usable_votes_is_exit_code_2(tmp_path, content):
    votes = tmp_path / "votes.jsonl"
    if content is not None:
        votes.write_text(content)
    code, out, err = run_cli(["eval", "build", "--votes", str(votes), "--out", str(tmp_path / "b.jsonl")],
                             Settings.from_env({}))
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not (tmp_path / "b.jsonl").exists()


@pytest.mark.slow  # runs python -m sciarena in subprocesses
def test_the_module_command_reads_keys_and_catalogue_from_the_environment(tmp_path, fake_openai):
    votes = write_votes(tmp_path / "votes.jsonl", n_per=6)
    settings_for(tmp_path, fake_openai)  # writes models.json
    fake_openai.add_script("judge", chunks=("[[A]]",))
    env = {**os.environ, "SCIARENA_MODELS": str(tmp_path / "models.json"), "LOOP_API_KEY": "sk-test"}
    bench, preds = tmp_path / "bench.jsonl", tmp_path / "preds.jsonl"

    def sciarena(*argv: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "sciarena", *argv], cwd=ROOT, env=env, capture_output=True,
                              text=True, timeout=60)

    built = sciarena("eval", "build", "--votes", str(votes), "--out", str(bench), "--per-side", "2")
    assert built.returncode == 0, built.stderr
    assert built.stdout.count("note:") == 0 and "wrote 16 items" in built.stdout
    ran = sciarena("eval", "run", "--bench", str(bench), "--judge", JUDGE, "--predictions", str(preds))
    assert ran.returncode == 0, ran.stderr
    assert "said A in 100.0% of 16 letters" in ran.stdout and "chose B 0.0%" in ran.stdout
    assert len(preds.read_text().splitlines()) == 16 == fake_openai.attempts("judge")
    missing = subprocess.run([sys.executable, "-m", "sciarena", "eval", "run", "--bench", str(bench), "--judge", JUDGE],
                             cwd=ROOT, env={k: v for k, v in env.items() if k != "LOOP_API_KEY"},
                             capture_output=True, text=True, timeout=60)
    assert missing.returncode == 2 and "set LOOP_API_KEY" in missing.stderr and "Traceback" not in missing.stderr

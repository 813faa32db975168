"""The leaderboard command line, run as a real subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sciarena.board import compute_leaderboard, to_dict
from sciarena.board.synthetic import simulate, write_jsonl
from sciarena.cli.leaderboard import main
from sciarena.science.quality.vouch import load_votes

ROOT = Path(__file__).resolve().parents[1]
ENTRY = "import sys; from sciarena.cli.leaderboard import main; sys.exit(main())"


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", ENTRY, *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)


@pytest.fixture(scope="module")
def votes(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("votes") / "data"
    (folder / "2025-06-01").mkdir(parents=True)
    table = simulate(np.r_[np.linspace(-150, 150, 7), 0.0], 3000, seed=12)
    rare = (table.a == 7) | (table.b == 7)
    keep = ~rare | (np.cumsum(rare) <= 40)  # model-07 gets 40 battles: below 100
    table = table.subset(keep)
    write_jsonl(table, folder / "2025-06-01" / "votes-a.jsonl", stop=1500)
    write_jsonl(table, folder / "2025-06-01" / "votes-b.jsonl", start=1500)
    return folder


@pytest.mark.slow  # starts a subprocess or a loopback server
def test_json_output_shape_and_agreement_with_the_library(votes: Path):
    proc = run_cli("--votes", str(votes), "--format", "json", "--bootstrap", "30", "--min-battles", "100",
                   "--by", "subject", "--by", "question_type")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["total_votes"] == load_votes(votes).n_votes
    assert out["skipped"] == {} and out["min_battles"] == 100
    assert out["hidden_models"] == ["model-07"]
    row = out["models"][0]
    for key in ("model", "rating", "ci_lower", "ci_upper", "rank", "battles", "provisional",
                "by_subject", "by_question_type"):
        assert key in row
    expected = to_dict(compute_leaderboard(load_votes(votes), bootstrap=30, min_battles=100,
                                           by=("subject", "question_type")))
    assert out["models"] == expected["models"]


@pytest.mark.slow  # starts a subprocess or a loopback server
def test_table_output_and_options(votes: Path):
    proc = run_cli("--votes", str(votes / "2025-06-01" / "votes-a.jsonl"),
                   "--votes", str(votes / "2025-06-01" / "votes-b.jsonl"),
                   "--min-battles", "0", "--bootstrap", "10", "--seed", "3",
                   "--anchor", "model-03=1200", "--style", "length,citations")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    # with --style the rating column is the style-controlled one, and says so
    assert lines[0].split()[:6] == ["Rank", "Model", "SC", "rating", "(bootstrap", "mean)"]
    anchor_line = next(line for line in lines if " model-03 " in f" {line} ")
    assert "1200.0" in anchor_line
    assert any(line.startswith("model-07 *") or " model-07 *" in line for line in lines)
    assert any(line.startswith("style length: γ =") for line in lines)
    elo_run = run_cli("--votes", str(votes), "--format", "json", "--method", "elo", "--k", "8",
                      "--bootstrap", "5", "--by", "none", "--min-battles", "0")
    assert elo_run.returncode == 0, elo_run.stderr
    parsed = json.loads(elo_run.stdout)
    assert parsed["method"] == "elo" and parsed["k"] == 8.0 and "by_subject" not in parsed["models"][0]


@pytest.mark.slow  # starts a subprocess or a loopback server
def test_the_default_lists_every_model_as_the_tab_does_and_a_board_with_no_rows_is_refused(votes: Path):
    proc = run_cli("--votes", str(votes), "--format", "json", "--bootstrap", "5")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["min_battles"] == 0 and out["hidden_models"] == []
    refused = run_cli("--votes", str(votes), "--bootstrap", "5", "--min-battles", "100000")
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr.strip().startswith("sciarena leaderboard: no model has at least 100000 battles")
    assert len(refused.stderr.strip().splitlines()) == 1


@pytest.mark.slow  # starts a subprocess or a loopback server
def test_every_rating_column_says_what_it_is(votes: Path):
    proc = run_cli("--votes", str(votes), "--bootstrap", "5", "--rating", "point")
    head, footer = proc.stdout.splitlines()[0], proc.stdout
    assert "Rating (point)" in head and "(point)" in head.split("Battles", 1)[1]  # the discipline columns
    assert "rating (point)" in footer and "group columns: each group's point estimate" in footer


BAD_CASES = [
    (["--votes", "/nonexistent/votes.jsonl"], "no such file"),
    (["--votes", "{bad}"], "not JSON lines"),
    (["--votes", "{votes}", "--anchor", "nobody=1000"], "anchor model"),
    (["--votes", "{votes}", "--style", "emoji"], "unknown style"),
    (["--votes", "{votes}", "--bootstrap", "-3"], "negative"),
    (["--votes", "{votes}", "--anchor", "model-01"], "MODEL=RATING"),
]


def _argv(args, votes: Path, bad: Path) -> list[str]:
    return [a.replace("{votes}", str(votes)).replace("{bad}", str(bad)) for a in args]


@pytest.mark.slow  # starts a subprocess or a loopback server
@pytest.mark.parametrize("args, message", BAD_CASES)
def test_bad_input_exits_2_with_a_message(votes: Path, tmp_path: Path, capsys, args, message):
    bad = tmp_path / "bad.jsonl"
    bad.write_text("this is not json\n")
    try:
        code = main(_argv(args, votes, bad))
    except SystemExit as exit_:  # argparse rejects malformed options itself
        code = exit_.code
    captured = capsys.readouterr()
    assert code == 2
    assert message in captured.err and not captured.out


@pytest.mark.slow  # starts a subprocess or a loopback server
def test_bad_input_in_a_real_process_has_no_traceback(votes: Path, tmp_path: Path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text("this is not json\n")
    for args, message in (BAD_CASES[1], BAD_CASES[5]):
        proc = run_cli(*_argv(args, votes, bad))
        assert proc.returncode == 2
        assert message in proc.stderr
        assert "Traceback" not in proc.stderr and not proc.stdout


def test_add_parser_registers_the_subcommand(votes: Path, capsys):
    import argparse

    from sciarena.cli.leaderboard import add_parser

    parser = argparse.ArgumentParser(prog="sciarena")
    add_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["leaderboard", "--votes", str(votes), "--format", "json",
                              "--bootstrap", "5", "--min-battles", "0", "--by", "question_type"])
    assert args.run(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert len(out["models"]) == 8 and "by_question_type" in out["models"][0]

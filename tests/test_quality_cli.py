"""The ``quality`` command through its entry functions (the integrator registers it in sciarena/cli/main.py)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from sciarena.cli import quality as cli
from sciarena.cli.main import main as sciarena_main
from sciarena.science.quality.synthetic import planted_history, records_from_arrays


@pytest.fixture(scope="module")
def votes_file(tmp_path_factory) -> Path:
    history = planted_history(honest_voters=60, planted_per_kind=3, seed=2)
    path = tmp_path_factory.mktemp("votes") / "votes-1.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records_from_arrays(history.votes)))
    return path


def test_json_output(votes_file: Path, capsys):
    assert cli.main(["--votes", str(votes_file), "--format", "json", "--alpha", "0.05", "--seed", "1"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert len(out["voters"]) == 60 + 3 * 4 and out["alpha"] == 0.05 and out["seed"] == 1
    flagged = {v["voter_id"].split("-")[0] for v in out["voters"] if v["flagged"]}
    assert {"contrarian", "position_a"} <= flagged  # A.5 needs more history per pair (see the benchmark)
    test = out["voters"][0]["tests"][0]
    assert set(test) >= {"name", "statistic", "p_value", "fired"}


def test_table_output_lists_flagged_voters_first(votes_file: Path, capsys):
    assert cli.main(["--votes", str(votes_file)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:3] == ["Voter", "Votes", "Flagged"]
    assert lines[2].split()[2] != "-"  # the first row is a flagged voter, with its tests named
    assert any("voters flagged" in line for line in lines)


def test_the_same_file_twice_counts_each_vote_once(votes_file: Path, capsys):
    assert cli.main(["--votes", str(votes_file), "--votes", str(votes_file), "--format", "json"]) == 0
    once = sum(1 for _ in votes_file.open())
    assert json.loads(capsys.readouterr().out)["total_votes"] == once


def test_released_data_says_it_has_no_voter_ids(tmp_path: Path, capsys):
    released = [{"id": f"r{k}", "question": "q", "responseA": "x", "responseB": "y", "modelA": "GPT-4.1",
                 "modelB": "o3", "vote": "A" if k % 2 else "Tie", "citations_a": [], "citations_b": [],
                 "question_type": None, "subject": None} for k in range(5)]
    path = tmp_path / "train.json"
    path.write_text(json.dumps(released))
    assert cli.main(["--votes", str(path), "--format", "json"]) == 0
    captured = capsys.readouterr()
    assert "no voter ids" in captured.err and "released" in captured.err
    out = json.loads(captured.out)
    assert out["voters"] == [] and out["unchecked_votes"] == 5


def test_unreadable_input_is_a_message_and_exit_2(tmp_path: Path, capsys):
    assert cli.main(["--votes", str(tmp_path / "missing.jsonl")]) == 2
    bad = tmp_path / "bad.json"
    bad.write_text("[{not json")
    assert cli.main(["--votes", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("sciarena quality:") == 2 and "Traceback" not in err


@pytest.mark.parametrize("option", [("--alpha", "0"), ("--alpha", "1.5"), ("--alpha", "x"), ("--seed", "-1")])
def test_bad_option_values_are_usage_errors(option: tuple[str, str], capsys):
    with pytest.raises(SystemExit) as stop:
        cli.main(["--votes", "v.jsonl", *option])
    assert stop.value.code == 2 and option[0] in capsys.readouterr().err


def test_registers_as_a_subcommand(votes_file: Path, capsys):
    parser = argparse.ArgumentParser(prog="python -m sciarena")
    cli.add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["quality", "--votes", str(votes_file), "--format", "json"])
    assert args.run(args) == 0
    assert json.loads(capsys.readouterr().out)["voters"]


@pytest.mark.parametrize("entry", ["quality", "python -m sciarena"])
def test_a_path_the_os_cannot_open_says_the_votes_could_not_be_read(tmp_path: Path, capsys, entry: str):
    too_long = str(tmp_path / ("x" * 300))  # the OS refuses the name itself (ENAMETOOLONG): an OSError
    code = cli.main(["--votes", too_long]) if entry == "quality" else sciarena_main(["quality", "--votes", too_long])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("sciarena quality: cannot read the votes (") and "name too long" in err
    assert len(err.strip().splitlines()) == 1

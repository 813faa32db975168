"""Which votes count (leaderboard.table.vouched): flagged voters' votes and redacted battles are
left out by default, counted with the flags, and every view can say how many."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from sciarena.board import compute_leaderboard, to_dict
from sciarena.cli import quality as quality_cli
from sciarena.cli.leaderboard import main
from sciarena.core.errors import LeaderboardInputError
from sciarena.science.quality.check import arrays_from_records, check_votes
from sciarena.science.quality.synthetic import planted_history, records_from_arrays
from sciarena.science.quality.vouch import load_votes

MODELS = ("Alpha", "Beta", "Gamma")


def write(path: Path, records: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


@pytest.fixture(scope="module")
def history(tmp_path_factory) -> tuple[Path, list[dict]]:
    """Honest and planted voters; every 50th vote without a voter id, some battles redacted on one side."""
    planted = planted_history(honest_voters=60, planted_per_kind=3, kinds=("contrarian", "position_a"), seed=5)
    records = records_from_arrays(planted.votes)
    for k, record in enumerate(records):
        record["redacted_a"], record["redacted_b"] = k % 9 == 0, k % 9 == 4 and k % 2 == 0
        if k % 50 == 7:
            record["voter_id"] = None
    return write(tmp_path_factory.mktemp("votes") / "votes-1.jsonl", records), records


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_the_default_leaves_out_exactly_the_flagged_voters_and_redacted_battles(history, tmp_path, capsys):
    path, records = history
    flagged = set(check_votes(arrays_from_records(records)).flagged)  # what `sciarena quality` flags
    assert {"contrarian", "position_a"} <= {v.split("-")[0] for v in flagged}  # the planted voters are caught
    redacted = [r["redacted_a"] or r["redacted_b"] for r in records]
    by_flagged = [r["voter_id"] in flagged for r in records]
    kept = [r for r, red, bad in zip(records, redacted, by_flagged) if not red and not bad]
    code, out, _ = run(capsys, "--votes", str(path), "--format", "json", "--bootstrap", "0", "--min-battles", "0")
    assert code == 0
    board = json.loads(out)
    excluded = board["excluded"]
    assert excluded["flagged_voters"] == len(flagged) and excluded["flagged_votes"] == sum(by_flagged)
    assert excluded["redacted_votes"] == sum(redacted) and excluded["unchecked_votes"] == sum(
        r["voter_id"] is None for r in records)
    assert excluded["left_out"] == len(records) - len(kept) and board["total_votes"] == len(kept)
    # the same ratings as a file that never held the left-out votes
    clean = write(tmp_path / "clean" / "votes.jsonl", kept)
    same = to_dict(compute_leaderboard(load_votes(clean, include_flagged=True, include_redacted=True),
                                       bootstrap=0, min_battles=0))
    assert board["models"] == same["models"]


@pytest.mark.parametrize("flags, left_out", [
    (("--include-flagged",), "redacted"), (("--include-redacted",), "flagged"),
    (("--include-flagged", "--include-redacted"), "none")])
def test_each_flag_counts_its_votes_again(history, capsys, flags, left_out):
    path, records = history
    flagged = set(check_votes(arrays_from_records(records)).flagged)
    redacted = np.array([r["redacted_a"] or r["redacted_b"] for r in records])
    by_flagged = np.array([r["voter_id"] in flagged for r in records])
    expected = {"redacted": redacted, "flagged": by_flagged, "none": np.zeros(len(records), bool)}[left_out]
    code, out, _ = run(capsys, "--votes", str(path), "--format", "json", "--bootstrap", "0", *flags)
    board = json.loads(out)
    assert code == 0 and board["total_votes"] == len(records) - int(expected.sum())
    assert board["excluded"]["include_flagged"] == ("--include-flagged" in flags)


def test_the_table_footer_says_what_was_left_out(history, capsys):
    path, _ = history
    code, out, _ = run(capsys, "--votes", str(path), "--bootstrap", "0", "--min-battles", "0")
    footer = out.splitlines()[-1]
    assert code == 0 and footer.startswith("Left out ") and "flagged voter(s) (--include-flagged counts them)" in footer
    assert "the voter asked who a model is) (--include-redacted counts them)" in footer
    assert "without a voter id kept unchecked" in footer
    _, out, _ = run(capsys, "--votes", str(path), "--bootstrap", "0", "--min-battles", "0",
                    "--include-flagged", "--include-redacted")
    assert out.splitlines()[-1].startswith("Counted ")


def test_the_quality_command_and_the_leaderboard_flag_the_same_voters(history, capsys):
    path, _ = history
    assert quality_cli.main(["--votes", str(path), "--format", "json"]) == 0
    listed = {v["voter_id"] for v in json.loads(capsys.readouterr().out)["voters"] if v["flagged"]}
    table = load_votes(path)
    assert table.excluded is not None and table.excluded.flagged_voters == len(listed)
    left = {table.voters[c] for c in np.unique(table.voter[table.voter >= 0])}
    assert not (left & listed) and len(left) == 60 + 6 - len(listed)


def test_the_tab_path_applies_the_exclusion_without_asking(history):
    path, _ = history
    table = load_votes([path], strict=False)  # how the Leaderboard tab calls it
    assert table.excluded is not None and table.excluded.left_out > 0
    assert table.excluded.describe().startswith("Left out ") and "--include" not in table.excluded.describe()


# --- bad input: a clear message or an empty result, never a traceback --------------------------------
def vote(k: int, voter: str | None, **extra) -> dict:
    return {"id": f"v{k}", "modelA": MODELS[k % 3], "modelB": MODELS[(k + 1) % 3], "vote": "AB"[k % 2],
            "voter_id": voter, "timestamp": f"2026-11-30T10:{k // 60:02d}:{k % 60:02d}Z", **extra}


def test_released_data_without_voter_ids_is_kept_and_reported_unchecked(tmp_path, capsys):
    path = write(tmp_path / "released.jsonl", [{k: v for k, v in vote(k, None).items() if k != "voter_id"}
                                               for k in range(30)])
    code, out, err = run(capsys, "--votes", str(path), "--bootstrap", "0", "--min-battles", "0")
    assert code == 0 and "30 votes" in out and out.splitlines()[-1] == "30 vote(s) without a voter id kept unchecked."
    assert load_votes(path).excluded.left_out == 0


@pytest.mark.parametrize("voter", [lambda k: "anon-only", lambda k: f"anon-{k}"], ids=["one voter", "one vote each"])
def test_one_voter_or_one_vote_per_voter_is_not_an_error(tmp_path, capsys, voter):
    path = write(tmp_path / "votes.jsonl", [vote(k, voter(k)) for k in range(30)])
    code, out, err = run(capsys, "--votes", str(path), "--format", "json", "--bootstrap", "0")
    assert code == 0 and "Traceback" not in err
    board = json.loads(out)
    assert board["total_votes"] + board["excluded"]["left_out"] == 30


def test_unknown_models_and_labels_are_counted_not_fatal(tmp_path, capsys):
    records = [vote(k, f"anon-{k % 4}") for k in range(20)]
    records += [vote(20, "anon-1", modelA="Never-Heard-Of"), vote(21, "anon-2", vote="maybe")]
    path = write(tmp_path / "votes.jsonl", records)
    code, out, _ = run(capsys, "--votes", str(path), "--format", "json", "--bootstrap", "0", "--min-battles", "0")
    board = json.loads(out)
    assert code == 0 and "Never-Heard-Of" in [m["model"] for m in board["models"]]
    assert board["skipped"] == {"unknown vote label 'maybe'": 1}


def test_every_vote_left_out_is_a_clear_message(tmp_path, capsys):
    path = write(tmp_path / "votes.jsonl", [vote(k, "anon-1", redacted_a=True) for k in range(10)])
    code, out, err = run(capsys, "--votes", str(path))
    assert code == 2 and out == ""
    assert err.startswith("sciarena leaderboard: no votes left to rank: Left out 10 battle(s) whose answers")
    with pytest.raises(LeaderboardInputError):
        load_votes(path)
    assert load_votes(path, include_redacted=True).n_votes == 10


def test_a_model_whose_every_vote_was_left_out_leaves_the_board(tmp_path):
    records = [vote(k, f"anon-{k % 5}") for k in range(30)]
    records.append(vote(30, "anon-1", modelA="Delta", redacted_b=True))
    table = load_votes(write(tmp_path / "votes.jsonl", records))
    assert "Delta" not in table.models and table.n_votes == 30 and table.excluded.redacted_votes == 1
    assert max(table.a.max(), table.b.max()) == len(table.models) - 1
    assert "Delta" in load_votes(tmp_path / "votes.jsonl", include_redacted=True).models

"""Agreement between vote sets: κ against a hand computation and scikit-learn, the bootstrap, the CLI."""

from __future__ import annotations

import argparse
import io
import json
import math
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from sciarena.cli import agreement as agreement_cli
from sciarena.science.agreement import (
    DISAGREEMENT,
    UNWEIGHTED,
    accuracy,
    agreement,
    agreement_report,
    confusion_counts,
    kappa,
    match_votes,
    outcome_code,
)
from sciarena.votes.schema import OUTCOME_A, OUTCOME_B, OUTCOME_BAD, OUTCOME_TIE

CODE = {"A": OUTCOME_A, "B": OUTCOME_B, "tie": OUTCOME_TIE, "bad": OUTCOME_BAD}
FIRST = ["A", "A", "A", "B", "B", "tie", "tie", "bad", "A", "B"]
SECOND = ["A", "B", "tie", "B", "B", "tie", "bad", "bad", "A", "A"]


def codes(labels: list[str]) -> np.ndarray:
    return np.array([CODE[x] for x in labels])


def test_hand_computed_example() -> None:
    # Margins: first A4 B3 tie2 bad1, second A3 B3 tie2 bad2; 6 of 10 identical.
    # Plain κ: p_e = (12 + 9 + 4 + 2) / 100 = 0.27, κ = (0.6 - 0.27) / 0.73 = 33/73.
    # Weighted: observed disagreement (A,B) 1 + (B,A) 1 + (A,tie) ½ + (tie,bad) ½ = 3 over 10;
    # chance: A–B cells 12 + 9 at weight 1, the other 73 - 21 = 52 off-diagonal at ½ → 0.47; κ_w = 1 - 0.3/0.47.
    counts = confusion_counts(codes(FIRST), codes(SECOND))
    assert accuracy(counts) == pytest.approx(0.6)
    assert kappa(counts, UNWEIGHTED) == pytest.approx(33 / 73)
    assert kappa(counts) == pytest.approx(17 / 47)


def test_plain_kappa_matches_scikit_learn_on_all_four_outcomes() -> None:
    rng = np.random.default_rng(3)
    first = rng.integers(0, 4, 500)
    second = np.where(rng.random(500) < 0.6, first, rng.integers(0, 4, 500))
    assert kappa(confusion_counts(first, second), UNWEIGHTED) == pytest.approx(cohen_kappa_score(first, second))


def test_weighted_kappa_is_linear_kappa_on_a_tie_b_without_both_bad() -> None:
    rng = np.random.default_rng(4)
    labels = np.array([OUTCOME_A, OUTCOME_TIE, OUTCOME_B])
    first = labels[rng.integers(0, 3, 400)]
    second = np.where(rng.random(400) < 0.5, first, labels[rng.integers(0, 3, 400)])
    rank = {OUTCOME_A: 0, OUTCOME_TIE: 1, OUTCOME_B: 2}  # the order the weights assume
    expected = cohen_kappa_score([rank[x] for x in first], [rank[x] for x in second], weights="linear")
    assert kappa(confusion_counts(first, second)) == pytest.approx(expected)
    # and it is not the plain κ: the weights matter
    assert not math.isclose(kappa(confusion_counts(first, second), UNWEIGHTED), expected, rel_tol=1e-6)


def test_the_weights_are_symmetric_and_a_against_b_is_the_only_full_disagreement() -> None:
    assert (DISAGREEMENT == DISAGREEMENT.T).all() and (np.diag(DISAGREEMENT) == 0).all()
    assert np.argwhere(DISAGREEMENT == 1).tolist() == [[OUTCOME_A, OUTCOME_B], [OUTCOME_B, OUTCOME_A]]


def test_bootstrap_is_seeded_and_brackets_the_point_estimate() -> None:
    first, second = codes(FIRST * 10), codes(SECOND * 10)
    one = agreement(first, second, rounds=500, rng=np.random.default_rng(7))
    two = agreement(first, second, rounds=500, rng=np.random.default_rng(7))
    assert one.to_json() == two.to_json()
    for est in (one.accuracy, one.kappa_weighted, one.kappa):
        assert est.lower < est.value < est.upper
    other = agreement(first, second, rounds=500, rng=np.random.default_rng(8))
    assert other.kappa.lower != one.kappa.lower


def test_perfect_and_degenerate_agreement() -> None:
    same = agreement(codes(FIRST), codes(FIRST), rounds=200)
    assert same.accuracy.value == 1 and same.kappa.value == pytest.approx(1)
    assert (same.accuracy.lower, same.accuracy.upper) == (1.0, 1.0)
    constant = agreement(codes(["A"] * 5), codes(["A"] * 5), rounds=50)
    assert constant.accuracy.value == 1 and math.isnan(constant.kappa.value)  # chance agreement is total
    assert constant.to_json()["kappa"]["value"] is None
    with pytest.raises(ValueError):
        agreement(np.array([], dtype=int), np.array([], dtype=int))


def test_matching_by_id_counts_what_cannot_be_matched() -> None:
    first = [{"id": "1", "vote": "A", "subject": "Healthcare"}, {"id": "2", "vote": "b"},
             {"id": "3", "vote": "Tie"}, {"vote": "A"}, {"id": "5", "vote": "maybe"}]
    second = [{"id": "1", "vote": "model_a"}, {"id": "2", "vote": "B", "subject": "Engineering"},
              {"id": "3", "vote": "both bad"}, {"id": "4", "vote": "A"}, {"id": "5", "vote": "A"}]
    matched = match_votes(first, second)
    assert matched.first.tolist() == [OUTCOME_A, OUTCOME_B, OUTCOME_TIE]
    assert matched.second.tolist() == [OUTCOME_A, OUTCOME_B, OUTCOME_BAD]
    assert matched.disciplines == ("Healthcare", "Engineering", "(no discipline)")
    assert (matched.only_first, matched.only_second, matched.without_id, matched.unreadable) == (0, 1, 1, 1)
    assert outcome_code(" LeftVote ") == OUTCOME_A and outcome_code(3) is None


def test_report_per_discipline_sums_to_overall() -> None:
    first = [{"id": str(k), "vote": v, "subject": ("Healthcare", "Engineering")[k % 2]} for k, v in enumerate(FIRST)]
    second = [{"id": str(k), "vote": v} for k, v in enumerate(SECOND)]
    report = agreement_report(match_votes(first, second), rounds=100, seed=1)
    assert [a.scope for a in report] == ["overall", "Engineering", "Healthcare"]
    assert report[0].n == 10 and sum(a.n for a in report[1:]) == 10
    assert (report[1].counts + report[2].counts == report[0].counts).all()


# ------------------------------------------------------------------------ the CLI

def run_cli(argv: list[str]) -> tuple[int, str, str]:
    parser = argparse.ArgumentParser()
    agreement_cli.add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["agreement", *argv])
    out, err = io.StringIO(), io.StringIO()
    code = args.run(args, out=out, err=err, token="")
    return code, out.getvalue(), err.getvalue()


def write_votes(tmp_path: Path) -> tuple[Path, Path]:
    ours = tmp_path / "ours.jsonl"
    ours.write_text("".join(json.dumps({"id": f"v{k}", "vote": v, "modelA": "M1", "modelB": "M2",
                                        "subject": "Healthcare" if k < 5 else "Engineering"}) + "\n"
                            for k, v in enumerate(FIRST)), encoding="utf-8")
    released = tmp_path / "released.json"  # the released schema: one JSON array, mixed-case labels
    released.write_text(json.dumps([{"id": f"v{k}", "vote": v.upper() if v in "AB" else v.capitalize(),
                                     "modelA": "GPT-4.1", "modelB": "o3", "question": "q", "responseA": "a",
                                     "responseB": "b", "citations_a": [], "citations_b": [],
                                     "question_type": "Others", "subject": None}
                                    for k, v in enumerate(SECOND)]), encoding="utf-8")
    return ours, released


def test_cli_json_on_our_schema_against_the_released_schema(tmp_path: Path) -> None:
    ours, released = write_votes(tmp_path)
    code, out, err = run_cli([str(ours), str(released), "--format", "json", "--bootstrap", "200"])
    assert code == 0, err
    doc = json.loads(out)
    overall = doc["scopes"][0]
    assert doc["matched"] == 10 and overall["scope"] == "overall"
    assert overall["accuracy"]["value"] == 0.6
    assert overall["kappa_weighted"]["value"] == round(17 / 47, 4)
    assert overall["kappa"]["value"] == round(33 / 73, 4)
    assert [s["scope"] for s in doc["scopes"]] == ["overall", "Engineering", "Healthcare"]
    assert "full disagreement" in doc["weights"]


def test_cli_table_names_the_weights_and_the_ci(tmp_path: Path) -> None:
    ours, released = write_votes(tmp_path)
    code, out, _ = run_cli([str(ours), str(released), "--bootstrap", "100", "--seed", "5"])
    assert code == 0
    assert out.splitlines()[1].split()[:3] == ["overall", "10", "60.0"]
    assert "100 rounds, seed 5" in out and "A vs B counts as a full disagreement" in out


@pytest.mark.parametrize("case, message", [
    ("missing", "no such file or folder"),
    ("empty", "no votes in"),
    ("disjoint", "no vote is in both sets"),
    ("garbage", "not valid JSON"),
])
def test_bad_input_is_one_line_and_exit_code_2(tmp_path: Path, case: str, message: str) -> None:
    ours, released = write_votes(tmp_path)
    other = tmp_path / "other.jsonl"
    if case == "missing":
        other = tmp_path / "nowhere" / "x.jsonl"
    elif case == "empty":
        other.write_text("", encoding="utf-8")
    elif case == "disjoint":
        other.write_text(json.dumps({"id": "zzz", "vote": "A", "modelA": "a", "modelB": "b"}) + "\n")
    else:
        other.write_text("{not json\n{}\n", encoding="utf-8")
    code, out, err = run_cli([str(ours), str(other)])
    assert code == 2 and out == ""
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_a_missing_local_file_is_one_sentence_at_once_not_a_hub_dataset(tmp_path, monkeypatch) -> None:
    from sciarena.votes.read import is_hub_id

    ours, _ = write_votes(tmp_path)
    monkeypatch.chdir(tmp_path)  # README's command on a fresh arena: the second set's file is not there yet
    code, out, err = run_cli([str(ours), "review-sets/second-votes.jsonl"])
    assert code == 2 and out == ""
    assert err.strip() == ("sciarena agreement: review-sets/second-votes.jsonl: no such file or folder, "
                           "and not a Hub dataset id (owner/name)")
    assert not is_hub_id("review-sets/second-votes.jsonl") and not is_hub_id("data/votes.parquet")
    assert is_hub_id("allenai/sciarena") and is_hub_id("someone/votes-2025")

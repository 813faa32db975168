"""Data statistics (sciarena/science/stats/stats.py) on a small hand-checked vote file, in our schema
and in the released one; the expected numbers below are worked out by hand from VOTES."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sciarena.board.compute import compute_leaderboard
from sciarena.board.synthetic import simulate, write_jsonl
from sciarena.board.table import vote_table
from sciarena.core.errors import StatsInputError
from sciarena.science.stats.stats import (
    BOTH_BAD,
    NO_TIMESTAMPS,
    TOP_MODEL_LOST,
    compute_stats,
    failure_records,
    to_dict,
)
from sciarena.votes.read import load
from sciarena.votes.schema import RELEASED_FIELDS

RANKED = ("o3", "GPT-5", "Claude", "Llama", "Qwen")  # the leaderboard order the unit tests give
NS, HC, HSS, ENG = "Natural Science", "Healthcare", "Humanities & Social Sciences", "Engineering"
CE, MI, SOTA, CL, PF, OT = ("Conceptual Explanation", "Methodology Inquiry", "State-of-the-Art Assessment",
                            "Challenges & Limitations", "Paper Finding", "Others")
# modelA, modelB, vote, citations a/b, lengths a/b, subject, question type, timestamp
VOTES = [
    ("o3", "Llama", "B", 4, 2, 100, 40, NS, CE, "2025-06-01T10:00:00Z"),  # 0: top lost to Llama
    ("Llama", "GPT-5", "B", 0, 6, 60, 120, NS, CE, "2025-06-01T23:59:59Z"),  # top won
    ("Claude", "Qwen", "A", 3, 1, 90, 30, HC, PF, "2025-06-02T23:59:59Z"),  # top won
    ("Qwen", "Claude", "A", 2, 5, 50, 110, ENG, OT, "2025-06-03T00:00:00+00:00"),  # 3: top lost to Qwen
    ("o3", "GPT-5", "B", 6, 4, 140, 100, ENG, MI, "2025-06-03T01:00:00+02:00"),  # both top; UTC day 06-02
    ("Llama", "Qwen", "bad", 1, 1, 20, 20, None, CE, None),  # 5: both bad
    ("o3", "Qwen", "tie", 5, 3, 80, 60, HSS, CL, None),  # a tie is not "voted worse"
    ("GPT-5", "Claude", "bad", 2, 2, 70, 70, NS, SOTA, None),  # 7: both bad
    ("o3", "Llama", "maybe", 9, 9, 999, 999, NS, CE, None),  # not a vote: skipped everywhere
    ("o3", "Llama", "A", 1, 0, 40, 10, "Astrology", None, None),  # top won; an unknown discipline
]


def _ours(k: int, row: tuple) -> dict:
    a, b, vote, ca, cb, la, lb, subject, qtype, stamp = row
    return {"id": f"v{k}", "question": f"question {k}", "responseA": "x" * la, "responseB": "y" * lb,
            "modelA": a, "modelB": b, "vote": vote, "citations_a": [], "citations_b": [],
            "question_type": qtype, "subject": subject, "schema_version": 1, "timestamp": stamp,
            "length_a": la, "length_b": lb, "num_citations_a": ca, "num_citations_b": cb}


def _released(k: int, row: tuple) -> dict:
    a, b, vote, ca, cb, la, lb, subject, qtype, _ = row
    cite = {"concise_authors": "Mihajlović et al. 2023a", "content": "a passage"}
    record = {"id": f"r{k}", "question": f"question {k}", "responseA": "x" * la, "responseB": "y" * lb,
              "modelA": a, "modelB": b, "vote": vote.capitalize(), "citations_a": [cite] * ca,
              "citations_b": [cite] * cb, "question_type": qtype, "subject": subject}
    assert tuple(record) == RELEASED_FIELDS
    return record


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("votes")
    ours, released = folder / "votes-1.jsonl", folder / "train.json"
    ours.write_text("".join(json.dumps(_ours(k, r)) + "\n" for k, r in enumerate(VOTES)))
    released.write_text(json.dumps([_released(k, r) for k, r in enumerate(VOTES)]))
    return {"ours": ours, "released": released}


@pytest.mark.parametrize("schema", ["ours", "released"])
def test_counts_match_the_hand_worked_numbers(files, schema):
    stats = compute_stats(load(files[schema]), ranked=RANKED)
    assert (stats.records, stats.votes) == (10, 9)
    assert stats.skipped == {"unknown vote label 'maybe'": 1}
    assert stats.outcomes == {"A": 3, "B": 3, "tie": 1, "bad": 2}
    assert stats.subjects.counts == {NS: 3, HC: 1, HSS: 1, ENG: 2, "Astrology": 1}
    assert stats.subjects.missing == 1
    assert stats.question_types.counts == {CE: 3, MI: 1, SOTA: 1, CL: 1, PF: 1, OT: 1}
    assert stats.question_types.missing == 1
    models = {m.model: m for m in stats.models}
    assert [m.model for m in stats.models] == ["Llama", "Qwen", "o3", "Claude", "GPT-5"]  # battles, then name
    assert {k: m.battles for k, m in models.items()} == {"o3": 4, "Llama": 4, "Qwen": 4, "GPT-5": 3, "Claude": 3}
    assert models["o3"].citations.mean == pytest.approx(4.0)
    assert models["o3"].citations.median == pytest.approx(4.5)  # of 1, 4, 5, 6
    assert (models["o3"].citations.minimum, models["o3"].citations.maximum) == (1.0, 6.0)
    assert models["Llama"].citations.mean == pytest.approx(0.75)
    assert models["Claude"].citations.mean == pytest.approx(10 / 3)
    assert models["Qwen"].citations.mean == pytest.approx(1.75)
    assert models["GPT-5"].length.mean == pytest.approx(290 / 3)
    assert models["Llama"].length.mean == pytest.approx(32.5)
    assert models["o3"].length.answers == 4


def test_votes_per_day_are_utc_days_of_our_timestamps(files):
    stats = compute_stats(load(files["ours"]), ranked=RANKED)
    # 01:00 at +02:00 on June 3rd is 23:00 UTC on June 2nd
    assert stats.days == (("2025-06-01", 2), ("2025-06-02", 2), ("2025-06-03", 1))
    assert stats.undated == 4
    assert any("4 vote(s) without a timestamp" in note for note in stats.notes)


def test_released_data_says_it_has_no_days(files):
    stats = compute_stats(load(files["released"]), ranked=RANKED)
    assert stats.days == () and stats.undated == 9
    assert NO_TIMESTAMPS in stats.notes


@pytest.mark.parametrize("schema", ["ours", "released"])
def test_failure_cases(files, schema):
    records = load(files[schema])
    f = compute_stats(records, ranked=RANKED).failures
    assert f.top_models == ("o3", "GPT-5", "Claude")
    assert [(c.index, c.case) for c in f.cases] == [(0, TOP_MODEL_LOST), (3, TOP_MODEL_LOST), (5, BOTH_BAD),
                                                    (7, BOTH_BAD)]
    assert (f.cases[0].loser, f.cases[0].winner) == ("o3", "Llama")
    assert (f.cases[1].loser, f.cases[1].winner) == ("Claude", "Qwen")
    assert f.top_vs_other == 5  # votes 0, 1, 2, 3 and 9; the tie (6) is not decisive
    assert f.losses_by_model() == {"o3": 1, "GPT-5": 0, "Claude": 1}
    exported = failure_records(records, f)
    assert [r["failure"] for r in exported] == [TOP_MODEL_LOST, TOP_MODEL_LOST, BOTH_BAD, BOTH_BAD]
    assert [{k: v for k, v in r.items() if k != "failure"} for r in exported] == [records[i] for i in (0, 3, 5, 7)]


def test_top_models_with_another_cut(files):
    f = compute_stats(load(files["ours"]), ranked=RANKED, top=1).failures
    # only o3 is "top": o3 lost to Llama (0) and to GPT-5 (4)
    assert f.top_models == ("o3",) and [c.index for c in f.cases if c.case == TOP_MODEL_LOST] == [0, 4]


def test_fewer_ranked_models_than_the_top_gives_no_top_cases(files):
    stats = compute_stats(load(files["ours"]), ranked=("o3", "GPT-5"))
    assert stats.failures.top_models == () and stats.failures.count(TOP_MODEL_LOST) == 0
    assert stats.failures.count(BOTH_BAD) == 2
    assert any("fewer than the top 3" in note for note in stats.notes)


def test_the_top_comes_from_our_bradley_terry_leaderboard(tmp_path):
    """Well-separated true strengths: the fitted top 3 are the three strongest models, and
    they are the first rows of compute_leaderboard over the same votes."""
    path = tmp_path / "votes-1.jsonl"
    table = simulate([1400, 1300, 1200, 1000, 900, 800], 3000, seed=3)
    write_jsonl(table, path)
    records = load(path)
    stats = compute_stats(records, bootstrap=20, seed=1)
    assert stats.failures.top_models == ("model-00", "model-01", "model-02")
    lb = compute_leaderboard(vote_table(records), bootstrap=20, seed=1, min_battles=100, by=())
    assert stats.failures.top_models == tuple(r.model for r in lb.rows[:3])
    assert "Bradley–Terry" in stats.failures.leaderboard and "20 rounds" in stats.failures.leaderboard
    lost = [c for c in stats.failures.cases if c.case == TOP_MODEL_LOST]
    assert lost and all(c.loser in stats.failures.top_models and c.winner not in stats.failures.top_models
                        for c in lost)
    assert stats.days[0] == ("2025-06-01", sum(1 for i in range(3000) if i % 28 == 0))


def test_answers_without_citations_are_a_note_not_a_number():
    records = [{"modelA": "x", "modelB": "y", "vote": "A", "responseA": "abc", "responseB": "de"},
               {"modelA": "x", "modelB": "y", "vote": "B", "responseA": "abcd", "responseB": "d"}]
    stats = compute_stats(records, ranked=("x", "y"), top=1)
    assert all(m.citations is None for m in stats.models)
    assert {m.model: m.length.mean for m in stats.models} == {"x": 3.5, "y": 1.5}
    assert any("no answer carries a citation count" in note for note in stats.notes)
    assert to_dict(stats)["models"][0]["citation_count"] is None


@pytest.mark.parametrize("records, message", [
    ([], "no vote records"),
    ([{"modelA": "x", "modelB": "x", "vote": "A"}], "same model on both sides"),
    ([{"modelA": "x", "modelB": "y", "vote": "perhaps"}], "unknown vote label 'perhaps'"),
    ([{"question": "only a question"}], "lack the field"),
])
def test_unusable_votes_raise_a_readable_error(records, message):
    with pytest.raises(StatsInputError, match=message):
        compute_stats(records)


def test_json_form_names_every_number(files):
    out = to_dict(compute_stats(load(files["ours"]), ranked=RANKED))
    assert out["usable_votes"] == 9 and out["records_read"] == 10
    assert out["outcomes"]["bad"] == {"votes": 2, "percent": round(200 / 9, 2)}
    assert out["subjects"]["votes"][0] == {"label": NS, "votes": 3, "percent": round(300 / 9, 2)}
    assert out["failures"]["both_bad"] == 2 and out["failures"]["top_model_lost"] == 2
    assert out["votes_per_day"][0] == {"date": "2025-06-01", "votes": 2}
    json.dumps(out, allow_nan=False)

"""SciArena-Eval benchmark: balanced sampling per discipline, exclusions, determinism, file round trip."""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest

from sciarena.core.types import DISCIPLINES
from sciarena.science.evaluation.benchmark import (
    EvalItem,
    EvaluationInputError,
    build_benchmark,
    match_discipline,
    normalise_vote,
    read_benchmark,
    write_benchmark,
)
from sciarena.votes.read import load


def vote(i: int, subject: str, label: str, **extra) -> dict:
    return {"id": f"v{i}", "question": f"Question {i} about {subject}?", "responseA": f"Answer A{i} [1].",
            "responseB": f"Answer B{i} (Lee et al. 2020).", "modelA": "M1", "modelB": "M2", "vote": label,
            "subject": subject, "question_type": "Conceptual Explanation", **extra}


def votes_for(spec: dict[str, dict[str, int]], start: int = 0) -> list[dict]:
    """spec: discipline → {label: count}; ids are unique across the whole list."""
    out, i = [], start
    for subject, labels in spec.items():
        for label, count in labels.items():
            for _ in range(count):
                out.append(vote(i, subject, label))
                i += 1
    return out


FULL = {d: {"A": 30, "B": 25, "tie": 5, "bad": 3} for d in DISCIPLINES}


def test_each_discipline_gets_k_of_each_side_and_ties_and_bad_are_left_out():
    records = votes_for(FULL)
    bench = build_benchmark(records, per_side=10, seed=0)
    by_id = {r["id"]: r for r in records}
    assert len(bench.items) == 80 == bench.report.total
    per = Counter((item.subject, item.human) for item in bench.items)
    assert per == {(d, s): 10 for d in DISCIPLINES for s in "AB"}
    assert all(by_id[item.id]["vote"] == item.human for item in bench.items)
    assert all(by_id[item.id]["subject"] == item.subject for item in bench.items)
    assert bench.report.excluded == {"both bad": 12, "tie": 20}
    assert bench.report.notes == ()
    assert bench.report.disciplines["Healthcare"].available_a == 30
    assert bench.report.disciplines["Healthcare"].available_b == 25


def test_sampling_is_deterministic_per_seed_and_ignores_input_order():
    records = votes_for(FULL)
    first = build_benchmark(records, per_side=10, seed=7).items
    shuffled = records[:]
    random.Random(3).shuffle(shuffled)
    assert build_benchmark(shuffled, per_side=10, seed=7).items == first
    other = build_benchmark(records, per_side=10, seed=8).items
    assert {i.id for i in other} != {i.id for i in first}


def test_votes_added_to_one_discipline_leave_the_others_samples_unchanged():
    records = votes_for(FULL)
    more = votes_for({"Engineering": {"A": 10, "B": 10}}, start=10_000)
    before = build_benchmark(records, per_side=10, seed=0).items
    after = build_benchmark(records + more, per_side=10, seed=0).items
    for discipline in ("Natural Science", "Healthcare", "Humanities & Social Sciences"):
        assert {i.id for i in before if i.subject == discipline} == {i.id for i in after if i.subject == discipline}


def test_a_discipline_short_of_one_side_gives_what_it_has_and_the_report_says_so():
    spec = dict(FULL)
    spec["Engineering"] = {"A": 12, "B": 3, "tie": 4}
    del spec["Healthcare"]
    bench = build_benchmark(votes_for(spec), per_side=10, seed=0)
    count = bench.report.disciplines["Engineering"]
    assert (count.taken_a, count.taken_b, count.available_b) == (10, 3, 3)
    assert bench.report.disciplines["Healthcare"].taken_a == 0
    assert any("Engineering" in n and "only 3" in n and "preferring B" in n for n in bench.report.notes)
    assert sum("Healthcare" in n for n in bench.report.notes) == 2
    assert len(bench.items) == 3 * 20 - 7


def test_records_missing_question_or_answers_are_skipped_and_counted():
    records = votes_for({"Healthcare": {"A": 4, "B": 4}})
    records[0]["question"] = ""
    records[1]["responseB"] = None
    del records[5]["responseA"]
    records.append(vote(99, "Astrology", "A"))
    records.append(vote(100, "Healthcare", "maybe"))
    bench = build_benchmark(records, per_side=4, seed=0)
    assert bench.report.excluded == {"missing question or answer": 3, "subject outside the disciplines": 1,
                                     "unrecognised vote label": 1}
    assert Counter(i.human for i in bench.items) == {"A": 2, "B": 3}


def test_released_schema_labels_in_any_case_and_citations_round_trip(tmp_path):
    labels = ["a", " B ", "Tie", "bad", "TIE", "A", "b", "Bad"]
    released = []
    for i, label in enumerate(labels * 3):
        record = vote(i, "Humanities and Social Sciences" if i % 2 else "natural science", label)
        record["citations_a"] = [{"concise_authors": "Lee et al. 2020", "content": f"passage {i}", "title": "T"}]
        record["citations_b"] = []
        released.append(record)
    path = tmp_path / "train.json"
    path.write_text(json.dumps(released))
    bench = build_benchmark(load(path), per_side=50, seed=0)
    assert Counter(i.human for i in bench.items) == {"A": 6, "B": 6}
    assert {i.subject for i in bench.items} == {"Natural Science", "Humanities & Social Sciences"}
    assert bench.report.excluded == {"both bad": 6, "tie": 6}
    item = bench.items[0]
    assert item.citations_a[0]["concise_authors"] == "Lee et al. 2020" and item.citations_b == ()
    out = tmp_path / "bench.jsonl"
    assert write_benchmark(bench.items, out) == 12
    assert read_benchmark(out) == bench.items
    line = json.loads(out.read_text().splitlines()[0])
    assert {"id", "question", "responseA", "responseB", "modelA", "modelB", "subject", "question_type",
            "human", "citations_a", "citations_b"} == set(line)


def test_items_without_an_id_get_a_stable_content_id():
    records = votes_for({"Healthcare": {"A": 2, "B": 2}})
    for r in records:
        del r["id"]
    first = build_benchmark(records, per_side=2, seed=0).items
    again = build_benchmark(list(reversed(records)), per_side=2, seed=0).items
    assert all(i.id.startswith("sha1:") for i in first)
    assert [i.id for i in first] == [i.id for i in again] and len({i.id for i in first}) == 4


def test_label_and_subject_normalisation():
    assert [normalise_vote(x) for x in ("A", " a", "b\n", "TIE", "Both Bad", "bad", "x", None, 1)] == \
        ["A", "A", "B", "tie", "bad", "bad", None, None, None]
    assert match_discipline("  humanities  AND social sciences") == "Humanities & Social Sciences"
    assert match_discipline("Medicine") is None


@pytest.mark.parametrize("content, message", [
    (None, "no such benchmark file"),
    ("", "is empty"),
    ("\n\n", "is empty"),
    ('{"id": "x"}\n', "line 1 is not a benchmark item"),
    ("not json\n", "line 1 is not a benchmark item"),
])
def test_unusable_benchmark_files_raise_a_readable_error(tmp_path, content, message):
    path = tmp_path / "bench.jsonl"
    if content is not None:
        path.write_text(content)
    with pytest.raises(EvaluationInputError, match=message):
        read_benchmark(path)


def test_a_benchmark_with_a_repeated_id_is_rejected(tmp_path):
    item = EvalItem(id="x", question="q", response_a="a", response_b="b", human="A", subject="Healthcare")
    path = tmp_path / "bench.jsonl"
    write_benchmark([item, item], path)
    with pytest.raises(EvaluationInputError, match="appears 2 times"):
        read_benchmark(path)

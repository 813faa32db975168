"""Reading votes: both schemas, three formats, bad input, and the incremental cache."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sciarena.board import table_from_arrays
from sciarena.board.synthetic import simulate, write_jsonl
from sciarena.board.table import VoteTable
from sciarena.board.table import vote_table as build_table
from sciarena.core.errors import LeaderboardInputError
from sciarena.science.quality.vouch import load_votes
from sciarena.votes.read.copy import cache_path
from sciarena.votes.read.duck import read_lines
from sciarena.votes.read.fields import timestamp_of
from sciarena.votes.read.parse import SMALL_INPUT_BYTES, leading_keys, parse_lines, parse_lines_python
from sciarena.votes.read.raw import NUMERIC_COLUMNS
from sciarena.votes.schema import VOTE_FIELDS

# Released-schema records as they appear in the public train.json: mixed-case votes,
# "bad", bare NaN tokens, no length fields.
RELEASED = """[
 {"id": "q1", "question": "Q?", "responseA": "abcd", "responseB": "abcdefgh",
  "modelA": "GPT-4.1", "modelB": "o3", "vote": "A",
  "citations_a": [{"concise_authors": "X et al. 2023", "content": "c"}], "citations_b": [],
  "question_type": "Conceptual Explanation", "subject": "Healthcare"},
 {"id": "q2", "question": "Q?", "responseA": "ab", "responseB": "abc",
  "modelA": "o3", "modelB": "Claude-4-Opus", "vote": "b",
  "citations_a": [], "citations_b": [{"content": "1"}, {"content": "2"}],
  "question_type": NaN, "subject": "Engineering"},
 {"id": "q3", "question": "Q?", "responseA": "", "responseB": "x",
  "modelA": "Claude-4-Opus", "modelB": "GPT-4.1", "vote": "Tie",
  "citations_a": [], "citations_b": [], "question_type": "Paper Finding", "subject": NaN},
 {"id": "q4", "question": "Q?", "responseA": "xyz", "responseB": "x",
  "modelA": "GPT-4.1", "modelB": "o3", "vote": "BAD",
  "citations_a": [], "citations_b": [], "question_type": "Others", "subject": "Healthcare"},
 {"id": "q5", "question": "Q?", "responseA": "x", "responseB": "y",
  "modelA": "o3", "modelB": "GPT-4.1", "vote": "maybe",
  "citations_a": [], "citations_b": [], "question_type": "Others", "subject": "Healthcare"},
 {"id": "q6", "question": "Q?", "responseA": "x", "responseB": "y",
  "modelA": "o3", "modelB": "GPT-4.1", "vote": NaN,
  "citations_a": [], "citations_b": [], "question_type": "Others", "subject": "Healthcare"}
]"""


def assert_same_table(one: VoteTable, two: VoteTable) -> None:
    assert one.models == two.models
    assert one.subjects == two.subjects and one.question_types == two.question_types
    for name in ("a", "b", "outcome", "subject", "question_type"):
        assert np.array_equal(getattr(one, name), getattr(two, name)), name
    for name in one.features:
        assert np.array_equal(one.features[name], two.features[name], equal_nan=True), name
    assert np.array_equal(one.timestamp, two.timestamp, equal_nan=True)
    assert dict(one.skipped) == dict(two.skipped)


def check_released(table: VoteTable) -> None:
    assert table.models == ("Claude-4-Opus", "GPT-4.1", "o3")
    assert table.n_votes == 4
    assert [table.models[i] for i in table.a] == ["GPT-4.1", "o3", "Claude-4-Opus", "GPT-4.1"]
    assert table.outcome.tolist() == [0, 1, 2, 3]
    assert table.features["length"].tolist() == [[4, 8], [2, 3], [0, 1], [3, 1]]
    assert table.features["citations"].tolist() == [[1, 0], [0, 2], [0, 0], [0, 0]]
    assert table.question_type[1] == -1 and table.subject[2] == -1  # NaN → unknown
    assert table.skipped == {"unknown vote label 'maybe'": 1, "missing vote": 1}


def test_released_schema_json_array(tmp_path: Path):
    path = tmp_path / "train.json"
    path.write_text(RELEASED)
    check_released(load_votes(path, texts=True))
    plain = load_votes(path)  # without texts (no --style) the answers are not read
    assert np.isnan(plain.features["length"]).all() and plain.outcome.tolist() == [0, 1, 2, 3]


def test_released_schema_json_lines(tmp_path: Path):
    records = RELEASED.replace("NaN", '"__nan__"')
    lines = [json.dumps(r).replace('"__nan__"', "NaN") for r in json.loads(records)]
    for name in ("votes.jsonl", "votes.json"):  # a .json file may hold JSON lines too
        path = tmp_path / name
        path.write_text("\n".join(lines) + "\n")
        check_released(load_votes(path, cache=False, texts=True))
        path.unlink()


def test_our_schema_fast_path_equals_python_path(tmp_path: Path):
    table = simulate(np.linspace(-50, 50, 5), 400, seed=1)
    path = tmp_path / "votes-1.jsonl"
    write_jsonl(table, path)
    fast = load_votes(path, cache=False)
    slow = build_table(parse_lines_python(path.read_bytes(), str(path)), sources=[str(path)])
    assert_same_table(fast, slow)
    assert fast.n_votes == 400 and np.array_equal(np.sort(fast.outcome), np.sort(table.outcome))
    assert np.isfinite(fast.timestamp).all()


def test_parquet_and_folder_of_mixed_files(tmp_path: Path):
    records = [json.loads(line) for line in _jsonl_lines(simulate([0, 50, 100], 90, seed=2))]
    pq.write_table(pa.Table.from_pylist(records[:30]), tmp_path / "part.parquet")
    (tmp_path / "day1").mkdir()
    (tmp_path / "day1" / "votes-a.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in records[30:60]))
    (tmp_path / "day1" / "votes-b.json").write_text(json.dumps(records[60:]))
    (tmp_path / "notes.txt").write_text("not votes")
    (tmp_path / "models.json").write_text('[{"name": "GPT-4.1", "provider": "openai"}]')
    table = load_votes(tmp_path)
    assert table.n_votes == 90
    (reason,) = table.skipped  # the stray JSON file is reported, not fatal
    assert "models.json" in reason and "modelA" in reason
    with pytest.raises(LeaderboardInputError, match="modelA"):
        load_votes(tmp_path / "models.json")  # named explicitly: an error
    single = load_votes(tmp_path / "part.parquet")
    assert single.n_votes == 30 and np.isfinite(single.features["length"]).all()
    assert np.isfinite(single.timestamp).all()
    both = load_votes([tmp_path / "part.parquet", tmp_path / "day1" / "votes-b.json"])
    assert both.n_votes == 60


def _jsonl_lines(table: VoteTable) -> list[str]:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "v.jsonl"
        write_jsonl(table, path)
        return path.read_text().splitlines()


@pytest.mark.parametrize(
    "content, message",
    [
        ("", "no usable votes"),
        ('{"modelA": "x", "modelB": "y"}\n', "vote"),
        ('{"a": 1}', "modelA"),
        ("[1, 2", "not valid JSON"),
        ('{"results": []}'.replace("{", "[{", 1).replace("}", "}]", 1), "modelA"),
        ("\x00\x01binary", "not a JSON"),
        ('{"modelA": "x", "modelB": "x", "vote": "A"}\n' * 3, "same model on both sides"),
        ('{"modelA": "x", "modelB": null, "vote": "A"}\n', "missing model name"),
        ('{"modelA": "x", "modelB": "y", "vote": "meh"}\n', "unknown vote label"),
        ("not json at all\n{broken\n", "not JSON lines"),
    ],
)
def test_bad_input_is_a_clear_error(tmp_path: Path, content: str, message: str):
    path = tmp_path / ("votes.jsonl" if content.startswith(("{", "not")) else "votes.json")
    path.write_text(content)
    with pytest.raises(LeaderboardInputError, match=message):
        load_votes(path)


def test_single_model_or_no_votes_in_memory():
    with pytest.raises(LeaderboardInputError, match="two models"):
        table_from_arrays(["solo"], [0], [0], [0])
    with pytest.raises(LeaderboardInputError, match="no votes"):
        table_from_arrays(["x", "y"], [], [], [])


def test_missing_paths_and_empty_folders(tmp_path: Path):
    with pytest.raises(LeaderboardInputError, match="no such file"):
        load_votes(tmp_path / "nope.jsonl")
    with pytest.raises(LeaderboardInputError, match="no vote files"):
        load_votes(tmp_path)
    (tmp_path / "broken.parquet").write_bytes(b"PAR1 not really")
    with pytest.raises(LeaderboardInputError, match="Parquet"):
        load_votes(tmp_path / "broken.parquet")


def test_malformed_lines_are_counted_not_fatal(tmp_path: Path):
    good = '{"modelA": "x", "modelB": "y", "vote": "A", "subject": null}\n'
    path = tmp_path / "v.jsonl"
    path.write_text(good + '{"modelA": "x", "mod\n' + good.replace('"A"', '"b"'))
    table = load_votes(path)
    assert table.n_votes == 2 and table.skipped == {"malformed JSON line": 1}


def test_incremental_cache_matches_fresh_parse_after_appends(tmp_path: Path):
    table = simulate(np.linspace(-80, 80, 6), 1000, seed=3)
    path = tmp_path / "data" / "2025-06-01" / "votes-p1.jsonl"
    path.parent.mkdir(parents=True)
    write_jsonl(table, path, stop=600)
    first = load_votes(tmp_path / "data")
    assert cache_path(path).exists()
    assert_same_table(first, load_votes(path, cache=False))

    write_jsonl(table, path, start=600, stop=900, mode="a")
    with open(path, "a") as out:  # a writer caught mid-line
        partial = _jsonl_lines(table)[900]
        out.write(partial[:40])
    grown = load_votes(tmp_path / "data")
    meta = _cache_meta(path)
    assert meta["rows"] == 900 and meta["consumed"] == path.stat().st_size - 40
    assert_same_table(grown, load_votes(path, cache=False))
    assert grown.skipped == {"incomplete last line": 1}  # until the writer finishes it

    with open(path, "a") as out:
        out.write(partial[40:] + "\n")
    write_jsonl(table, path, start=901, mode="a")
    full = load_votes(tmp_path / "data")
    assert full.n_votes == 1000 and not full.skipped
    assert_same_table(full, load_votes(path, cache=False))
    assert _cache_meta(path)["consumed"] == path.stat().st_size

    again = load_votes(tmp_path / "data")  # unchanged file: served from the cache
    assert_same_table(again, full)


def test_rewritten_file_invalidates_cache(tmp_path: Path):
    path = tmp_path / "votes.jsonl"
    write_jsonl(simulate([0, 100, 200], 300, seed=1), path)
    load_votes(path)
    other = simulate([0, 100, 200, 300], 500, seed=2)
    write_jsonl(other, path)  # rewritten, longer: not an append
    os.utime(path, ns=(1, 1))
    assert_same_table(load_votes(path), load_votes(path, cache=False))
    assert load_votes(path).n_votes == 500


def test_unwritable_cache_folder_still_loads(tmp_path: Path):
    path = tmp_path / "votes.jsonl"
    write_jsonl(simulate([0, 100], 50, seed=1), path)
    cache_path(path).parent.write_text("a file where the cache folder should be")
    assert load_votes(path).n_votes == 50


def _cache_meta(path: Path) -> dict:
    with np.load(cache_path(path), allow_pickle=False) as npz:
        return json.loads(str(npz["meta"]))


def test_appends_are_parsed_alone_the_prefix_comes_from_the_cache(tmp_path: Path):
    table = simulate(np.linspace(-80, 80, 4), 200, seed=4)
    path = tmp_path / "votes.jsonl"
    write_jsonl(table, path, stop=100)
    load_votes(path)
    # Tamper with the cached prefix (swap two model names): a reload that reparsed the
    # whole file would undo it, an incremental one keeps it.
    with np.load(cache_path(path), allow_pickle=False) as npz:
        arrays = {k: npz[k] for k in npz.files}
    meta = json.loads(str(arrays["meta"]))
    i, j = meta["models"].index("model-00"), meta["models"].index("model-01")
    meta["models"][i], meta["models"][j] = "model-01", "model-00"
    arrays["meta"] = np.array(json.dumps(meta))
    with open(cache_path(path), "wb") as out:
        np.savez(out, **arrays)
    write_jsonl(table, path, start=100, mode="a")
    cached, fresh = load_votes(path), load_votes(path, cache=False)
    head, tail = slice(0, 100), slice(100, 200)
    name = lambda t, idx: [t.models[k] for k in idx]  # noqa: E731
    swap = {"model-00": "model-01", "model-01": "model-00"}
    assert name(cached, cached.a[head]) == [swap.get(m, m) for m in name(fresh, fresh.a[head])]
    assert name(cached, cached.a[tail]) == name(fresh, fresh.a[tail])


def test_a_count_of_the_wrong_type_is_counted_from_the_answer_when_texts_are_read(tmp_path: Path):
    path = tmp_path / "votes.jsonl"
    write_jsonl(simulate([0, 60, 120], 2500, seed=6), path)  # above SMALL_INPUT_BYTES: the fast reader
    assert path.stat().st_size > SMALL_INPUT_BYTES
    lines = path.read_text().splitlines()
    odd = json.loads(lines[10])
    odd["length_a"] = "very long"  # a string where a number belongs: not a length
    lines[10] = json.dumps(odd)
    path.write_text("\n".join(lines) + "\n")
    table = load_votes(path, cache=False, texts=True)
    assert table.n_votes == 2500
    # an unusable length falls back to counting the answer's characters
    assert table.features["length"][10, 0] == len(odd["responseA"])
    assert np.isfinite(np.delete(table.features["length"][:, 0], 10)).all()
    without = load_votes(path, cache=False)  # the answers are not read: that length is unknown
    assert np.isnan(without.features["length"][10, 0]) and without.n_votes == 2500


# --- The fast reader (DuckDB) must give exactly what the standard-library path gives. ---

TRICKY_TEXT = ['plain answer [1].', 'quoted ", "modelA": "X", "vote": "A" inside an answer',
               'back\\slash, \\" escaped quote, \\\\ double', 'unicode é 漢字 😀 \u2028 separator',
               'line\nbreak\ttab', '{"id": "nested", "question_type": "fake"}', '']
TRICKY_MODELS = ['gpt-4.1', 'o3', ' Claude-4 ', 'Ünïcode-M', 'tab\tname', 'model "q"', 'İstanbul-LM']
TRICKY_VOTES = ['A', 'b', 'Tie', ' BAD ', 'both_bad', 'maybe', None, '', 'İ']
TRICKY_STAMPS = ['2025-06-01T12:00:00Z', '2025-06-01T12:00:00.123Z', '2025-06-01T12:00:00+00:00',
                 '2025-06-01T12:00:00', '2025-06-01T12:00:00.123456', '2025-06-01T14:00:00+02:00',
                 '2025-06-01 12:00:00', '2025-06-01', '2024-02-29T23:59:59.999999Z',
                 '2025-02-29T00:00:00Z', '2025-06-01T24:00:00Z', '2025-06-01T12:00:00.1234Z',
                 '0001-01-01T00:00:00Z', 'yesterday', '', None]


def _our_record(rng: random.Random, i: int) -> dict:
    record = {f: None for f in VOTE_FIELDS}
    a, b = rng.sample(TRICKY_MODELS, 2)
    record.update(
        id=f"id{i}", question=rng.choice(TRICKY_TEXT), responseA=rng.choice(TRICKY_TEXT),
        responseB=rng.choice(TRICKY_TEXT), modelA=a, modelB=b, vote=rng.choice(TRICKY_VOTES),
        citations_a=[{"number": 1, "id": "p1", "content": rng.choice(TRICKY_TEXT)}]
        * rng.randint(0, 2),
        citations_b=[], question_type=rng.choice(["Paper Finding", None, " ", "Others"]),
        subject=rng.choice(["Healthcare", "Engineering", None, ""]), schema_version=1,
        timestamp=rng.choice(TRICKY_STAMPS), consent=True, retrieval_queries=['q "x"'],
        retrieval_filters='{"year": 2020}', context_ids=["c1"], length_a=rng.randint(0, 5000),
        length_b=rng.randint(0, 5000), num_citations_a=rng.randint(0, 9),
        num_citations_b=rng.randint(0, 9), input_tokens_a=rng.choice([None, 1234]),
        output_tokens_b=rng.choice([None, 77]))
    return record


def _lines(records: list[dict]) -> bytes:
    # as the vote store writes them: json.dumps, non-ASCII kept
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode()


def _both_paths(data: bytes):
    """(fast reader's raw columns or None, its table (else parse_lines'), table via the stdlib)."""
    view = memoryview(data)
    arrow = read_lines(view, leading_keys(view), "f")
    fast = build_table(arrow) if arrow is not None else build_table(parse_lines(data, "f"))
    return arrow, fast, build_table(parse_lines_python(data, "f"))


def test_fast_path_equals_python_path_on_adversarial_records():
    rng = random.Random(7)
    data = _lines([_our_record(rng, i) for i in range(800)])
    arrow, fast, slow = _both_paths(data)
    assert arrow is not None, "the fast reader should take these lines"
    assert_same_table(fast, slow)
    # the cases the data was built for are really there
    assert {"İstanbul-LM", "tab\tname", 'model "q"', "Claude-4"} <= set(fast.models)
    assert "unknown vote label 'maybe'" in fast.skipped and "unknown vote label 'i̇'" in fast.skipped
    assert np.isnan(fast.timestamp).any() and np.isfinite(fast.timestamp).any()


def test_timestamps_are_read_as_fromisoformat_reads_them():
    records = [{"modelA": "x", "modelB": "y", "vote": "A", "length_a": 1, "length_b": 1,
                "num_citations_a": 0, "num_citations_b": 0, "timestamp": stamp}
               for stamp in TRICKY_STAMPS * 3]
    arrow, fast, slow = _both_paths(_lines(records))
    assert arrow is not None
    expected = np.array([timestamp_of(r["timestamp"]) for r in records])
    assert np.array_equal(arrow.timestamp, expected, equal_nan=True)
    assert_same_table(fast, slow)
    offset = TRICKY_STAMPS.index("2025-06-01T14:00:00+02:00")
    assert arrow.timestamp[offset] == arrow.timestamp[0]  # 14:00+02:00 is 12:00Z


def test_alternative_keys_follow_the_first_thousand_records_rule():
    base = {"modelA": "x", "modelB": "y", "vote": "A", "length_a": 10, "length_b": 20,
            "num_citations_a": 1, "num_citations_b": 2}
    records = [dict(base) for _ in range(1200)]
    records[5]["num_supporting_a"] = 3  # within the first 1000: read for every record
    records[1100]["num_irrelevant_b"] = 4  # first seen after 1000: ignored, by both paths
    records[1101]["num_supporting_a"] = 6
    arrow, fast, slow = _both_paths(_lines(records))
    assert arrow is not None
    assert_same_table(fast, slow)
    supporting = fast.features["supporting"][:, 0]
    assert supporting[5] == 3 and supporting[1101] == 6 and np.isnan(supporting[0])
    assert np.isnan(fast.features["irrelevant"]).all()


def test_a_length_to_derive_is_counted_only_when_texts_are_asked_for():
    rng = random.Random(3)
    records = [_our_record(rng, i) for i in range(50)]
    records[20]["length_b"] = None  # to be counted from responseB's characters
    data = _lines(records)
    view = memoryview(data)
    lazy = read_lines(view, leading_keys(view), "f")
    assert lazy is not None and not lazy.complete
    assert np.isnan(lazy.numeric[20, NUMERIC_COLUMNS.index("length_b")])
    full = read_lines(view, leading_keys(view), "f", texts=True)
    assert full is not None and full.complete
    assert full.numeric[20, NUMERIC_COLUMNS.index("length_b")] == len(records[20]["responseB"])
    assert_same_table(build_table(full), build_table(parse_lines_python(data, "f", texts=True)))
    assert_same_table(build_table(lazy), build_table(parse_lines_python(data, "f")))


def test_invalid_utf8_line_is_counted_not_fatal(tmp_path: Path):
    path = tmp_path / "votes.jsonl"
    write_jsonl(simulate([0, 100], 20, seed=1), path)
    lines = path.read_bytes().splitlines(keepends=True)
    for name in (b'"model-00"', b'"model-01"'):
        lines[3] = lines[3].replace(name, b'"model-\xff"')
    path.write_bytes(b"".join(lines))
    table = load_votes(path, cache=False)
    assert table.n_votes == 19 and table.skipped == {"malformed JSON line": 1}


@pytest.mark.slow  # starts a subprocess or a loopback server
def test_fast_path_does_not_import_pandas(tmp_path: Path):
    # pyarrow's to_numpy() and pa.array/pa.scalar import pandas (half a second): the reader avoids them
    path = tmp_path / "votes.jsonl"
    write_jsonl(simulate([0, 100, 200], 2500, seed=1), path)
    assert path.stat().st_size > SMALL_INPUT_BYTES  # so the fast reader is the one used
    code = ("import sys; from sciarena.science.quality.vouch import load_votes; "
            f"t = load_votes({str(path)!r}, cache=False); "
            "assert t.n_votes == 2500; print('duckdb' in sys.modules, 'pandas' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[1])
    assert out.stdout.split() == ["True", "False"]


@pytest.mark.slow  # starts a subprocess or a loopback server
def test_small_inputs_skip_pyarrow_and_give_the_same_table(tmp_path: Path):
    # the incremental copy parses the last minute of votes: starting the fast reader would cost more
    path = tmp_path / "votes.jsonl"
    write_jsonl(simulate([0, 100, 200], 300, seed=1), path)
    code = ("import sys; from sciarena.science.quality.vouch import load_votes; "
            f"t = load_votes({str(path)!r}, cache=False); "
            "assert t.n_votes == 300; print('pyarrow' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[1])
    assert out.stdout.strip() == "False"
    view = memoryview(path.read_bytes())
    arrow = read_lines(view, leading_keys(view), "f")
    assert arrow is not None
    assert_same_table(build_table(arrow), load_votes(path, cache=False))

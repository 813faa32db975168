"""The offline arena end to end over HTTP, through gradio_client, as a scripted user would use it."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from arena_server import running_arena
from gradio_client import Client

from sciarena.votes.schema import VOTE_FIELDS

pytestmark = pytest.mark.slow  # a server or a subprocess: `pytest -m "not slow"` skips it

QUESTION = "How does CRISPR-Cas9 achieve targeted genome editing?"


@pytest.fixture(scope="module")
def arena(tmp_path_factory, wire):
    with running_arena(tmp_path_factory.mktemp("data"), build=wire) as running:
        yield running


def stored(arena) -> list[dict]:
    return list(arena.services.arena.store.records())


def every_model_name(arena) -> list[str]:
    names = [m.name for m in arena.services.pool.active] + [m.name for m, _ in arena.services.pool.inactive]
    assert len(names) >= 3
    return names


def test_battle_vote_record_and_leaderboard(arena):
    client = Client(arena.url, verbose=False)
    before = len(stored(arena))
    answer_a, answer_b, refs_a, refs_b, status = client.predict(QUESTION, api_name="/battle")
    seen_before_vote = json.dumps([answer_a, answer_b, refs_a, refs_b, status])
    for name in every_model_name(arena):
        assert name not in seen_before_vote, f"{name} leaked before the vote"
    assert "[1]" in answer_a + answer_b
    assert "References cited" in refs_a and "Retrieved" in status

    reveal = client.predict("A", "  clearer synthesis  ", True, api_name="/vote")
    records = stored(arena)
    assert len(records) == before + 1
    record = records[-1]
    assert tuple(record) == VOTE_FIELDS
    assert record["vote"] == "A" and record["reason"] == "clearer synthesis"
    assert record["modelA"] in reveal and record["modelB"] in reveal and record["modelA"] != record["modelB"]
    assert record["question"] == QUESTION and record["responseA"] and record["responseB"]
    assert record["citations_a"] and record["retrieval_backend"] == "local:demo"
    assert record["voter_id"].startswith("anon-") and "127.0.0.1" not in json.dumps(record)

    out = subprocess.run(
        [sys.executable, "-m", "sciarena", "leaderboard", "--votes", str(arena.data_dir / "votes"),
         "--format", "json", "--min-battles", "0", "--bootstrap", "20"],
        capture_output=True, text=True, timeout=120,
    )
    assert out.returncode == 0, out.stderr
    models = {m["model"]: m for m in json.loads(out.stdout)["models"]}
    assert models[record["modelA"]]["battles"] >= 1 and models[record["modelB"]]["battles"] >= 1


def test_one_vote_per_battle(arena):
    client = Client(arena.url, verbose=False)
    client.predict(QUESTION, api_name="/battle")
    client.predict("tie", "", True, api_name="/vote")
    count = len(stored(arena))
    with pytest.raises(Exception, match="already voted"):
        client.predict("B", "", True, api_name="/vote")
    assert len(stored(arena)) == count


def test_vote_without_a_battle_is_refused(arena):
    with pytest.raises(Exception, match="no battle"):
        Client(arena.url, verbose=False).predict("A", "", True, api_name="/vote")


def test_unknown_choice_is_refused(arena):
    client = Client(arena.url, verbose=False)
    client.predict(QUESTION, api_name="/battle")
    with pytest.raises(Exception, match="must be one of"):
        client.predict("C", "", True, api_name="/vote")


def test_a_vote_without_consent_is_refused_and_can_be_given_after(arena):
    client = Client(arena.url, verbose=False)
    client.predict(QUESTION, api_name="/battle")
    count = len(stored(arena))
    with pytest.raises(Exception, match="agree to the terms"):
        client.predict("A", "", False, api_name="/vote")
    assert len(stored(arena)) == count
    client.predict("A", "", True, api_name="/vote")
    assert stored(arena)[-1]["consent"] is True


@pytest.mark.parametrize("question, message", [("   ", "type a question"), ("x" * 4001, "limit is 4,000"),
                                               ("zzqxv qqqq", "No papers matched")])
def test_bad_questions_get_a_clear_message_and_write_nothing(arena, question, message):
    count = len(stored(arena))
    with pytest.raises(Exception, match=message):
        Client(arena.url, verbose=False).predict(question, api_name="/battle")
    assert len(stored(arena)) == count


def test_html_in_the_question_is_shown_as_text_and_unvoted_battles_write_nothing(arena):
    count = len(stored(arena))
    client = Client(arena.url, verbose=False)
    outputs = client.predict("<script>alert('x')</script> How does self-attention in the Transformer replace recurrence?",
                             api_name="/battle")
    assert "<script>" not in json.dumps(outputs)
    assert len(stored(arena)) == count

"""The OpenScholar-style pipeline against its own base model, through the running app (gradio_client).

The base model is served by the loopback OpenAI server and answers by step (see test_openscholar.py):
the bare model and the pipeline's draft get the same generation prompt and the same reply, so the
two sides differ only by what the loop did. The vote is recorded with the pipeline's step counts.
"""

from __future__ import annotations

import json

import pytest
from arena_server import running_arena
from fake_openai import FakeOpenAI, loop_settings
from gradio_client import Client
from test_openscholar import StepScript

pytestmark = pytest.mark.slow  # a server: `pytest -m "not slow"` skips it

QUESTION = "How do transformers use self-attention instead of recurrence?"
DRAFT = "Transformers replace recurrence with self-attention over every position of the sequence [1]."
FEEDBACK = json.dumps({"feedback": [
    {"issue": "Say how positions are encoded without recurrence.", "search": "positional encoding transformer"},
    {"issue": "Mention the cost of attention on long sequences.", "search": ""},
]})
REVISED = [DRAFT + " Positional information is added to the token embeddings [1].",
           DRAFT + " Positional information is added to the token embeddings [1]. Attention costs grow "
                   "quadratically with the length of the sequence [2]."]


def settings_for(tmp_path, server: FakeOpenAI):
    return loop_settings(server, tmp_path, [
        {"name": "Loop Base", "provider": "loop", "model_id": "base", "organisation": "Test",
         "price_input_per_m": 1.0, "price_output_per_m": 4.0},
        {"pipeline": "openscholar", "base": "Loop Base"}], generation_timeout_s=20)


def test_a_battle_of_the_pipeline_against_its_base_is_voted_and_recorded_with_its_steps(tmp_path, wire):
    with FakeOpenAI() as server:
        script = StepScript(DRAFT, FEEDBACK, tuple(REVISED))
        server.add_script("base", respond=script, usage="always")
        services = wire(settings_for(tmp_path, server))
        assert {m.name for m in services.pool.active} == {"Loop Base", "OpenScholar-style (Loop Base)"}
        with running_arena(tmp_path / "data", services=services) as arena:
            client = Client(arena.url, verbose=False)
            answer_a, answer_b, refs_a, refs_b, status = client.predict(QUESTION, api_name="/battle")
            assert "Both answers are complete" in status
            assert "OpenScholar" not in answer_a + answer_b  # the names stay hidden until the vote
            reveal = client.predict("A", "", True, api_name="/vote")
        assert "a pipeline around Loop Base" in json.dumps(reveal)
    record = list(services.arena.store.records())[-1]
    pipe = "a" if record["modelA"].startswith("OpenScholar") else "b"
    bare = "b" if pipe == "a" else "a"
    assert record[f"pipeline_{bare}"] is None
    assert record[f"response{bare.upper()}"] == DRAFT  # the bare model answered what the draft was
    report = json.loads(record[f"pipeline_{pipe}"])
    assert report["steps"] == ["draft", "feedback", "retrieve", "refine", "refine", "verify"]
    assert (report["calls"], report["feedback_items"], report["revisions_kept"]) == (4, 2, 2)
    assert report["base"] == "Loop Base" and report["stopped"] == ""
    assert record[f"response{pipe.upper()}"].endswith("length of the sequence [2].")
    # Four calls' tokens, priced at the base model's rates.
    assert record[f"input_tokens_{pipe}"] > record[f"input_tokens_{bare}"] > 0
    expected = (record[f"input_tokens_{pipe}"] * 1.0 + record[f"output_tokens_{pipe}"] * 4.0) / 1e6
    assert record[f"cost_usd_{pipe}"] == pytest.approx(expected)
    assert record[f"latency_s_{pipe}"] > 0
    assert len(server.requests("base")) == 5  # the bare model's one call and the pipeline's four

"""Real-model battles through the app: models added by a catalogue file, served by a loopback
OpenAI-compatible server, streamed side by side, edited by an LLM postprocessor, recorded with usage and cost."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from arena_server import running_arena
from fake_openai import FakeOpenAI
from gradio_client import Client

from sciarena.core.settings import Settings

pytestmark = pytest.mark.slow  # a server or a subprocess: `pytest -m "not slow"` skips it

QUESTION = "How does retrieval-augmented generation reduce hallucination?"
OFFLINE = ("Extractive-MMR (offline)", "Per-Paper Digest (offline)", "Claim Clusters (offline)")


def catalogue_file(tmp_path, base_url: str):
    path = tmp_path / "models.json"
    path.write_text(json.dumps({
        "endpoints": {"loop": {"base_url": base_url, "key_env": "LOOP_API_KEY"}},
        "models": [
            {"name": "Loop Alpha", "provider": "loop", "model_id": "alpha", "organisation": "Test",
             "price_input_per_m": 2.0, "price_output_per_m": 8.0},
            {"name": "Loop Beta", "provider": "loop", "model_id": "beta", "organisation": "Test"},
            {"name": "editor", "provider": "loop", "model_id": "editor", "battles": False},
            *({"name": name, "enabled": False} for name in OFFLINE),
        ],
    }))
    return path


def settings_for(tmp_path, server: FakeOpenAI, **env: str) -> Settings:
    base = Settings.from_env({"LOOP_API_KEY": "sk-test", "SCIARENA_MODELS": str(catalogue_file(tmp_path, server.base_url)),
                              **env})
    return replace(base, data_dir=tmp_path / "data", seed=0, generation_timeout_s=20)


@pytest.fixture
def server():
    with FakeOpenAI() as fake:
        yield fake


def test_models_from_a_catalogue_file_battle_and_are_recorded_with_usage_and_cost(tmp_path, server, wire):
    server.add_script("alpha", ("Retrieval grounds ", "answers in papers [1]", "."), chunk_delay_s=0.05)
    server.add_script("beta", ("As GPT-4, I think ", "retrieval helps [2]."), first_token_delay_s=0.8)
    services = wire(settings_for(tmp_path, server))
    assert {m.name for m in services.pool.active} == {"Loop Alpha", "Loop Beta"}
    with running_arena(tmp_path / "data", services=services) as arena:
        client = Client(arena.url, verbose=False)
        outputs = client.predict(QUESTION, api_name="/battle")
        assert "GPT-4" not in json.dumps(outputs), "a self-identifying answer must be redacted before the vote"
        assert "model name hidden" in json.dumps(outputs)
        client.predict("A", "", True, api_name="/vote")
    record = list(services.arena.store.records())[-1]
    side = {"a": record["modelA"], "b": record["modelB"]}
    alpha = "a" if side["a"] == "Loop Alpha" else "b"
    beta = "b" if alpha == "a" else "a"
    assert record[f"input_tokens_{alpha}"] > 0 and record[f"output_tokens_{alpha}"] > 0
    expected = (record[f"input_tokens_{alpha}"] * 2.0 + record[f"output_tokens_{alpha}"] * 8.0) / 1e6
    assert record[f"cost_usd_{alpha}"] == pytest.approx(expected)
    assert record[f"cost_usd_{beta}"] is None  # no catalogue price: unknown, not zero
    assert record[f"redacted_{beta}"] is True and record[f"redacted_{alpha}"] is False
    assert record[f"first_token_s_{beta}"] >= 0.8 > record[f"first_token_s_{alpha}"]
    # The system prompt and the numbered references reached the model.
    sent = server.requests("alpha")[-1].body["messages"]
    assert sent[0]["role"] == "system" and "[1]" in sent[-1]["content"]


@pytest.mark.parametrize("failure", [{"fail_forever": 500}, {"cut_after": 2}], ids=["500-forever", "cut-mid-stream"])
def test_a_failing_model_gives_a_clear_message_and_nothing_is_recorded(tmp_path, server, failure, wire):
    server.add_script("alpha", ("Fine [1].",))
    server.add_script("beta", ("Partial ", "answer ", "that ", "stops [1]."), **failure)
    services = wire(settings_for(tmp_path, server))
    with running_arena(tmp_path / "data", services=services) as arena:
        client = Client(arena.url, verbose=False)
        answer_a, answer_b, *_ , status = client.predict(QUESTION, api_name="/battle")
        assert "cannot be voted" in status
        assert "Traceback" not in answer_a + answer_b
        with pytest.raises(Exception, match="cannot be voted"):
            client.predict("A", "", True, api_name="/vote")
    assert list(services.arena.store.records()) == []


def test_the_llm_postprocessor_edits_answers_and_a_bad_edit_is_ignored(tmp_path, server, wire):
    server.add_script("alpha", ("**Retrieval** [1] grounds answers in papers.",))
    server.add_script("beta", ("Retrieval helps [2] a lot, as shown in trials.",))
    edited = json.dumps({"references": [1], "response": "Retrieval grounds answers in papers [1]."})
    server.add_script("editor", (edited,))
    services = wire(settings_for(tmp_path, server, SCIARENA_POSTPROCESS_MODEL="editor"))
    progress = services.arena.start_battle(QUESTION)
    battle = list(progress)[-1].battle
    by_model = {battle.side_a.model.name: battle.side_a, battle.side_b.model.name: battle.side_b}
    assert by_model["Loop Alpha"].answer.text == "Retrieval grounds answers in papers [1]."
    # The editor's reply for beta is alpha's text: it drops most of beta's words, so it is rejected.
    assert "as shown in trials" in by_model["Loop Beta"].answer.text
    assert len(server.requests("editor")) == 2

"""The arena with SCIARENA_RETRIEVER=semantic_scholar, the real client pointed at a loopback Semantic Scholar."""

from __future__ import annotations

from dataclasses import replace

import pytest
from arena_server import running_arena
from fake_semantic_scholar import FakeSemanticScholar, Fault
from gradio_client import Client

from sciarena.core.settings import Settings

pytestmark = pytest.mark.slow  # a server or a subprocess: `pytest -m "not slow"` skips it

QUESTION = "How accurate are citations of retrieval-augmented language models?"


def s2_settings(data_dir, base_url: str, **extra) -> Settings:
    settings = Settings.from_env({"SCIARENA_RETRIEVER": "semantic_scholar", "S2_BASE_URL": base_url,
                                  "S2_TIMEOUT": "2", "SCIARENA_MODERATION": "local", **extra})
    return replace(settings, data_dir=data_dir, seed=0)


def test_battle_and_vote_over_semantic_scholar(tmp_path, wire):
    with FakeSemanticScholar() as s2:
        services = wire(s2_settings(tmp_path, s2.base_url))
        with running_arena(tmp_path, services=services) as arena:
            client = Client(arena.url, verbose=False)
            answer_a, answer_b, refs_a, refs_b, status = client.predict(QUESTION, api_name="/battle")
            assert "Semantic Scholar" in status
            assert "How Accurate Are Citations" in refs_a + refs_b
            client.predict("B", "", True, api_name="/vote")
        assert s2.calls("snippet/search") and s2.calls("paper/search")
    record = list(services.arena.store.records())[-1]
    assert record["retrieval_backend"] == "semantic_scholar"
    assert record["retrieval_queries"] and record["context_ids"]


def test_semantic_scholar_outage_falls_back_to_the_local_datastore_and_says_so(tmp_path, wire):
    with FakeSemanticScholar() as s2:
        for endpoint in ("snippet/search", "paper/search"):
            s2.fail(endpoint, Fault(status=500), times=50)
        services = wire(s2_settings(tmp_path, s2.base_url, SCIARENA_RETRIEVER_FALLBACK="local"))
        with running_arena(tmp_path, services=services) as arena:
            *_, status = Client(arena.url, verbose=False).predict(
                "How does CRISPR-Cas9 edit genomes?", api_name="/battle")
    assert "Semantic Scholar was unavailable" in status
    assert "bundled demo corpus" in status

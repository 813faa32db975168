"""Building providers from the catalogue and splitting the battle pool."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fake_openai import FakeOpenAI

from sciarena.core.settings import Settings
from sciarena.core.types import GenerationRequest, ModelSpec
from sciarena.pipelines.provider import PipelineProvider
from sciarena.providers.catalogue import load_catalogue
from sciarena.providers.local_gguf import xllamacpp_installed
from sciarena.providers.openai_compat import OpenAICompatibleProvider
from sciarena.providers.registry import battle_pool, build_providers


def pool_for(settings: Settings):
    """As services.py wires it, less the retriever (a pipeline then answers without extra retrieval)."""
    catalogue = load_catalogue(settings)
    providers = build_providers(settings, catalogue)
    providers = {**providers, "pipeline": PipelineProvider(providers, None)}
    return catalogue, providers, battle_pool(catalogue, providers)


def test_without_keys_only_offline_baselines_battle() -> None:
    _, providers, pool = pool_for(Settings())
    assert {m.name for m in pool.active} == {
        "Extractive-MMR (offline)", "Per-Paper Digest (offline)", "Claim Clusters (offline)",
        "OpenScholar-style (Extractive-MMR, offline)"}
    reasons = {spec.name: reason for spec, reason in pool.inactive}
    assert len(reasons) == 47
    assert reasons["o3"] == "set OPENAI_API_KEY"
    assert reasons["Llama-4 Scout"] == "set TOGETHER_API_KEY"
    assert reasons["Claude 4 Opus"] == "set ANTHROPIC_API_KEY"
    assert reasons["Gemini 2.5 Pro"] == "set GEMINI_API_KEY"
    assert reasons["GLM 4.6"] == "set ZAI_API_KEY"
    # Every vendor is an endpoint row served by the one provider class; Together's row picks its own client.
    assert all(isinstance(providers[key], OpenAICompatibleProvider) for key in ("together", "anthropic", "openai"))
    assert providers["together"].kind.name == "together"  # type: ignore[attr-defined]
    assert providers["anthropic"].kind.name == "openai"  # type: ignore[attr-defined]
    assert providers["anthropic"].base_url == "https://api.anthropic.com/v1/"  # type: ignore[attr-defined]


def test_a_key_in_settings_activates_its_models(monkeypatch: pytest.MonkeyPatch) -> None:
    # The environment is not consulted: only Settings.secrets count.
    monkeypatch.setenv("TOGETHER_API_KEY", "from-environment")
    _, _, pool = pool_for(Settings(secrets={"OPENAI_API_KEY": "sk-x"}))
    active = {m.name for m in pool.active}
    assert {"o3", "GPT-5", "GPT-4.1-mini"} <= active
    assert len(active) == 8 + 4  # eight OpenAI models, the three baselines and the pipeline over one
    assert not any(m.provider == "together" for m in pool.active)


def test_unknown_provider_is_explained() -> None:
    catalogue = load_catalogue(Settings())
    pool = battle_pool(catalogue, {})
    assert not pool.active
    assert dict((s.name, r) for s, r in pool.inactive)["o3"] == "no provider named 'openai' is configured"


def test_a_local_server_is_one_endpoint_and_one_entry(tmp_path: Path) -> None:
    with FakeOpenAI() as server:
        server.add_script("qwen3-4b", ("Local ", "answer [1]."))
        user = tmp_path / "models.json"
        user.write_text(json.dumps({
            "endpoints": {"local": {"base_url": server.base_url, "key_env": None}},
            "models": [{"name": "Local Qwen", "provider": "local", "model_id": "qwen3-4b", "open_weights": True}],
        }))
        catalogue, providers, pool = pool_for(Settings(models_file=user))
        local = catalogue.get("Local Qwen")
        assert local in pool.active
        request = GenerationRequest(question="q", references=(), messages=({"role": "user", "content": "q"},))
        text = "".join(d.text for d in providers["local"].stream(local, request))  # type: ignore[arg-type]
        assert text == "Local answer [1]."
        assert server.requests("qwen3-4b")[0].body["temperature"] == 1


def test_gguf_entries_report_what_is_missing(tmp_path: Path) -> None:
    user = tmp_path / "models.json"
    user.write_text(json.dumps({"models": [
        {"name": "Missing file", "provider": "gguf", "model_id": "x",
         "params": {"model_path": str(tmp_path / "no.gguf")}},
        {"name": "Not downloaded", "provider": "gguf", "model_id": "y",
         "params": {"hf_repo": "example/never-downloaded-GGUF", "hf_file": "model.gguf"}},
    ]}))
    _, _, pool = pool_for(Settings(models_file=user))
    reasons = {spec.name: reason for spec, reason in pool.inactive}
    if not xllamacpp_installed():
        assert reasons["Missing file"] == "pip install xllamacpp"
        return
    assert reasons["Missing file"].startswith("Model file not found")
    assert "not downloaded" in reasons["Not downloaded"]


def test_a_failing_availability_check_does_not_stop_the_pool() -> None:
    class Broken:
        def unavailable_reason(self, spec: ModelSpec) -> str | None:
            raise RuntimeError("boom")

        def stream(self, spec, request):  # pragma: no cover - never called
            raise AssertionError

    catalogue = load_catalogue(Settings())
    pool = battle_pool(catalogue, {"openai": Broken()})
    reasons = dict((s.name, r) for s, r in pool.inactive)
    assert reasons["o3"] == "availability check failed (RuntimeError)"

"""The shipped model catalogue (paper Table 6) and merging a user file into it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sciarena.core.errors import CatalogueError
from sciarena.core.settings import DEFAULT_CATALOGUE, Settings
from sciarena.core.types import ModelSpec
from sciarena.providers.catalogue import BUILTIN_PROVIDERS, load_catalogue, load_catalogue_files

# Table 6 of the SciArena paper (as of 2026-01-11): display name -> (organisation, reasoning kind).
PAPER_TABLE_6 = {
    "o3": ("OpenAI", "yes"), "o4-mini": ("OpenAI", "yes"), "GPT-4.1": ("OpenAI", "no"),
    "GPT-4.1-mini": ("OpenAI", "no"), "GPT-5": ("OpenAI", "yes"), "GPT-5 Mini": ("OpenAI", "yes"),
    "GPT-5 Nano": ("OpenAI", "yes"), "GPT-5.1": ("OpenAI", "yes"),
    "Gemini 3 Pro Preview": ("Google", "hybrid"), "Gemini 2.5 Pro": ("Google", "hybrid"),
    "Gemini 2.5 Flash": ("Google", "hybrid"), "Gemini 2.5 Pro Preview": ("Google", "hybrid"),
    "Gemini 2.5 Flash Preview": ("Google", "hybrid"),
    "Claude 4.1 Opus": ("Anthropic", "hybrid"), "Claude 4 Opus": ("Anthropic", "hybrid"),
    "Claude 4 Sonnet": ("Anthropic", "hybrid"), "Claude 4.5 Sonnet": ("Anthropic", "hybrid"),
    "Claude 3.7 Sonnet": ("Anthropic", "hybrid"),
    "Grok3 (Beta)": ("xAI", "no"), "Grok 4": ("xAI", "hybrid"), "Grok 4 Fast Reasoning": ("xAI", "yes"),
    "Grok 4 Fast Non-Reasoning": ("xAI", "no"),
    "Mistral-Medium-3": ("Mistral AI", "no"), "Kimi K2": ("MoonshotAI", "no"), "Kimi K2 (0905)": ("MoonshotAI", "no"),
    "Mistral-Small-3.1": ("Mistral AI", "no"),
    "Qwen3-235B-A22B": ("Alibaba", "hybrid"), "Qwen3-32B": ("Alibaba", "hybrid"), "QwQ-32B": ("Alibaba", "yes"),
    "Qwen3 Next 80B A3B Thinking": ("Alibaba", "yes"), "Qwen3 Next 80B A3B Instruct": ("Alibaba", "no"),
    "Qwen3 30B A3B Instruct (2507)": ("Alibaba", "no"), "Qwen3 235B A22B (2507)": ("Alibaba", "hybrid"),
    "Qwen3 235B A22B Thinking (2507)": ("Alibaba", "yes"),
    "Llama-4 Maverick": ("Meta", "no"), "Llama-4 Scout": ("Meta", "no"),
    "DeepSeek-R1-0528": ("DeepSeek", "yes"), "DeepSeek-R1": ("DeepSeek", "yes"), "DeepSeek-V3": ("DeepSeek", "no"),
    "DeepSeek-V3.1": ("DeepSeek", "no"), "DeepSeek-V3.2-Exp": ("DeepSeek", "no"),
    "GLM 4.5": ("Zhipu AI", "hybrid"), "GLM 4.6": ("Zhipu AI", "hybrid"),
    "GPT OSS 20B": ("OpenAI (OSS)", "no"), "GPT OSS 120B": ("OpenAI (OSS)", "no"),
    "MiniMax-M1": ("MiniMax", "yes"), "Olmo 3.1 32B Instruct": ("Ai2 (AllenAI)", "no"),
}
# The table's "Open-source" section.
PAPER_OPEN = {
    "Mistral-Small-3.1", "Qwen3-235B-A22B", "Qwen3-32B", "QwQ-32B", "Qwen3 Next 80B A3B Thinking",
    "Qwen3 Next 80B A3B Instruct", "Qwen3 30B A3B Instruct (2507)", "Qwen3 235B A22B (2507)",
    "Qwen3 235B A22B Thinking (2507)", "Llama-4 Maverick", "Llama-4 Scout", "DeepSeek-R1-0528", "DeepSeek-R1",
    "DeepSeek-V3", "DeepSeek-V3.1", "DeepSeek-V3.2-Exp", "GLM 4.5", "GLM 4.6", "GPT OSS 20B", "GPT OSS 120B",
    "MiniMax-M1", "Olmo 3.1 32B Instruct",
}


@pytest.fixture(scope="module")
def shipped():
    return load_catalogue(Settings())


def write(tmp_path: Path, doc: object, name: str = "mine.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc) if not isinstance(doc, str) else doc, encoding="utf-8")
    return path


def test_paper_models_and_offline_baselines(shipped) -> None:
    names = [m.name for m in shipped.models]
    assert len(names) == len(set(names)) == 51  # the paper's 47, three baselines, a pipeline over one
    paper = [m for m in shipped.models if not m.offline]
    assert len(PAPER_TABLE_6) == 47
    assert {m.name for m in paper} == set(PAPER_TABLE_6)
    for model in paper:
        assert (model.organisation, model.reasoning) == PAPER_TABLE_6[model.name], model.name
        assert model.open_weights == (model.name in PAPER_OPEN), model.name


OFFLINE_NAMES = {"extractive-mmr": "Extractive-MMR (offline)", "per-paper-digest": "Per-Paper Digest (offline)",
                 "claim-clusters": "Claim Clusters (offline)"}


def test_offline_entries_match_the_offline_provider(shipped) -> None:
    from sciarena.providers.offline import OFFLINE_MODEL_IDS

    offline = {m.model_id: m for m in shipped.models if m.provider == "offline"}
    assert set(offline) == set(OFFLINE_MODEL_IDS) == set(OFFLINE_NAMES)
    for model_id, spec in offline.items():
        assert spec == ModelSpec(name=OFFLINE_NAMES[model_id], provider="offline", model_id=model_id,
                                 organisation="SciArena (offline baseline)", open_weights=True, reasoning="no",
                                 price_input_per_m=0.0, price_output_per_m=0.0, offline=True)


def test_helpers_are_found_by_name_but_never_battle(shipped, tmp_path: Path) -> None:
    moderation = shipped.find("omni-moderation-latest")
    assert moderation is not None and moderation.provider == "openai"
    assert moderation not in shipped.models and shipped.helpers == (moderation,)
    # A setting may name a model by display name, in any case, or by its unique API model id.
    assert shipped.find("gpt-4.1-mini") is shipped.find("GPT-4.1-mini") is shipped.get("GPT-4.1-mini")
    assert shipped.find("gpt-4.1-mini-2025-04-14") is shipped.get("GPT-4.1-mini")
    assert shipped.find("no such model") is None
    user = write(tmp_path, {"endpoints": {"mod": {"base_url": "http://127.0.0.1:9/v1", "key_env": None}},
                            "models": [{"name": "omni-moderation-latest", "provider": "mod"},
                                       {"name": "Rewriter", "provider": "mod", "model_id": "r", "battles": False}]})
    merged = load_catalogue(Settings(models_file=user))
    assert merged.find("omni-moderation-latest").provider == "mod"  # type: ignore[union-attr]
    assert merged.get("Rewriter") is None and merged.find("rewriter").model_id == "r"  # type: ignore[union-attr]


def test_paper_generation_settings(shipped) -> None:
    for model in shipped.models:
        if model.offline:
            assert model.params == {}
            continue
        assert model.params["temperature"] == 1, model.name
        if model.name in ("o3", "o4-mini"):
            assert model.params["reasoning_effort"] == "medium"
        else:
            assert "reasoning_effort" not in model.params, model.name
        if model.organisation == "Anthropic":
            assert model.params["extra_body"] == {"thinking": {"type": "enabled", "budget_tokens": 2048}}
            assert model.params["max_tokens"] > 2048
        if model.organisation == "Google":  # dynamic thinking is the API default: nothing to send
            assert set(model.params) == {"temperature"}


def test_providers_prices_and_endpoints(shipped) -> None:
    for model in shipped.models:
        assert model.provider in shipped.endpoints or model.provider in BUILTIN_PROVIDERS
        for price in (model.price_input_per_m, model.price_output_per_m):
            assert price is None or price >= 0
    assert {m.provider for m in shipped.models if m.organisation == "OpenAI"} == {"openai"}
    assert {m.provider for m in shipped.models if m.name in PAPER_OPEN} <= {"together", "zhipu"}
    assert shipped.get("GPT-4.1").price_input_per_m == 2.0  # type: ignore[union-attr]
    assert shipped.endpoints["anthropic"].base_url == "https://api.anthropic.com/v1/"
    assert shipped.endpoints["google"].base_url == "https://generativelanguage.googleapis.com/v1beta/openai/"
    assert shipped.endpoints["together"].client == "together"
    assert shipped.endpoints["openai"].key_env == "OPENAI_API_KEY"
    assert shipped.sources == (DEFAULT_CATALOGUE,)


def test_user_file_merges_by_name_and_key(tmp_path: Path) -> None:
    user = write(tmp_path, {
        "endpoints": {
            "together": {"base_url": "http://127.0.0.1:9/"},
            "local-vllm": {"base_url": "http://127.0.0.1:8000/v1", "key_env": None},
        },
        "models": [
            {"name": "o3", "price_input_per_m": 1.5, "params": {"reasoning_effort": "high"}},
            {"name": "GPT-4.1", "enabled": False},
            {"name": "Qwen3-32B", "params": {"temperature": None}},
            {"name": "My Local Qwen", "provider": "local-vllm", "model_id": "Qwen/Qwen3-4B", "open_weights": True},
        ],
    })
    merged = load_catalogue(Settings(models_file=user))
    assert merged.sources == (DEFAULT_CATALOGUE, user)
    names = [m.name for m in merged.models]
    assert "GPT-4.1" not in names and "My Local Qwen" in names and len(names) == 51
    o3 = merged.get("o3")
    assert o3 is not None
    assert o3.price_input_per_m == 1.5 and o3.price_output_per_m == 8.0  # untouched fields kept
    assert o3.params == {"temperature": 1, "reasoning_effort": "high"}
    assert "temperature" not in merged.get("Qwen3-32B").params  # type: ignore[union-attr]
    local = merged.get("My Local Qwen")
    assert local is not None and local.params == {"temperature": 1} and local.reasoning == "no"
    assert merged.endpoints["local-vllm"].key_env is None
    together = merged.endpoints["together"]
    assert (together.base_url, together.key_env, together.client) == ("http://127.0.0.1:9/", "TOGETHER_API_KEY",
                                                                      "together")


@pytest.mark.parametrize("doc, expected", [
    ("{not json", r"mine\.json: not valid JSON \(line 1"),
    ([], "must hold a JSON object"),
    ({"modles": []}, r"unknown top-level field\(s\) \['modles'\]"),
    ({"models": [{"name": "X", "provider": "openai", "model_id": "x", "prize": 1}]}, r"model 'X' has unknown field"),
    ({"models": [{"name": "X", "provider": "nowhere", "model_id": "x"}]}, r"model 'X' uses provider 'nowhere'"),
    ({"models": [{"name": "X", "provider": "openai"}]}, r"model 'X' needs a non-empty 'model_id'"),
    ({"models": [{"name": "X", "provider": "openai", "model_id": "x", "reasoning": "maybe"}]}, "'reasoning' must be"),
    ({"models": [{"name": "X", "provider": "openai", "model_id": "x", "price_input_per_m": -1}]}, "non-negative"),
    ({"models": [{"name": "X", "provider": "openai", "model_id": "x", "offline": True}]}, "'offline': true goes"),
    ({"models": [{"name": "X", "provider": "openai", "model_id": "x", "battles": "no"}]}, "'battles' must be true"),
    ({"models": [{"name": "X", "provider": "openai", "model_id": "x"}] * 2}, "'X' appears twice"),
    ({"models": [{"provider": "openai", "model_id": "x"}]}, r"model #1 needs a non-empty 'name'"),
    ({"models": [{"name": "X", "provider": "openai", "model_id": "x", "params": {"extra_body": 1}}]},
     "'params.extra_body' must be a JSON object"),
    ({"endpoints": {"e": {"base_url": "ftp://x"}}}, r"endpoint 'e' needs a 'base_url'"),
    ({"endpoints": {"e": {"base_url": "http://x", "key_env": "MY_SECRET"}}}, "must end with one of _API_KEY"),
    ({"endpoints": {"e": {"base_url": "http://x", "client": "anthropic"}}}, "'client' must be one of"),
    ({"endpoints": {"offline": {"base_url": "http://x"}}}, "reserved for a built-in provider"),
])
def test_bad_user_files_get_clear_errors(tmp_path: Path, doc: object, expected: str) -> None:
    path = write(tmp_path, doc)
    with pytest.raises(CatalogueError, match=expected) as caught:
        load_catalogue(Settings(models_file=path))
    assert str(path) in str(caught.value)


def test_missing_user_file_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    with pytest.raises(CatalogueError, match="not found: .*nope.json"):
        load_catalogue(Settings(models_file=missing))


def test_a_standalone_file_needs_no_shipped_catalogue(tmp_path: Path) -> None:
    path = write(tmp_path, {"endpoints": {"llamacpp": {"base_url": "http://127.0.0.1:8080/v1"}},
                            "models": [{"name": "Local", "provider": "llamacpp", "model_id": "any"}]})
    catalogue = load_catalogue_files([path])
    assert [m.name for m in catalogue.models] == ["Local"] and catalogue.models[0].params == {}


def test_a_pipeline_entry_wraps_its_base_and_takes_its_prices_and_labels(shipped, tmp_path: Path) -> None:
    offline = shipped.get("OpenScholar-style (Extractive-MMR, offline)")
    assert offline is not None and offline.base == shipped.get("Extractive-MMR (offline)")
    assert (offline.provider, offline.pipeline, offline.offline) == ("pipeline", "openscholar", True)
    user = write(tmp_path, {"models": [
        {"pipeline": "openscholar", "base": "GPT-4.1", "params": {"max_calls": 4, "deadline_s": 40}},
        {"name": "Scholar loop", "pipeline": "openscholar", "base": "GPT-4.1-mini"}]})
    merged = load_catalogue(Settings(models_file=user))
    gpt = merged.get("OpenScholar-style (GPT-4.1)")
    base = merged.get("GPT-4.1")
    assert gpt is not None and base is not None and gpt.base == base
    assert (gpt.price_input_per_m, gpt.price_output_per_m, gpt.organisation) == \
        (base.price_input_per_m, base.price_output_per_m, base.organisation)
    assert gpt.params == {"max_calls": 4, "deadline_s": 40} and not gpt.offline
    assert merged.get("Scholar loop").base.name == "GPT-4.1-mini"  # type: ignore[union-attr]
    # The base is still found by its own API id: the pipeline's id is its own.
    assert merged.find(base.model_id) is base and gpt.model_id == f"openscholar:{base.model_id}"


@pytest.mark.parametrize(("entry", "message"), [
    ({"pipeline": "openscholar", "base": "No Such Model"}, "not an enabled model"),
    ({"pipeline": "magic", "base": "GPT-4.1"}, "'pipeline' must be one of"),
    ({"name": "X", "pipeline": "openscholar"}, "needs a 'base'"),
    ({"pipeline": "openscholar", "base": "GPT-4.1", "provider": "openai"}, "takes 'provider' from its base"),
    ({"pipeline": "openscholar", "base": "GPT-4.1", "params": {"temperature": 0}}, "unknown pipeline param"),
    ({"pipeline": "openscholar", "base": "GPT-4.1", "params": {"max_calls": 0}}, "at least 1"),
    ({"name": "Y", "provider": "pipeline", "model_id": "y"}, "not with provider 'pipeline'"),
], ids=["unknown-base", "unknown-pipeline", "no-base", "own-provider", "unknown-param", "zero-calls", "raw-provider"])
def test_bad_pipeline_entries_are_refused_with_the_reason(tmp_path: Path, entry, message) -> None:
    with pytest.raises(CatalogueError, match=message):
        load_catalogue(Settings(models_file=write(tmp_path, {"models": [entry]})))


def test_disabling_a_base_model_switches_its_pipeline_off(tmp_path: Path) -> None:
    user = write(tmp_path, {"models": [{"name": "Extractive-MMR (offline)", "enabled": False}]})
    merged = load_catalogue(Settings(models_file=user))
    assert merged.get("OpenScholar-style (Extractive-MMR, offline)") is None

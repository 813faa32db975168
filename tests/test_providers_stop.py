"""A streamed call ends at its deadline or on cancel wherever it is blocked, and hangs up on the server;
helpers call models through ``complete`` / ``moderate``."""

from __future__ import annotations

import threading
import time

import pytest
from fake_openai import FakeOpenAI

from sciarena.core.errors import Cancelled, ProviderError, ProviderTimeout
from sciarena.core.types import GenerationRequest, ModelSpec, Usage
from sciarena.providers.calls import complete, moderate
from sciarena.providers.offline import OfflineProvider
from sciarena.providers.openai_compat import OpenAICompatibleProvider

KEY = "sk-test-stop"
CLIENTS = ("openai", "together")
REQUEST = GenerationRequest(question="q", references=(), messages=({"role": "user", "content": "q"},))


def make(kind: str, server: FakeOpenAI, **options: object) -> OpenAICompatibleProvider:
    url = server.root_url if kind == "together" else server.base_url
    return OpenAICompatibleProvider(name=kind, client=kind, base_url=url, api_key=KEY, **options)  # type: ignore[arg-type]


def spec(model_id: str) -> ModelSpec:
    return ModelSpec(name=f"Model {model_id}", provider="openai", model_id=model_id)


@pytest.fixture
def server():
    with FakeOpenAI(api_key=KEY) as fake:
        yield fake


@pytest.mark.parametrize("kind", CLIENTS)
def test_a_keep_alive_only_stream_times_out_and_the_connection_is_closed(server: FakeOpenAI, kind: str) -> None:
    # Comments every 50 ms keep each read well inside the client's read timeout: only the guard can end this.
    server.add_script("idle", keep_alive_only=True, keep_alive_limit_s=20)
    with pytest.raises(ProviderTimeout) as caught:  # the server would have kept it open for 20 s
        list(make(kind, server, timeout=0.5).stream(spec("idle"), REQUEST))
    assert caught.value.timeout_s == 0.5 and caught.value.model == "Model idle"
    assert server.wait_for_hangup("idle", timeout_s=5) and server.attempts("idle") == 1


@pytest.mark.parametrize("kind", CLIENTS)
def test_a_per_call_timeout_overrides_the_providers(server: FakeOpenAI, kind: str) -> None:
    server.add_script("idle", keep_alive_only=True, keep_alive_limit_s=20)
    with pytest.raises(ProviderTimeout, match="0.3 s") as caught:
        list(make(kind, server, timeout=60).stream(spec("idle"), REQUEST, timeout_s=0.3))
    assert caught.value.timeout_s == 0.3
    assert server.wait_for_hangup("idle", timeout_s=5)


@pytest.mark.parametrize("script", [{"keep_alive_only": True}, {"chunks": ("a ",) * 200, "chunk_delay_s": 0.05}])
@pytest.mark.parametrize("kind", CLIENTS)
def test_cancel_stops_a_blocked_or_streaming_call_and_hangs_up(server: FakeOpenAI, kind: str, script) -> None:
    server.add_script("m", keep_alive_limit_s=20, **script)
    cancel = threading.Event()
    outcome: list[BaseException] = []
    got: list[str] = []

    def consume() -> None:
        try:
            for delta in make(kind, server, timeout=60).stream(spec("m"), REQUEST, cancel=cancel):
                got.append(delta.text)
        except BaseException as err:  # noqa: BLE001 - the test inspects it
            outcome.append(err)

    worker = threading.Thread(target=consume)
    worker.start()
    assert server.wait_for_request("m", timeout_s=5)
    cancel.set()
    worker.join(timeout=5)
    assert not worker.is_alive()
    assert len(outcome) == 1 and isinstance(outcome[0], Cancelled)
    assert server.wait_for_hangup("m", timeout_s=5)
    assert len(got) < 200


def test_a_finished_stream_leaves_its_connection_usable(server: FakeOpenAI) -> None:
    # The guard of a finished call must not break the connection the client pools for the next one.
    server.add_script("m", ("ok",))
    # A deadline a loaded machine still meets (at 0.2 s a busy CI core timed the call itself out).
    provider = make("openai", server, timeout=1.0)
    for _ in range(3):
        assert "".join(d.text for d in provider.stream(spec("m"), REQUEST)) == "ok"
        time.sleep(1.1)  # past the call's deadline
    assert server.hangups("m") == 0


@pytest.mark.parametrize("kind", CLIENTS)
def test_complete_returns_the_whole_reply_with_overrides_and_no_reasoning(server: FakeOpenAI, kind: str) -> None:
    server.add_script("m", ("Verdict: ", "A"), reasoning=("thinking…",), usage="always")
    model = ModelSpec(name="M", provider="openai", model_id="m", params={"temperature": 1, "top_p": 0.5})
    reply = complete(make(kind, server), model, [{"role": "user", "content": "which?"}], temperature=0,
                     response_format={"type": "json_object"})
    assert reply.text == "Verdict: A" and reply.usage == Usage(input_tokens=1, output_tokens=3)
    body = server.requests("m")[0].body
    assert body["temperature"] == 0 and body["top_p"] == 0.5
    assert body["response_format"] == {"type": "json_object"}


def test_complete_raises_typed_errors(server: FakeOpenAI) -> None:
    server.add_script("m", fail_forever=400)
    with pytest.raises(ProviderError) as caught:
        complete(make("openai", server), spec("m"), [{"role": "user", "content": "x"}])
    assert caught.value.status == 400 and type(caught.value) is ProviderError


def test_moderation_goes_through_the_same_provider(server: FakeOpenAI) -> None:
    moderation = ModelSpec(name="omni-moderation-latest", provider="openai", model_id="omni-moderation-latest")
    provider = make("openai", server)
    assert moderate(provider, moderation, "about FLAGGED-TOPIC") == (True, ("harassment",))
    assert moderate(provider, moderation, "stomata") == (False, ())
    assert [r.body["model"] for r in server.requests(path="/v1/moderations")] == ["omni-moderation-latest"] * 2
    with pytest.raises(ProviderError, match="cannot moderate"):
        moderate(OfflineProvider(), moderation, "text")

"""Streaming providers for servers that speak the OpenAI chat-completions format.

One class serves OpenAI itself and every compatible endpoint (Anthropic's and
Google's compatibility layers, xAI, Mistral, a local vLLM / Ollama / llama.cpp
server…): they differ only by base URL, key and per-model parameters, which
all come from the catalogue. TogetherProvider reuses the same logic with the
`together` client.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from sciarena.errors import NeedsKey, ProviderError, ProviderTimeout, RateLimited
from sciarena.providers.retry import RetryPolicy, retry_after_seconds, stream_with_retries
from sciarena.types import Delta, GenerationRequest, ModelSpec, Usage

log = logging.getLogger(__name__)

OPENAI_BASE_URL = "https://api.openai.com/v1"
# Sent when an endpoint needs no key (local servers): the client refuses an empty one.
NO_KEY = "not-needed"
_MAX_SERVER_MESSAGE = 160


@dataclass(frozen=True)
class ClientErrors:
    """The exception classes of one client library, by what they mean."""

    timeout: tuple[type[BaseException], ...]
    connection: tuple[type[BaseException], ...]
    status: tuple[type[BaseException], ...]


class StreamCut(Exception):
    """The stream ended without a finish reason: the server or the network dropped it."""


def split_params(params: Mapping[str, object], native: frozenset[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Split catalogue params into client keyword arguments and ``extra_body`` fields.

    ``native`` names the parameters the client accepts as keywords; anything else
    (thinking budgets, ``top_k`` for vLLM…) travels in ``extra_body``, as does an
    explicit ``extra_body`` mapping. A null value means "do not send".
    """
    kwargs: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for key, value in params.items():
        if value is None:
            continue
        if key == "extra_body":
            if not isinstance(value, Mapping):
                raise ProviderError("Catalogue error: params.extra_body must be an object.")
            extra.update(value)
        elif key in native:
            kwargs[key] = value
        else:
            extra[key] = value
    return kwargs, extra


def chunk_deltas(chunk: Any) -> tuple[list[Delta], bool, Usage | None]:
    """Text/reasoning deltas of one streamed chunk, whether it finished a choice, and its usage."""
    deltas: list[Delta] = []
    finished = False
    for choice in getattr(chunk, "choices", None) or ():
        if getattr(choice, "finish_reason", None):
            finished = True
        delta = getattr(choice, "delta", None)
        if delta is None:
            continue
        # DeepSeek/vLLM/Together name the field reasoning_content; OpenRouter-style servers say reasoning.
        reasoning = getattr(delta, "reasoning_content", None) or getattr(delta, "reasoning", None)
        if isinstance(reasoning, str) and reasoning:
            deltas.append(Delta(reasoning=reasoning))
        content = getattr(delta, "content", None)
        if isinstance(content, str) and content:
            deltas.append(Delta(text=content))
    raw = getattr(chunk, "usage", None)
    usage = None
    if raw is not None:
        usage = Usage(input_tokens=getattr(raw, "prompt_tokens", None),
                      output_tokens=getattr(raw, "completion_tokens", None))
    return deltas, finished, usage


def request_messages(request: GenerationRequest) -> list[dict[str, str]]:
    """The chat messages to send: the request's own, else the standard prompt."""
    if request.messages:
        return [dict(m) for m in request.messages]
    from sciarena.prompting import build_messages

    return [dict(m) for m in build_messages(request.question, request.references)]


class ChatCompletionsProvider:
    """Shared logic: lazy client, bounded retries before the first delta, error mapping.

    Subclasses supply the client (``_make_client``), its exception classes and
    any extra keyword arguments for a streamed call.
    """

    native_params: frozenset[str] = frozenset({
        "temperature", "top_p", "max_tokens", "max_completion_tokens", "reasoning_effort",
        "seed", "stop", "presence_penalty", "frequency_penalty",
    })

    def __init__(
        self,
        *,
        name: str,
        base_url: str | None,
        api_key: str | None,
        key_env: str | None = None,
        timeout: float = 120.0,
        max_retries: int = 3,
        backoff_s: float = 0.5,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if timeout <= 0:
            raise ValueError("timeout must be positive")
        self.name = name
        self.base_url = base_url
        self.key_env = key_env
        self.timeout = timeout
        self.policy = RetryPolicy(max_retries=max_retries, base_delay_s=backoff_s)
        self._api_key = api_key
        self._sleep = sleep
        self._client: Any = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:  # never shows the key
        return f"{type(self).__name__}(name={self.name!r}, base_url={self.base_url!r})"

    # -- subclass hooks -------------------------------------------------
    def _make_client(self, api_key: str) -> Any:
        raise NotImplementedError

    def _client_errors(self) -> ClientErrors:
        raise NotImplementedError

    def _stream_kwargs(self) -> dict[str, Any]:
        return {}

    # -- Provider protocol ----------------------------------------------
    def unavailable_reason(self, spec: ModelSpec) -> str | None:
        """None when a key is present (or none is needed); never touches the network."""
        if self.key_env and not self._api_key:
            return f"set {self.key_env}"
        return None

    def stream(self, spec: ModelSpec, request: GenerationRequest) -> Iterator[Delta]:
        """Stream the answer, retrying 429/5xx/connection failures until the first delta."""
        if self.key_env and not self._api_key:
            raise NeedsKey(f"Set {self.key_env} to use this model.", model=spec.name)
        messages = request_messages(request)
        kwargs, extra = split_params(spec.params, self.native_params)
        call: dict[str, Any] = {"model": spec.model_id, "messages": messages, "stream": True,
                                **self._stream_kwargs(), **kwargs}
        if extra:
            call["extra_body"] = extra
        deadline = time.monotonic() + self.timeout
        errors = self._client_errors()
        yield from stream_with_retries(
            lambda: self._attempt(spec, call, deadline, errors),
            self.policy,
            is_retryable=lambda err: self._is_retryable(err, errors),
            to_error=lambda err, attempts: self._to_error(err, attempts, spec, errors),
            retry_after=_retry_after,
            sleep=self._sleep,
        )

    def warm_up(self) -> None:
        """Import the client library and build the client now (at start), not in the first battle:
        the import alone costs 1–2 s, which would otherwise land in one side's time to first token."""
        if not (self.key_env and not self._api_key):
            self._get_client()
            self._client_errors()

    # -- internals --------------------------------------------------------
    def _get_client(self) -> Any:
        with self._lock:
            if self._client is None:
                self._client = self._make_client(self._api_key or NO_KEY)
            return self._client

    def _attempt(self, spec: ModelSpec, call: dict[str, Any], deadline: float,
                 errors: ClientErrors) -> Iterator[Delta]:
        # Each read may wait only for what is left of the budget, retries included.
        remaining = max(deadline - time.monotonic(), 0.001)
        stream = self._get_client().chat.completions.create(**call, timeout=remaining)
        finished = False
        usage: Usage | None = None
        try:
            for chunk in stream:
                if time.monotonic() > deadline:
                    raise ProviderTimeout(self._timeout_message(), model=spec.name, retryable=True)
                deltas, done, chunk_usage = chunk_deltas(chunk)
                finished = finished or done
                usage = chunk_usage or usage
                yield from deltas
        except errors.timeout:
            raise
        except errors.connection as err:
            # The server answered, then the connection broke: a cut stream, not an unreachable host.
            raise StreamCut() from err
        finally:
            close = getattr(stream, "close", None)
            if close is not None:
                close()
        if not finished:
            raise StreamCut()
        if usage is not None:
            yield Delta(usage=usage)

    @staticmethod
    def _is_retryable(err: BaseException, errors: ClientErrors) -> bool:
        if isinstance(err, errors.timeout):
            return False  # the whole timeout was spent already; another try would double it
        if isinstance(err, (StreamCut, *errors.connection)):
            return True
        if isinstance(err, errors.status):
            status = getattr(err, "status_code", 0) or 0
            return status == 429 or status >= 500
        return False

    def _timeout_message(self) -> str:
        return f"The model did not finish within {self.timeout:g} s."

    def _to_error(self, err: BaseException, attempts: int, spec: ModelSpec, errors: ClientErrors) -> ProviderError:
        tries = f"after {attempts} attempt{'s' if attempts != 1 else ''}"
        model = spec.name
        if isinstance(err, errors.timeout):
            return ProviderTimeout(self._timeout_message(), model=model, retryable=True)
        if isinstance(err, errors.status):
            status = getattr(err, "status_code", 0) or 0
            if status == 429:
                return RateLimited(f"The provider is rate-limiting requests (HTTP 429) {tries}.",
                                   model=model, retryable=True)
            if status in (401, 403):
                hint = f"; check {self.key_env}" if self.key_env else ""
                return ProviderError(f"The provider rejected the API key (HTTP {status}){hint}.", model=model)
            if status >= 500:
                return ProviderError(f"The provider had a server error (HTTP {status}) {tries}.",
                                     model=model, retryable=True)
            detail = self._server_message(err)
            return ProviderError(f"The provider refused the request (HTTP {status}){detail}.", model=model)
        if isinstance(err, StreamCut):
            return ProviderError("The answer was cut off: the connection closed mid-stream.",
                                 model=model, retryable=True)
        if isinstance(err, errors.connection):
            return ProviderError(f"Could not reach the provider {tries}.", model=model, retryable=True)
        log.warning("unexpected %s from provider %s", type(err).__name__, self.name)
        return ProviderError(f"The provider failed unexpectedly ({type(err).__name__}).", model=model)

    def _server_message(self, err: BaseException) -> str:
        body = getattr(err, "body", None)
        if isinstance(body, Mapping) and isinstance(body.get("error"), Mapping):
            body = body["error"]  # together keeps the envelope; openai unwraps it
        message = body.get("message") if isinstance(body, Mapping) else None
        if not isinstance(message, str) or not message.strip():
            return ""
        if self._api_key:
            message = message.replace(self._api_key, "[key]")
        message = " ".join(message.split())
        if len(message) > _MAX_SERVER_MESSAGE:
            message = message[: _MAX_SERVER_MESSAGE - 1] + "…"
        return f": {message}"


def _retry_after(err: BaseException) -> float | None:
    response = getattr(err, "response", None)
    return retry_after_seconds(getattr(response, "headers", None))


class OpenAICompatibleProvider(ChatCompletionsProvider):
    """Any OpenAI-compatible endpoint through the official ``openai`` client."""

    def __init__(self, *, name: str = "openai", base_url: str | None = OPENAI_BASE_URL,
                 api_key: str | None = None, key_env: str | None = "OPENAI_API_KEY",
                 timeout: float = 120.0, max_retries: int = 3, backoff_s: float = 0.5,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        super().__init__(name=name, base_url=base_url or OPENAI_BASE_URL, api_key=api_key, key_env=key_env,
                         timeout=timeout, max_retries=max_retries, backoff_s=backoff_s, sleep=sleep)

    def _make_client(self, api_key: str) -> Any:
        from openai import OpenAI

        # Retries are ours (bounded, and never after the first token), so the client's are off.
        return OpenAI(base_url=self.base_url, api_key=api_key, timeout=self.timeout, max_retries=0)

    def _client_errors(self) -> ClientErrors:
        import openai

        return ClientErrors(timeout=(openai.APITimeoutError,), connection=(openai.APIConnectionError,),
                            status=(openai.APIStatusError,))

    def _stream_kwargs(self) -> dict[str, Any]:
        return {"stream_options": {"include_usage": True}}

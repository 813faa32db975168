"""The provider for every server that speaks the OpenAI chat-completions format.

One class serves OpenAI itself, Together AI and every compatible endpoint
(Anthropic's and Google's compatibility layers, xAI, Mistral, a local vLLM /
Ollama / llama.cpp server…): they differ only by base URL, key, client
library and per-model parameters, which all come from the catalogue. Every
failure leaves as a typed errors.ProviderError subclass.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from sciarena.core.errors import (
    Cancelled,
    MalformedOutput,
    NeedsKey,
    ProviderError,
    ProviderTimeout,
    RateLimited,
    StreamCut,
)
from sciarena.core.types import Delta, GenerationRequest, ModelSpec, Usage
from sciarena.providers.clients import CLIENT_KINDS, ClientErrors, build_client, client_errors
from sciarena.providers.guard import CANCELLED, StreamGuard
from sciarena.providers.retry import RetryPolicy, retry_after_seconds, with_retries

log = logging.getLogger(__name__)

OPENAI_BASE_URL = "https://api.openai.com/v1"
_MAX_SERVER_MESSAGE = 160


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
    """Text/reasoning deltas of one streamed chunk, whether it finished a choice, and its usage. A chunk is
    the client's typed object or, on the OpenAI client's path (``raw_chunk_stream``), the JSON object itself."""
    deltas: list[Delta] = []
    finished = False
    for choice in _field(chunk, "choices") or ():
        if _field(choice, "finish_reason"):
            finished = True
        delta = _field(choice, "delta")
        if delta is None:
            continue
        # DeepSeek/vLLM/Together name the field reasoning_content; OpenRouter-style servers say reasoning.
        reasoning = _field(delta, "reasoning_content") or _field(delta, "reasoning")
        if isinstance(reasoning, str) and reasoning:
            deltas.append(Delta(reasoning=reasoning))
        content = _field(delta, "content")
        if isinstance(content, str) and content:
            deltas.append(Delta(text=content))
    raw = _field(chunk, "usage")
    usage = None
    if raw is not None:
        usage = Usage(input_tokens=_field(raw, "prompt_tokens"), output_tokens=_field(raw, "completion_tokens"))
    return deltas, finished, usage


def _field(record: Any, name: str) -> Any:
    return record.get(name) if isinstance(record, dict) else getattr(record, name, None)


def raw_chunk_stream(client: Any, call: dict[str, Any], timeout: float) -> Any:
    """The call ``client.chat.completions.create(**call)`` makes, its chunks left as the JSON objects the server
    sent. Building the SDK's typed chunk for every 25-character piece cost more of the server's CPU than the
    rest of a battle's streaming (issue 35); the SSE decoding, the error events, the status errors and the
    stream object (``.response`` for abort_stream, ``.close()``) are still the SDK's own."""
    from openai import Stream

    body = {key: value for key, value in call.items() if key != "extra_body"}
    options: dict[str, Any] = {"timeout": timeout}
    if call.get("extra_body"):
        options["extra_json"] = call["extra_body"]
    return client.post("/chat/completions", body=body, cast_to=object, stream=True, stream_cls=Stream[object],
                       options=options)


def request_messages(request: GenerationRequest) -> list[dict[str, str]]:
    """The chat messages to send. The prompt is built in one place (``answer.prompt.answer_request``);
    a request without messages is a caller's mistake, refused before any call is made."""
    if not request.messages:
        raise ProviderError("This request carries no chat messages; build it with answer.prompt.answer_request.")
    return [dict(m) for m in request.messages]


class OpenAICompatibleProvider:
    """One endpoint: lazy client, a deadline per call, bounded retries before the first delta, typed errors.

    Besides the Provider contract's ``stream`` it offers ``moderate`` (OpenAI's moderation
    endpoint, which is not a chat completion) through the same client.
    """

    def __init__(
        self,
        *,
        name: str = "openai",
        base_url: str | None = OPENAI_BASE_URL,
        api_key: str | None = None,
        key_env: str | None = "OPENAI_API_KEY",
        client: str = "openai",
        timeout: float = 120.0,
        max_retries: int = 3,
        backoff_s: float = 0.5,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if timeout <= 0:
            raise ValueError("timeout must be positive")
        if client not in CLIENT_KINDS:
            raise ValueError(f"unknown client {client!r}; expected one of {', '.join(CLIENT_KINDS)}")
        self.name = name
        self.base_url = base_url or OPENAI_BASE_URL
        self.key_env = key_env
        self.kind = CLIENT_KINDS[client]
        self.timeout = timeout
        self.policy = RetryPolicy(max_retries=max_retries, base_delay_s=backoff_s)
        self._api_key = api_key
        self._sleep = sleep
        self._client: Any = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:  # never shows the key
        return f"{type(self).__name__}(name={self.name!r}, base_url={self.base_url!r}, client={self.kind.name!r})"

    # -- Provider protocol ----------------------------------------------
    def unavailable_reason(self, spec: ModelSpec) -> str | None:
        """None when a key is present (or none is needed); never touches the network."""
        if self.key_env and not self._api_key:
            return f"set {self.key_env}"
        return None

    def stream(self, spec: ModelSpec, request: GenerationRequest, *, timeout_s: float | None = None,
               cancel: threading.Event | None = None) -> Iterator[Delta]:
        """Stream the answer, retrying 429/5xx/connection failures until the first delta.

        The call ends within ``timeout_s`` (default: the provider's timeout), retries included,
        even when the server sends keep-alive comments and no chunk; setting ``cancel`` ends it
        with Cancelled within a fraction of a second once the server has answered (while it has
        not, the read timeout bounds the wait). Either way the upstream connection is closed.
        """
        self._check_key(spec)
        kwargs, extra = split_params(spec.params, self.kind.native_params)
        call: dict[str, Any] = {"model": spec.model_id, "messages": request_messages(request), "stream": True,
                                **self.kind.stream_extras, **kwargs}
        if extra:
            call["extra_body"] = extra
        budget = timeout_s or self.timeout
        deadline = time.monotonic() + budget
        errors = client_errors(self.kind.name)
        yield from self._retried(lambda: self._attempt(spec, call, budget, deadline, cancel, errors),
                                 spec, budget, deadline, cancel, errors)

    def warm_up(self) -> None:
        """Import the client library and build the client now (at start), not in the first battle:
        the import alone costs 1–2 s, which would otherwise land in one side's time to first token."""
        if not (self.key_env and not self._api_key):
            self._get_client()
            client_errors(self.kind.name)

    # -- moderation -------------------------------------------------------
    def moderate(self, spec: ModelSpec, text: str, *, timeout_s: float | None = None) -> tuple[bool, tuple[str, ...]]:
        """Whether ``spec`` (a moderation model) flags ``text``, and the categories it flagged."""
        self._check_key(spec)
        budget = timeout_s or self.timeout
        deadline = time.monotonic() + budget
        errors = client_errors(self.kind.name)

        def attempt() -> Iterator[tuple[bool, tuple[str, ...]]]:
            remaining = deadline - time.monotonic()
            if remaining <= 0:  # spent waiting to retry
                raise ProviderTimeout(self._timeout_message(budget), model=spec.name, timeout_s=budget)
            response = self._get_client().moderations.create(model=spec.model_id, input=text, timeout=remaining)
            try:
                result = response.results[0]
                hits = result.categories.model_dump(by_alias=True) if result.categories is not None else {}
                verdict = bool(result.flagged), tuple(sorted(name for name, hit in hits.items() if hit))
            except (AttributeError, IndexError, TypeError) as err:
                raise MalformedOutput("The moderation endpoint's answer had no result.", model=spec.name) from err
            yield verdict

        (verdict,) = self._retried(attempt, spec, budget, deadline, None, errors)
        return verdict

    # -- internals --------------------------------------------------------
    def _check_key(self, spec: ModelSpec) -> None:
        if self.key_env and not self._api_key:
            raise NeedsKey(f"Set {self.key_env} to use this model.", model=spec.name, key_env=self.key_env)

    def _get_client(self) -> Any:
        with self._lock:
            if self._client is None:
                self._client = build_client(self.kind.name, base_url=self.base_url, api_key=self._api_key,
                                            timeout_s=self.timeout)
            return self._client

    def _retried(self, attempt: Callable[[], Iterator[Any]], spec: ModelSpec, budget: float, deadline: float,
                 cancel: threading.Event | None, errors: ClientErrors) -> Iterator[Any]:
        def checked() -> Iterator[Any]:
            if cancel is not None and cancel.is_set():  # e.g. cancelled while waiting to retry
                raise self._stopped(CANCELLED, spec, budget)
            return attempt()

        return with_retries(checked, self.policy,
                            is_retryable=lambda err: self._is_retryable(err, errors),
                            to_error=lambda err, attempts: self._to_error(err, attempts, spec, budget, errors),
                            retry_after=_retry_after, sleep=self._sleep, deadline=deadline)

    def _attempt(self, spec: ModelSpec, call: dict[str, Any], budget: float, deadline: float,
                 cancel: threading.Event | None, errors: ClientErrors) -> Iterator[Delta]:
        guard = StreamGuard(deadline, cancel)
        # The client's own timeout covers a server that sends nothing at all; the guard covers
        # one that keeps the connection busy (keep-alive comments, a trickle past the deadline).
        remaining = max(deadline - time.monotonic(), 0.001)
        client = self._get_client()
        stream = raw_chunk_stream(client, call, remaining) if self.kind.name == "openai" else \
            client.chat.completions.create(**call, timeout=remaining)
        guard.watch(stream)
        finished = False
        usage: Usage | None = None
        try:
            for chunk in stream:
                if guard.reason():
                    break
                deltas, done, chunk_usage = chunk_deltas(chunk)
                finished = finished or done
                usage = chunk_usage or usage
                yield from deltas
        except Exception as err:
            why = guard.reason()
            if why:  # the guard broke the connection: that, not the read error, is what happened
                raise self._stopped(why, spec, budget) from err
            if isinstance(err, errors.connection) and not isinstance(err, errors.timeout):
                # The server answered, then the connection broke: a cut stream, not an unreachable host.
                raise StreamCut() from err
            raise
        finally:
            guard.release()
            close = getattr(stream, "close", None)
            if close is not None:
                close()
        why = guard.reason()
        if why:
            raise self._stopped(why, spec, budget)
        if not finished:
            raise StreamCut()
        if usage is not None:
            yield Delta(usage=usage)

    def _stopped(self, why: str, spec: ModelSpec, budget: float) -> ProviderError:
        if why == CANCELLED:
            return Cancelled("The call was cancelled.", model=spec.name)
        return ProviderTimeout(self._timeout_message(budget), model=spec.name, timeout_s=budget)

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

    @staticmethod
    def _timeout_message(budget: float) -> str:
        return f"The model did not finish within {budget:g} s."

    def _to_error(self, err: BaseException, attempts: int, spec: ModelSpec, budget: float,
                  errors: ClientErrors) -> ProviderError:
        tries = f"after {attempts} attempt{'s' if attempts != 1 else ''}"
        model = spec.name
        if isinstance(err, errors.timeout):
            return ProviderTimeout(self._timeout_message(budget), model=model, timeout_s=budget)
        if isinstance(err, errors.status):
            status = getattr(err, "status_code", 0) or 0
            if status == 429:
                return RateLimited(f"The provider is rate-limiting requests (HTTP 429) {tries}.",
                                   model=model, attempts=attempts)
            if status in (401, 403):
                hint = f"; check {self.key_env}" if self.key_env else ""
                return ProviderError(f"The provider rejected the API key (HTTP {status}){hint}.",
                                     model=model, status=status)
            if status >= 500:
                return ProviderError(f"The provider had a server error (HTTP {status}) {tries}.",
                                     model=model, status=status)
            detail = self._server_message(err)
            return ProviderError(f"The provider refused the request (HTTP {status}){detail}.",
                                 model=model, status=status)
        if isinstance(err, StreamCut):
            return ProviderError("The answer was cut off: the connection closed mid-stream.", model=model)
        if isinstance(err, errors.connection):
            return ProviderError(f"Could not reach the provider {tries}.", model=model)
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

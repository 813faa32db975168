"""The one place a model client is built, and what each client library needs to be told.

A catalogue endpoint names its client: ``openai`` (OpenAI and every
OpenAI-compatible server) or ``together`` (Together AI's own client, which
speaks the same wire format). Both are generated from the same kind of API
description, so the provider drives them alike; what differs is listed here
as data: the keyword arguments each accepts natively, what a streamed call
must add, and the exception classes it raises.
"""

from __future__ import annotations

import socket
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

# Sent when an endpoint needs no key (local servers): both clients refuse an empty one.
NO_KEY = "not-needed"

_COMMON_PARAMS = frozenset({
    "temperature", "top_p", "max_tokens", "reasoning_effort", "seed", "stop",
    "presence_penalty", "frequency_penalty", "response_format",
})


@dataclass(frozen=True)
class ClientKind:
    """What the provider must know about one client library."""

    name: str
    native_params: frozenset[str]  # passed as keywords; any other catalogue param travels in extra_body
    stream_extras: Mapping[str, Any] = field(default_factory=dict)  # added to every streamed call


CLIENT_KINDS: Mapping[str, ClientKind] = MappingProxyType({
    # OpenAI sends token usage at the end of a stream only when asked.
    "openai": ClientKind("openai", _COMMON_PARAMS | {"max_completion_tokens"},
                         MappingProxyType({"stream_options": {"include_usage": True}})),
    # Together sends usage unasked, and takes its sampling extras as keywords.
    "together": ClientKind("together", _COMMON_PARAMS | {"top_k", "repetition_penalty", "min_p"}),
})


@dataclass(frozen=True)
class ClientErrors:
    """The exception classes of one client library, by what they mean."""

    timeout: tuple[type[BaseException], ...]
    connection: tuple[type[BaseException], ...]
    status: tuple[type[BaseException], ...]


def build_client(client: str, *, base_url: str, api_key: str | None, timeout_s: float) -> Any:
    """A client for one endpoint. Its own retries are off: retries are the provider's (one policy,
    never after the first token). The import happens here, not when this module is imported."""
    key = api_key or NO_KEY
    if client == "together":
        from together import Together

        # base_url is always passed so the client never falls back to TOGETHER_BASE_URL from the environment.
        return Together(api_key=key, base_url=base_url, timeout=timeout_s, max_retries=0)
    if client == "openai":
        from openai import OpenAI

        return OpenAI(api_key=key, base_url=base_url, timeout=timeout_s, max_retries=0)
    raise ValueError(f"unknown client {client!r}; expected one of {', '.join(CLIENT_KINDS)}")


def client_errors(client: str) -> ClientErrors:
    """The exception classes ``build_client(client, …)``'s client raises."""
    if client == "together":
        import httpx
        import together

        # together's stream iterator lets httpx errors through unwrapped when a stream breaks mid-way.
        return ClientErrors(timeout=(together.APITimeoutError, httpx.TimeoutException),
                            connection=(together.APIConnectionError, httpx.TransportError),
                            status=(together.APIStatusError,))
    import openai

    return ClientErrors(timeout=(openai.APITimeoutError,), connection=(openai.APIConnectionError,),
                        status=(openai.APIStatusError,))


def abort_stream(stream: Any) -> None:
    """Break the connection under a streamed response, from any thread.

    A thread blocked reading the stream wakes at once with a connection error. Closing the
    response is not enough for that: ``close()`` on a socket another thread is reading does
    not wake the reader on Linux, while ``shutdown()`` does.
    """
    response = getattr(stream, "response", None)
    network = getattr(response, "extensions", {}).get("network_stream")
    sock = network.get_extra_info("socket") if network is not None else None
    if isinstance(sock, socket.socket):
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass  # already closed by the other side
        return
    close = getattr(stream, "close", None)  # no socket to reach (e.g. a proxy transport): the best we can do
    if close is not None:
        close()

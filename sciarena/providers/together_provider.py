"""Open-weight models served by Together AI, through the official ``together`` client.

The wire format is the OpenAI one, so the streaming, retry and error logic is
shared with OpenAICompatibleProvider; only the client differs. Together reports
usage in the last chunk without being asked, so no ``stream_options`` is sent.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from sciarena.providers.openai_compat import ChatCompletionsProvider, ClientErrors

TOGETHER_BASE_URL = "https://api.together.ai"


class TogetherProvider(ChatCompletionsProvider):
    """Together AI chat completions (``base_url`` is the API root, without ``/v1``)."""

    native_params = frozenset({
        "temperature", "top_p", "top_k", "max_tokens", "reasoning_effort", "seed", "stop",
        "presence_penalty", "frequency_penalty", "repetition_penalty", "min_p",
    })

    def __init__(self, *, name: str = "together", base_url: str | None = TOGETHER_BASE_URL,
                 api_key: str | None = None, key_env: str | None = "TOGETHER_API_KEY",
                 timeout: float = 120.0, max_retries: int = 3, backoff_s: float = 0.5,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        super().__init__(name=name, base_url=base_url or TOGETHER_BASE_URL, api_key=api_key, key_env=key_env,
                         timeout=timeout, max_retries=max_retries, backoff_s=backoff_s, sleep=sleep)

    def _make_client(self, api_key: str) -> Any:
        from together import Together

        # base_url is always passed so the client never falls back to TOGETHER_BASE_URL from the environment.
        return Together(api_key=api_key, base_url=self.base_url, timeout=self.timeout, max_retries=0)

    def _client_errors(self) -> ClientErrors:
        import httpx
        import together

        # together's stream iterator lets httpx errors through unwrapped when a stream breaks mid-way.
        return ClientErrors(
            timeout=(together.APITimeoutError, httpx.TimeoutException),
            connection=(together.APIConnectionError, httpx.TransportError),
            status=(together.APIStatusError,),
        )

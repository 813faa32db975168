"""Offline contestants: three local baseline algorithms that need no key and no network.

They let the arena run end to end offline (demo, tests, CI) and give real
models a floor to beat. They are labelled as baselines wherever they appear
(``ModelSpec.offline``), never presented as language models.
"""

from __future__ import annotations

import re
import threading
import time
from types import MappingProxyType
from typing import Callable, Iterator, Mapping, Sequence

from sciarena.core.errors import Cancelled, ProviderError
from sciarena.core.types import Delta, GenerationRequest, ModelSpec, Reference
from sciarena.providers.offline_strategies import claim_clusters, extractive_mmr, per_paper_digest

Composer = Callable[[str, Sequence[Reference]], str]

_COMPOSERS: Mapping[str, Composer] = MappingProxyType({
    "extractive-mmr": extractive_mmr,
    "per-paper-digest": per_paper_digest,
    "claim-clusters": claim_clusters,
})
OFFLINE_MODEL_IDS: tuple[str, ...] = tuple(_COMPOSERS)
_CHUNK = re.compile(r"\S+\s*|\s+")


class OfflineProvider:
    """Provider for the offline baselines; ``delay_s`` pauses between chunks so streaming is visible."""

    def __init__(self, delay_s: float = 0.0, words_per_chunk: int = 3,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        if delay_s < 0 or words_per_chunk < 1:
            raise ValueError("delay_s must be >= 0 and words_per_chunk >= 1")
        self._delay_s = delay_s
        self._words_per_chunk = words_per_chunk
        self._sleep = sleep

    def unavailable_reason(self, spec: ModelSpec) -> str | None:
        """Always available for its own model ids; anything else is explained."""
        if spec.model_id not in _COMPOSERS:
            return f"Unknown offline model {spec.model_id!r}; expected one of {', '.join(OFFLINE_MODEL_IDS)}."
        return None

    def compose(self, spec: ModelSpec, request: GenerationRequest) -> str:
        """The whole answer at once (what ``stream`` sends in pieces). A pipeline's feedback and
        refinement requests never reach a baseline: pipelines/offline_revision.py answers them."""
        composer = _COMPOSERS.get(spec.model_id)
        if composer is None:
            raise ProviderError(
                f"Unknown offline model {spec.model_id!r}; expected one of {', '.join(OFFLINE_MODEL_IDS)}.",
                model=spec.name,
            )
        return composer(request.question, request.references)

    def stream(self, spec: ModelSpec, request: GenerationRequest, *, timeout_s: float | None = None,
               cancel: threading.Event | None = None) -> Iterator[Delta]:
        """Yield the composed answer a few words at a time (no usage: there are no tokens to count).

        Composing takes milliseconds, so ``timeout_s`` is not needed; ``cancel`` stops the pacing."""
        text = self.compose(spec, request)
        words = _CHUNK.findall(text)
        for start in range(0, len(words), self._words_per_chunk):
            if start and self._delay_s:
                self._sleep(self._delay_s)
            if cancel is not None and cancel.is_set():
                raise Cancelled("The call was cancelled.", model=spec.name)
            yield Delta(text="".join(words[start : start + self._words_per_chunk]))

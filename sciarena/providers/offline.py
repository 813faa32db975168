"""Offline contestants: three local baseline algorithms that need no key and no network.

They let the arena run end to end offline (demo, tests, CI) and give real
models a floor to beat. They are labelled as baselines wherever they appear
(``ModelSpec.offline``), never presented as language models.
"""

from __future__ import annotations

import re
import time
from types import MappingProxyType
from typing import Callable, Iterator, Mapping, Sequence

from sciarena.errors import ProviderError
from sciarena.providers.offline_strategies import claim_clusters, extractive_mmr, per_paper_digest
from sciarena.types import Delta, GenerationRequest, ModelSpec, Reference

Composer = Callable[[str, Sequence[Reference]], str]

OFFLINE_MODEL_IDS: tuple[str, ...] = ("extractive-mmr", "per-paper-digest", "claim-clusters")

_COMPOSERS: Mapping[str, Composer] = MappingProxyType({
    "extractive-mmr": extractive_mmr,
    "per-paper-digest": per_paper_digest,
    "claim-clusters": claim_clusters,
})
_DISPLAY_NAMES: Mapping[str, str] = MappingProxyType({
    "extractive-mmr": "Extractive-MMR (offline)",
    "per-paper-digest": "Per-Paper Digest (offline)",
    "claim-clusters": "Claim Clusters (offline)",
})
_CHUNK = re.compile(r"\S+\s*|\s+")


def offline_specs() -> tuple[ModelSpec, ...]:
    """Catalogue entries for the three offline baselines."""
    return tuple(
        ModelSpec(
            name=_DISPLAY_NAMES[model_id],
            provider="offline",
            model_id=model_id,
            organisation="SciArena (offline baseline)",
            open_weights=True,
            reasoning="no",
            price_input_per_m=0.0,
            price_output_per_m=0.0,
            offline=True,
        )
        for model_id in OFFLINE_MODEL_IDS
    )


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
        """The whole answer at once (what ``stream`` sends in pieces)."""
        composer = _COMPOSERS.get(spec.model_id)
        if composer is None:
            raise ProviderError(
                f"Unknown offline model {spec.model_id!r}; expected one of {', '.join(OFFLINE_MODEL_IDS)}.",
                model=spec.name,
            )
        return composer(request.question, request.references)

    def stream(self, spec: ModelSpec, request: GenerationRequest) -> Iterator[Delta]:
        """Yield the composed answer a few words at a time (no usage: there are no tokens to count)."""
        text = self.compose(spec, request)
        words = _CHUNK.findall(text)
        for start in range(0, len(words), self._words_per_chunk):
            if start and self._delay_s:
                self._sleep(self._delay_s)
            yield Delta(text="".join(words[start : start + self._words_per_chunk]))

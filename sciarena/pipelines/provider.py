"""The provider behind every pipeline contestant (catalogue entries with "pipeline" and "base").

It implements the one Provider contract, so the battle runner treats a pipeline like any model:
its ``stream`` runs the loop, whose every step calls the base model through the base's own
provider (same client, key, deadline, retries and errors), and whose extra retrieval goes through
the arena's retriever. Built in wiring.py once the retriever exists.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Mapping

from sciarena.core.errors import ProviderError
from sciarena.core.types import Delta, GenerationRequest, ModelSpec, Provider
from sciarena.pipelines.offline_revision import OfflineRevisions
from sciarena.pipelines.openscholar import LoopBudget, OpenScholarLoop, RetrieverLike

# The loop's default deadline as a share of the battle's timeout: room for the step that is running
# when it passes, so the side ends with its best answer rather than the battle's timeout.
DEADLINE_SHARE = 0.75


class PipelineProvider:
    def __init__(self, providers: Mapping[str, Provider], retriever: RetrieverLike | None, *,
                 battle_timeout_s: float = 120.0, clock: Callable[[], float] = time.monotonic) -> None:
        self._providers = providers  # the base models' providers (this one is not among them)
        self._retriever = retriever
        self._default_deadline_s = DEADLINE_SHARE * battle_timeout_s
        self._clock = clock

    def _base_provider(self, spec: ModelSpec) -> Provider:
        if spec.base is None or spec.pipeline != "openscholar":
            raise ProviderError(f"{spec.name!r} is not a pipeline this arena knows.", model=spec.name)
        provider = self._providers.get(spec.base.provider)
        if provider is None:
            raise ProviderError(f"No provider named {spec.base.provider!r} serves {spec.base.name!r}.",
                                model=spec.name)
        # An offline baseline reads no prompt: its feedback and revisions come from this stage's rules.
        return OfflineRevisions(provider) if spec.base.offline else provider

    def unavailable_reason(self, spec: ModelSpec) -> str | None:
        """The base model's reason, when it cannot run; a pipeline needs nothing else."""
        try:
            provider = self._base_provider(spec)
        except ProviderError as err:
            return str(err)
        reason = provider.unavailable_reason(spec.base)  # type: ignore[arg-type]
        return None if reason is None else f"its base model {spec.base.name!r} cannot run: {reason}"  # type: ignore[union-attr]

    def stream(self, spec: ModelSpec, request: GenerationRequest, *, timeout_s: float | None = None,
               cancel: threading.Event | None = None) -> Iterator[Delta]:
        """The loop's deltas: status lines, restarts, the answer's text, extra references, the report."""
        provider = self._base_provider(spec)
        budget = LoopBudget.from_params(spec.params, self._default_deadline_s)
        loop = OpenScholarLoop(spec, provider, self._retriever, request, budget, timeout_s=timeout_s,
                               cancel=cancel, clock=self._clock)
        return loop.run()

"""Whether an offline pipeline would answer with its base's own words, known before the pair is drawn.

An offline pipeline's base is a baseline algorithm and its steps are deterministic rules
(offline_revision.py), so its whole loop can be run in advance in milliseconds. When no revision would
change a word, a battle against its base would show two equal texts, which the arena does not offer for a
vote (answer/sameness.py); the arena draws another pair instead (arena/rules.py). A language model base
is never previewed: its answers are not repeatable, and running it twice would be paid for.
"""

from __future__ import annotations

from sciarena.answer.sameness import same_text
from sciarena.core.types import GenerationRequest, ModelSpec
from sciarena.pipelines.offline_revision import OfflineRevisions
from sciarena.pipelines.openscholar import LoopBudget, OpenScholarLoop, RetrieverLike
from sciarena.providers.offline import OfflineProvider

# No step of an offline loop waits, so the deadline is never what ends it; it only has to be positive.
_PREVIEW_DEADLINE_S = 60.0


def meets_its_offline_base(first: ModelSpec, second: ModelSpec) -> ModelSpec | None:
    """The pipeline of the pair when the other side is its own offline base, else None."""
    for pipeline, other in ((first, second), (second, first)):
        base = pipeline.base
        if base is not None and base.offline and other.offline and base.name == other.name:
            return pipeline
    return None


def keeps_base_words(pipeline: ModelSpec, request: GenerationRequest, retriever: RetrieverLike | None) -> bool:
    """Whether ``pipeline`` (an offline base's) would end with the text its base drafts for ``request``."""
    assert pipeline.base is not None and pipeline.base.offline
    provider = OfflineProvider()  # unpaced: the preview shows nothing
    draft = provider.compose(pipeline.base, request)
    budget = LoopBudget.from_params(pipeline.params, _PREVIEW_DEADLINE_S)
    loop = OpenScholarLoop(pipeline, OfflineRevisions(provider), retriever, request, budget, timeout_s=None,
                           cancel=None)
    parts: list[str] = []
    for delta in loop.run():
        if delta.restart:
            parts.clear()
        if delta.text:
            parts.append(delta.text)
    return same_text(draft, "".join(parts))

"""Labels for a new battle's question, as the arena records them: which label, and who gave it.

The arena may be configured with a model for either task; the offline rules stand in when
none is configured, when the model's reply names no label, or when its call fails, so a
labelling problem never blocks a battle or a vote. Each label is recorded with the name
of the labeller that actually produced it.

The discipline has a third source, the asker: when a battle's answers are complete the vote bar
shows ``suggest_subject`` (the offline classifier: free, so every finished battle can show one) as a
choice, and a changed choice is the vote's ``subject`` with ``subject_source`` "asker"
(``with_asker_subject``); the labeller's own field stays in ``subject_labelled``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sciarena.arena.labels import rules as classify
from sciarena.arena.labels.discipline_text import TextDisciplineLabeller
from sciarena.arena.labels.labellers import CATEGORY, DISCIPLINE, OFFLINE_NAME, Labeller, LLMLabeller
from sciarena.core.errors import CatalogueError
from sciarena.core.types import (  # noqa: F401 (the field vocabulary, re-exported for the arena's callers)
    ASKER_FIELDS,
    OTHER_FIELD,
    SOURCE_ASKER,
    SOURCE_LABELLER,
    SOURCE_MODEL,
    SUBJECT_SOURCES,
    QuestionLabels,
    Retrieval,
)
from sciarena.providers.calls import complete

if TYPE_CHECKING:
    from sciarena.providers.registry import Models

log = logging.getLogger(__name__)

# The arena labels when a vote is cast, so a model's labels delay that vote's confirmation (two calls:
# at most 2 × this, retries included), after which the rules answer.
LABEL_TIMEOUT_S = 5.0



@dataclass(frozen=True)
class ArenaLabeller:
    """The configured labellers (None = offline) with the offline ones as fallback: the keyword rules
    for the category, the text classifier (discipline_text.py) for the discipline."""

    category: Labeller | None = None
    discipline: Labeller | None = None
    offline_discipline: TextDisciplineLabeller = field(default_factory=TextDisciplineLabeller)

    def warm_up(self) -> None:
        """Fit the offline classifier ahead of the first battle that needs it."""
        self.offline_discipline.warm_up()

    def suggest_subject(self, question: str) -> str:
        """The field the vote bar shows before the vote: the offline classifier's (no paid call)."""
        return self.offline_discipline.label(question).value

    def label(self, question: str, retrieval: Retrieval | None = None) -> QuestionLabels:
        """``retrieval`` is no longer needed (the classifier reads the question); kept for callers."""
        question_type, by = self._ask(self.category, question)
        if not question_type:
            question_type, by = classify.classify_question(question), f"{OFFLINE_NAME}:{CATEGORY.name}"
        subject, subject_by = self._ask(self.discipline, question)
        source = SOURCE_MODEL
        if not subject:
            offline = self.offline_discipline.label(question)
            subject, subject_by, source = offline.value, offline.labeller, SOURCE_LABELLER
        return QuestionLabels(question_type, by, subject, subject_by, source)

    @staticmethod
    def _ask(labeller: Labeller | None, question: str) -> tuple[str, str]:
        if labeller is None:
            return "", ""
        try:
            label = labeller.label(question)
        except Exception as err:  # a provider error, or a bug: either way the vote must still be stored
            log.warning("labeller %s failed (%s); using the offline labeller", labeller.name, type(err).__name__)
            return "", ""
        if not label.valid:
            log.warning("labeller %s gave no %s label; using the offline labeller", labeller.name, labeller.task.name)
            return "", ""
        return label.value, label.labeller


def open_arena_labeller(name: str, models: Models, timeout_s: float = LABEL_TIMEOUT_S) -> ArenaLabeller:
    """The arena's labeller for SCIARENA_LABEL_MODEL: "" or OFFLINE_NAME → the rules; a catalogue
    model's name → that model for both tasks, each call bounded by ``timeout_s``.

    A model that cannot run now (its key is not set) gives the rules with a warning, as the other
    helper models do; an unknown name raises CatalogueError, so a typo stops the app at start.
    """
    name = name.strip()
    if not name or name == OFFLINE_NAME:
        return ArenaLabeller()

    spec, provider = models.pick(name, "SCIARENA_LABEL_MODEL")
    if spec.offline:

        raise CatalogueError(f"SCIARENA_LABEL_MODEL: {spec.name!r} is an offline answer generator, not a "
                             f"labeller; leave it empty (or {OFFLINE_NAME}) for the keyword rules.")
    reason = provider.unavailable_reason(spec)
    if reason is not None:
        log.warning("SCIARENA_LABEL_MODEL %r cannot run (%s); the offline rules label", spec.name, reason)
        return ArenaLabeller()

    def ask(messages: list[dict[str, str]]) -> str:
        return complete(provider, spec, messages, timeout_s=timeout_s).text

    return ArenaLabeller(category=LLMLabeller(CATEGORY, ask, spec.name),
                         discipline=LLMLabeller(DISCIPLINE, ask, spec.name))

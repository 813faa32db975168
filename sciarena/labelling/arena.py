"""Labels for a new battle's question, as the arena records them: which label, and who gave it.

The arena may be configured with a model for either task; the offline rules stand in when
none is configured, when the model's reply names no label, or when its call fails, so a
labelling problem never blocks a battle or a vote. Each label is recorded with the name
of the labeller that actually produced it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from sciarena import classify
from sciarena.errors import SciArenaError
from sciarena.labelling.labellers import CATEGORY, DISCIPLINE, OFFLINE_NAME, Labeller
from sciarena.types import Retrieval

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class QuestionLabels:
    question_type: str
    question_type_labeller: str
    subject: str  # "" when no rule found a discipline
    subject_labeller: str


@dataclass(frozen=True)
class ArenaLabeller:
    """The configured labellers (None = the offline rules) with the rules as fallback."""

    category: Labeller | None = None
    discipline: Labeller | None = None

    def label(self, question: str, retrieval: Retrieval | None = None) -> QuestionLabels:
        question_type, by = self._ask(self.category, question)
        if not question_type:
            question_type, by = classify.classify_question(question), f"{OFFLINE_NAME}:{CATEGORY.name}"
        subject, subject_by = self._ask(self.discipline, question)
        if not subject:
            subject, subject_by = classify.label_subject(question, retrieval), f"{OFFLINE_NAME}:{DISCIPLINE.name}"
        return QuestionLabels(question_type, by, subject, subject_by)

    @staticmethod
    def _ask(labeller: Labeller | None, question: str) -> tuple[str, str]:
        if labeller is None:
            return "", ""
        try:
            label = labeller.label(question)
        except SciArenaError as err:
            log.warning("labeller %s failed (%s); using the offline rules", labeller.name, err)
            return "", ""
        if not label.valid:
            log.warning("labeller %s gave no %s label; using the offline rules", labeller.name, labeller.task.name)
            return "", ""
        return label.value, label.labeller

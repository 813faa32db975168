"""Our hand-labelled questions: the yardstick for every labeller (see QUESTION_LABELS_CARD.md)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from sciarena.core.settings import PACKAGE_DIR
from sciarena.core.types import DISCIPLINES, QUESTION_TYPES

LABELS_FILE = PACKAGE_DIR / "data" / "eval" / "question_labels.jsonl"
# dev: the rules were tuned on it; test: held out from tuning (but written by the rules' author,
# who had read it); fresh: written after the rules were frozen; fresh2: written after the discipline
# classifier (arena/labels/discipline_text.py) was frozen the first time, and is now trained on; fresh3: written by
# someone else, blind to the method, after it was frozen the second time ("Freeze discipline labeller"), and never
# trained or tuned on.
SPLITS = ("dev", "test", "fresh", "fresh2", "fresh3")


@dataclass(frozen=True)
class LabelledQuestion:
    id: str
    question: str
    category: str  # one of types.QUESTION_TYPES
    discipline: str  # one of types.DISCIPLINES
    split: str  # one of SPLITS
    note: str = ""  # why the label is not obvious, when it is not
    also: str = ""  # a second discipline also counted right: the question sits between two fields

    def discipline_right(self, predicted: str) -> bool:
        """Whether ``predicted`` is an accepted discipline (the gold one, or ``also`` when set)."""
        return predicted == self.discipline or (bool(self.also) and predicted == self.also)


def load_labelled_questions(path: str | Path = LABELS_FILE) -> list[LabelledQuestion]:
    """Every labelled question in file order; a line with an unknown label or split is a ValueError."""
    out: list[LabelledQuestion] = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        record = json.loads(line)
        item = LabelledQuestion(id=record["id"], question=record["question"], category=record["category"],
                                discipline=record["discipline"], split=record["split"],
                                note=record.get("note", ""), also=record.get("also", ""))
        if (item.category not in QUESTION_TYPES or item.discipline not in DISCIPLINES or item.split not in SPLITS
                or (item.also and (item.also not in DISCIPLINES or item.also == item.discipline))):
            raise ValueError(f"{path}: line {number} has an unknown category, discipline or split")
        out.append(item)
    return out

"""Accuracy and confusion matrices of a labeller against gold labels (pure)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sciarena.answer.label_reply import INVALID

NO_LABEL = "(none)"  # how an empty prediction (a rule that found no cue) is shown


@dataclass(frozen=True)
class Confusion:
    """Rows are gold labels, columns predicted ones: the task's labels, then any others seen
    (INVALID, NO_LABEL), so a labeller's failures are counted rather than dropped."""

    labels: tuple[str, ...]
    columns: tuple[str, ...]
    counts: tuple[tuple[int, ...], ...]

    @property
    def total(self) -> int:
        return sum(map(sum, self.counts))

    @property
    def correct(self) -> int:
        return sum(self.counts[i][self.columns.index(label)] for i, label in enumerate(self.labels))

    @property
    def accuracy(self) -> float:
        return self.correct / self.total if self.total else float("nan")

    def recall(self, label: str) -> float:
        row = self.counts[self.labels.index(label)]
        return row[self.columns.index(label)] / sum(row) if sum(row) else float("nan")

    def count(self, gold: str, predicted: str) -> int:
        return self.counts[self.labels.index(gold)][self.columns.index(predicted)]


def confusion(gold: Sequence[str], predicted: Sequence[str], labels: Sequence[str]) -> Confusion:
    """The confusion matrix of ``predicted`` against ``gold`` (same length; gold labels in ``labels``)."""
    if len(gold) != len(predicted):
        raise ValueError("gold and predicted labels differ in length")
    shown = [p if p else NO_LABEL for p in predicted]
    unknown = [g for g in gold if g not in labels]
    if unknown:
        raise ValueError(f"gold label {unknown[0]!r} is not one of the labels")
    extra = sorted({p for p in shown if p not in labels}, key=lambda p: (p != INVALID, p))
    columns = tuple(labels) + tuple(extra)
    counts = [[0] * len(columns) for _ in labels]
    for g, p in zip(gold, shown):
        counts[labels.index(g)][columns.index(p)] += 1
    return Confusion(labels=tuple(labels), columns=columns, counts=tuple(map(tuple, counts)))


def format_confusion(matrix: Confusion, short: Mapping[str, str] | None = None) -> str:
    """A fixed-width table (gold rows × predicted columns) with each row's recall."""
    short = short or {}
    names = [short.get(c, c) for c in matrix.columns]
    row_names = [short.get(label, label) for label in matrix.labels]
    first = max(len("gold \\ predicted"), *map(len, row_names))
    widths = [max(len(n), 3) for n in names]
    lines = ["gold \\ predicted".ljust(first) + "  " + "  ".join(n.rjust(w) for n, w in zip(names, widths))
             + "  recall"]
    for label, name, row in zip(matrix.labels, row_names, matrix.counts):
        cells = "  ".join(str(c).rjust(w) for c, w in zip(row, widths))
        lines.append(f"{name.ljust(first)}  {cells}  {100 * matrix.recall(label):5.1f}%")
    return "\n".join(lines)

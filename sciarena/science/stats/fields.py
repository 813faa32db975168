"""How the votes' fields were decided: per discipline, how many votes carry a field the asker chose
(``subject_source`` "asker") and how many the labeller's, with the offline labeller's measured accuracy.

``stats`` prints it; the per-discipline boards stand on these fields, so a reader can tell how much of
a discipline's board rests on the askers' own word and how much on a labeller that is wrong about one
question in nine (measured on questions written after it was frozen).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from sciarena.arena.labels.discipline_text import MEASURED_ACCURACY
from sciarena.arena.labels.labellers import CLASSIFIER_NAME
from sciarena.core.text import counted
from sciarena.core.types import SOURCE_ASKER


@dataclass(frozen=True)
class FieldProvenance:
    votes: Mapping[str, int]  # subject → votes ("" = no field)
    asker: Mapping[str, int]  # subject → votes whose field the asker chose
    changed: int  # votes whose asker changed the labeller's field (equal to the asker count today)

    @property
    def total(self) -> int:
        return sum(self.votes.values())

    def lines(self) -> list[str]:
        total_asker = sum(self.asker.values())
        out = [f"Fields: {total_asker:,} of {self.total:,} votes carry a field the asker chose; the rest carry the "
               f"labeller's ({CLASSIFIER_NAME}: {MEASURED_ACCURACY})."]
        for subject, n in sorted(self.votes.items(), key=lambda kv: (-kv[1], kv[0])):
            share = 100 * self.asker.get(subject, 0) / n if n else 0.0
            out.append(f"  {subject or '(none)'}: {counted(n, 'vote')}, {self.asker.get(subject, 0):,} set by the asker "
                       f"({share:.0f}%)")
        return out


def field_provenance(records: Iterable[Mapping[str, Any]]) -> FieldProvenance:
    """Count each record's field and whether the asker chose it (older records: the labeller's)."""
    votes: Counter[str] = Counter()
    asker: Counter[str] = Counter()
    changed = 0
    for record in records:
        subject = record.get("subject") or ""
        subject = subject.strip() if isinstance(subject, str) else ""
        votes[subject] += 1
        if record.get("subject_source") == SOURCE_ASKER:
            asker[subject] += 1
            changed += record.get("subject_labelled") not in (None, subject)
    return FieldProvenance(dict(votes), dict(asker), changed)

"""How a board's fields were decided, in one line: the share of its votes whose field the asker set on the
vote bar (``subject_source`` "asker": the asker changed the proposed field; a vote whose asker kept it records
"labeller"), and the offline labeller's measured accuracy for the rest.

The per-discipline views (Leaderboard tab, ``leaderboard --by subject``) stand on each vote's field, so
they say how much of that rests on the askers' own choice.
"""

from __future__ import annotations

import numpy as np

from sciarena.arena.labels.discipline_text import FRESH_ACCURACY, FRESH_QUESTIONS
from sciarena.board.table import VoteTable
from sciarena.core.text import counted

LABELLER = (f"the labeller is {100 * FRESH_ACCURACY:.1f}% accurate on {FRESH_QUESTIONS} fresh questions "
            "(written after it was frozen)")


def asker_share(table: VoteTable, mask: np.ndarray | None = None) -> tuple[int, int] | None:
    """(votes whose asker set the field, votes) among ``mask`` (default all); None when the votes
    do not record who chose the field."""
    if table.asker is None:
        return None
    chosen = table.asker if mask is None else table.asker[mask]
    return int(chosen.sum()), int(chosen.size)


KEPT = "the rest kept the labeller's proposal"


def _share(set_by_asker: int, votes: int) -> str:
    return f"{round(100 * set_by_asker / votes) if votes else 0}% of {counted(votes, 'vote')}"


def fields_line(table: VoteTable) -> str:
    """'Fields: 37% of 120 votes in this view set by the asker (the rest kept the labeller's proposal); the
    labeller is 88.5% accurate on 96 …'."""
    share = asker_share(table)
    if share is None:
        return f"Fields: these votes do not record whether the asker set the field; {LABELLER}."
    return f"Fields: {_share(*share)} in this view set by the asker ({KEPT}); {LABELLER}."


def fields_by_discipline(table: VoteTable) -> str:
    """One line for a board with per-discipline columns: each discipline's share of fields set by the asker."""
    if table.asker is None:
        return f"Fields: the votes do not record whether the asker set the field; {LABELLER}."
    parts = []
    for code, name in enumerate(table.subjects):
        set_by_asker, votes = asker_share(table, table.subject == code) or (0, 0)
        if votes:
            parts.append(f"{name} {_share(set_by_asker, votes)}")
    return f"Fields set by the asker ({KEPT}): {', '.join(parts) or 'no vote has a field'}; {LABELLER}."

"""The leaderboard: a vote table → Bradley–Terry ratings with bootstrap intervals (pure numpy/scipy).

``table.vote_table`` makes the :class:`VoteTable` from what ``sciarena.votes.read.columns`` reads (or
from plain records); the statistics (``bradley_terry``, ``style``, ``elo``) and
``compute.compute_leaderboard`` — the one function the UI and the CLI share — are pure
functions of it; ``views`` and ``plots`` derive tables and figures. ``read_table`` chains
reading and ``vote_table`` for callers that start from files; which votes count is
``sciarena.science.quality.vouch``'s filter step, applied by the caller. Matplotlib is imported only by
the functions that need it.
"""

from sciarena.board.compute import (
    PROVISIONAL_BATTLES,
    Leaderboard,
    Row,
    StyleCoefficient,
    compute_leaderboard,
    to_dict,
    to_json,
)
from sciarena.board.table import (
    VoteTable,
    read_table,
    table_from_arrays,
    vote_table,
)

__all__ = [
    "PROVISIONAL_BATTLES",
    "Leaderboard",
    "Row",
    "StyleCoefficient",
    "VoteTable",
    "compute_leaderboard",
    "read_table",
    "table_from_arrays",
    "to_dict",
    "to_json",
    "vote_table",
]

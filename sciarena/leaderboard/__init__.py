"""The leaderboard: votes → Bradley–Terry ratings with bootstrap intervals (pure numpy/scipy).

Loading (``load``, ``parse``, ``cache``) is separate from the statistics
(``bradley_terry``, ``style``, ``elo``); ``compute.compute_leaderboard`` is the one
function the UI and the CLI share; ``views`` and ``plots`` derive tables and figures.
Matplotlib and pyarrow are imported only by the functions that need them.
"""

from sciarena.leaderboard.compute import (
    PROVISIONAL_BATTLES,
    Leaderboard,
    Row,
    StyleCoefficient,
    compute_leaderboard,
    to_dict,
    to_json,
)
from sciarena.leaderboard.data import VoteTable, table_from_arrays
from sciarena.leaderboard.load import load_votes

__all__ = [
    "PROVISIONAL_BATTLES",
    "Leaderboard",
    "Row",
    "StyleCoefficient",
    "VoteTable",
    "compute_leaderboard",
    "load_votes",
    "table_from_arrays",
    "to_dict",
    "to_json",
]

"""SciArena: an open arena for scientific-literature question answering.

The package reads in data-flow order: config → retrieval → providers/prompting →
battle → postprocess → votes → leaderboard, with ui/ on top.
"""

__version__ = "0.1.0"

"""SciArena: an open arena for scientific-literature question answering.

The package reads in data-flow order: config → retrieval → prompting → providers →
pairing/runner (both answers at once) → postprocess/identity → arena (the vote rules) →
votes → leaderboard, quality, labelling and evaluation over stored votes, with ui/ on top
and services.py wiring it once.
"""

__version__ = "0.1.0"

"""Voter quality: which voters' votes can be vouched for.

Three tests per voter, each a pure numpy/scipy function over vote arrays (voter codes,
model indices a/b, outcome codes 0 = A, 1 = B, 2 = tie, 3 = both bad):

- ``anomaly``      the paper's A.5 check: per-vote rarity p-values against the other voters'
                   votes on the same model pair, combined by Fisher at five seeded checkpoints;
- ``directional``  what A.5 cannot see on a compressed leaderboard: position bias (binomial
                   A vs B) and disagreement with the Bradley–Terry consensus of everybody else,
                   with Holm's correction over a voter's tests;
- ``check``        vote records → arrays → one :class:`~sciarena.science.quality.report.QualityReport`.

``python -m sciarena quality`` (cli/quality.py) prints the report.
"""

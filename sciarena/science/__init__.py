"""Analyses over stored votes, each a command: which voters and campaigns can be vouched for (quality/,
including vouching as the board's filter step), labels after the fact (labelling/), data statistics (stats/),
SciArena-Eval (evaluation/), agreement between vote sets (agreement) and the Review tab's rules (review).

In: vote records or a board's vote table. Out: reports, labels, filtered tables.
"""

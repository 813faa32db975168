"""Vote counts per (group, model a, model b, outcome) cell: what every Bradley–Terry number is made of.

A leaderboard's fit, bootstrap, per-model record and per-group fits read only how many votes fell in
each cell, so once the counts exist their cost does not grow with the number of votes. The counts of
a grouping are one ``np.bincount`` over the votes, computed at most once per table
(:meth:`VoteTable.cells`), and a filtered table (:func:`sciarena.board.table.leave_out`) derives its
counts from its parent's by subtracting the few votes it left out, instead of counting again.
"""

from __future__ import annotations

import numpy as np

from sciarena.votes.schema import OUTCOME_A, OUTCOME_B, OUTCOME_BAD, OUTCOME_TIE


def count_cells(a: np.ndarray, b: np.ndarray, outcome: np.ndarray, n_models: int,
                codes: np.ndarray | None = None, n_groups: int = 0) -> np.ndarray:
    """(G + 1, M, M, 4) int64 counts; slot 0 holds votes whose group is unknown (code -1), slot g + 1
    group g. Without ``codes`` every vote is in slot 0 and G = 0."""
    m = n_models
    size = (n_groups + 1) * m * m * 4
    # int32 keys where they fit: half the memory traffic of int64 over millions of votes
    kind = np.int32 if size < 2**31 else np.int64
    key = a.astype(kind) * m
    key += b
    key *= 4
    key += outcome
    if codes is not None:
        key += (codes.astype(kind) + 1) * (m * m * 4)
    return np.bincount(key, minlength=size).reshape(n_groups + 1, m, m, 4)


def record(cells: np.ndarray) -> np.ndarray:
    """(M, 4) wins, losses, ties, both-bad per model, from (…, M, M, 4) counts."""
    flat = cells.reshape(-1, *cells.shape[-3:]).sum(axis=0)
    as_a, as_b = flat.sum(axis=1), flat.sum(axis=0)  # (M, 4) by the model's side
    wins = as_a[:, OUTCOME_A] + as_b[:, OUTCOME_B]
    losses = as_a[:, OUTCOME_B] + as_b[:, OUTCOME_A]
    ties = as_a[:, OUTCOME_TIE] + as_b[:, OUTCOME_TIE]
    bad = as_a[:, OUTCOME_BAD] + as_b[:, OUTCOME_BAD]
    return np.stack([wins, losses, ties, bad], axis=1)


def battles(cells: np.ndarray) -> np.ndarray:
    """(M,) battles per model (every outcome counts)."""
    flat = cells.reshape(-1, *cells.shape[-3:]).sum(axis=(0, 3))
    return flat.sum(axis=1) + flat.sum(axis=0)


def keep_models(cells: np.ndarray, used: np.ndarray) -> np.ndarray:
    """Counts over the models ``used`` (indices, in order) only: the vocabulary a filtered table keeps."""
    return cells[:, used][:, :, used]

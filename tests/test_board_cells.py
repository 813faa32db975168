"""The board reads vote counts per (group, a, b, outcome) cell, counted once per table: whatever the votes
and whatever a filter leaves out, those counts — and so every number built on them — equal a fresh count
of the votes themselves."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from sciarena.board import compute_leaderboard, table_from_arrays
from sciarena.board.table import Exclusions, leave_out


@st.composite
def tables_and_drops(draw):
    m = draw(st.integers(2, 6))
    n = draw(st.integers(2, 80))
    pairs = draw(st.lists(st.tuples(st.integers(0, m - 1), st.integers(1, m - 1)), min_size=n, max_size=n))
    a = [i for i, _ in pairs]
    b = [(i + shift) % m for i, shift in pairs]  # never the same model on both sides
    outcome = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    subject = draw(st.lists(st.integers(-1, 2), min_size=n, max_size=n))
    drop = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    names = [f"m{k}" for k in draw(st.permutations(range(m)))]  # vocabularies need not be sorted
    table = table_from_arrays(names, a, b, outcome, subjects=("bio", "cs", "phys"), subject=subject)
    return table, np.asarray(drop)


def _fresh(table):
    """The direct count, vote by vote."""
    m = len(table.models)
    cells = np.zeros((len(table.subjects) + 1, m, m, 4), dtype=np.int64)
    for a, b, o, s in zip(table.a, table.b, table.outcome, table.subject):
        cells[s + 1, a, b, o] += 1
    return cells


@settings(max_examples=150, deadline=None)
@given(tables_and_drops())
def test_counts_of_a_table_and_of_what_a_filter_keeps_equal_a_fresh_count(case):
    table, drop = case
    assert (table.cells("subject") == _fresh(table)).all()
    assert (table.cells() == _fresh(table).sum(axis=0, keepdims=True)).all()
    battles = np.bincount(table.a, minlength=len(table.models)) + np.bincount(table.b, minlength=len(table.models))
    assert (table.battles() == battles).all()
    if drop.all() or len(set(table.a[~drop]) | set(table.b[~drop])) < 2:
        return
    kept = leave_out(table, drop, Exclusions(left_out=int(drop.sum())))
    assert "subject" in kept._cells  # derived from the parent's counts, not counted again
    assert (kept.cells("subject") == _fresh(kept)).all()


@settings(max_examples=40, deadline=None)
@given(tables_and_drops())
def test_a_filtered_board_equals_the_board_of_its_votes_counted_afresh(case):
    table, drop = case
    if drop.all() or len(set(table.a[~drop]) | set(table.b[~drop])) < 2:
        return
    kept = leave_out(table, drop, Exclusions(left_out=int(drop.sum())))
    fresh = table_from_arrays(kept.models, kept.a, kept.b, kept.outcome, subjects=kept.subjects,
                              subject=kept.subject)
    ours, theirs = (compute_leaderboard(t, bootstrap=5, seed=1) for t in (kept, fresh))
    assert [r.model for r in ours.rows] == [r.model for r in theirs.rows]
    for x, y in zip(ours.rows, theirs.rows):
        assert (x.wins, x.losses, x.ties, x.both_bad, x.battles) == (y.wins, y.losses, y.ties, y.both_bad, y.battles)
        assert np.isclose(x.rating, y.rating) and x.groups == y.groups
    assert ours.outcomes == theirs.outcomes

"""The campaign filter can only help (issue 33): a window is tested against the board fitted without it,
established ids are tested too, a model without established votes has a prior's variance (never zero),
and the guard counts a campaign's votes again when leaving them out would move a model further than
counting them.

Histories: rigging's honest history (Table 2 ratings) plus votes written here — the attack is cast by
ids that are *established* (they voted honestly for weeks), which the previous filter took as its
reference."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sciarena.board.bradley_terry import fit_counts, table_counts, to_elo
from sciarena.board.table import VoteTable
from sciarena.science.quality.campaign import detect_campaigns
from sciarena.science.quality.guard import guard
from sciarena.science.quality.reference import ridged_fit
from sciarena.science.quality.rigging import rigged_history
from sciarena.science.quality.synthetic import TABLE2_RATINGS
from sciarena.science.quality.vouch import vouch_mask
from sciarena.votes.schema import OUTCOME_A, OUTCOME_B

DAY = 86400.0


def with_votes(table: VoteTable, voter: np.ndarray, a: np.ndarray, b: np.ndarray, outcome: np.ndarray,
               times: np.ndarray) -> tuple[VoteTable, np.ndarray]:
    """``table`` plus the given votes, in time order; and which votes are the added ones."""
    n = table.n_votes + a.size
    added = np.r_[np.zeros(table.n_votes, bool), np.ones(a.size, bool)]
    t = np.r_[table.timestamp, times]
    order = np.argsort(t, kind="stable")
    pad = {k: np.r_[v, np.full((a.size, 2), np.nan, np.float32)][order] for k, v in table.features.items()}
    out = dataclasses.replace(
        table, a=np.r_[table.a, a].astype(np.int32)[order], b=np.r_[table.b, b].astype(np.int32)[order],
        outcome=np.r_[table.outcome, outcome].astype(np.int8)[order], timestamp=t[order],
        subject=np.full(n, -1, np.int32), question_type=np.full(n, -1, np.int32), features=pad,
        voter=np.r_[table.voter, voter].astype(np.int32)[order])
    return out, added[order]


def aged_attack(seed: int, ids: int, each: int) -> tuple[VoteTable, np.ndarray, int]:
    """Established voters of the honest history (40 votes over 60 days each) turn: in the last two days
    ``ids`` of them cast ``each`` votes for the target only."""
    rig = rigged_history(None, seed=seed)
    table, target = rig.table, rig.target
    rng = np.random.default_rng(1000 + seed)
    n = ids * each
    voter = np.repeat(rng.choice(400, ids, replace=False), each)  # codes 0–399: the established voters
    other = (target + rng.integers(1, len(table.models), n)) % len(table.models)
    left = rng.random(n) < 0.5
    end = float(table.timestamp.max())
    times = rng.uniform(end - 2 * DAY, end, n)
    return (*with_votes(table, voter, np.where(left, target, other), np.where(left, other, target),
                        np.where(left, OUTCOME_A, OUTCOME_B), times), target)


def elo_of(table: VoteTable, keep: np.ndarray, model: int) -> float:
    return float(to_elo(fit_counts(table_counts(table, keep))[0])[model])


@pytest.mark.parametrize("seed", [11, 12])
def test_established_ids_that_turn_are_the_campaign_not_the_honest_newcomers(seed):
    table, attack, target = aged_attack(seed, 30, 20)
    found = detect_campaigns(table.models, table.voters, table.voter, table.a, table.b, table.outcome,
                             table.timestamp)
    assert [(c.model, c.direction, c.cohort) for c in found.campaigns] == [
        (table.models[target], "lift", "established")]
    assert found.drop[attack].mean() >= 0.95
    honest = elo_of(table, ~attack, target)
    every = elo_of(table, np.ones(table.n_votes, bool), target) - honest
    drop, _ = vouch_mask(table)
    default = elo_of(table, ~drop, target) - honest
    assert every > 100 and abs(default) <= 15


def test_a_model_without_established_votes_has_a_prior_variance_not_zero():
    a, b = np.array([0, 1, 0, 1] * 50), np.array([1, 2, 2, 0] * 50)
    theta, cov = ridged_fit(4, a, b, np.zeros(a.size, np.int64))  # model 3 never played
    assert abs(theta[3]) < 1e-9 and cov[3, 3] > 1.0  # a 400-Elo prior: var (ln 10)² ≈ 5.3 natural units


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(20, 10_000), lead=st.floats(0.0, 150.0))
def test_a_new_model_whose_first_votes_all_come_from_new_ids_keeps_them(seed, lead):
    """A model that did not exist before the last two days, stronger than or as strong as the top,
    rated only by new ids: no campaign, every vote counts."""
    rig = rigged_history(None, seed=seed)
    table = rig.table
    rng = np.random.default_rng(seed)
    newcomer = dataclasses.replace(table, models=table.models + ("newcomer",))
    m = len(table.models)
    n = 900
    strength = 1151.4 + lead
    opp = rng.integers(0, m, n)
    p = 1.0 / (1.0 + 10.0 ** ((np.asarray(TABLE2_RATINGS)[opp] - strength) / 400.0))
    wins = rng.random(n) < p
    ids = len(table.voters) + np.arange(n) // 3
    newcomer = dataclasses.replace(newcomer, voters=table.voters + tuple(f"anon-early{k:04d}" for k in range(n // 3)))
    end = float(table.timestamp.max())
    full, added = with_votes(newcomer, ids, np.full(n, m), opp, np.where(wins, OUTCOME_A, OUTCOME_B),
                             rng.uniform(end - 2 * DAY, end, n))
    found = detect_campaigns(full.models, full.voters, full.voter, full.a, full.b, full.outcome, full.timestamp)
    assert found.drop[added].mean() <= 0.05


def test_the_guard_counts_again_a_campaign_whose_removal_moves_a_model_further():
    """Hand the guard the wrong campaign — honest newcomers' votes on the target in an aged attack —
    and it counts them again; hand it the attack and it leaves it out."""
    table, attack, target = aged_attack(13, 30, 20)
    a, b, o = table.a.astype(np.int64), table.b.astype(np.int64), table.outcome.astype(np.int64)
    on_target = (a == target) | (b == target)
    end = float(table.timestamp.max())
    honest_recent = on_target & ~attack & (table.timestamp > end - 30 * DAY)
    none = np.zeros(table.n_votes, bool)
    wrong = guard(len(table.models), target, honest_recent, none, ~honest_recent, a, b, o, table.timestamp, "t")
    right = guard(len(table.models), target, attack, none, ~attack, a, b, o, table.timestamp, "t")
    assert wrong.counted_again and "further" in wrong.warning
    assert not right.counted_again


@pytest.mark.parametrize("seed", [31, 32])
def test_an_honest_history_s_default_board_is_within_five_elo_of_every_vote(seed):
    """Benjamini–Hochberg over voters: on an honest history almost no voter is flagged (a per-voter α
    flagged ~2 % of them), so no model moves more than 5 Elo against counting every vote."""
    table = rigged_history(None, seed=seed).table
    drop, excluded = vouch_mask(table)
    every = to_elo(fit_counts(table_counts(table))[0])
    default = to_elo(fit_counts(table_counts(table, ~drop))[0])
    assert excluded.campaigns == 0 and drop.mean() <= 0.005
    assert np.abs(default - every).max() <= 5.0


def test_a_campaign_holding_most_of_its_models_votes_is_said_on_the_board():
    """2,000 target-only votes against ~900 honest ones on the target: left out, and the board says
    they were most of its votes (the footer / the tab's note read ``Exclusions.describe``)."""
    rig = rigged_history("target", 1000, 2, seed=2)
    drop, excluded = vouch_mask(rig.table)
    name = rig.table.models[rig.target]
    assert excluded.campaigns == 1 and excluded.campaigns_counted_again == 0
    assert drop[rig.kind == 2].mean() >= 0.95
    assert len(excluded.campaign_warnings) == 1 and name in excluded.campaign_warnings[0]
    assert "of " + name + "'s votes" in excluded.campaign_warnings[0]
    assert "campaign filter: lift " + name in excluded.describe()


@settings(max_examples=25, deadline=None)
@given(mu=st.floats(0.05, 0.3), n=st.integers(20, 60), extra=st.floats(2.5, 4.5))
def test_a_weak_models_run_of_wins_gets_a_tail_no_smaller_than_the_exact_one(mu, n, extra):
    """The lift p-value of k wins in n votes at win chance mu (a weak model): the normal tail is far below
    the exact binomial one (a false campaign); the skew-corrected tail is never below the normal one and
    always nearer the exact one."""
    from scipy.stats import binom, norm

    from sciarena.science.quality.campaign import _tails
    var = n * mu * (1 - mu)
    k = int(np.ceil(n * mu + extra * np.sqrt(var)))
    if k > n:
        return
    z = np.array([(k - n * mu) / np.sqrt(var)])
    skew = np.array([n * mu * (1 - mu) * (1 - 2 * mu) / var ** 1.5])
    lift, _ = _tails(z, skew)
    exact = binom.sf(k - 1, n, mu)
    normal = norm.sf(z[0])
    assert lift[0] >= normal and abs(np.log(lift[0] / exact)) < abs(np.log(normal / exact))


def fresh_arena(seed: int, attack: bool) -> tuple[VoteTable, np.ndarray, int]:
    """A new arena where every id is new (2,500 honest ids, 1–8 votes each within two days of their first,
    over 14 days) and, when ``attack``, 150 more ids × 2 votes for Table 2's rank 15 in the last two days."""
    rng = np.random.default_rng(seed)
    r = np.asarray(TABLE2_RATINGS)
    m, honest = r.size, 2500
    sizes = rng.integers(1, 9, honest)
    voter = np.repeat(np.arange(honest), sizes)
    first = rng.uniform(0, 14 * DAY, honest)
    t = first[voter] + rng.uniform(0, 2 * DAY, voter.size)
    a = rng.integers(0, m, voter.size)
    b = (a + rng.integers(1, m, voter.size)) % m
    p = 1.0 / (1.0 + 10.0 ** ((r[b] - r[a]) / 400.0))
    o = np.where(rng.random(voter.size) < 0.1, 2, np.where(rng.random(voter.size) < p, OUTCOME_A, OUTCOME_B))
    target = int(np.argsort(-r, kind="stable")[14])
    kind = np.zeros(voter.size, bool)
    if attack:
        k = 300
        voter = np.r_[voter, honest + np.arange(k) // 2]
        other = (target + rng.integers(1, m, k)) % m
        left = rng.random(k) < 0.5
        a, b = np.r_[a, np.where(left, target, other)], np.r_[b, np.where(left, other, target)]
        o = np.r_[o, np.where(left, OUTCOME_A, OUTCOME_B)]
        t = np.r_[t, rng.uniform(12 * DAY, 14 * DAY, k)]
        kind = np.r_[kind, np.ones(k, bool)]
    order = np.argsort(t, kind="stable")
    n = order.size
    table = VoteTable(models=tuple(f"m{k:02d}" for k in range(m)), a=a[order].astype(np.int32),
                      b=b[order].astype(np.int32), outcome=o[order].astype(np.int8), subjects=(),
                      subject=np.full(n, -1, np.int32), question_types=(), question_type=np.full(n, -1, np.int32),
                      features={}, timestamp=1.78e9 + t[order],
                      voters=tuple(f"anon-{k:05d}" for k in range(int(voter.max()) + 1)),
                      voter=voter[order].astype(np.int32))
    return table, kind[order], target


@pytest.mark.parametrize("seed", [41, 42])
def test_a_campaign_on_a_fresh_arena_is_found_against_the_other_days(seed):
    """No id has a history, so the reference is every vote outside the window: 150 ids × 2 votes for the
    target are found and left out; the same arena without them reports nothing."""
    table, attack, target = fresh_arena(seed, True)
    found = detect_campaigns(table.models, table.voters, table.voter, table.a, table.b, table.outcome,
                             table.timestamp)
    assert [c.model for c in found.campaigns] == [table.models[target]]
    assert found.drop[attack].mean() >= 0.95 and found.drop[~attack].mean() <= 0.002
    honest, _, _ = fresh_arena(seed, False)
    assert detect_campaigns(honest.models, honest.voters, honest.voter, honest.a, honest.b, honest.outcome,
                            honest.timestamp).campaigns == ()

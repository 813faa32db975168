"""Synthetic arena histories under the rigging attacks of Min et al. (ICML 2025): tests and the benchmark.

The honest history: the paper's Table 2 ratings, established voters (``voters`` × ``votes_each``
votes over ``days``, each voter's own votes in time order) and honest newcomers (1–5 votes each in
the last week), all voting by Bradley–Terry as ``board.synthetic.simulate`` does. The attacks, all
by fresh anonymous ids (``k`` ids × ``m`` votes):

- ``target``      battles with the target, every vote for it (it is recognised by its style);
- ``omnipresent`` battles *without* the target: the five models just above it lose to the eight
  weakest, so the target climbs in rank without a vote of its own;
- ``slow``        ``target`` spread evenly over the last four weeks instead of the last two days;
- ``mixed``       random battles, honest votes except when the target plays, then for the target.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sciarena.board.synthetic import simulate
from sciarena.board.table import VoteTable
from sciarena.science.quality.synthetic import TABLE2_RATINGS
from sciarena.votes.schema import OUTCOME_A, OUTCOME_B

DAY = 86400.0
START = 1_767_225_600.0  # 2026-01-01T00:00:00Z
ATTACKS = ("target", "omnipresent", "slow", "mixed")
TARGET_RANK = 15  # 1-based rank of the target in Table 2 (1020.5 Elo), as in the issue


@dataclass(frozen=True, eq=False)
class Rigged:
    table: VoteTable  # every vote, in time order, voter ids set
    kind: np.ndarray  # per vote: 0 honest established voter, 1 honest newcomer, 2 attacker
    target: int


def _votes(ratings: np.ndarray, a: np.ndarray, b: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Honest outcomes of battles a vs b, drawn as ``board.synthetic.simulate`` draws them (9 % ties,
    3 % both bad, expected score = the Bradley–Terry probability); here the pairs are given."""
    p = 1.0 / (1.0 + 10.0 ** ((ratings[b] - ratings[a]) / 400.0))
    tie, q = 0.09, 0.12
    u = rng.random(a.size)
    decisive_a = np.clip((p - q / 2) / (1.0 - q), 0.0, 1.0)
    return np.where(u < tie, 2, np.where(u < q, 3, np.where(rng.random(a.size) < decisive_a, 0, 1)))


def _pairs(m: int, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    a = rng.integers(0, m, n)
    return a, (a + rng.integers(1, m, n)) % m


def rigged_history(attack: str | None = None, k: int = 300, m: int = 2, *, seed: int = 0, voters: int = 400,
                   votes_each: int = 40, newcomers: int = 200, days: float = 60.0,
                   ratings: tuple[float, ...] = TABLE2_RATINGS) -> Rigged:
    """An honest history, plus ``attack`` (one of ATTACKS, or None) by ``k`` fresh ids × ``m`` votes."""
    rng = np.random.default_rng(seed)
    r = np.asarray(ratings, dtype=np.float64)
    n_models = r.size
    order = np.argsort(-r, kind="stable")
    target = int(order[TARGET_RANK - 1])
    end = START + days * DAY
    who, a, b, out, t, kind = [], [], [], [], [], []

    def add(ids: np.ndarray, va: np.ndarray, vb: np.ndarray, vo: np.ndarray, vt: np.ndarray, k_: int) -> None:
        who.append(ids), a.append(va), b.append(vb), out.append(vo), t.append(vt)
        kind.append(np.full(va.size, k_))

    n = voters * votes_each
    va, vb = _pairs(n_models, n, rng)
    add(np.repeat(np.arange(voters), votes_each), va, vb, _votes(r, va, vb, rng),
        rng.uniform(START, end, n), 0)
    sizes = rng.integers(1, 6, newcomers)
    n = int(sizes.sum())
    va, vb = _pairs(n_models, n, rng)
    add(voters + np.repeat(np.arange(newcomers), sizes), va, vb, _votes(r, va, vb, rng),
        rng.uniform(end - 7 * DAY, end, n), 1)
    if attack is not None:
        n = k * m
        ids = voters + newcomers + np.repeat(np.arange(k), m)
        times = rng.uniform(end - 2 * DAY, end, n)
        if attack in ("target", "slow"):
            other = (target + rng.integers(1, n_models, n)) % n_models
            left = rng.random(n) < 0.5
            va, vb = np.where(left, target, other), np.where(left, other, target)
            vo = np.where(left, OUTCOME_A, OUTCOME_B)
            if attack == "slow":
                times = rng.uniform(end - 28 * DAY, end, n)
        elif attack == "omnipresent":
            # the five models just above the target lose to the eight weakest: they fall below it,
            # and the weakest, far below, rise without passing it
            above, below = order[TARGET_RANK - 6:TARGET_RANK - 1], order[-8:]
            up, down = rng.choice(above, n), rng.choice(below, n)
            left = rng.random(n) < 0.5
            va, vb = np.where(left, down, up), np.where(left, up, down)
            vo = np.where(left, OUTCOME_A, OUTCOME_B)
        elif attack == "mixed":
            va, vb = _pairs(n_models, n, rng)
            vo = _votes(r, va, vb, rng)
            vo = np.where(va == target, OUTCOME_A, np.where(vb == target, OUTCOME_B, vo))
        else:
            raise ValueError(f"unknown attack {attack!r}; known: {', '.join(ATTACKS)}")
        add(ids, va, vb, vo, times, 2)
    voter, aa, bb, oo, tt, kk = (np.concatenate(x) for x in (who, a, b, out, t, kind))
    # each voter's votes in time order: sort by time, globally
    sort = np.argsort(tt, kind="stable")
    voter, aa, bb, oo, tt, kk = voter[sort], aa[sort], bb[sort], oo[sort], tt[sort], kk[sort]
    n_voters = int(voter.max()) + 1
    names = tuple(f"anon-{i:016x}" for i in range(n_voters))
    base = simulate(r, voter.size, seed=seed)  # features and labels only; outcomes replaced below
    table = VoteTable(models=base.models, a=aa.astype(np.int32), b=bb.astype(np.int32),
                      outcome=oo.astype(np.int8), subjects=base.subjects, subject=base.subject,
                      question_types=base.question_types, question_type=base.question_type,
                      features=base.features, timestamp=tt, voters=names, voter=voter.astype(np.int32))
    return Rigged(table, kk, target)

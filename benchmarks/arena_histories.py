"""Vote histories for bench_campaigns.py, written apart from the project's own generators
(``board.synthetic``, ``science.quality.rigging``), so that the filter is not measured on the very
assumptions it was built with.

A history is a list of *voters*, each a run of votes at given times: regulars (many votes spread over the
whole period), casual visitors (a heavy-tailed number of votes), newcomers (a few votes in the last week)
and, per case, an attack or a new model. Every honest vote draws a random pair (optionally forced to
contain a model) and an outcome from Bradley–Terry on the true ratings with 10 % ties and 2 % "both bad".
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from sciarena.board.table import VoteTable
from sciarena.votes.schema import OUTCOME_A, OUTCOME_B, OUTCOME_BAD, OUTCOME_TIE

DAY = 86400.0
T0 = 1_780_000_000.0  # an arbitrary start (2026-05-28)
# Table 2's 38 overall ratings (Jan 2026), as published; index 14 is rank 15
RATINGS = (1151.4, 1126.4, 1122.5, 1086.3, 1079.7, 1071.7, 1067.1, 1061.3, 1044.6, 1041.8, 1036.5, 1036.3,
           1028.6, 1025.2, 1020.5, 1018.6, 1014.6, 1010.2, 1009.7, 1006.9, 1006.9, 1003.5, 1002.6, 1001.9,
           989.3, 977.5, 966.4, 966.0, 963.6, 962.7, 932.8, 927.6, 902.6, 889.8, 884.8, 879.9, 844.3, 829.8)


@dataclass
class History:
    ratings: np.ndarray
    ids: list[str] = field(default_factory=list)
    a: list[int] = field(default_factory=list)
    b: list[int] = field(default_factory=list)
    outcome: list[int] = field(default_factory=list)
    t: list[float] = field(default_factory=list)
    attack: list[bool] = field(default_factory=list)

    def honest(self, rng: np.random.Generator, voter: str, times: np.ndarray, *, with_model: int | None = None,
               among: int | None = None) -> None:
        """Honest votes of ``voter`` at ``times``; ``with_model``: every battle has it; ``among``: the
        models that exist (the first ``among``; the rest arrive later)."""
        k = len(self.ratings) if among is None else among
        for when in times:
            x = int(rng.integers(k))
            y = int((x + rng.integers(1, k)) % k)
            if with_model is not None:
                x, y = (with_model, x if x != with_model else y) if rng.random() < 0.5 else (
                    x if x != with_model else y, with_model)
            p = 1.0 / (1.0 + 10.0 ** ((self.ratings[y] - self.ratings[x]) / 400.0))
            u = rng.random()
            o = OUTCOME_TIE if u < 0.10 else OUTCOME_BAD if u < 0.12 else (
                OUTCOME_A if rng.random() < p else OUTCOME_B)
            self._add(voter, x, y, o, when, False)

    def for_target(self, rng: np.random.Generator, voter: str, target: int, times: np.ndarray) -> None:
        """Attack votes: ``target`` against a random opponent, always for the target."""
        for when in times:
            other = int((target + rng.integers(1, len(self.ratings))) % len(self.ratings))
            if rng.random() < 0.5:
                self._add(voter, target, other, OUTCOME_A, when, True)
            else:
                self._add(voter, other, target, OUTCOME_B, when, True)

    def _add(self, voter: str, x: int, y: int, o: int, when: float, attack: bool) -> None:
        self.ids.append(voter)
        self.a.append(x)
        self.b.append(y)
        self.outcome.append(o)
        self.t.append(when)
        self.attack.append(attack)

    def table(self) -> tuple[VoteTable, np.ndarray]:
        """(the votes in time order as a VoteTable, attack flag per vote in that order)."""
        order = np.argsort(np.asarray(self.t), kind="stable")
        names = sorted(set(self.ids))
        code = {v: k for k, v in enumerate(names)}
        n, m = len(order), len(self.ratings)
        nan2 = np.full((n, 2), np.nan, dtype=np.float32)
        table = VoteTable(
            models=tuple(f"m{k:02d}" for k in range(m)), a=np.asarray(self.a, np.int32)[order],
            b=np.asarray(self.b, np.int32)[order], outcome=np.asarray(self.outcome, np.int8)[order],
            subjects=(), subject=np.full(n, -1, np.int32), question_types=(),
            question_type=np.full(n, -1, np.int32), features={"length": nan2},
            timestamp=np.asarray(self.t)[order], voters=tuple(names),
            voter=np.asarray([code[v] for v in self.ids], np.int32)[order])
        return table, np.asarray(self.attack)[order]


def _spread(rng: np.random.Generator, k: int, lo: float, hi: float) -> np.ndarray:
    return np.sort(rng.uniform(lo, hi, k))


def base(rng: np.random.Generator, ratings: np.ndarray, *, regulars: int = 300, per_regular: int = 45,
         newcomers: int = 300, days: float = 60.0, among: int | None = None) -> History:
    """Regulars over ``days`` and newcomers (1–4 votes) in the last week."""
    h = History(ratings)
    end = T0 + days * DAY
    for r in range(regulars):
        h.honest(rng, f"anon-reg{r:04d}", _spread(rng, int(rng.poisson(per_regular)) + 1, T0, end), among=among)
    for r in range(newcomers):
        h.honest(rng, f"anon-new{r:04d}", _spread(rng, int(rng.integers(1, 5)), end - 7 * DAY, end), among=among)
    return h


def aged(rng: np.random.Generator, ids: int, per_id: int, *, signed_in: bool = False, honest_first: int = 20,
         days: float = 60.0) -> tuple[History, int]:
    """Ids that vote honestly ``honest_first`` times over weeks, then ``per_id`` times for the target only
    in the last two days (anonymous ids, or signed-in ``hf-`` ones)."""
    ratings = np.asarray(RATINGS)
    h = base(rng, ratings, days=days)
    target, end = 14, T0 + days * DAY
    prefix = "hf-aged" if signed_in else "anon-aged"
    for r in range(ids):
        voter = f"{prefix}{r:04d}"
        h.honest(rng, voter, _spread(rng, honest_first, T0, end - 3 * DAY))
        h.for_target(rng, voter, target, _spread(rng, per_id, end - 2 * DAY, end))
    return h, target


def strong_new_model(rng: np.random.Generator, *, votes: int = 1400, days: float = 60.0) -> tuple[History, int]:
    """A 39th model, 60 Elo above the top, arriving for the last two days; every vote on it is honest
    and comes from ids new to the arena (1–4 votes each)."""
    ratings = np.r_[np.asarray(RATINGS), max(RATINGS) + 60.0]
    target = ratings.size - 1
    h = base(rng, ratings, days=days, among=target)
    end = T0 + days * DAY
    cast, r = 0, 0
    while cast < votes:
        k = int(rng.integers(1, 5))
        h.honest(rng, f"anon-early{r:05d}", _spread(rng, k, end - 2 * DAY, end), with_model=target)
        cast, r = cast + k, r + 1
    return h, target


def small_arena(rng: np.random.Generator, *, voters: int = 250, mean_votes: float = 8.0,
                days: float = 30.0) -> History:
    """A small arena: ``voters`` with a heavy-tailed number of votes (geometric, mean ``mean_votes``),
    each over a random stretch of the period; ~2,000 votes."""
    h = History(np.asarray(RATINGS))
    for r in range(voters):
        k = int(rng.geometric(1.0 / mean_votes))
        first = rng.uniform(T0, T0 + days * DAY)
        h.honest(rng, f"anon-s{r:04d}", _spread(rng, k, first, first + rng.exponential(5 * DAY)))
    return h


def fresh_arena(rng: np.random.Generator, *, ids: int = 150, per_id: int = 2, voters: int = 700,
                days: float = 14.0) -> tuple[History, int]:
    """A new arena where every id is new: ``voters`` honest ids (1–8 votes each over ``days``) and,
    in the last two days, ``ids`` × ``per_id`` votes for the target (``ids`` 0: none)."""
    h = History(np.asarray(RATINGS))
    end = T0 + days * DAY
    for r in range(voters):
        first = rng.uniform(T0, end)
        h.honest(rng, f"anon-f{r:04d}", _spread(rng, int(rng.integers(1, 9)), first, min(end, first + 2 * DAY)))
    target = 14
    for r in range(ids):
        h.for_target(rng, f"anon-fa{r:04d}", target, _spread(rng, per_id, end - 2 * DAY, end))
    return h, target

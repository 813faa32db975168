"""A synthetic vote history with planted voters of known kinds: for tests and the benchmark.

Honest voters vote as the leaderboard's simulator does (Bradley–Terry on the true ratings,
9 % ties, 3 % both bad); the planted kinds are what the quality tests should catch:

- ``both_bad``   always "both bad" (rare-outcome spam);
- ``contrarian`` always the model with the lower true rating;
- ``position_a`` always "A", whatever the models;
- ``random``     A or B at random (a careless clicker; hard to see on a compressed leaderboard).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from sciarena.board.synthetic import simulate
from sciarena.science.quality.check import VoteArrays
from sciarena.votes.schema import OUTCOME_A, OUTCOME_B, OUTCOME_BAD, OUTCOMES

# Overall Elo of the 38 models of the paper's Table 2 (Jan 2026): 830–1151, most pairs
# within 100 points of each other.
TABLE2_RATINGS: tuple[float, ...] = (
    1151.4, 1126.4, 1122.5, 1086.3, 1079.7, 1071.7, 1067.1, 1061.3, 1044.6, 1041.8,
    1036.5, 1036.3, 1028.6, 1025.2, 1020.5, 1018.6, 1014.6, 1010.2, 1009.7, 1006.9,
    1006.9, 1003.5, 1002.6, 1001.9, 989.3, 977.5, 966.4, 966.0, 963.6, 962.7,
    932.8, 927.6, 902.6, 889.8, 884.8, 879.9, 844.3, 829.8,
)
HONEST = "honest"
PLANTED_KINDS: tuple[str, ...] = ("both_bad", "contrarian", "position_a", "random")


@dataclass(frozen=True, eq=False)
class PlantedHistory:
    votes: VoteArrays
    kind: tuple[str, ...]  # per voter code: HONEST or one of PLANTED_KINDS


def planted_history(ratings: Sequence[float] = TABLE2_RATINGS, *, honest_voters: int = 200,
                    planted_per_kind: int = 20, votes_per_voter: tuple[int, int] = (20, 80),
                    kinds: Sequence[str] = PLANTED_KINDS, seed: int = 0) -> PlantedHistory:
    """Honest and planted voters, each with a uniform number of votes in ``votes_per_voter``."""
    rng = np.random.default_rng(seed)
    r = np.asarray(ratings, dtype=np.float64)
    m = r.size
    low, high = votes_per_voter
    honest_sizes = rng.integers(low, high + 1, honest_voters)
    honest = simulate(r, int(honest_sizes.sum()), seed=seed + 1)
    voter = [np.repeat(np.arange(honest_voters), honest_sizes)]
    a, b, outcome = [honest.a.astype(np.int64)], [honest.b.astype(np.int64)], [honest.outcome.astype(np.int64)]
    labels = [HONEST] * honest_voters
    code = honest_voters
    for kind in kinds:
        for _ in range(planted_per_kind):
            n = int(rng.integers(low, high + 1))
            va = rng.integers(0, m, n)
            vb = (va + rng.integers(1, m, n)) % m
            if kind == "both_bad":
                vo = np.full(n, OUTCOME_BAD)
            elif kind == "contrarian":
                vo = np.where(r[va] < r[vb], OUTCOME_A, OUTCOME_B)
            elif kind == "position_a":
                vo = np.full(n, OUTCOME_A)
            elif kind == "random":
                vo = rng.integers(OUTCOME_A, OUTCOME_B + 1, n)
            else:
                raise ValueError(f"unknown kind {kind!r}; known: {', '.join(PLANTED_KINDS)}")
            voter.append(np.full(n, code))
            a.append(va)
            b.append(vb)
            outcome.append(vo)
            labels.append(kind)
            code += 1
    ids = tuple(f"{kind}-{k:04d}" for k, kind in enumerate(labels))
    votes = VoteArrays(tuple(f"model-{i:02d}" for i in range(m)), ids, np.concatenate(voter),
                       np.concatenate(a), np.concatenate(b), np.concatenate(outcome))
    return PlantedHistory(votes, tuple(labels))


def records_from_arrays(votes: VoteArrays, *, start: str = "2026-01-01T00:00:00") -> list[dict[str, Any]]:
    """Vote dicts (as ``sciarena.votes.read.records.load`` returns them) in array order, with timestamps
    that keep that order; the inverse of ``arrays_from_records`` for files and CLI tests."""
    base = np.datetime64(start, "s")
    return [{"id": f"vote-{k:07d}", "modelA": votes.models[a], "modelB": votes.models[b],
             "vote": OUTCOMES[o], "voter_id": votes.voters[v] if v >= 0 else None,
             "timestamp": f"{base + k}Z"}
            for k, (v, a, b, o) in enumerate(zip(votes.voter.tolist(), votes.a.tolist(),
                                                 votes.b.tolist(), votes.outcome.tolist()))]

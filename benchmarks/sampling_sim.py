"""The simulated vote stream behind bench_sampling.py: every seed of one sampler run side by side.

Votes follow Bradley–Terry on the true ratings (9 % ties, 3 % both bad, as ``board.synthetic``), the
k-th battle of a pair in a seed having the same outcome whichever sampler drew it (``pair_uniforms``). The
sampler sees the board as the arena does: a ``SamplerState`` fitted every ``refresh`` votes (the
project's batched Bradley–Terry fit, one call for all seeds), never per vote; between states the pair
chances stay fixed, so a block of votes is drawn at once. ``inverse_sqrt`` follows the battle counts
of every vote in the app; here they are re-read every ``LIVE_BLOCK`` votes (a 10-vote lag).

One model (``profile.added``) joins at a quarter of the stream and one (``profile.removed``) leaves the
pool at half of it (its battles stay in the fit, as a deprecated model's do). Each state is also a
checkpoint, measured on the fit with Fisher-information intervals (±1.96·sd of the centred inverse
Hessian; the project's bootstrap would take hours here; bench_sampling.py compares the two once).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from sciarena.arena.sampling import PairSampler, SamplerState
from sciarena.board import bradley_terry as bt

ELO = 400.0 / math.log(10.0)
Z95 = 1.959964
TIE, BAD = 0.09, 0.03
LIVE_BLOCK = 10
SEPARATED_GAP = 10.0  # Elo: adjacent pairs at least this far apart in truth should be told apart


@dataclass(frozen=True)
class Profile:
    name: str
    ratings: tuple[float, ...]  # true Elo
    added: int  # index of the model that joins at a quarter of the stream
    removed: int  # index of the model that leaves the pool at half of it


@dataclass(frozen=True)
class Curves:
    """Per checkpoint (rows: seeds, columns: ``votes``) what the board would show, scored on the truth."""
    votes: np.ndarray
    top: np.ndarray  # the top model is the true top
    top5: np.ndarray  # the top-5 set is the true top-5 set
    adjacent: np.ndarray  # share of adjacent pairs (true ranks) in the right order
    separated: np.ndarray  # share of adjacent pairs ≥ SEPARATED_GAP apart whose 95 % interval excludes 0
    ci: np.ndarray  # mean 95 % CI width, Elo
    newcomer_half: np.ndarray  # the added model's 95 % CI half-width, Elo (inf before it joins)
    newcomer_listed: np.ndarray  # per seed: votes after it joined until its 100th battle (inf: never)
    join: int
    min_rate: float  # lowest pair chance × number of pairs, over every state any seed used


_GOLDEN, _MIX1, _MIX2 = np.uint64(0x9E3779B97F4A7C15), np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)


def pair_uniforms(seed: int, lo: np.ndarray, hi: np.ndarray, meeting: np.ndarray, stream: int) -> np.ndarray:
    """Uniforms in [0, 1) fixed by (seed, pair, how many times the pair met before, stream): every
    sampler sees the same outcome for the k-th battle of a pair in a seed (common random numbers, so
    differences between samplers are not drowned by luck). splitmix64 on the key, vectorised."""
    key = (np.uint64(seed) << np.uint64(44)) ^ (lo.astype(np.uint64) << np.uint64(36)) \
        ^ (hi.astype(np.uint64) << np.uint64(28)) ^ (meeting.astype(np.uint64) << np.uint64(2)) ^ np.uint64(stream)
    with np.errstate(over="ignore"):
        z = key + _GOLDEN
        z = (z ^ (z >> np.uint64(30))) * _MIX1
        z = (z ^ (z >> np.uint64(27))) * _MIX2
        z = z ^ (z >> np.uint64(31))
    return (z >> np.uint64(11)).astype(np.float64) * 2.0 ** -53


def _outcomes(seed: int, a: np.ndarray, b: np.ndarray, battles: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """Score of ``a`` (1 win, 0 loss, 0.5 tie or both bad) for each battle of a block, in order."""
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    meeting = battles[lo, hi].copy()
    order = np.zeros(a.size, dtype=np.int64)  # earlier battles of the same pair in this block
    seen: dict[tuple[int, int], int] = {}
    for k, key in enumerate(zip(lo.tolist(), hi.tolist())):
        order[k] = seen.get(key, 0)
        seen[key] = order[k] + 1
    meeting = meeting + order
    p_lo = 1.0 / (1.0 + np.exp(-(truth[lo] - truth[hi])))
    undecided = pair_uniforms(seed, lo, hi, meeting, 0) < TIE + BAD
    lo_wins = pair_uniforms(seed, lo, hi, meeting, 1) < np.clip((p_lo - (TIE + BAD) / 2) / (1 - TIE - BAD), 0, 1)
    score_lo = np.where(undecided, 0.5, lo_wins.astype(float))
    return np.where(a == lo, score_lo, 1.0 - score_lo)


def fisher_fit(wins: np.ndarray, battles: np.ndarray, members: np.ndarray,
         start: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """θ (seeds, k) and centred covariance (seeds, k, k) of the ``members`` models, one batched fit."""
    k = members.size
    i, j = np.triu_indices(k, 1)
    w = wins[:, members[i], members[j]]
    n = battles[:, members[i], members[j]]
    ridge = np.where(bt.needs_ridge(i, j, w, n, k), bt.RIDGE, 0.0)
    theta = bt.fit_pairs(i, j, w, n, k, ridge, start)
    p = 1.0 / (1.0 + np.exp(-(theta[:, i] - theta[:, j])))
    info = np.zeros((theta.shape[0], k, k))
    info[:, i, j] = info[:, j, i] = -(n * p * (1 - p))
    diag = np.arange(k)
    info[:, diag, diag] = -info.sum(axis=2) + ridge[:, None]
    centre = np.eye(k) - 1.0 / k
    cov = centre @ np.linalg.pinv(info + 1.0 / k) @ centre  # + 1/k pins the shift (the fit's mean-0 gauge)
    return theta, cov


def _score(theta: np.ndarray, cov: np.ndarray, truth: np.ndarray) -> tuple[np.ndarray, ...]:
    """top, top5, adjacent, separated, ci per seed for one checkpoint (``truth`` Elo of the members)."""
    order = np.argsort(-truth, kind="stable")
    fitted = np.argsort(-theta, axis=1, kind="stable")
    top = fitted[:, 0] == order[0]
    top5 = np.sort(fitted[:, :5], axis=1) == np.sort(order[:5])
    hi, lo = order[:-1], order[1:]
    distinct = truth[hi] != truth[lo]
    gap = theta[:, hi] - theta[:, lo]
    sd = np.sqrt(np.maximum(cov[:, hi, hi] + cov[:, lo, lo] - 2 * cov[:, hi, lo], 1e-18))
    apart = truth[hi] - truth[lo] >= SEPARATED_GAP
    ci = (2 * Z95 * ELO * np.sqrt(np.maximum(np.diagonal(cov, axis1=1, axis2=2), 0))).mean(axis=1)
    return (top, top5.all(axis=1), (gap[:, distinct] > 0).mean(axis=1),
            (gap[:, apart] / sd[:, apart] > Z95).mean(axis=1), ci)


def simulate(profile: Profile, sampler_name: str, seeds: list[int], n_votes: int, refresh: int,
             floor: float | None) -> Curves:
    truth_elo = np.asarray(profile.ratings)
    truth = (truth_elo - 1000.0) / ELO
    m, s = truth.size, len(seeds)
    names = tuple(f"model-{k:02d}" for k in range(m))
    join = (n_votes // 4) // refresh * refresh
    leave = (n_votes // 2) // refresh * refresh
    rngs = [np.random.default_rng([seed, m, sum(map(ord, sampler_name))]) for seed in seeds]  # pair draws
    samplers = [PairSampler(sampler_name, floor) for _ in seeds]
    wins, battles = np.zeros((s, m, m)), np.zeros((s, m, m))
    per_model = np.zeros((s, m))
    checkpoints = list(range(refresh, n_votes + 1, refresh))
    rows = {key: np.zeros((s, len(checkpoints))) for key in ("top", "top5", "adjacent", "separated", "ci")}
    half = np.full((s, len(checkpoints)), np.inf)
    listed = np.full(s, np.inf)
    min_rate, start = math.inf, None
    for v in range(0, n_votes, refresh):
        members = np.array([k for k in range(m) if k != profile.added or v >= join])
        in_pool = [k for k in members if not (k == profile.removed and v >= leave)]
        pool = [names[k] for k in in_pool]
        states = [None] * s
        if v:
            theta, cov = fisher_fit(wins, battles, members, start if start is not None and start.shape[1] == members.size
                              else None)
            start = theta
            c = v // refresh - 1
            scores = _score(theta, cov, truth_elo[members])
            for key, value in zip(rows, scores):
                rows[key][:, c] = value
            if v > join:
                where = int(np.flatnonzero(members == profile.added)[0])
                half[:, c] = Z95 * ELO * np.sqrt(cov[:, where, where])
            ratings = np.full((s, m), np.nan)
            ratings[:, members] = 1000.0 + ELO * theta
            states = [SamplerState(names, ratings[r], battles[r].copy(), per_model[r].copy(), version=v)
                      for r in range(s)]
        for r in range(s):
            block_pairs = []
            for b0 in range(0, refresh, LIVE_BLOCK if sampler_name == "inverse_sqrt" else refresh):
                size = LIVE_BLOCK if sampler_name == "inverse_sqrt" else refresh
                live = {names[k]: int(per_model[r, k]) for k in in_pool}
                w = samplers[r].weights(pool, states[r], live)
                min_rate = min(min_rate, float(w.probability.min() * w.probability.size))
                picks = rngs[r].choice(w.probability.size, size=size, p=w.probability)
                a = np.asarray(in_pool)[w.pair_i[picks]]
                b = np.asarray(in_pool)[w.pair_j[picks]]
                np.add.at(per_model[r], a, 1)
                np.add.at(per_model[r], b, 1)
                block_pairs.append((a, b))
            a = np.concatenate([x for x, _ in block_pairs])
            b = np.concatenate([y for _, y in block_pairs])
            score = _outcomes(seeds[r], a, b, battles[r], truth)
            np.add.at(wins[r], (a, b), score)
            np.add.at(wins[r], (b, a), 1.0 - score)
            np.add.at(battles[r], (a, b), 1)
            np.add.at(battles[r], (b, a), 1)
            if v >= join and not np.isfinite(listed[r]):
                had = per_model[r, profile.added] - ((a == profile.added) | (b == profile.added)).sum()
                seen = np.cumsum((a == profile.added) | (b == profile.added)) + had
                hit = np.flatnonzero(seen >= 100)
                if hit.size:
                    listed[r] = v - join + int(hit[0]) + 1
    return Curves(np.array(checkpoints[:-1]), *(rows[key][:, :-1] for key in rows), half[:, :-1], listed, join,
                  min_rate)

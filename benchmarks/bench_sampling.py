"""Pair-sampling benchmark: how many simulated votes each sampler needs for the same certainty.

38 models with the overall ratings of the paper's Table 2 (830–1151 Elo). Votes are drawn by
Bradley–Terry on the true ratings (9 % ties, 3 % both bad, as ``board.synthetic``), between pairs
drawn by each sampler of ``sciarena.arena.sampling``: ``uniform``, ``inverse_sqrt`` (the original
1/√(1+battles) per side) and ``adaptive``. The stream starts with 37 models; the 38th (true rating
1079.7, fifth best) is added at a quarter of the stream and one model (966.0) is taken out of the
pool at half of it (its battles stay in the fit, as a deprecated model's do).

The sampler sees the board as the arena does: a ``SamplerState`` recomputed every ``--refresh``
votes (the project's Bradley–Terry fit, ``board.bradley_terry.fit_pairs``), never per vote; the
inverse-square-root weights follow the battle counts of every vote, as in the app.

Reported against the number of votes (at checkpoints), per sampler, mean over seeds:

* ``ci``     mean width (Elo) of the models' 95 % intervals. These are Fisher-information intervals
             (±1.96·sd from the inverse Hessian of the fit, centred like the board), because a
             100-round bootstrap per checkpoint would take hours; the last checkpoint of the first
             seed is also computed with the project's bootstrap (``compute_leaderboard``) to show
             the two agree;
* ``adj-ci`` mean width of the 95 % intervals of the rating differences of models adjacent in true
             rank (what decides the displayed ranks);
* ``order``  share of adjacent pairs (true ranks, exact ties in truth skipped) in the right order;
* ``rho``    Spearman ρ of fitted with true ratings;
* ``listed`` votes until every model (the one added included) has 100 battles.

Then: votes each sampler needs to reach uniform's mean CI width at ``--target`` votes (linear
interpolation between checkpoints), the same for the adjacent-difference width, the lowest pair
rate the adaptive sampler ever gave (as a multiple of the uniform rate; the floor is
``--floor``), the best any fixed design could do for either width (a Fisher-information bound, see
``bound``), and the per-battle cost of each sampler against today's ``pairing.sample_pair`` in the same process.

Run:  python benchmarks/bench_sampling.py            # 2 seeds, a few seconds to a minute
      python benchmarks/bench_sampling.py --full     # 10 seeds, the numbers quoted in the README
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # 38×38 problems: BLAS threads only add overhead

import argparse  # noqa: E402
import math  # noqa: E402
import random  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from scipy.stats import spearmanr  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sciarena.arena.pairing import sample_pair  # noqa: E402
from sciarena.arena.sampling import SAMPLERS, PairSampler, SamplerState  # noqa: E402
from sciarena.board import bradley_terry as bt  # noqa: E402
from sciarena.board import compute_leaderboard, table_from_arrays  # noqa: E402
from sciarena.core.types import ModelSpec  # noqa: E402
from sciarena.science.quality.synthetic import TABLE2_RATINGS  # noqa: E402

ELO = 400.0 / math.log(10.0)
Z95 = 1.959964
ADDED, REMOVED = 4, 27  # indices into TABLE2_RATINGS: 1079.7 joins late, 966.0 leaves
TIE, BAD = 0.09, 0.03


@dataclass
class Curve:
    votes: list[int]
    ci: list[float]
    adj_ci: list[float]
    order: list[float]
    rho: list[float]
    listed: int | None
    min_rate: float  # lowest pair probability × number of pairs, over every state the sampler used
    a: np.ndarray
    b: np.ndarray
    outcome: np.ndarray


def fit(wins: np.ndarray, battles: np.ndarray, present: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """θ (natural units, mean 0 over ``present``) and its centred covariance, by the project's fit."""
    idx = np.flatnonzero(present)
    sub_w, sub_n = wins[np.ix_(idx, idx)], battles[np.ix_(idx, idx)]
    i, j = np.triu_indices(idx.size, 1)
    keep = sub_n[i, j] > 0
    i, j = i[keep], j[keep]
    w, n = sub_w[i, j][None, :], sub_n[i, j][None, :]
    ridge = bt.needs_ridge(i, j, w, n, idx.size)
    theta = bt.fit_pairs(i, j, w, n, idx.size, np.where(ridge, bt.RIDGE, 0.0))[0]
    p = 1.0 / (1.0 + np.exp(-(theta[i] - theta[j])))
    info = np.zeros((idx.size, idx.size))
    info[i, j] = info[j, i] = -(n[0] * p * (1 - p))
    np.fill_diagonal(info, -info.sum(axis=1) + (bt.RIDGE if ridge[0] else 0.0))
    centre = np.eye(idx.size) - 1.0 / idx.size
    cov = centre @ np.linalg.pinv(info) @ centre
    full = np.full(wins.shape[0], np.nan)
    full[idx] = theta
    full_cov = np.full(wins.shape, np.nan)
    full_cov[np.ix_(idx, idx)] = cov
    return full, full_cov


def measure(theta: np.ndarray, cov: np.ndarray, truth: np.ndarray) -> tuple[float, float, float, float]:
    rated = np.flatnonzero(np.isfinite(theta))
    sd = np.sqrt(np.diag(cov)[rated])
    ci = float((2 * Z95 * sd * ELO).mean())
    order = rated[np.argsort(-truth[rated], kind="stable")]
    hi, lo = order[:-1], order[1:]
    distinct = truth[hi] != truth[lo]
    hi, lo = hi[distinct], lo[distinct]
    adj_sd = np.sqrt(np.maximum(cov[hi, hi] + cov[lo, lo] - 2 * cov[hi, lo], 0.0))
    adj_ci = float((2 * Z95 * adj_sd * ELO).mean())
    correct = float((theta[hi] > theta[lo]).mean())
    rho = float(spearmanr(theta[rated], truth[rated]).statistic)
    return ci, adj_ci, correct, rho


def run(sampler_name: str, seed: int, n_votes: int, every: int, refresh: int, floor: float) -> Curve:
    truth_elo = np.asarray(TABLE2_RATINGS)
    truth = (truth_elo - 1000.0) / ELO
    m = truth.size
    names = [f"model-{k:02d}" for k in range(m)]
    rng = random.Random(seed)
    np_rng = np.random.default_rng(seed + 10_000)
    sampler = PairSampler(sampler_name, floor)
    wins, battles = np.zeros((m, m)), np.zeros((m, m))
    per_model = np.zeros(m)
    a_log, b_log, o_log = np.zeros(n_votes, np.int64), np.zeros(n_votes, np.int64), np.zeros(n_votes, np.int64)
    curve = Curve([], [], [], [], [], None, math.inf, a_log, b_log, o_log)
    state: SamplerState | None = None
    for v in range(n_votes):
        in_pool = [k for k in range(m) if not (k == ADDED and v < n_votes // 4)
                   and not (k == REMOVED and v >= n_votes // 2)]
        if v % refresh == 0:
            ever = battles.sum(axis=1) > 0
            ratings = np.full(m, np.nan)
            if ever.sum() >= 2:
                theta, _ = fit(wins, battles, ever)
                ratings = 1000.0 + ELO * theta
            state = SamplerState(tuple(names), ratings, battles.copy(), per_model.copy(), version=v)
        pool = [names[k] for k in in_pool]
        counts = {names[k]: int(per_model[k]) for k in in_pool} if sampler_name == "inverse_sqrt" else None
        x, y = sampler.draw(pool, rng, state, counts)
        if sampler_name == "adaptive" and v % refresh == 0:
            w = sampler.weights(pool, state, counts)
            curve.min_rate = min(curve.min_rate, float(w.probability.min() * w.probability.size))
        i, j = names.index(x), names.index(y)
        if rng.random() < 0.5:
            i, j = j, i  # A/B order at random, as the arena shuffles
        p = 1.0 / (1.0 + math.exp(-(truth[i] - truth[j])))
        u = np_rng.random()
        q = TIE + BAD
        if u < TIE:
            outcome, score = 2, 0.5
        elif u < q:
            outcome, score = 3, 0.5
        else:
            win = np_rng.random() < min(max((p - q / 2) / (1 - q), 0.0), 1.0)
            outcome, score = (0, 1.0) if win else (1, 0.0)
        wins[i, j] += score
        wins[j, i] += 1.0 - score
        battles[i, j] += 1
        battles[j, i] += 1
        per_model[i] += 1
        per_model[j] += 1
        a_log[v], b_log[v], o_log[v] = i, j, outcome
        if curve.listed is None and (per_model >= 100).all():
            curve.listed = v + 1
        if (v + 1) % every == 0:
            theta, cov = fit(wins, battles, battles.sum(axis=1) > 0)
            ci, adj_ci, order, rho = measure(theta, cov, truth_elo)
            curve.votes.append(v + 1)
            curve.ci.append(ci)
            curve.adj_ci.append(adj_ci)
            curve.order.append(order)
            curve.rho.append(rho)
    return curve


def votes_to_reach(votes: list[int], widths: list[float], target: float) -> float:
    """First vote count at which the curve falls to ``target`` (linear between checkpoints); inf if never."""
    for k, width in enumerate(widths):
        if width <= target:
            if k == 0:
                return float(votes[0])
            v0, v1, w0, w1 = votes[k - 1], votes[k], widths[k - 1], width
            return v0 + (v1 - v0) * (w0 - target) / (w0 - w1)
    return math.inf


def bound(adjacent: bool = False) -> float:
    """Votes the best fixed pair design needs, as a share of uniform's, to reach uniform's width: of the
    38 models' intervals (``adjacent`` False), or of the differences between models adjacent in true rank
    (``adjacent`` True; the design may use the true order, which no sampler knows). Exponentiated-gradient
    descent on the mean Fisher-information width over the pair shares; a lower bound for any sampler
    whose votes follow a fixed design (an adaptive one approaches the same design as its ratings settle)."""
    r = (np.sort(np.asarray(TABLE2_RATINGS))[::-1] - 1000.0) / ELO
    m = r.size
    i, j = np.triu_indices(m, 1)
    p = 1 / (1 + np.exp(-(r[i] - r[j])))
    w = p * (1 - p)
    # Each width is sqrt(u' C u) for a contrast u: a model against the mean, or a model against the next.
    contrasts = np.eye(m)[:-1] - np.eye(m, k=1)[:-1] if adjacent else np.eye(m)

    def widths(pi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        h = np.zeros((m, m))
        h[i, j] = h[j, i] = -pi * w
        np.fill_diagonal(h, -h.sum(axis=1))
        uc = contrasts @ np.linalg.pinv(h)  # rows: u'C
        return np.sqrt(np.einsum("km,km->k", uc, contrasts)), uc

    uniform = np.full(i.size, 1.0 / i.size)
    pi = uniform.copy()
    for _ in range(2000):
        sd, uc = widths(pi)
        # d(u'Cu)/d(pi_e) = -w_e ((u'C)_i - (u'C)_j)^2
        g = -(((uc[:, i] - uc[:, j]) ** 2) / (2 * sd[:, None])).sum(axis=0) * w / len(sd)
        pi = pi * np.exp(-0.05 * g / np.abs(g).mean())
        pi /= pi.sum()
    return float((widths(pi)[0].mean() / widths(uniform)[0].mean()) ** 2)


def per_battle_cost(floor: float) -> None:
    """µs per battle of each sampler (weights cached per state) against today's ``sample_pair``."""
    m = len(TABLE2_RATINGS)
    names = [f"model-{k:02d}" for k in range(m)]
    specs = [ModelSpec(n, "offline", n) for n in names]
    counts = {n: 300 + k for k, n in enumerate(names)}
    pair_n = np.full((m, m), 30.0)
    np.fill_diagonal(pair_n, 0)
    state = SamplerState(tuple(names), np.asarray(TABLE2_RATINGS), pair_n, pair_n.sum(axis=1), version=1)
    rng = random.Random(0)
    n = 5000
    t0 = time.perf_counter()
    for _ in range(n):
        sample_pair(specs, rng, counts)
    reference = (time.perf_counter() - t0) / n
    print(f"per battle, today's pairing.sample_pair (reference): {reference * 1e6:.1f} µs")
    for name in SAMPLERS:
        sampler = PairSampler(name, floor)
        t0 = time.perf_counter()
        sampler.weights(names, state, counts)
        first = time.perf_counter() - t0
        t0 = time.perf_counter()
        for _ in range(n):
            sampler.draw(names, rng, state, counts)
        each = (time.perf_counter() - t0) / n
        print(f"per battle, {name:12s}: {each * 1e6:7.1f} µs ({each / reference:.2f}× the reference); "
              f"weights for a new board state: {first * 1e3:.2f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--full", action="store_true", help="10 seeds (default 2)")
    parser.add_argument("--seeds", type=int, default=None)
    parser.add_argument("--target", type=int, default=10_000, help="uniform's vote count to match")
    parser.add_argument("--votes", type=int, default=None, help="votes per stream (default 1.5 × target)")
    parser.add_argument("--every", type=int, default=250, help="votes between checkpoints")
    parser.add_argument("--refresh", type=int, default=100, help="votes between board states the sampler sees")
    parser.add_argument("--floor", type=float, default=0.2, help="adaptive sampler's uniform share")
    args = parser.parse_args()
    seeds = args.seeds or (10 if args.full else 2)
    n_votes = args.votes or int(args.target * 1.5)
    print(f"{len(TABLE2_RATINGS)} models (Table 2), {seeds} seed(s), {n_votes:,} votes per stream, "
          f"board state every {args.refresh} votes, adaptive floor {args.floor}; load {os.getloadavg()[0]:.2f}")
    curves: dict[str, list[Curve]] = {name: [] for name in ("uniform", "inverse_sqrt", "adaptive")}
    t0 = time.perf_counter()
    for seed in range(seeds):
        for name in curves:
            curves[name].append(run(name, seed, n_votes, args.every, args.refresh, args.floor))
    print(f"simulated in {time.perf_counter() - t0:.1f} s")
    votes = curves["uniform"][0].votes
    print("\nmean over seeds at each checkpoint: ci = mean 95% CI width (Elo, Fisher), adj-ci = mean 95% CI width "
          "of adjacent rating differences, order = share of adjacent pairs in the right order, rho = Spearman")
    header = "votes  " + "  ".join(f"{name:>36s}" for name in curves)
    print(header)
    print("       " + "  ".join(f"{'ci':>8s}{'adj-ci':>10s}{'order':>9s}{'rho':>9s}" for _ in curves))
    for k, v in enumerate(votes):
        if v % 1000 and v != args.target:
            continue
        cells = []
        for name, runs in curves.items():
            cells.append(f"{np.mean([c.ci[k] for c in runs]):8.1f}{np.mean([c.adj_ci[k] for c in runs]):10.1f}"
                         f"{np.mean([c.order[k] for c in runs]):9.3f}{np.mean([c.rho[k] for c in runs]):9.3f}")
        print(f"{v:6d} " + "  ".join(cells))
    at = votes.index(args.target)
    target_ci = np.mean([c.ci[at] for c in curves["uniform"]])
    target_adj = np.mean([c.adj_ci[at] for c in curves["uniform"]])
    print(f"\nuniform at {args.target:,} votes: mean CI width {target_ci:.1f} Elo, adjacent-difference CI width "
          f"{target_adj:.1f} Elo, adjacent order {np.mean([c.order[at] for c in curves['uniform']]):.3f}")
    for name, runs in curves.items():
        need = [votes_to_reach(c.votes, c.ci, target_ci) for c in runs]
        need_adj = [votes_to_reach(c.votes, c.adj_ci, target_adj) for c in runs]
        listed = [c.listed for c in runs]
        listed_txt = ", ".join("never" if x is None else f"{x:,}" for x in listed)
        at_target_order = np.mean([c.order[at] for c in runs])
        print(f"{name:12s}: votes to uniform's mean CI width {np.mean(need):8,.0f} ({np.mean(need) / args.target:.2f}×)"
              f"; to its adjacent-difference width {np.mean(need_adj):8,.0f} ({np.mean(need_adj) / args.target:.2f}×)"
              f"; adjacent order at {args.target:,}: {at_target_order:.3f}; votes until all listed: {listed_txt}")
    lowest = min(c.min_rate for c in curves["adaptive"])
    print(f"\nadaptive: lowest pair rate seen = {lowest:.3f} × the uniform rate (floor {args.floor}: "
          f"{'above' if lowest >= args.floor - 1e-12 else 'BELOW'} it)")
    print(f"best fixed design (Fisher bound), share of uniform's votes: {bound():.3f} for the mean CI width, "
          f"{bound(adjacent=True):.3f} for the adjacent-difference width (knowing the true order)")
    # The Fisher intervals against the project's bootstrap, once per sampler (last checkpoint, seed 0).
    for name, runs in curves.items():
        c = runs[0]
        table = table_from_arrays([f"model-{k:02d}" for k in range(len(TABLE2_RATINGS))], c.a, c.b, c.outcome)
        board = compute_leaderboard(table, bootstrap=100, seed=0, by=())
        width = np.mean([r.ci_upper - r.ci_lower for r in board.rows])
        print(f"check, {name:12s} seed 0 at {c.votes[-1]:,} votes: bootstrap (100 rounds) mean CI width "
              f"{width:.1f} Elo vs Fisher {c.ci[-1]:.1f}")
    print()
    per_battle_cost(args.floor)


if __name__ == "__main__":
    main()

"""How often does the leaderboard's 95 % interval hold the true rating? (issue 33, item 6)

Histories are drawn here, not by the project's generator: M models with true ratings (Table 2's 38, or
every third of them for 12), V votes per model on average (M·V/2 battles of uniformly random pairs),
each outcome from Bradley–Terry with 10 % ties. True ratings are centred at mean 1000, as the board's
fit is. For each repetition and model: is the true rating inside the interval?

Intervals compared:
- ``default``   the board's (``compute_leaderboard`` with 100 bootstrap rounds: for plain Bradley–Terry the
                point estimate ± 1.96 weak-prior standard deviations, ``bradley_terry.prior_sd``);
- ``boot100``   the board's interval before issue 33: 2.5/97.5 percentiles of 100 bootstrap rounds;
- ``bootN``     the same with N rounds (``--rounds-big N``);
- ``prior``     the N(0, 400²)-prior MAP ± 1.96 standard deviations from the inverse of (Fisher
                information + prior precision), centred (the free shift is no error).

Run:  python benchmarks/bench_coverage.py [--reps 100] [--votes 10,15,30,100] [--models 12,38]
"""

from __future__ import annotations

import os

os.environ["OPENBLAS_NUM_THREADS"] = "1"

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from arena_histories import RATINGS  # noqa: E402

from sciarena.board.bradley_terry import NATURAL_TO_ELO, bootstrap_counts, fit_counts, table_counts, to_elo  # noqa: E402
from sciarena.board.compute import compute_leaderboard  # noqa: E402
from sciarena.board.table import VoteTable  # noqa: E402
from sciarena.science.quality.reference import ridged_fit  # noqa: E402
from sciarena.votes.schema import OUTCOME_A, OUTCOME_B, OUTCOME_TIE  # noqa: E402


def draw(ratings: np.ndarray, n: int, rng: np.random.Generator) -> VoteTable:
    m = ratings.size
    a = rng.integers(0, m, n)
    b = (a + rng.integers(1, m, n)) % m
    p = 1.0 / (1.0 + 10.0 ** ((ratings[b] - ratings[a]) / 400.0))
    tie = rng.random(n) < 0.10
    outcome = np.where(tie, OUTCOME_TIE, np.where(rng.random(n) < p, OUTCOME_A, OUTCOME_B))
    nan2 = np.full((n, 2), np.nan, dtype=np.float32)
    return VoteTable(models=tuple(f"m{k:02d}" for k in range(m)), a=a.astype(np.int32), b=b.astype(np.int32),
                     outcome=outcome.astype(np.int8), subjects=(), subject=np.full(n, -1, np.int32),
                     question_types=(), question_type=np.full(n, -1, np.int32), features={"length": nan2},
                     timestamp=np.full(n, np.nan))


def board_interval(table: VoteTable, rounds: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    lb = compute_leaderboard(table, bootstrap=rounds, seed=seed, by=())
    order = {r.model: k for k, r in enumerate(lb.rows)}
    rows = [lb.rows[order[name]] for name in table.models]
    return np.array([r.ci_lower for r in rows]), np.array([r.ci_upper for r in rows])


def percentile_interval(table: VoteTable, rounds: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    counts = table_counts(table)
    theta, _ = fit_counts(counts)
    boot, _ = bootstrap_counts(counts, rounds, seed, start=theta)
    lo, hi = np.percentile(to_elo(boot), [2.5, 97.5], axis=0)
    return lo, hi


def prior_interval(table: VoteTable) -> tuple[np.ndarray, np.ndarray]:
    m = len(table.models)
    theta, cov = ridged_fit(m, table.a.astype(np.int64), table.b.astype(np.int64), table.outcome.astype(np.int64))
    centre = np.eye(m) - 1.0 / m
    sd = np.sqrt(np.diag(centre @ cov @ centre))
    elo = 1000.0 + NATURAL_TO_ELO * theta
    return elo - 1.96 * NATURAL_TO_ELO * sd, elo + 1.96 * NATURAL_TO_ELO * sd


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--votes", default="10,15,30,100", help="votes per model")
    ap.add_argument("--models", default="12,38")
    ap.add_argument("--rounds-big", type=int, default=0, help="also the board's interval with this many rounds")
    ap.add_argument("--seed", type=int, default=500)
    args = ap.parse_args()
    print(f"{args.reps} repetitions a row; coverage of the true rating (all models pooled; worst single model)")
    names = ["default", "boot100"] + (["boot%d" % args.rounds_big] if args.rounds_big else []) + ["prior"]
    print(f"{'models':>6} {'votes/model':>11} " + " ".join(f"{n:>18}" for n in names) + "  mean width default/boot100")
    for m in (int(x) for x in args.models.split(",")):
        ratings = np.asarray(RATINGS) if m == 38 else np.asarray(RATINGS)[::3][:m]
        true = ratings - ratings.mean() + 1000.0
        for v in (int(x) for x in args.votes.split(",")):
            started = time.perf_counter()
            rng = np.random.default_rng(args.seed + 1000 * m + v)
            hits = {n: [] for n in names}
            widths = {n: [] for n in names}
            for rep in range(args.reps):
                table = draw(ratings, m * v // 2, rng)
                intervals = {"default": board_interval(table, 100, rep), "prior": prior_interval(table),
                             "boot100": percentile_interval(table, 100, rep)}
                if args.rounds_big:
                    intervals[names[2]] = percentile_interval(table, args.rounds_big, rep)
                for n in names:
                    lo, hi = intervals[n]
                    hits[n].append((lo <= true) & (true <= hi))
                    widths[n].append(np.nanmean(hi - lo))
            cells = []
            for n in names:
                h = np.array(hits[n])
                cells.append(f"{h.mean():.3f} (worst {h.mean(axis=0).min():.2f})")
            print(f"{m:>6} {v:>11} " + " ".join(f"{c:>18}" for c in cells)
                  + f"  {np.mean(widths['default']):.0f}/{np.mean(widths['boot100']):.0f}"
                  + f"   [{time.perf_counter() - started:.0f} s]")


if __name__ == "__main__":
    main()

"""Voter-quality benchmark: planted voters in a synthetic SciArena-like history.

The 38 overall ratings of the paper's Table 2 (830–1151 Elo), honest voters voting by
Bradley–Terry on them (9 % ties, 3 % both bad), 20–80 votes each, and planted voters
(20 of each kind, 20–80 votes): always "both bad", always the weaker model, always "A",
A/B at random. For each history size and seed it prints, for A.5 alone and for all three
tests under Holm: the detection rate per planted kind and the honest false-positive rate
(which must stay ≤ α).

Then the cost of the consensus test's leave-one-voter-out fits: batched and warm-started
(what the package does) against a naive reference in the same process, a fresh
Bradley–Terry fit from scratch on everybody else's votes for each voter, with the
largest difference between the two in Elo; and, for comparison, the cheapest
approximation (one shared Newton step from the fit to everyone: θ₋ᵥ ≈ θ̂ − H⁻¹ gᵥ, the
influence function) with its error.

Run:  python benchmarks/bench_quality.py [--honest 200,1000] [--seeds 3] [--alpha 0.05]
"""

from __future__ import annotations

import os

os.environ["OPENBLAS_NUM_THREADS"] = "1"  # small problems: BLAS threads only add overhead

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sciarena.board.bradley_terry import NATURAL_TO_ELO, aggregate, fit_counts  # noqa: E402
from sciarena.science.quality.check import A5, TESTS, check_votes  # noqa: E402
from sciarena.science.quality.directional import leave_out_strengths  # noqa: E402
from sciarena.science.quality.synthetic import HONEST, PLANTED_KINDS, planted_history  # noqa: E402


def detection(honest: int, seeds: int, alpha: float) -> None:
    kinds = (HONEST,) + PLANTED_KINDS
    totals = {name: {k: [0, 0] for k in kinds} for name in ("A.5 alone", "A.5 + directional (Holm)")}
    honest_votes = []
    for seed in range(seeds):
        history = planted_history(honest_voters=honest, planted_per_kind=20, seed=seed)
        kind = dict(zip(history.votes.voters, history.kind))
        honest_codes = np.flatnonzero(np.array(history.kind) == HONEST)
        honest_votes.append(int(np.isin(history.votes.voter, honest_codes).sum()))
        for name, tests in (("A.5 alone", (A5,)), ("A.5 + directional (Holm)", TESTS)):
            report = check_votes(history.votes, alpha=alpha, seed=seed, tests=tests)
            for voter in report.voters:
                cell = totals[name][kind[voter.voter_id]]
                cell[0] += voter.flagged
                cell[1] += 1
    print(f"\n{honest} honest voters ({min(honest_votes):,}–{max(honest_votes):,} honest votes), "
          f"20 planted voters per kind, "
          f"{seeds} seed(s), α = {alpha:g}")
    print(f"{'tests':<26}" + "".join(f"{k:>14}" for k in kinds))
    for name, row in totals.items():
        cells = "".join(f"{f'{n / d:.3f} ({n}/{d})':>14}" for n, d in (row[k] for k in kinds))
        print(f"{name:<26}{cells}")
    print("(honest column: false-positive rate; others: detection rate)")


def timing(honest: int) -> None:
    history = planted_history(honest_voters=honest, planted_per_kind=20, seed=0)
    v = history.votes
    n_voters, n_models = len(v.voters), len(v.models)

    def batched() -> np.ndarray:
        return leave_out_strengths(v.voter, v.a, v.b, v.outcome, n_models, n_voters)[0]

    def naive() -> np.ndarray:
        decisive = v.outcome < 2
        out = np.empty((n_voters, n_models))
        for code in range(n_voters):
            keep = decisive & (v.voter != code)
            out[code] = fit_counts(aggregate(v.a[keep], v.b[keep], v.outcome[keep], n_models))[0]
        return out

    def one_step() -> np.ndarray:
        decisive = v.outcome < 2
        counts = aggregate(v.a[decisive], v.b[decisive], v.outcome[decisive], n_models)
        theta = fit_counts(counts)[0]
        wins, battles = counts.totals()
        mu_pair = 1.0 / (1.0 + np.exp(-(theta[counts.pair_i] - theta[counts.pair_j])))
        w = battles[0] * mu_pair * (1.0 - mu_pair)
        hess = np.zeros((n_models, n_models))
        np.add.at(hess, (counts.pair_i, counts.pair_j), -w)
        np.add.at(hess, (counts.pair_j, counts.pair_i), -w)
        hess[np.diag_indices(n_models)] -= hess.sum(axis=1)
        hess += 1.0 / n_models
        own = decisive & (v.voter >= 0)
        va, vb, vv = v.a[own], v.b[own], v.voter[own]
        resid = (v.outcome[own] == 0) - 1.0 / (1.0 + np.exp(-(theta[va] - theta[vb])))
        grad = (np.bincount(vv * n_models + va, resid, n_voters * n_models)
                - np.bincount(vv * n_models + vb, resid, n_voters * n_models)).reshape(n_voters, n_models)
        return theta[None] - np.linalg.solve(hess, grad.T).T

    fast_s = []
    for _ in range(3):
        t = time.perf_counter()
        fast = batched()
        fast_s.append(time.perf_counter() - t)
    t = time.perf_counter()
    slow = naive()
    slow_s = time.perf_counter() - t
    t = time.perf_counter()
    approx = one_step()
    approx_s = time.perf_counter() - t
    t = time.perf_counter()
    check_votes(v, seed=0)
    whole_s = time.perf_counter() - t
    diff = np.abs(fast - slow).max() * NATURAL_TO_ELO
    print(f"\nleave-one-voter-out Bradley–Terry, {n_voters} voters, {v.n_votes:,} votes, {n_models} models:")
    print(f"  batched, warm-started (best of 3): {min(fast_s):.3f} s")
    print(f"  naive fresh fit per voter:          {slow_s:.3f} s   ratio {slow_s / min(fast_s):.1f}×")
    print(f"  largest difference: {diff:.2e} Elo")
    print(f"  one shared Newton step (approximation): {approx_s:.3f} s, "
          f"largest error {np.abs(approx - slow).max() * NATURAL_TO_ELO:.3f} Elo")
    print(f"  whole check (A.5 + position + consensus + Holm + report): {whole_s:.3f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--honest", default="200,1000", help="honest voter counts, comma-separated")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--alpha", type=float, default=0.05)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    sizes = [int(x) for x in args.honest.split(",")]
    for honest in sizes:
        detection(honest, args.seeds, args.alpha)
    timing(max(sizes))


if __name__ == "__main__":
    main()

"""Rigging benchmark: what the published attacks (Min et al., ICML 2025) buy on the default board.

Histories from ``sciarena.science.quality.rigging.rigged_history``: the paper's Table 2 ratings,
400 established voters × 40 votes over 60 days and 200 honest newcomers (1–5 votes in the last week),
about 16,600 honest votes; the target is Table 2's rank 15 (1020.5 Elo). Attacks by k fresh ids × m
votes: target-only, omnipresent (battles without the target), slow (target-only over four weeks),
mixed (honest except when the target plays).

For each row: the target's Elo and rank on the undefended board (every vote, Bradley–Terry point fit)
and on the default board (``vouch.vouched``: campaign detection, then the voter checks on the rest),
both against the same seed's honest history on the default board (mean, and the worst |change| over
seeds). The change is split in two: *cost* — the honest votes alone, less the honest ones the attacked
board leaves out (noise from removing honest votes: the models next to the target are a few Elo apart,
so even −1 Elo can cost ranks) — and *leak* — the honest board plus the attack votes that got through.
Then the detection rate (seeds with a campaign found), the share of attack votes left out (for the
mixed attack most of its votes are honest ones and rightly count), and what honest newcomers lose:
the share of their votes that count (they count from the first vote; only those inside a campaign's
window go), and of all honest votes cast by voters still without a history (the tier rule's "new"
votes, flagged established voters' early votes included). Last, the honest false-positive rate:
seeds of honest histories in which any campaign is reported (it must stay at or below α).

Run:  python benchmarks/bench_rigging.py            (short: 3 seeds, the done-when rows, 10 honest seeds)
      python benchmarks/bench_rigging.py --full     (every k·m from 25 to 2000, 5 seeds, 100 honest seeds)
      python benchmarks/bench_rigging.py --floor    (the smallest campaigns found, 10 seeds a row)
"""

from __future__ import annotations

import os

os.environ["OPENBLAS_NUM_THREADS"] = "1"  # small problems: BLAS threads only add overhead

import argparse  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sciarena.board.bradley_terry import fit_counts, table_counts, to_elo  # noqa: E402
from sciarena.board.table import VoteTable  # noqa: E402
from sciarena.science.quality.campaign import new_votes  # noqa: E402
from sciarena.science.quality.report import DEFAULT_ALPHA  # noqa: E402
from sciarena.science.quality.rigging import rigged_history  # noqa: E402
from sciarena.science.quality.vouch import vouch_mask, vouched  # noqa: E402

SHORT = [("target", 300, 2), ("omnipresent", 300, 2), ("slow", 300, 2), ("mixed", 300, 2),
         ("target", 100, 1), ("target", 1000, 2)]
FULL = [(attack, k, m) for attack in ("target", "omnipresent", "slow", "mixed")
        for k, m in ((100, 1), (50, 2), (300, 2), (200, 5), (1000, 2), (400, 5))] + [
    ("target", 25, 1), ("target", 50, 1), ("mixed", 1000, 1), ("mixed", 2000, 1)]

FLOOR = [("target", k, 1) for k in (20, 25, 30, 35, 40, 50)] + [("mixed", k, 2) for k in (100, 200, 300, 500)]


def standing(table: VoteTable, model: str) -> tuple[float, int]:
    """(Elo, 1-based rank) of ``model`` on a Bradley–Terry point fit of ``table``."""
    theta, _ = fit_counts(table_counts(table))
    elo = to_elo(theta)
    i = table.models.index(model)
    return float(elo[i]), int((elo > elo[i]).sum()) + 1


def kept_mask(table: VoteTable, board: VoteTable) -> np.ndarray:
    """Which votes of ``table`` are on ``board`` (vouched keeps order; matched by time, unique here)."""
    return np.isin(table.timestamp, board.timestamp)


def row(attack: str, k: int, m: int, seeds: int, alpha: float) -> dict[str, object]:
    """One attack row over ``seeds``. The target's change on the default board is split in two: the
    board of the honest votes only, less the honest votes the attacked board leaves out (what the
    defence costs: ``cost``), and the honest board plus the attack votes that got through (``leak``)."""
    got: dict[str, list[float]] = {key: [] for key in (
        "d_raw", "d_board", "r0", "r_raw", "r_board", "found", "left_out", "newcomer_kept", "new_kept",
        "campaigns", "d_cost", "r_cost", "d_leak", "r_leak")}
    for seed in range(seeds):
        honest = rigged_history(None, seed=seed)
        name = honest.table.models[honest.target]
        honest_drop, _ = vouch_mask(honest.table, alpha=alpha)
        elo0, rank0 = standing(honest.table.subset(~honest_drop), name)
        rig = rigged_history(attack, k, m, seed=seed)
        board = vouched(rig.table, alpha=alpha)
        elo_raw, rank_raw = standing(rig.table, name)
        elo_b, rank_b = standing(board, name)
        kept = kept_mask(rig.table, board)
        attackers = rig.kind == 2
        newcomers = rig.kind == 1
        honest_kept = np.zeros(rig.table.n_votes, dtype=bool)  # what the honest board counts, in rig's order
        honest_kept[np.flatnonzero(~attackers)] = ~honest_drop
        elo_c, rank_c = standing(rig.table.subset(~attackers & kept), name)
        elo_l, rank_l = standing(rig.table.subset(honest_kept | (attackers & kept)), name)
        new = new_votes(rig.table.voters, rig.table.voter, rig.table.timestamp) & ~attackers
        assert board.excluded is not None
        got["d_raw"].append(elo_raw - elo0)
        got["d_board"].append(elo_b - elo0)
        got["r0"].append(rank0)
        got["r_raw"].append(rank0 - rank_raw)
        got["r_board"].append(rank0 - rank_b)
        got["d_cost"].append(elo_c - elo0)
        got["r_cost"].append(rank0 - rank_c)
        got["d_leak"].append(elo_l - elo0)
        got["r_leak"].append(rank0 - rank_l)
        got["found"].append(board.excluded.campaigns > 0)
        got["campaigns"].append(board.excluded.campaigns)
        got["left_out"].append(1.0 - kept[attackers].mean())
        got["newcomer_kept"].append(kept[newcomers].mean())
        got["new_kept"].append(kept[new].mean())
    return {key: (float(np.mean(v)), float(np.max(np.abs(v)))) for key, v in got.items()}


def false_positives(seeds: int, alpha: float) -> tuple[int, int, float, float]:
    """(honest seeds with a campaign reported, seeds, share of honest votes left out as campaigns,
    share of honest newcomers' votes counted)."""
    hits, lost, newcomers_kept = 0, [], []
    for seed in range(1000, 1000 + seeds):
        honest = rigged_history(None, seed=seed)
        table = honest.table
        board = vouched(table, alpha=alpha)
        assert board.excluded is not None
        hits += board.excluded.campaigns > 0
        lost.append(board.excluded.campaign_votes / table.n_votes)
        newcomers_kept.append(kept_mask(table, board)[honest.kind == 1].mean())
    return hits, seeds, float(np.mean(lost)), float(np.mean(newcomers_kept))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="every attack size, more seeds")
    parser.add_argument("--alpha", type=float, default=DEFAULT_ALPHA)
    parser.add_argument("--floor", action="store_true",
                        help="only the smallest campaigns found: target-only and mixed rows by size")
    args = parser.parse_args(argv)
    rows, seeds, honest_seeds = (FULL, 5, 100) if args.full else (SHORT, 3, 10)
    if args.floor:
        rows, seeds, honest_seeds = FLOOR, 10, 0
    print(f"target: Table 2 rank 15; {seeds} seed(s) per row; α = {args.alpha:g}")
    print("Elo/rank changes are against the same seed's honest history on the default board "
          "(mean; 'worst' = largest |change| over seeds; +rank = climbed).")
    print("undef = every vote counted; board = the default board; cost = honest votes only, less the honest "
          "ones the attacked board leaves out; leak = honest board plus the attack votes that got through.")
    head = (f"{'attack':<12}{'k×m':>10}{'ΔElo undef':>11}{'ΔElo board':>11}{'worst':>6}{'Δrank undef':>12}"
            f"{'Δrank board':>12}{'worst':>6}{'cost Elo/rank':>14}{'leak Elo/rank':>14}{'detected':>9}"
            f"{'left out':>9}{'newcomers kept':>15}{'new kept':>9}")
    print(head)
    for attack, k, m in rows:
        r = row(attack, k, m, seeds, args.alpha)
        cost = f"{r['d_cost'][1]:.1f}/{r['r_cost'][1]:.0f}"
        leak = f"{r['d_leak'][1]:.1f}/{r['r_leak'][1]:.0f}"
        print(f"{attack:<12}{f'{k}×{m}':>10}{r['d_raw'][0]:>+11.1f}{r['d_board'][0]:>+11.1f}{r['d_board'][1]:>6.1f}"
              f"{r['r_raw'][0]:>+12.1f}{r['r_board'][0]:>+12.1f}{r['r_board'][1]:>6.0f}"
              f"{cost:>14}{leak:>14}"
              f"{r['found'][0]:>9.0%}{r['left_out'][0]:>9.0%}{r['newcomer_kept'][0]:>15.1%}{r['new_kept'][0]:>9.1%}")
    print("cost/leak columns: worst |change| over seeds.")
    if not honest_seeds:
        return 0
    hits, n, lost, kept = false_positives(honest_seeds, args.alpha)
    print(f"honest histories with a campaign reported: {hits} of {n} seeds ({hits / n:.0%}; α = {args.alpha:g}); "
          f"honest votes left out as campaigns: {lost:.2%} on average; honest newcomers' votes counted: {kept:.1%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

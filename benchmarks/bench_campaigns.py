"""Does the campaign filter only ever help? Cases of issue 33 on histories from arena_histories.py
(a generator written apart from the project's own).

Per case, over seeds the filter was not tuned on (default 100–109): the target's Elo and rank change
against the board of the honest votes alone (every honest vote counted), on the default board
(``vouch.vouch_mask``) and with every vote counted; the honest votes the default board leaves out; and
false campaigns (any campaign on a model other than the target; on histories without an attack, any
campaign at all). Cases:

- ``honest``        regulars and newcomers only (the target: Table 2's rank 15);
- ``aged 30x20``    30 ids vote honestly 20 times over weeks, then 20 times each for the target;
- ``aged 300x2``    300 such ids, 2 target votes each;
- ``signed-in``     120 signed-in (hf-) ids with 5 honest votes, then 5 for the target;
- ``new model``     a 39th model 60 Elo above the top, only in the last 2 days, ~1,400 honest votes
                    from new ids ("kept" = the share of its votes the default board counts);
- ``fresh``         a new arena, every id new (3,000 honest ids, ~13,500 votes over 14 days) and 150 ids × 2
                    votes for the target in the last 2 days; ``fresh honest``: the same without them;
- ``small``         250 casual voters (~2,000 votes): seeds with any false campaign (``--small-seeds``);
- ``casual``        600 casual voters (~8,000 votes, a reference of ~70 battles per model): the same
                    (``--casual-seeds``, from seed 300).

Run:  python benchmarks/bench_campaigns.py [--seeds 100-109] [--small-seeds 40]
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
sys.path.insert(0, str(ROOT / "benchmarks"))

import arena_histories as gen  # noqa: E402

from sciarena.board.bradley_terry import fit_counts, table_counts, to_elo  # noqa: E402
from sciarena.board.table import VoteTable  # noqa: E402
from sciarena.science.quality.campaign import detect_campaigns  # noqa: E402
from sciarena.science.quality.vouch import vouch_mask  # noqa: E402


def standing(table: VoteTable, keep: np.ndarray, model: int) -> tuple[float, int]:
    elo = to_elo(fit_counts(table_counts(table, keep))[0])
    return float(elo[model]), int((elo > elo[model]).sum()) + 1


def case(name: str, seed: int) -> tuple[VoteTable, np.ndarray, int]:
    rng = np.random.default_rng(seed)
    if name == "honest":
        h, target = gen.base(rng, np.asarray(gen.RATINGS)), 14
    elif name == "aged 30x20":
        h, target = gen.aged(rng, 30, 20)
    elif name == "aged 300x2":
        h, target = gen.aged(rng, 300, 2)
    elif name == "signed-in":
        h, target = gen.aged(rng, 120, 5, signed_in=True, honest_first=5)
    elif name == "new model":
        h, target = gen.strong_new_model(rng)
    elif name == "small":
        h, target = gen.small_arena(rng), 14
    elif name == "fresh":
        h, target = gen.fresh_arena(rng, voters=3000)
    elif name == "fresh honest":
        h, target = gen.fresh_arena(rng, ids=0, voters=3000)
    elif name == "casual":
        h, target = gen.small_arena(rng, voters=600, mean_votes=14), 14
    else:
        raise ValueError(name)
    table, attack = h.table()
    return table, attack, target


def measure(name: str, seed: int) -> dict[str, float]:
    table, attack, target = case(name, seed)
    every = np.ones(table.n_votes, dtype=bool)
    elo0, rank0 = standing(table, ~attack, target)
    drop, excluded = vouch_mask(table)
    elo_d, rank_d = standing(table, ~drop, target)
    elo_e, rank_e = standing(table, every, target)
    found = detect_campaigns(table.models, table.voters, table.voter.astype(np.int64), table.a, table.b,
                             table.outcome, table.timestamp)
    false = sum(1 for c in found.campaigns if attack.sum() == 0 or c.model != table.models[target])
    hit = any(c.model == table.models[target] and not c.counted_again for c in found.campaigns) and attack.any()
    on_target = (table.a == target) | (table.b == target)
    return {"d_default": elo_d - elo0, "d_every": elo_e - elo0, "r_default": rank_d - rank0,
            "r_every": rank_e - rank0, "honest_out": float((drop & ~attack).sum()),
            "honest_share": float((drop & ~attack).sum() / max((~attack).sum(), 1)),
            "kept_target": float((~drop & on_target & ~attack).sum() / max((on_target & ~attack).sum(), 1)),
            "false": float(false), "found": float(hit), "guarded": float(getattr(excluded, "campaigns_counted_again", 0))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="100-109", help="first-last seed (inclusive)")
    ap.add_argument("--small-seeds", type=int, default=40, help="small-arena seeds (from the first seed)")
    ap.add_argument("--casual-seeds", type=int, default=40, help="casual-arena seeds (from seed 300)")
    ap.add_argument("--cases", default="honest,aged 30x20,aged 300x2,signed-in,new model,fresh,fresh honest")
    args = ap.parse_args()
    first, last = (int(x) for x in args.seeds.split("-"))
    seeds = range(first, last + 1)
    print(f"seeds {first}–{last}; Δ against the honest votes alone (every honest vote counted); ΔElo default: "
          "mean / worst |Δ|; Δrank < 0: the target climbed")
    print(f"{'case':<12} {'ΔElo default':>16} {'ΔElo every':>11} {'Δrank def':>10} {'Δrank every':>11} "
          f"{'honest out':>11} {'kept on target':>15} {'false':>6} {'counted again':>13} {'found':>6}")
    for name in [c for c in args.cases.split(",") if c]:
        started = time.perf_counter()
        rows = [measure(name, s) for s in seeds]
        col = {k: np.array([r[k] for r in rows]) for k in rows[0]}
        print(f"{name:<12} {col['d_default'].mean():+7.1f} / {np.abs(col['d_default']).max():5.1f} "
              f"{col['d_every'].mean():+11.1f} {col['r_default'].mean():+10.1f} {col['r_every'].mean():+11.1f} "
              f"{col['honest_out'].mean():7.0f} ({100 * col['honest_share'].mean():.1f}%) "
              f"{100 * col['kept_target'].mean():14.1f}% {int((col['false'] > 0).sum()):>3}/{len(rows)} "
              f"{int(col['guarded'].sum()):>13} {int(col['found'].sum()):>3}/{len(rows)}"
              f"   [{time.perf_counter() - started:.0f} s]")
    for name, count, start in (("small", args.small_seeds, first), ("casual", args.casual_seeds, 300)):
        if not count:
            continue
        started = time.perf_counter()
        rows = [measure(name, s) for s in range(start, start + count)]
        bad = [r for r in rows if r["false"] > 0]
        moves = [abs(r["d_default"] - r["d_every"]) for r in rows]
        print(f"{name} arena: {len(bad)} of {len(rows)} seeds with a false campaign; "
              f"largest |default − every| on the target {max(moves):.1f} Elo; mean honest votes left out "
              f"{np.mean([r['honest_out'] for r in rows]):.1f}   [{time.perf_counter() - started:.0f} s]")


if __name__ == "__main__":
    main()

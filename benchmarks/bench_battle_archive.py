"""What opening a battle's link and "My battles" cost over a large vote store (votes/read/battles.py).

    python benchmarks/bench_battle_archive.py                 # 2,000 votes in 4 shards (seconds)
    python benchmarks/bench_battle_archive.py --votes 50000   # the long run

Writes synthetic vote records (every VOTE_FIELDS key, two cited references of ~1,200 characters each) into
shards, then times, in this process: the first scan (every shard summarised), a repeated "My battles"
listing and a shared-battle lookup with nothing changed (the summaries are reused; the lookup reads its
one shard again), and a listing after one shard grew by one vote (only that shard is summarised again).
Printed as seconds and as ratios against the first scan, which is the reference.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sciarena.votes.read.battles import BattleArchive  # noqa: E402
from sciarena.votes.schema import VOTE_FIELDS  # noqa: E402


def record(i: int) -> dict[str, object]:
    cited = [{"number": n, "id": f"p{i}-{n}", "concise_authors": "Curie et al. 1903", "title": f"Paper {n} of {i}",
              "authors": "Marie Curie, Pierre Curie", "year": 1903, "venue": "Nature", "url": None,
              "content": "A passage of retrieved text. " * 40} for n in (1, 2)]
    out: dict[str, object] = {name: None for name in VOTE_FIELDS}
    out |= {"id": f"battle-{i:07d}", "question": f"Question number {i} about genome editing?",
            "responseA": "An answer citing [1] and [2]. " * 20, "responseB": "Another answer [1]. " * 20,
            "modelA": "Model X", "modelB": "Model Y", "vote": "A", "citations_a": cited, "citations_b": cited[:1],
            "voter_id": f"anon-{i % 500:016x}", "timestamp": f"2026-06-{1 + i % 28:02d}T12:00:00.000Z",
            "shared": i % 3 == 0, "shared_reason": False, "schema_version": 4}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--votes", type=int, default=2000)
    parser.add_argument("--shards", type=int, default=4)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        shards = [Path(tmp) / f"votes-{k}.jsonl" for k in range(args.shards)]
        for i in range(args.votes):
            with open(shards[i % args.shards], "a", encoding="utf-8") as handle:
                handle.write(json.dumps(record(i)) + "\n")
        size = sum(p.stat().st_size for p in shards)
        archive = BattleArchive(lambda: shards)
        me = ["anon-" + f"{7:016x}"]

        start = time.perf_counter()
        first = archive.for_voter(me)
        scan = time.perf_counter() - start
        start = time.perf_counter()
        again = archive.for_voter(me)
        cached = time.perf_counter() - start
        start = time.perf_counter()
        found = archive.shared("battle-0000003")
        lookup = time.perf_counter() - start
        with open(shards[0], "a", encoding="utf-8") as handle:
            handle.write(json.dumps(record(args.votes)) + "\n")
        start = time.perf_counter()
        archive.for_voter(me)
        grown = time.perf_counter() - start

    assert first == again and found is not None and "voter_id" not in found
    print(f"{args.votes:,} votes in {args.shards} shards, {size / 1e6:.1f} MB; this voter has {len(first)} battles")
    print(f"first scan (reference):            {scan:8.3f} s   1.00")
    print(f"My battles again, nothing changed:  {cached:8.4f} s   {cached / scan:.3f} of the first scan")
    print(f"a shared battle by id:             {lookup:8.4f} s   {lookup / scan:.3f}")
    print(f"My battles after one shard grew:   {grown:8.4f} s   {grown / scan:.3f}")


if __name__ == "__main__":
    main()

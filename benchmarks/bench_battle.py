"""Battle overhead and the offline arena's own timings.

1. Real-model path: two models on a loopback OpenAI-compatible server with known latency.
   Reference, same process: each model's stream consumed alone (the slower one is the floor a
   battle can reach) and both consumed one after the other (FastChat's defect). Reports the
   overhead the app adds beyond the slower provider (target ≤ 50 ms) and the concurrency ratio.
2. Offline arena: app start (services + UI), retrieval latency on the demo corpus, one offline battle.

Run: python benchmarks/bench_battle.py [--rounds 10]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from fake_openai import FakeOpenAI  # noqa: E402

from sciarena.arena.pairing import new_battle  # noqa: E402
from sciarena.arena.runner import BattleRunner  # noqa: E402
from sciarena.core.settings import Settings  # noqa: E402
from sciarena.core.types import GenerationRequest, ModelSpec, Paper, Passage, Reference, Retrieval  # noqa: E402
from sciarena.providers.openai_compat import OpenAICompatibleProvider  # noqa: E402
from sciarena.ui.render import EXAMPLE_QUESTIONS  # noqa: E402


def drain(provider, spec, request) -> float:
    start = time.perf_counter()
    for _ in provider.stream(spec, request):
        pass
    return time.perf_counter() - start


def real_model_overhead(rounds: int) -> None:
    paper = Paper("p1", "A paper", ("Ann Author",), year=2020)
    refs = (Reference(1, paper, (Passage("p1#0", paper, "Some relevant context.", 0, 1.0),)),)
    request = GenerationRequest("What does the paper say?", refs)
    fast = ModelSpec("Fast", "loop", "fast")
    slow = ModelSpec("Slow", "loop", "slow")
    with FakeOpenAI() as server:
        # fast: 0.1 s to first token + 20 × 10 ms; slow: 0.3 s + 40 × 15 ms  → about 0.3 s and 0.9 s.
        server.add_script("fast", tuple(f"word{i} [1] " for i in range(20)), first_token_delay_s=0.1, chunk_delay_s=0.01)
        server.add_script("slow", tuple(f"word{i} [1] " for i in range(40)), first_token_delay_s=0.3, chunk_delay_s=0.015)
        provider = OpenAICompatibleProvider(name="loop", base_url=server.base_url, api_key="sk-bench")
        provider.warm_up()
        runner = BattleRunner({"loop": provider})
        retrieval = Retrieval("q", refs, "bench")
        drain(provider, fast, request)  # warm the connection pool
        alone_fast, alone_slow, sequential, battle_times, first_fast = [], [], [], [], []
        for _ in range(rounds):
            alone_fast.append(drain(provider, fast, request))
            alone_slow.append(drain(provider, slow, request))
            start = time.perf_counter()
            drain(provider, fast, request)
            drain(provider, slow, request)
            sequential.append(time.perf_counter() - start)
            start = time.perf_counter()
            for progress in runner.run(new_battle("q", retrieval, (fast, slow), created_at=time.time()), request):
                pass
            battle_times.append(time.perf_counter() - start)
            first_fast.append(progress.battle.side_a.first_token_s)
    med = statistics.median
    floor = med(alone_slow)
    print("== Real-model battle on a loopback OpenAI-compatible server ==")
    print(f"fast model alone           {med(alone_fast) * 1000:7.0f} ms")
    print(f"slow model alone (floor)   {floor * 1000:7.0f} ms")
    print(f"both one after the other   {med(sequential) * 1000:7.0f} ms   (reference: streams read in turn)")
    print(f"battle (both concurrently) {med(battle_times) * 1000:7.0f} ms   "
          f"= {med(battle_times) / med(sequential):.2f} × sequential")
    print(f"overhead beyond the slower provider: median {(med(battle_times) - floor) * 1000:.1f} ms "
          f"(per-round battle − slow-alone: {[round((b - s) * 1000) for b, s in zip(battle_times, alone_slow)]})"
          f"  target ≤ 50 ms")
    print(f"fast side's first token inside the battle: median {med(first_fast) * 1000:.0f} ms "
          f"(its server delay is 100 ms; the slow side's is 300 ms)")


def offline_arena() -> None:
    from sciarena.ui import build_app
    from sciarena.wiring import build_services

    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        services = build_services(replace(Settings(), data_dir=Path(tmp), seed=0))
        built = time.perf_counter()
        build_app(services)
        ready = time.perf_counter()
        print("\n== Offline arena ==")
        print(f"start: services {(built - start) * 1000:.0f} ms (demo index built in memory) + UI "
              f"{(ready - built) * 1000:.0f} ms = {(ready - start) * 1000:.0f} ms (gradio import excluded)")
        questions = [q for qs in EXAMPLE_QUESTIONS.values() for q in qs]
        latencies = []
        for _ in range(25):
            for q in questions:
                t = time.perf_counter()
                services.arena.retriever.retrieve(q)
                latencies.append(time.perf_counter() - t)
        latencies.sort()
        print(f"retrieval on the demo corpus ({len(latencies)} queries): p50 {latencies[len(latencies) // 2] * 1000:.2f} ms,"
              f" p95 {latencies[int(len(latencies) * 0.95)] * 1000:.2f} ms")
        times = []
        for q in questions:
            t = time.perf_counter()
            progress = services.arena.start_battle(q)
            for _ in progress:
                pass
            times.append(time.perf_counter() - t)
        print(f"one offline battle (retrieval + two offline contestants + cleaning), {len(times)} questions: "
              f"median {statistics.median(times) * 1000:.0f} ms, max {max(times) * 1000:.0f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    real_model_overhead(args.rounds)
    offline_arena()


if __name__ == "__main__":
    main()

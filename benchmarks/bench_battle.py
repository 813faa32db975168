"""Battle overhead and the offline arena's own timings.

1. Real-model path: two models on a loopback OpenAI-compatible server with known latency.
   Reference, same process: each model's stream consumed alone (the slower one is the floor a
   battle can reach) and both consumed one after the other (FastChat's defect). Reports the
   overhead the app adds beyond the slower provider (target ≤ 50 ms) and the concurrency ratio.
2. Offline arena: app start (services + UI), retrieval latency on the demo corpus, one offline battle.
3. A flood of citations (issue 21): one side streams 240 kB of "[1]", the other a normal answer; the battle
   is run and every snapshot rendered as the page does. Reference, same process: the same battle with two
   normal answers, and the flood with the citation-link budget lifted (what the page did before).

Run: python benchmarks/bench_battle.py [--rounds 10] [--flood-kb 240] [--only-flood]
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


def _rendered_battle(runner, battle, request) -> tuple[float, int]:
    """Seconds to run ``battle`` and render each snapshot as ui/handlers.py does; the bytes rendered."""
    from sciarena.ui.render import answer_markdown, cited_for_answer

    start = time.perf_counter()
    sent = 0
    for progress in runner.run(battle, request):
        if progress.finished:
            final = progress.battle
            shown = (answer_markdown(progress.text_a, None, cited_for_answer(final.side_a, final.retrieval)),
                     answer_markdown(progress.text_b, None, cited_for_answer(final.side_b, final.retrieval)))
        else:
            shown = (answer_markdown(progress.text_a, references=progress.references("a")),
                     answer_markdown(progress.text_b, references=progress.references("b")))
        sent += sum(len(text) for text in shown)
    return time.perf_counter() - start, sent


def citation_flood(rounds: int, kb: int) -> None:
    from sciarena.ui import render

    paper = Paper("p1", "A paper", ("Ann Author",), year=2020)
    refs = (Reference(1, paper, (Passage("p1#0", paper, "Some relevant context. " * 40, 0, 1.0),)),)
    request = GenerationRequest("What does the paper say?", refs)
    normal, flood = ModelSpec("Normal", "loop", "normal"), ModelSpec("Flood", "loop", "flood")
    print(f"\n== A {kb} kB answer of citations (median of {rounds} battles, every snapshot rendered) ==")
    with FakeOpenAI() as server:
        server.add_script("normal", tuple(f"word{i} [1] " for i in range(40)), chunk_delay_s=0.005)
        provider = OpenAICompatibleProvider(name="loop", base_url=server.base_url, api_key="sk-bench")
        provider.warm_up()
        runner = BattleRunner({"loop": provider})
        retrieval = Retrieval("q", refs, "bench")

        def timed(pair) -> tuple[float, int]:
            runs = [_rendered_battle(runner, new_battle("q", retrieval, pair, created_at=time.time()), request)
                    for _ in range(rounds)]
            return statistics.median(r[0] for r in runs), max(r[1] for r in runs)

        timed((normal, normal))  # warm the connection pool
        reference, ref_bytes = timed((normal, normal))
        print(f"two normal answers (reference)          {reference * 1000:8.0f} ms, {ref_bytes / 1e6:7.2f} MB rendered")
        for unit in ("[1]", "[1] "):  # without spaces the stream shows nothing until a word ends; with, all of it
            chunk = unit * (300 // len(unit))
            server.add_script("flood", (chunk,) * (kb * 1000 // len(chunk)), chunk_delay_s=0.0)
            flooded, flood_bytes = timed((normal, flood))
            budget = render.MAX_CITATION_LINKS
            render.MAX_CITATION_LINKS = 10**9  # every citation a link with its tooltip, as before issue 21
            try:
                unbounded, unbounded_bytes = timed((normal, flood))
            finally:
                render.MAX_CITATION_LINKS = budget
            print(f"normal vs {unit!r:6} flood                 {flooded * 1000:8.0f} ms, {flood_bytes / 1e6:7.2f} MB "
                  f"rendered = {flooded / reference:.1f} × reference")
            print(f"normal vs {unit!r:6} flood, no link budget {unbounded * 1000:8.0f} ms, "
                  f"{unbounded_bytes / 1e6:7.2f} MB rendered = {unbounded / reference:.1f} × reference (the page "
                  "before)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--flood-kb", type=int, default=240, help="size of the citation flood (kB)")
    parser.add_argument("--only-flood", action="store_true", help="run only the citation flood")
    args = parser.parse_args()
    if not args.only_flood:
        real_model_overhead(args.rounds)
        offline_arena()
    citation_flood(max(1, min(args.rounds, 3)), args.flood_kb)


if __name__ == "__main__":
    main()

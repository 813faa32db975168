"""Benchmark the Semantic Scholar pipeline's own cost against a loopback API of known latency.

    python benchmarks/bench_s2_pipeline.py [--rounds 30] [--snippet-ms 150]
        [--paper-ms 100] [--batch-ms 50]

The fake API (tests/fake_semantic_scholar.py, in a child process) serves 40 passages and 20 abstracts per
question (about 60 candidates, as in SciArena) after a fixed delay per endpoint. For
each round we time, in the same run:

- each endpoint alone through the client (the "slowest endpoint call" reference);
- the three calls made one after another (what a sequential pipeline would cost);
- the pipeline (both searches concurrently, rerank, group, paper/batch when needed).

Overhead = pipeline − (slowest search call + batch call); snippet results carry no
year or venue, so the pipeline always makes one paper/batch call after the searches.
Target: ≤ 30 ms. The ratio pipeline / sequential shows the searches overlap. The client
process's CPU time (the fake runs in a child process) gives the pipeline's own work
(rewrite fallback, candidates, rerank, grouping, thread) in a way a busy machine
disturbs less than wall-clock time.
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from fake_semantic_scholar import FakePaper, FakeSemanticScholar, FakeSnippet  # noqa: E402

from sciarena.retrieval.pipeline import SemanticScholarRetriever  # noqa: E402
from sciarena.retrieval.semantic_scholar import SemanticScholarClient  # noqa: E402

QUESTION = "How do graph neural networks predict protein binding affinity from structure?"
TOPIC = "graph neural networks predict protein binding affinity structure".split()


def synthetic_papers(seed: int = 0) -> tuple[FakePaper, ...]:
    """40 papers with one ~120-word passage each and 20 with only an abstract, all on topic."""
    rng = random.Random(seed)
    vocab = ["".join(rng.choice("abcdefghiklmnoprstu") for _ in range(rng.randint(4, 9))) for _ in range(800)]

    def text(words: int) -> str:
        body = rng.choices(vocab, k=words - 4) + rng.sample(TOPIC, 4)
        rng.shuffle(body)
        return " ".join(body).capitalize() + "."

    papers = [FakePaper(10_000 + i, f"Paper {i} on {rng.choice(TOPIC)}", (f"Ann Writer{i}", "Bo Second"),
                        2015 + i % 10, "Venue", None, ("Biology",), (FakeSnippet(text(120), "body", "Results"),))
              for i in range(40)]
    papers += [FakePaper(20_000 + i, f"Abstract paper {i}", ("Cy Third",), 2020, "Venue", text(150),
                         ("Computer Science",)) for i in range(20)]
    return tuple(papers)


def timed(call, cpu: list[float] | None = None) -> float:
    started, cpu_started = time.perf_counter(), time.process_time()
    call()
    if cpu is not None:
        cpu.append(time.process_time() - cpu_started)
    return time.perf_counter() - started


def serve(latency: dict[str, float], urls: multiprocessing.Queue[str], stop: multiprocessing.Event) -> None:
    """Child process: the fake API, so its JSON work does not share the pipeline's GIL."""
    with FakeSemanticScholar(synthetic_papers(), latency_s=latency) as s2:
        urls.put(s2.base_url)
        stop.wait()


def measure(rounds: int, latency: dict[str, float]) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {k: [] for k in ("snippet", "paper", "batch", "sequential", "pipeline",
                                                   "sequential_cpu", "pipeline_cpu")}
    urls: multiprocessing.Queue[str] = multiprocessing.Queue()
    stop = multiprocessing.Event()
    server = multiprocessing.Process(target=serve, args=(latency, urls, stop), daemon=True)
    server.start()
    try:
        client = SemanticScholarClient(urls.get(timeout=30))
        retriever = SemanticScholarRetriever(client)
        first = retriever.retrieve(QUESTION)  # also opens the pooled connections
        # Snippet results carry no year or venue, so the pipeline asks paper/batch for the
        # snippet papers among its references; the reference batch asks for the same ids.
        ids = [r.paper.paper_id for r in first.references if r.paper.paper_id.startswith("1")]
        if not ids or any(r.paper.year is None for r in first.references):
            raise SystemExit("the pipeline did not fill the snippet papers' metadata")
        for _ in range(rounds):
            out["snippet"].append(timed(lambda: client.snippet_search(QUESTION, 40)))
            out["paper"].append(timed(lambda: client.paper_search(QUESTION, 20)))
            out["batch"].append(timed(lambda: client.paper_batch(ids)))
            out["sequential"].append(timed(lambda: (client.snippet_search(QUESTION, 40),
                                                    client.paper_search(QUESTION, 20),
                                                    client.paper_batch(ids)), out["sequential_cpu"]))
            out["pipeline"].append(timed(lambda: retriever.retrieve(QUESTION), out["pipeline_cpu"]))
    finally:
        stop.set()
        server.join(timeout=10)
    return out


def report(data: dict[str, list[float]]) -> float:
    med = {k: statistics.median(v) * 1000 for k, v in data.items()}
    reference = max(med["snippet"], med["paper"]) + med["batch"]
    overheads = sorted((p - max(s, a) - b) * 1000
                       for p, s, a, b in zip(data["pipeline"], data["snippet"], data["paper"], data["batch"], strict=True))
    p90 = overheads[int(0.9 * (len(overheads) - 1))]
    print(f"single calls (median)   snippet/search {med['snippet']:.1f} ms, paper/search {med['paper']:.1f} ms, "
          f"paper/batch {med['batch']:.1f} ms")
    print(f"sequential calls        {med['sequential']:.1f} ms")
    print(f"pipeline                {med['pipeline']:.1f} ms  (slowest search + batch = {reference:.1f} ms)")
    print(f"overhead per question   median {statistics.median(overheads):.1f} ms, p90 {p90:.1f} ms (target <= 30 ms)")
    print(f"client CPU per question pipeline {med['pipeline_cpu']:.1f} ms, the same three calls alone "
          f"{med['sequential_cpu']:.1f} ms -> the pipeline's own work "
          f"{med['pipeline_cpu'] - med['sequential_cpu']:.1f} ms (load-independent)")
    print(f"pipeline / sequential   {med['pipeline'] / med['sequential']:.2f}  "
          f"(searches overlap: saved {med['sequential'] - med['pipeline']:.0f} ms of "
          f"min(search) = {min(med['snippet'], med['paper']):.0f} ms)")
    return statistics.median(overheads)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--snippet-ms", type=float, default=150)
    parser.add_argument("--paper-ms", type=float, default=100)
    parser.add_argument("--batch-ms", type=float, default=50)
    args = parser.parse_args()
    latency = {"snippet/search": args.snippet_ms / 1000, "paper/search": args.paper_ms / 1000,
               "paper/batch": args.batch_ms / 1000}
    print(f"latency: snippet/search {args.snippet_ms:.0f} ms, paper/search {args.paper_ms:.0f} ms, "
          f"paper/batch {args.batch_ms:.0f} ms; {args.rounds} rounds; 40 passages + 20 abstracts per question")
    overhead = report(measure(args.rounds, latency))
    print(f"result: {'OK' if overhead <= 30 else 'ABOVE TARGET'}")


if __name__ == "__main__":
    main()

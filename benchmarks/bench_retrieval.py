"""Benchmark local BM25 retrieval (sciarena.retrieval.local) on synthetic and demo corpora.

    python benchmarks/bench_retrieval.py           # 100k passages
    python benchmarks/bench_retrieval.py --full    # 100k and 1M passages

For each size a synthetic corpus is generated (Zipf-distributed vocabulary, ~250-word
passages, 4 per paper) and measured in fresh child processes, so peak memory
(getrusage ru_maxrss) belongs to one step: build + save, then load + 200 queries. The
references, in the same run: for queries, a naive BM25 (same Lucene formula, k1=1.5,
b=0.75) scored by a Python loop over every passage for a handful of queries (latency
ratio, and whether both rank the same top 10); for the build, bm25s's own
tokenize + BM25.index on the same passages (time and peak-memory ratios, 100k only).
Targets at 100k: search p50 <= 20 ms, p95 <= 60 ms.
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sciarena.core.types import Paper  # noqa: E402
from sciarena.retrieval.bm25 import bm25_index  # noqa: E402
from sciarena.retrieval.corpus import demo_corpus_files, read_corpus  # noqa: E402
from sciarena.retrieval.local import LocalIndex, LocalRetriever  # noqa: E402
from sciarena.retrieval.passages import indexed_text, paper_passages  # noqa: E402

WORDS_PER_PAPER = 950  # packs into 4 passages of <= 250 words
VOCABULARY = 200_000
ZIPF_S = 1.07
QUERY_RANKS = (20, 20_000)  # query words: common-ish content words, not the top of the curve


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def vocabulary(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Random pseudo-words and their Zipf cumulative distribution."""
    rng = np.random.default_rng(seed)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    words: set[str] = set()
    while len(words) < VOCABULARY:
        lengths = rng.integers(3, 11, size=VOCABULARY)
        words.update("".join(rng.choice(letters, size=n)) for n in lengths[: VOCABULARY - len(words)])
    vocab = np.array(sorted(words))
    rng.shuffle(vocab)
    weights = 1.0 / np.arange(1, VOCABULARY + 1) ** ZIPF_S
    return vocab, np.cumsum(weights) / weights.sum()


def synthetic_corpus(n_passages: int, seed: int) -> list[tuple[Paper, str]]:
    vocab, cdf = vocabulary(seed)
    rng = np.random.default_rng(seed + 1)
    pairs = []
    for p in range(math.ceil(n_passages / 4)):
        words = vocab[np.searchsorted(cdf, rng.random(WORDS_PER_PAPER))].tolist()
        cuts = np.cumsum(rng.integers(8, 30, size=WORDS_PER_PAPER // 8))
        sentences = [" ".join(words[a:b]).capitalize() + "."
                     for a, b in zip(np.r_[0, cuts], cuts) if a < WORDS_PER_PAPER]
        title = " ".join(vocab[np.searchsorted(cdf, rng.random(8))]).capitalize()
        pairs.append((Paper(paper_id=f"s{p}", title=title, authors=("A. Author",), year=2020,
                            venue="Synthetic"), " ".join(sentences)))
    return pairs


def queries(count: int, seed: int) -> list[str]:
    vocab, _ = vocabulary(seed)
    rng = np.random.default_rng(seed + 2)
    ranks = np.arange(*QUERY_RANKS)
    weights = 1.0 / (ranks + 1.0) ** ZIPF_S
    picks = [rng.choice(ranks, size=rng.integers(2, 7), p=weights / weights.sum())
             for _ in range(count)]
    return [" ".join(vocab[r]) for r in picks]


def percentiles(samples_s: list[float]) -> dict[str, float]:
    ms = np.array(samples_s) * 1000
    return {"p50_ms": float(np.percentile(ms, 50)), "p95_ms": float(np.percentile(ms, 95)),
            "mean_ms": float(ms.mean())}


def dir_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 2**20


# --- child steps (each in its own process) ------------------------------------------

def child_build(n: int, out: Path, seed: int) -> dict:
    started = time.perf_counter()
    pairs = synthetic_corpus(n, seed)
    generated_s, before_mb = time.perf_counter() - started, peak_mb()
    started = time.perf_counter()
    index = LocalIndex.build(pairs)
    build_s, after_mb = time.perf_counter() - started, peak_mb()
    started = time.perf_counter()
    index.save(out)
    return {"passages": index.num_passages, "papers": index.num_papers,
            "generate_s": generated_s, "build_s": build_s, "save_s": time.perf_counter() - started,
            "peak_before_build_mb": before_mb, "peak_build_mb": after_mb, "size_mb": dir_mb(out)}


def child_index_step(n: int, seed: int, engine: str) -> dict:
    """Only the indexing step (passages already chunked): ours or bm25s's own."""
    import bm25s
    import Stemmer

    texts = [indexed_text(paper.title, p.text, p.position, p.kind)
             for paper, text in synthetic_corpus(n, seed) for p in paper_passages(paper, text)]
    before_mb = peak_mb()
    started = time.perf_counter()
    if engine == "ours":
        bm25_index(texts)
    else:
        tokens = bm25s.tokenize(texts, stopwords="en", stemmer=Stemmer.Stemmer("english"),
                                show_progress=False)
        bm25s.BM25(method="lucene").index(tokens, show_progress=False)
    return {"index_s": time.perf_counter() - started, "extra_mb": peak_mb() - before_mb}


def child_query(index_dir: Path, n_queries: int, seed: int, mmap_scores: bool) -> dict:
    started = time.perf_counter()
    index = LocalIndex.load(index_dir, mmap_scores=mmap_scores)
    load_s, load_mb = time.perf_counter() - started, peak_mb()
    retriever = LocalRetriever(index, "local:bench", top_k=30)
    batch = queries(n_queries, seed)
    for q in batch[:5]:  # first-touch costs (page faults, lazy imports)
        index.search(q, 30)
    search_s, retrieve_s, hits = [], [], []
    for q in batch:
        t0 = time.perf_counter()
        hits.append(len(index.search(q, 30)))
        t1 = time.perf_counter()
        retriever.retrieve(q)
        retrieve_s.append(time.perf_counter() - t1)
        search_s.append(t1 - t0)
    return {"load_s": load_s, "peak_after_load_mb": load_mb, "search": percentiles(search_s),
            "retrieve": percentiles(retrieve_s), "mean_hits": statistics.mean(hits)}


def child_reference(index_dir: Path, n_queries: int, seed: int) -> dict:
    """Naive BM25 over the very passages the index holds: a Python loop per query."""
    import bm25s
    import Stemmer

    index = LocalIndex.load(index_dir)
    started = time.perf_counter()
    texts = []
    for i in range(index.num_passages):
        p = index.passage(i)
        texts.append(indexed_text(p.paper.title, p.text, p.position, p.kind))
    stemmer = Stemmer.Stemmer("english")
    docs = [Counter(t) for t in bm25s.tokenize(texts, stopwords="en", stemmer=stemmer,
                                               return_ids=False, show_progress=False)]
    lengths = [sum(c.values()) for c in docs]
    avg = sum(lengths) / len(lengths)
    df: Counter[str] = Counter()
    for c in docs:
        df.update(c.keys())
    prepare_s = time.perf_counter() - started
    n_docs, k1, b = len(docs), 1.5, 0.75
    batch = queries(200, seed)[:n_queries]
    naive_s, agree = [], []
    for q in batch:
        terms = bm25s.tokenize(q, stopwords="en", stemmer=stemmer, return_ids=False,
                               show_progress=False)[0]
        t0 = time.perf_counter()
        idf = {t: math.log(1 + (n_docs - df[t] + 0.5) / (df[t] + 0.5)) for t in terms}
        scores = []
        for d, (counts, length) in enumerate(zip(docs, lengths)):
            s = 0.0
            for t in terms:
                tf = counts.get(t, 0)
                if tf:
                    s += idf[t] * tf / (tf + k1 * (1 - b + b * length / avg))
            if s > 0:
                scores.append((s, d))
        top = [d for _, d in sorted(scores, key=lambda x: (-x[0], x[1]))[:10]]
        naive_s.append(time.perf_counter() - t0)
        ours = [h.passage_id for h in index.search(q, 10)]
        theirs = [index.passage(d).passage_id for d in top]
        agree.append(len(set(ours) & set(theirs)) / max(len(theirs), 1))
    return {"prepare_s": prepare_s, "naive": percentiles(naive_s), "queries": len(batch),
            "top10_overlap_mean": statistics.mean(agree), "top10_overlap_min": min(agree)}


def child_demo(cache: Path) -> dict:
    files = demo_corpus_files()
    if not files:
        return {}
    started = time.perf_counter()
    pairs = read_corpus(files)
    read_s = time.perf_counter() - started
    builds = []
    for _ in range(5):
        t0 = time.perf_counter()
        index = LocalIndex.build(pairs)
        builds.append(time.perf_counter() - t0)
    index.save(cache)
    t0 = time.perf_counter()
    LocalIndex.load(cache)
    load_s = time.perf_counter() - t0
    retriever = LocalRetriever(index, "local:demo")
    asks = [p.title for p, _ in pairs[:100]] + ["CRISPR gene editing", "transformer attention",
                                               "climate change and migration"]
    times = []
    for q in asks:
        t0 = time.perf_counter()
        retriever.retrieve(q)
        times.append(time.perf_counter() - t0)
    return {"files": len(files), "papers": index.num_papers, "passages": index.num_passages,
            "read_s": read_s, "build_s_median": statistics.median(builds), "load_s": load_s,
            "retrieve": percentiles(times), "queries": len(asks)}


# --- driver -------------------------------------------------------------------------

def run_child(*args: str) -> dict:
    done = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"child {args} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def report(n: int, work: Path, seed: int, n_queries: int, reference: bool) -> tuple[dict, dict]:
    out = work / f"index-{n}"
    built = run_child("--child", "build", "--n", str(n), "--dir", str(out), "--seed", str(seed))
    ram = run_child("--child", "query", "--dir", str(out), "--seed", str(seed), "--queries", str(n_queries))
    mapped = run_child("--child", "query", "--dir", str(out), "--seed", str(seed),
                       "--queries", str(n_queries), "--mmap")
    print(f"\n== synthetic corpus: {built['passages']:,} passages ({built['papers']:,} papers) ==")
    print(f"generate {built['generate_s']:.1f} s | build {built['build_s']:.1f} s | save {built['save_s']:.2f} s"
          f" | index on disk {built['size_mb']:.0f} MB")
    print(f"peak RSS: {built['peak_before_build_mb']:.0f} MB with the corpus in memory, "
          f"{built['peak_build_mb']:.0f} MB after build (+{built['peak_build_mb'] - built['peak_before_build_mb']:.0f} MB)")
    for label, r in (("scores in RAM", ram), ("scores mmap'd, the default", mapped)):
        s, t = r["search"], r["retrieve"]
        print(f"load ({label}) {r['load_s'] * 1000:.0f} ms, peak RSS {r['peak_after_load_mb']:.0f} MB | "
              f"search k=30 over {n_queries} queries: p50 {s['p50_ms']:.1f} ms, p95 {s['p95_ms']:.1f} ms | "
              f"retrieve (search+grouping): p50 {t['p50_ms']:.1f} ms, p95 {t['p95_ms']:.1f} ms")
    if n <= 100_000:
        ok = ram["search"]["p50_ms"] <= 20 and ram["search"]["p95_ms"] <= 60
        print(f"target p50 <= 20 ms and p95 <= 60 ms: {'met' if ok else 'MISSED'}")
    if reference:
        ours = run_child("--child", "index-ours", "--n", str(n), "--seed", str(seed))
        theirs = run_child("--child", "index-bm25s", "--n", str(n), "--seed", str(seed))
        print(f"reference build: indexing step alone (passages already chunked): ours "
              f"{ours['index_s']:.1f} s / +{ours['extra_mb']:.0f} MB peak, bm25s tokenize+index "
              f"{theirs['index_s']:.1f} s / +{theirs['extra_mb']:.0f} MB -> "
              f"{theirs['index_s'] / ours['index_s']:.1f}x faster, "
              f"{theirs['extra_mb'] / max(ours['extra_mb'], 1):.1f}x less memory")
        ref = run_child("--child", "reference", "--dir", str(out), "--seed", str(seed))
        naive = ref["naive"]["mean_ms"]
        print(f"reference: naive Python BM25 loop, {ref['queries']} queries: mean {naive:.0f} ms/query "
              f"(+{ref['prepare_s']:.1f} s to count terms) -> our search is {naive / ram['search']['mean_ms']:.0f}x "
              f"faster (mean vs mean); top-10 overlap mean {ref['top10_overlap_mean']:.2f}, "
              f"min {ref['top10_overlap_min']:.2f}")
    shutil.rmtree(out, ignore_errors=True)
    return built, ram


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--full", action="store_true", help="also run 1,000,000 passages")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--child", choices=("build", "query", "reference", "demo", "index-ours",
                                            "index-bm25s"), help=argparse.SUPPRESS)
    parser.add_argument("--n", type=int, default=100_000, help=argparse.SUPPRESS)
    parser.add_argument("--dir", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--mmap", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child == "build":
        print(json.dumps(child_build(args.n, args.dir, args.seed)))
    elif args.child == "query":
        print(json.dumps(child_query(args.dir, args.queries, args.seed, args.mmap)))
    elif args.child == "reference":
        print(json.dumps(child_reference(args.dir, 10, args.seed)))
    elif args.child in ("index-ours", "index-bm25s"):
        print(json.dumps(child_index_step(args.n, args.seed, args.child.split("-")[1])))
    elif args.child == "demo":
        print(json.dumps(child_demo(args.dir)))
    else:
        with tempfile.TemporaryDirectory(prefix="bench-retrieval-") as tmp:
            demo = run_child("--child", "demo", "--dir", str(Path(tmp) / "demo"))
            if demo:
                r = demo["retrieve"]
                print(f"== demo corpus: {demo['papers']} papers, {demo['passages']} passages "
                      f"from {demo['files']} files ==")
                print(f"read {demo['read_s'] * 1000:.0f} ms | build {demo['build_s_median'] * 1000:.0f} ms "
                      f"(median of 5) | load from cache {demo['load_s'] * 1000:.0f} ms | retrieve over "
                      f"{demo['queries']} questions: p50 {r['p50_ms']:.2f} ms, p95 {r['p95_ms']:.2f} ms")
            else:
                print("== demo corpus absent: skipped ==")
            small = report(100_000, Path(tmp), args.seed, args.queries, reference=True)
            if args.full:
                big = report(1_000_000, Path(tmp), args.seed, args.queries, reference=False)
                print(f"\n1M / 100k: build {big[0]['build_s'] / small[0]['build_s']:.1f}x, "
                      f"peak RSS {big[0]['peak_build_mb'] / small[0]['peak_build_mb']:.1f}x, "
                      f"load {big[1]['load_s'] / small[1]['load_s']:.1f}x, "
                      f"p50 {big[1]['search']['p50_ms'] / small[1]['search']['p50_ms']:.1f}x")


if __name__ == "__main__":
    main()

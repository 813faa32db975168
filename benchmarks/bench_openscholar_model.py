"""The OpenScholar-style loop against its bare base model, for any catalogue model you can run.

    python benchmarks/bench_openscholar_model.py --model "Extractive-MMR (offline)" [--n 20]
    OPENAI_API_KEY=... python benchmarks/bench_openscholar_model.py --model GPT-4.1-mini --n 30   # paid

For the first N labelled questions (sciarena/data/eval/question_labels.jsonl) that the arena's
retriever (opened from the environment's settings, as the app opens it) finds references for, the
bare model answers once and the pipeline runs its loop over the same model; both answers are cleaned
as the arena cleans them. Printed, per contestant: the share of citation-worthy statements
(the citation check's definition) that cite a passage the offline lexical judge calls supporting —
a word-overlap heuristic that agrees with our hand labels on 73.9% of held-out pairs
(benchmarks/bench_attribution.py), so read it as a rough signal, not ground truth — the share with no
citation, answer length, seconds (the bare run is the reference, timed in the same process), calls,
tokens and cost, and why loops stopped early. With a real model this is the measurement the scripted
benchmark (bench_openscholar.py) cannot make; nothing here has been run with one (no keys).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sciarena.answer.clean import clean_answer  # noqa: E402
from sciarena.answer.prompt import build_messages  # noqa: E402
from sciarena.arena.pairing import cost_usd  # noqa: E402
from sciarena.core.errors import SciArenaError  # noqa: E402
from sciarena.core.settings import Settings  # noqa: E402
from sciarena.core.types import GenerationRequest, PipelineReport, Reference, Usage  # noqa: E402
from sciarena.pipelines.provider import PipelineProvider  # noqa: E402
from sciarena.pipelines.verify import CitationVerifier  # noqa: E402
from sciarena.providers.registry import open_models  # noqa: E402
from sciarena.retrieval.choose import open_retriever  # noqa: E402

QUESTIONS = ROOT / "sciarena" / "data" / "eval" / "question_labels.jsonl"


@dataclass(frozen=True)
class Answered:
    text: str
    references: tuple[Reference, ...]
    seconds: float
    usage: Usage
    report: PipelineReport | None = None


def answer(provider, spec, request: GenerationRequest) -> Answered:
    """One contestant's whole answer, as the runner assembles it (restarts honoured, references added)."""
    started = time.perf_counter()
    parts: list[str] = []
    extra: list[Reference] = []
    usage, report = Usage(), None
    for delta in provider.stream(spec, request):
        if delta.restart:
            parts.clear()
        parts.append(delta.text)
        extra.extend(delta.references)
        usage = delta.usage or usage
        report = delta.report or report
    references = request.references + tuple(extra)
    text = clean_answer("".join(parts), references, request.question).text
    return Answered(text, references, time.perf_counter() - started, usage, report)


def statement_support(answered: Answered) -> tuple[int, int, int]:
    """(citation-worthy statements, those citing a supporting passage, those citing nothing)."""
    verifier = CitationVerifier(answered.references)
    found = verifier.statements(answered.text)
    supported = sum(any(verifier.support(claim, n) > 0 for n in cited) for _, claim, cited in found)
    return len(found), supported, sum(not cited for _, _, cited in found)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="a catalogue model (display name or API id)")
    parser.add_argument("--n", type=int, default=20, help="questions with references to measure (default 20)")
    args = parser.parse_args(argv)

    settings = Settings.from_env()
    models = open_models(settings)
    base, base_provider = models.pick(args.model, "--model")
    reason = base_provider.unavailable_reason(base)
    if reason:
        print(f"{base.name} cannot run here: {reason}", file=sys.stderr)
        return 2
    retriever = open_retriever(settings, models)
    pipeline = PipelineProvider(models.providers, retriever, battle_timeout_s=settings.generation_timeout_s)
    spec = replace(base, name=f"OpenScholar-style ({base.name})", provider="pipeline", pipeline="openscholar",
                   model_id=f"openscholar:{base.model_id}", base=base, params={})

    rows = [json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines() if line.strip()]
    requests, skipped = [], 0
    for row in rows:
        if len(requests) == args.n:
            break
        found = retriever.retrieve(row["question"])
        if not found.references:
            skipped += 1
            continue
        requests.append(GenerationRequest(row["question"], found.references,
                                          build_messages(row["question"], found.references)))
    print(f"{base.name} bare vs OpenScholar-style on {len(requests)} labelled questions with references "
          f"({skipped} before them had none; retriever {settings.retriever})")

    runs: dict[str, list[Answered]] = {"bare": [], "pipeline": []}
    failures: Counter[str] = Counter()
    for k, request in enumerate(requests):
        order = (("bare", base_provider, base), ("pipeline", pipeline, spec))
        for name, provider, which in (order if k % 2 == 0 else order[::-1]):  # alternate: drift hits both
            try:
                runs[name].append(answer(provider, which, request))
            except SciArenaError as err:
                failures[f"{name}: {type(err).__name__}"] += 1

    for name, answered in runs.items():
        if not answered:
            print(f"\n{name}: no answer")
            continue
        counts = [statement_support(a) for a in answered]
        total, supported, uncited = (sum(c[i] for c in counts) for i in range(3))
        seconds = [a.seconds for a in answered]
        costs = [cost_usd(base, a.usage) for a in answered]
        known = [c for c in costs if c is not None]
        print(f"\n{name} ({len(answered)} answers)")
        print(f"  citation-worthy statements citing a passage the lexical judge calls supporting: "
              f"{supported}/{total} = {100 * supported / max(total, 1):.1f}%; citing nothing: "
              f"{uncited}/{total} = {100 * uncited / max(total, 1):.1f}%")
        print(f"  words per answer, median: {statistics.median(len(a.text.split()) for a in answered):.0f}")
        print(f"  seconds per answer: median {statistics.median(seconds):.3f}, max {max(seconds):.3f}")
        print("  cost per answer (catalogue prices): "
              + (f"mean ${statistics.mean(known):.5f} over {len(known)} answers with a known cost" if known
                 else "unknown (no token counts or prices)"))
        reports = [a.report for a in answered if a.report is not None]
        if reports:
            print(f"  calls per answer: mean {statistics.mean(r.calls for r in reports):.2f}, max "
                  f"{max(r.calls for r in reports)}; revisions kept {sum(r.revisions_kept for r in reports)}, "
                  f"rejected {sum(r.revisions_rejected for r in reports)}; extra passages "
                  f"{sum(r.extra_passages for r in reports)}; citations the check added "
                  f"{sum(r.citations_added for r in reports)}")
            print(f"  loops stopped early: {dict(Counter(r.stopped for r in reports if r.stopped)) or 'none'}")
    if runs["bare"] and runs["pipeline"]:
        ratio = statistics.median(a.seconds for a in runs["pipeline"]) / statistics.median(
            a.seconds for a in runs["bare"])
        print(f"\nmedian seconds, pipeline / bare: {ratio:.2f}")
    if failures:
        print(f"failed answers (not counted above): {dict(failures)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

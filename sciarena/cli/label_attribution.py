"""``python -m sciarena label attribution``: judge every (sentence, citation) pair of stored votes.

    python -m sciarena label attribution --votes PATH --judge NAME --out FILE
    python -m sciarena leaderboard --votes FILE --style supporting,irrelevant

``--judge`` is a catalogue model's display name (called through its provider) or
``offline:lexical`` (word overlap, no calls, no cost). Two files come out:

- ``--out``: the input votes, every record as loaded, plus per-side counts under the fields the
  leaderboard reads (``num_supporting_a/b``, ``num_irrelevant_a/b`` — irrelevant and contradicting
  merged, as the paper does — and ``num_contradicting_a/b``, ``attribution_judge``). It is written
  whole at the end of each run (a temporary file renamed into place), so it is never half-written;
  a side whose pairs are not all judged gets null counts, which the leaderboard's style fit leaves out.
- ``--log`` (default ``FILE.verdicts``): one JSON line per judged pair, appended as each verdict
  arrives. A rerun with the same files skips pairs this judge has judged and retries failed calls.
  Identical pairs (same sentence, marker and passage) are judged once.

The number of calls and the estimated cost are printed before any call (``--dry-run`` stops there).
Exit codes: 0 done, 1 some calls failed (rerun to retry), 2 bad input, 130 interrupted.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import sys
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from sciarena.answer.label_reply import INVALID, MAX_RAW_CHARS
from sciarena.cli.common import settings_of
from sciarena.core.errors import AttributionInputError, SciArenaError
from sciarena.core.files import ResumeLog, atomic_output
from sciarena.providers.paid_calls import run_calls
from sciarena.science.labelling.attribution import (
    LEXICAL_NAME,
    SIDES,
    VERDICTS,
    Judge,
    LexicalJudge,
    ModelJudge,
    Pair,
    Verdict,
    build_messages,
    count_fields,
    record_pairs,
    side_verdicts,
)

if TYPE_CHECKING:
    from sciarena.core.settings import Settings
    from sciarena.core.types import ModelSpec

log = logging.getLogger(__name__)

OUTPUT_TOKENS_PER_CALL = 6  # one word; reasoning models think first and cost more than this says
CHARS_PER_TOKEN = 4  # a rough English average, for the estimate only


def add_arguments(sub: argparse.ArgumentParser) -> None:
    from sciarena.cli.args import add_model_run_options  # start-up time: loaded only when this command runs

    sub.add_argument("--votes", required=True, metavar="PATH_OR_REPO",
                     help="a votes file or folder (our JSON lines, the released JSON array, Parquet) "
                          "or a Hub dataset id (owner/name)")
    sub.add_argument("--judge", required=True, metavar="NAME",
                     help=f"a catalogue model's display name, or {LEXICAL_NAME} (word overlap, no calls)")
    sub.add_argument("--out", required=True, metavar="FILE",
                     help="the votes with per-side attribution counts (JSON lines), rewritten whole each run")
    sub.add_argument("--log", default=None, metavar="FILE",
                     help="per-pair verdicts, appended to; a rerun skips pairs already judged (default FILE.verdicts)")
    add_model_run_options(sub)


@dataclass(frozen=True)
class ResolvedJudge:
    judge: Judge
    spec: "ModelSpec | None" = None  # for prices; None for the offline baseline


def resolve_judge(name: str, settings: "Settings") -> ResolvedJudge:
    """LEXICAL_NAME, or the catalogue model with this display name, usable now."""
    name = name.strip()
    if name == LEXICAL_NAME:
        return ResolvedJudge(LexicalJudge())
    # start-up time: loaded only when this command runs
    from sciarena.science.labelling.resolve import provider_complete, usable_model

    spec, provider = usable_model(name, settings, option="--judge", role="judge", job="judge",
                                  offline=(LEXICAL_NAME, "word overlap", "the word-overlap baseline"),
                                  error=AttributionInputError)
    return ResolvedJudge(ModelJudge(complete=provider_complete(provider, spec), name=spec.name), spec)


# ---------------------------------------------------------------- the verdict log

def _verdict(record: Mapping[str, Any]) -> dict[str, Any]:
    if not isinstance(record, dict) or not {"pair", "judge", "status"} <= record.keys():
        raise ValueError("not an attribution verdict")
    return record


class VerdictLog(ResumeLog[dict]):
    """Per-pair verdicts, one flushed JSON line each; a torn last line (a crash) is skipped."""

    def __init__(self, path: Path) -> None:
        super().__init__(path, _verdict, noun="attribution verdict", error=AttributionInputError,
                         hint="; choose another --log file")

    def latest(self, judge: str) -> dict[str, dict[str, Any]]:
        """The last verdict per pair that ``judge`` gave."""
        return {str(record["pair"]): record for record in self.read() if record["judge"] == judge}


def verdict_record(pair: Pair, judge: str, verdict: Verdict | None, error: str = "") -> dict[str, Any]:
    if verdict is None:
        return {"pair": pair.key, "judge": judge, "status": "error", "verdict": None, "error": error}
    return {"pair": pair.key, "judge": verdict.judge, "status": "ok" if verdict.valid else "invalid",
            "verdict": verdict.value, "raw": verdict.raw[:MAX_RAW_CHARS] or None,
            "sentence": pair.sentence, "citation": pair.citation}


def judge_pairs(pairs: Sequence[Pair], judge: Judge, *, concurrency: int,
                on_record: Callable[[dict[str, Any]], None], max_consecutive_errors: int = 20) -> str:
    """Judge each pair, ``concurrency`` calls in flight, ``on_record`` seeing each verdict as it
    arrives; returns why it stopped early ("" when it did not). After ``max_consecutive_errors``
    failures in a row (a revoked key, an outage) no new call starts; on Ctrl-C the calls in flight
    are waited for and saved, then KeyboardInterrupt is raised again."""
    return run_calls(pairs, judge.judge,
                     lambda pair, verdict, error: on_record(verdict_record(pair, judge.name, verdict, error)),
                     concurrency=concurrency, max_consecutive_errors=max_consecutive_errors,
                     name="sciarena-attribution")


# ---------------------------------------------------------------- the command

def run(args: argparse.Namespace, *, settings: "Settings | None" = None,
        out: TextIO | None = None, err: TextIO | None = None) -> int:
    from sciarena.votes.read import load  # start-up time: loaded only when this command runs

    out, err = out or sys.stdout, err or sys.stderr
    prog = "sciarena label attribution"
    try:
        settings = settings or settings_of(args)
        if args.timeout is not None:
            settings = dataclasses.replace(settings, generation_timeout_s=args.timeout)
        resolved = resolve_judge(args.judge, settings)
        judge = resolved.judge
        out_path = Path(args.out)
        log_path = Path(args.log) if args.log else out_path.with_name(out_path.name + ".verdicts")
        _check_paths(Path(args.votes), out_path, log_path)
        records = load(args.votes, token=settings.secret("HF_TOKEN"), cache_dir=args.cache_dir)[: args.limit]
        if not records:
            raise AttributionInputError(f"no votes in {args.votes}")
        sides = [record_pairs(r) for r in records]
        distinct = {p.key: p for s in sides for side in s.values() for p in side.pairs}
        unjudgeable = sum(side.unjudgeable for s in sides for side in s.values())
        if not distinct:
            missing = f" ({unjudgeable} citation(s) without a passage or a citation list)" if unjudgeable else ""
            raise AttributionInputError(f"no (sentence, citation) pairs in the {len(records)} vote(s) of {args.votes}: "
                                        f"no answer cites an entry of its citation list{missing}")
        verdicts = VerdictLog(log_path)
        done = verdicts.latest(judge.name)
    except (SciArenaError, ValueError) as error:
        print(f"{prog}: {error}", file=err)
        return 2
    todo = [p for k, p in distinct.items() if k not in done or done[k]["status"] == "error"]
    calls = 0 if resolved.spec is None else len(todo)
    print(f"{len(records)} votes, {sum(len(side.pairs) for s in sides for side in s.values())} (sentence, citation) "
          f"pairs ({len(distinct)} distinct; {unjudgeable} citation(s) without a passage or a citation list, "
          f"not judged); "
          f"{len(distinct) - len(todo)} already judged by {judge.name} in {log_path}; {len(todo)} to judge with "
          f"{calls} model call(s); estimated cost {estimate_cost(todo, resolved.spec) if calls else '$0.00'}",
          file=out, flush=True)
    if args.dry_run:
        return 0
    stopped = ""
    if todo:
        try:
            with verdicts.appender() as append:
                # the lexical judge is CPU-bound and its stemmer is not thread-safe: one thread
                concurrency = args.concurrency if judge.kind == "model" else 1
                stopped = judge_pairs(todo, judge, concurrency=concurrency, on_record=append)
        except KeyboardInterrupt:
            print(f"{prog}: interrupted; verdicts so far are in {log_path}; rerun to finish and write {args.out}",
                  file=err)
            return 130
        except OSError as error:
            print(f"{prog}: cannot write {log_path} ({error.strerror or error})", file=err)
            return 2
        if stopped:
            print(f"{prog}: {stopped}", file=err)
    try:
        latest = {k: str(r.get("verdict") or INVALID) for k, r in verdicts.latest(judge.name).items()
                  if r["status"] != "error"}
        complete = write_counts(out_path, records, sides, latest, judge.name)
    except (SciArenaError, OSError) as error:
        print(f"{prog}: cannot write {args.out} ({getattr(error, 'strerror', None) or error})", file=err)
        return 2
    return _summary(distinct, latest, complete, len(records), args.out, out, err, prog)


def estimate_cost(pairs: Sequence[Pair], spec: "ModelSpec | None") -> str:
    """Dollars for one call per pair, from prompt length and catalogue prices."""
    if spec is None:
        return "$0.00"
    if spec.price_input_per_m is None or spec.price_output_per_m is None:
        return f"unknown (the catalogue has no prices for {spec.name})"
    tokens_in = sum(sum(len(m["content"]) for m in build_messages(p)) // CHARS_PER_TOKEN for p in pairs)
    tokens_out = OUTPUT_TOKENS_PER_CALL * len(pairs)
    dollars = (tokens_in * spec.price_input_per_m + tokens_out * spec.price_output_per_m) / 1e6
    return f"${dollars:.2f} (~{tokens_in:,} input and ~{tokens_out:,} output tokens)"


def write_counts(path: Path, records: Sequence[Mapping[str, Any]], sides: Sequence[Mapping[str, Any]],
                 verdicts: Mapping[str, str], judge: str) -> int:
    """Write the votes with their counts to ``path`` atomically; return how many sides have counts."""
    complete = 0
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_output(path) as handle:
        for record, pairs in zip(records, sides):
            augmented = dict(record)
            for side in SIDES:
                found = side_verdicts(pairs[side], verdicts)
                complete += found is not None
                augmented.update(count_fields(side, found))
            augmented["attribution_judge"] = judge
            handle.write(json.dumps(augmented, ensure_ascii=False) + "\n")
    return complete


def _check_paths(votes: Path, out: Path, log_file: Path) -> None:
    """The outputs must not be, or sit inside, the votes read (a rerun would read them as votes)."""
    if not votes.exists():
        return  # a Hub dataset id, or missing: load() says which
    source = votes.resolve()
    for option, target in (("--out", out), ("--log", log_file)):
        target = target.resolve()
        if target == source or (source.is_dir() and source in target.parents):
            raise AttributionInputError(f"{option} {target.name} is inside the votes read ({votes}); "
                                        "write it elsewhere")
    if out.resolve() == log_file.resolve():
        raise AttributionInputError("--out and --log must be different files")


def _summary(distinct: Mapping[str, Pair], latest: Mapping[str, str], complete: int, n_votes: int,
             out_name: str, out: TextIO, err: TextIO, prog: str) -> int:
    found = Counter(latest.get(k, "error") for k in distinct)
    print(f"verdicts for {len(distinct)} distinct pairs: " +
          ", ".join(f"{v} {found[v]}" for v in (*VERDICTS, INVALID, "error") if found[v]), file=out)
    print(f"wrote {n_votes} votes to {out_name}; {complete} of {2 * n_votes} answers have counts "
          "(an answer without citations counts 0; one with an unjudged pair or a missing passage gets null)",
          file=out)
    if found["error"]:
        print(f"{prog}: {found['error']} pair(s) without a verdict because calls failed; rerun with the same "
              "--out and --log files to retry them", file=err)
        return 1
    return 0

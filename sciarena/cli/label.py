"""``python -m sciarena label categories|disciplines|attribution``: label stored votes.

(``attribution`` judges citations; it lives in cli/label_attribution.py, see its docstring.)

    python -m sciarena label categories --votes PATH --model NAME --out FILE
    python -m sciarena label disciplines --votes PATH --model offline:classifier:discipline --out FILE

``--model`` is a catalogue model's display name (called through its provider) or an offline labeller,
named as the app records it in a vote's labeller fields: ``offline:rules`` (or ``offline:rules:category``,
``offline:rules:discipline``: the keyword rules of sciarena/arena/labels/rules.py) or
``offline:classifier:discipline`` (the text classifier the arena labels disciplines with,
sciarena/arena/labels/discipline_text.py); offline labellers make no calls and cost nothing. The number of
calls and the estimated cost are printed before any call is made (``--dry-run`` stops there).
Labels are appended to ``--out`` as they arrive; a rerun with the same file skips votes
already labelled by this model and retries failed calls. Bad input is one line on stderr and
exit code 2; exit code 1 when some calls failed (rerun to retry them); 130 when interrupted.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, TextIO

from sciarena.arena.labels.labellers import CATEGORY, CLASSIFIER_NAME, DISCIPLINE, OFFLINE_NAME, Task
from sciarena.cli.args import add_model_run_options
from sciarena.cli.common import settings_of
from sciarena.core.errors import SciArenaError

if TYPE_CHECKING:
    from sciarena.core.settings import Settings
    from sciarena.core.types import ModelSpec
    from sciarena.science.labelling.store import LabelLog, VoteQuestion

# A label's name is a few tokens; reasoning models think first and cost more than this says.
OUTPUT_TOKENS_PER_CALL = 8
CHARS_PER_TOKEN = 4  # a rough English average, for the estimate only
_STORED_FIELD = {"category": "question_type", "discipline": "subject"}


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register ``label`` with its ``categories`` and ``disciplines`` sub-commands; each sets ``run``."""
    parser = subparsers.add_parser(
        "label", help="label stored votes' questions with a model or the offline rules",
        description="Relabel the questions of stored votes: question category or discipline.")
    add_subcommands(parser.add_subparsers(dest="label_command", required=True))
    return parser


def add_subcommands(commands: argparse._SubParsersAction) -> None:
    """Add ``categories`` and ``disciplines`` to an existing ``label`` command's sub-commands."""
    for name, task, what in (("categories", CATEGORY, "the paper's question categories (appendix B.3)"),
                             ("disciplines", DISCIPLINE, "the four disciplines")):
        sub = commands.add_parser(name, help=f"label each vote's question with {what}",
                                  description=f"Label each vote's question with {what}; write one JSON line "
                                              "per vote.")
        sub.add_argument("--votes", required=True, metavar="PATH_OR_REPO",
                         help="a votes file or folder (our JSON lines, the released JSON array, Parquet) "
                              "or a Hub dataset id (owner/name)")
        sub.add_argument("--model", required=True, metavar="NAME",
                         help=f"a catalogue model's display name, {OFFLINE_NAME} (keyword rules) or, for "
                              f"disciplines, {CLASSIFIER_NAME} (the app's text classifier); offline ones make "
                              "no calls")
        sub.add_argument("--out", required=True, metavar="FILE",
                         help="labels file (JSON lines), appended to; a rerun skips votes already labelled")
        add_model_run_options(sub)
        sub.set_defaults(run=run, task=task)
    from sciarena.cli import label_attribution as attribution_cli  # start-up time: loaded only when this command runs

    sub = commands.add_parser("attribution", help="judge each cited passage against the sentence citing it",
                              description="Judge every (sentence, citation) pair of the votes' answers as "
                                          "supporting, irrelevant or contradicting; write the votes with per-side "
                                          "counts for `leaderboard --style supporting,irrelevant`.")
    attribution_cli.add_arguments(sub)
    sub.set_defaults(run=attribution_cli.run)


def run(args: argparse.Namespace, *, settings: "Settings | None" = None,
        out: TextIO | None = None, err: TextIO | None = None) -> int:
    """0 when every vote has a label (or a recorded invalid reply), 1 when calls failed, 2 on bad input."""
    from sciarena.core.errors import LabellingInputError  # start-up time: loaded only when this command runs
    from sciarena.science.labelling.resolve import resolve_labeller  # start-up time: loaded only when this command runs

    # start-up time: loaded only when this command runs
    from sciarena.science.labelling.store import LabelLog, distinct_questions, label_votes, pending
    from sciarena.votes.read import load  # start-up time: loaded only when this command runs

    out, err = out or sys.stdout, err or sys.stderr
    prog = f"sciarena label {args.label_command}"
    task: Task = args.task
    try:
        settings = settings or settings_of(args)  # the Hub token, even for the offline rules
        if args.timeout is not None:
            settings = dataclasses.replace(settings, generation_timeout_s=args.timeout)
        resolved = resolve_labeller(args.model, task, settings)
        labeller = resolved.labeller
        records = load(args.votes, token=settings.secret("HF_TOKEN"), cache_dir=args.cache_dir)
        items, skipped = vote_questions(records)
        items = items[: args.limit]
        if not items:
            without = f" ({skipped} record(s) without one)" if skipped else ""
            raise LabellingInputError(f"no votes with a question in {args.votes}{without}")
        log = LabelLog(args.out)
        done = log.latest(task.name, labeller.name)
    except (SciArenaError, ValueError) as error:
        print(f"{prog}: {error}", file=err)
        return 2
    todo = pending(items, done)
    calls = 0 if resolved.spec is None else len(distinct_questions(todo))  # offline labellers call nothing
    print(f"{len(items)} votes ({skipped} without a question skipped); {len(items) - len(todo)} already labelled "
          f"by {labeller.name} in {args.out}; {len(todo)} to label with {calls} model call(s); estimated cost "
          f"{estimate_cost(todo, task, resolved.spec) if calls else '$0.00'}", file=out, flush=True)
    if args.dry_run:
        return 0
    if not todo:
        return _summary(log, task, labeller.name, items, records, out, prog, err)
    try:
        with log.appender() as append:
            outcome = label_votes(todo, labeller, concurrency=args.concurrency, on_label=append)
    except KeyboardInterrupt:
        print(f"{prog}: interrupted; labels so far are in {args.out}", file=err)
        return 130
    except OSError as error:
        print(f"{prog}: cannot write {args.out} ({error.strerror or error})", file=err)
        return 2
    if outcome.stopped:
        print(f"{prog}: {outcome.stopped}", file=err)
    return _summary(log, task, labeller.name, items, records, out, prog, err)


def vote_questions(records: Sequence[Mapping[str, Any]]) -> tuple[list["VoteQuestion"], int]:
    """(vote id, question) for each record with a question; a record without an id is named by its hash."""
    # start-up time: loaded only when this command runs
    from sciarena.science.labelling.store import VoteQuestion, question_hash

    items, skipped = [], 0
    for record in records:
        question = record.get("question")
        if not isinstance(question, str) or not question.strip():
            skipped += 1
            continue
        vote_id = record.get("id")
        items.append(VoteQuestion(str(vote_id) if vote_id not in (None, "") else f"q:{question_hash(question)}",
                                  question))
    return items, skipped


def estimate_cost(items: Sequence["VoteQuestion"], task: Task, spec: "ModelSpec | None") -> str:
    """Dollars for one call per distinct question, from prompt length and catalogue prices."""
    from sciarena.science.labelling.store import distinct_questions  # start-up time: loaded only when this command runs

    if spec is None:
        return "$0.00"
    if spec.price_input_per_m is None or spec.price_output_per_m is None:
        return f"unknown (the catalogue has no prices for {spec.name})"
    groups = distinct_questions(items).values()
    tokens_in = sum(sum(len(m["content"]) for m in task.build_messages(g[0].question)) // CHARS_PER_TOKEN
                    for g in groups)
    tokens_out = OUTPUT_TOKENS_PER_CALL * len(groups)
    dollars = (tokens_in * spec.price_input_per_m + tokens_out * spec.price_output_per_m) / 1e6
    return f"${dollars:.2f} (~{tokens_in:,} input and ~{tokens_out:,} output tokens)"


def _summary(log: "LabelLog", task: Task, labeller: str, items: Sequence["VoteQuestion"],
             records: Sequence[Mapping[str, Any]], out: TextIO, prog: str, err: TextIO) -> int:
    latest = log.latest(task.name, labeller)
    mine = [latest[item.key] for item in items if item.key in latest]
    statuses = Counter(v.status for v in mine)
    labels = Counter(v.label for v in mine if v.status == "ok")
    print(f"{task.name} labels by {labeller} for {len(items)} votes: " +
          ", ".join(f"{s} {statuses[s]}" for s in ("ok", "invalid", "none", "error") if statuses[s]), file=out)
    for label in task.labels:
        print(f"  {label:<30} {labels[label]:>6}", file=out)
    stored_field = _STORED_FIELD[task.name]
    by_id = {str(r.get("id")): r.get(stored_field) for r in records if r.get("id") not in (None, "")}
    pairs = [(v.label, by_id.get(v.vote_id)) for v in mine if v.status == "ok" and by_id.get(v.vote_id)]
    if pairs:
        agree = sum(a == b for a, b in pairs)
        print(f"agrees with the stored {stored_field} on {agree} of {len(pairs)} votes "
              f"({100 * agree / len(pairs):.1f}%)", file=out)
    missing = len(items) - len(mine) + statuses["error"]
    if missing:
        print(f"{prog}: {missing} vote(s) without a label because calls failed; rerun with the same --out "
              "file to retry them", file=err)
        return 1
    return 0

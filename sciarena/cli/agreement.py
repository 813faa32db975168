"""``python -m sciarena agreement FIRST SECOND``: how often two sets of votes on the same battles agree.

    python -m sciarena agreement our-votes.jsonl judge-votes.jsonl [--format json] [--bootstrap 1000]

FIRST and SECOND are vote files or folders (or Hub dataset ids) in any schema ``leaderboard``
reads; votes are matched by ``id``. Printed: accuracy, weighted Cohen's κ (the weights are in
sciarena/science/agreement.py: A vs B a full disagreement, every other mismatch half of one) and plain κ,
overall and per discipline, each with a seeded bootstrap 95% CI, plus how many votes could not be
matched. Bad input is one line on stderr and exit code 2.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import TYPE_CHECKING, TextIO

from sciarena.cli.args import whole_number
from sciarena.cli.common import hub_token
from sciarena.core.errors import SciArenaError

if TYPE_CHECKING:
    from sciarena.science.agreement import Agreement, Estimate, Matched

WEIGHTS_NOTE = ("weighted κ: A vs B counts as a full disagreement, any other mismatch (a side vs tie or "
                "both-bad, tie vs both-bad) as half")


def add_parser(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register ``agreement``; sets ``run``."""
    parser = commands.add_parser(
        "agreement", help="accuracy and Cohen's κ between two sets of votes on the same battles",
        description="Compare two vote sets matched by id (e.g. human votes and a judge's, or two labellers): "
                    "accuracy, weighted and plain Cohen's κ, overall and per discipline, with bootstrap CIs.")
    parser.add_argument("first", metavar="FIRST", help="votes file, folder or Hub dataset id")
    parser.add_argument("second", metavar="SECOND", help="votes file, folder or Hub dataset id")
    parser.add_argument("--format", choices=("table", "json"), default="table")
    parser.add_argument("--bootstrap", type=whole_number(0), default=1000, metavar="N",
                        help="bootstrap rounds for the 95%% intervals (default 1000; 0 = none)")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    parser.add_argument("--min-votes", type=whole_number(1), default=1, metavar="K",
                        help="show a discipline only with at least K matched votes (default 1)")
    parser.add_argument("--cache-dir", default=None, help="where Hub files are downloaded")
    parser.set_defaults(run=run)
    return parser


def run(args: argparse.Namespace, *, out: TextIO | None = None, err: TextIO | None = None,
        token: str | None = None) -> int:
    """0 on success, 2 on bad input (unreadable files, no votes in common)."""
    # start-up time: loaded only when this command runs
    from sciarena.science.agreement import agreement_report, match_votes
    from sciarena.votes.read import load  # start-up time: loaded only when this command runs

    out, err = out or sys.stdout, err or sys.stderr
    try:
        if token is None:
            token = hub_token(args, (args.first, args.second))
        first = load(args.first, token=token, cache_dir=args.cache_dir)
        second = load(args.second, token=token, cache_dir=args.cache_dir)
        for name, records in ((args.first, first), (args.second, second)):
            if not records:
                raise SciArenaError(f"no votes in {name}")
        matched = match_votes(first, second)
        if len(matched) == 0:
            raise SciArenaError(f"no vote is in both sets with a usable outcome ({_unmatched(matched)}); "
                                "votes are matched by their id field")
        report = agreement_report(matched, rounds=args.bootstrap, seed=args.seed, min_votes=args.min_votes)
    except (SciArenaError, ValueError) as error:
        print(f"sciarena agreement: {error}", file=err)
        return 2
    if args.format == "json":
        doc = {"matched": len(matched), "only_first": matched.only_first, "only_second": matched.only_second,
               "without_id": matched.without_id, "unreadable_vote": matched.unreadable,
               "bootstrap": args.bootstrap, "seed": args.seed, "weights": WEIGHTS_NOTE,
               "scopes": [a.to_json() for a in report]}
        print(json.dumps(doc, indent=2, allow_nan=False), file=out)
        return 0
    print(_table(report, matched, args.bootstrap, args.seed), file=out)
    return 0


def _unmatched(matched: "Matched") -> str:
    return (f"{matched.only_first} only in the first, {matched.only_second} only in the second, "
            f"{matched.without_id} without an id, {matched.unreadable} with a vote that is not A, B, tie or bad")


def _cell(estimate: "Estimate", percent: bool = False) -> str:
    scale, fmt = (100.0, "{:.1f}") if percent else (1.0, "{:.3f}")
    if math.isnan(estimate.value):
        return "undefined"
    text = fmt.format(estimate.value * scale)
    if not math.isnan(estimate.lower):
        text += f" [{fmt.format(estimate.lower * scale)}, {fmt.format(estimate.upper * scale)}]"
    return text


def _table(report: list["Agreement"], matched: "Matched", rounds: int, seed: int) -> str:
    rows = [(a.scope, str(a.n), _cell(a.accuracy, percent=True), _cell(a.kappa_weighted), _cell(a.kappa))
            for a in report]
    head = ("scope", "votes", "accuracy %", "weighted κ", "κ")
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    lines = ["  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths)))
             for row in [head, *rows]]
    ci = f"95% bootstrap CIs, {rounds} rounds, seed {seed}" if rounds else "no bootstrap"
    return "\n".join([*lines, "", f"{len(matched)} votes matched by id ({_unmatched(matched)}); {ci}",
                      WEIGHTS_NOTE + "; κ undefined when both sets give one single outcome"])

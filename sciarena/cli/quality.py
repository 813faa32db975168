"""``sciarena quality``: which voters pass the anomaly and directional checks.

``add_parser(subparsers)`` registers the sub-command (``python -m sciarena``); ``main(argv)``
runs it standalone. Unreadable input is a message on stderr and exit code 2; votes that
cannot be checked (no voter ids, as in the released data) are an empty result and a note,
exit code 0. Never a traceback.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from typing import Any, Sequence, TextIO

from sciarena.cli.args import whole_number
from sciarena.cli.common import guarded, os_errors_said
from sciarena.science.quality.campaign import detect_campaigns
from sciarena.science.quality.check import DEFAULT_ALPHA, NO_VOTER_IDS, arrays_from_records, check_votes
from sciarena.science.quality.report import format_table, to_json
from sciarena.votes.read import load

DESCRIPTION = ("Check every voter with the paper's anomaly test (A.5) plus position-bias and "
               "consensus tests (Holm-corrected); list who is flagged and why, and any campaign of new "
               "voter ids lifting or sinking a model.")


def _alpha(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError("must be between 0 and 1")
    return value


def configure(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add the quality options to ``parser``."""
    parser.add_argument("--votes", action="append", required=True, metavar="PATH",
                        help="vote file, folder or Hub dataset id (owner/name); repeatable")
    parser.add_argument("--alpha", type=_alpha, default=DEFAULT_ALPHA,
                        help=f"chance of flagging an honest voter (default {DEFAULT_ALPHA:g})")
    parser.add_argument("--seed", type=whole_number(0), default=0,
                        help="seed of the A.5 checkpoints (default 0)")
    parser.add_argument("--format", choices=("table", "json"), default="table")
    return parser


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register the ``quality`` sub-command; its handler is ``run``."""
    parser = subparsers.add_parser("quality", help="flag anomalous voters", description=DESCRIPTION)
    configure(parser)
    parser.set_defaults(run=run)
    return parser


def read_votes(paths: Sequence[str]) -> list[dict[str, Any]]:
    """Records of every path, the first of each ``id`` kept (the same vote in two places counts once)."""
    seen: set[Any] = set()
    records: list[dict[str, Any]] = []
    for path in paths:
        for record in load(path):
            key = record.get("id")
            if key is not None:
                if key in seen:
                    continue
                seen.add(key)
            records.append(record)
    return records


def run(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Run the sub-command; returns the exit code (0 ok). Unreadable input raises; ``guarded`` (here in
    ``main``, or the ``python -m sciarena`` entry) says why on stderr, exit code 2."""
    out, err = out or sys.stdout, err or sys.stderr
    with os_errors_said("read the votes"):
        votes = arrays_from_records(read_votes(args.votes))
    # campaigns first, and the voter checks without their votes: the flags the default board uses
    found = detect_campaigns(votes.models, votes.voters, votes.voter, votes.a, votes.b, votes.outcome,
                             votes.times, alpha=args.alpha)
    report = check_votes(votes.subset(~found.drop), alpha=args.alpha, seed=args.seed)
    if report.voters:
        report = dataclasses.replace(report, campaigns=found.campaigns, total_votes=votes.n_votes)
    if not report.voters:
        print(f"sciarena quality: {report.notes[0] if report.notes else NO_VOTER_IDS}", file=err)
    print(to_json(report) if args.format == "json" else format_table(report), file=out)
    out.flush()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Standalone entry: ``python -c 'from sciarena.cli.quality import main; main()'``."""
    parser = configure(argparse.ArgumentParser(prog="sciarena quality", description=DESCRIPTION))
    args = parser.parse_args(argv)
    return guarded("quality", lambda: run(args))

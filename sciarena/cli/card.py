"""`python -m sciarena card`: the votes dataset card (README.md) the app writes, for a repo that has an older one."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register the ``card`` command."""
    parser = subparsers.add_parser(
        "card", help="write the votes dataset card (README.md) with the current schema's features",
        description="Write the dataset card the app publishes with a new votes repo. The app never replaces a "
                    "card already there, so after an upgrade that changed the vote schema, upload this one (or "
                    "copy its YAML header into yours) for `load_dataset` to read every file.")
    parser.add_argument("--repo", required=True, metavar="OWNER/NAME", help="the votes dataset repo it describes")
    parser.add_argument("--out", default="-", metavar="FILE", help="where to write (default '-': standard output)")
    parser.set_defaults(run=run)
    return parser


def run(args: argparse.Namespace) -> int:
    """Write the card; prints where it went."""
    from sciarena.votes.store.hub import dataset_card  # start-up time: loaded only when this command runs

    card = dataset_card(args.repo)
    if args.out == "-":
        sys.stdout.write(card)
        return 0
    Path(args.out).write_text(card, encoding="utf-8")
    print(f"wrote the dataset card for {args.repo} to {args.out}")
    return 0

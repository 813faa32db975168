"""`python -m sciarena export`: votes from a folder, file or Hub dataset → another layout."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from sciarena.cli.common import hub_token
from sciarena.core.errors import SciArenaError
from sciarena.votes.export import FORMATS


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register the ``export`` command."""
    parser = subparsers.add_parser(
        "export", help="export votes (e.g. in the released SciArena schema)",
        description="Read votes from a file, a folder or a Hugging Face dataset repo (owner/name), remove "
                    "duplicates by id, and write them in another layout.")
    parser.add_argument("--votes", required=True, metavar="PATH_OR_REPO",
                        help="a votes file or folder, or a Hub dataset id such as my-org/sciarena-votes")
    parser.add_argument("--to", choices=FORMATS, default="sciarena-release",
                        help="sciarena-release: one JSON array with the released SciArena fields; "
                             "jsonl: our full records, one per line")
    parser.add_argument("--out", required=True, metavar="FILE", help="where to write ('-' for standard output)")
    parser.add_argument("--cache-dir", type=Path, default=None,
                        help="where Hub files are downloaded (default: under the Hugging Face cache)")
    parser.set_defaults(run=run)
    return parser


def run(args: argparse.Namespace) -> int:
    """Export; prints a one-line summary, or a one-line error and returns 2."""
    from sciarena.votes.export import render, write_export  # start-up time: loaded only when this command runs
    from sciarena.votes.read import load  # start-up time: loaded only when this command runs

    try:
        token = hub_token(args, args.votes)
        records = load(args.votes, token=token, cache_dir=args.cache_dir)
        if args.out == "-":
            sys.stdout.write(render(records, args.to))
            return 0
        count = write_export(records, Path(args.out), args.to)
    except (SciArenaError, ValueError) as err:
        print(f"sciarena export: {err}", file=sys.stderr)
        return 2
    print(f"wrote {count} vote(s) to {args.out} ({args.to})")
    return 0

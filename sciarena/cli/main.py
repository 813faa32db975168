"""The command line: `python -m sciarena <command> …`.

Each command lives in its own module and registers itself here; only the one that runs is imported:
  leaderboard  rank models from stored votes        (sciarena/cli/leaderboard.py)
  index        build a local datastore from a corpus (sciarena/cli/index.py)
  export       write votes in the released SciArena schema (sciarena/cli/export.py)
  eval         SciArena-Eval: build the benchmark, score a judge (sciarena/cli/eval.py)
  quality      flag anomalous voters                  (sciarena/cli/quality.py)
  label        relabel stored votes: question categories, disciplines, citation attribution (sciarena/cli/label.py)
  agreement    accuracy and Cohen's κ between two vote sets    (sciarena/cli/agreement.py)
  stats        data statistics and failure cases of stored votes (sciarena/cli/stats.py)
  reviews      expert reviews as vote sets for `agreement` (sciarena/cli/reviews.py)
  card         the votes dataset card with the current schema's features (sciarena/cli/card.py)
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Sequence

from sciarena.cli.common import OneLineParser, guarded

# The commands in the order help lists them; each is the module sciarena.cli.<name>, with add_parser().
COMMANDS = ("leaderboard", "index", "export", "eval", "quality", "label", "agreement", "stats", "reviews", "card")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or of ``command`` alone when it names one: a command's module (the
    leaderboard's pulls in scipy, seconds on a busy machine) is imported only when that command runs,
    or when the top-level help lists them all."""
    names = (command,) if command in COMMANDS else COMMANDS
    parser = OneLineParser(prog="python -m sciarena", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    for name in names:
        importlib.import_module(f"sciarena.cli.{name}").add_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser(argv[0] if argv else None).parse_args(argv)
    return guarded(args.command, lambda: int(args.run(args)))

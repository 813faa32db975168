"""The command line: `python -m sciarena <command> …`.

Each command lives next to the code it drives and registers itself here:
  leaderboard  rank models from stored votes        (sciarena/leaderboard/cli.py)
  index        build a local datastore from a corpus (sciarena/retrieval/cli.py)
  export       write votes in the released SciArena schema (sciarena/votes/cli.py)
  eval         SciArena-Eval: build the benchmark, score a judge (sciarena/evaluation/cli.py)
  quality      flag anomalous voters                  (sciarena/quality/cli.py)
  label        relabel stored votes: question categories, disciplines, citation attribution (sciarena/labelling/cli.py)
  agreement    accuracy and Cohen's κ between two vote sets    (sciarena/agreement_cli.py)
  stats        data statistics and failure cases of stored votes (sciarena/analysis/cli.py)
  reviews      expert reviews as vote sets for `agreement` (sciarena/review_cli.py)
"""

from __future__ import annotations

import argparse
from typing import Sequence


def build_parser() -> argparse.ArgumentParser:
    from sciarena import agreement_cli, review_cli
    from sciarena.analysis import cli as stats_cli
    from sciarena.evaluation import cli as eval_cli
    from sciarena.labelling import cli as label_cli
    from sciarena.leaderboard import cli as leaderboard_cli
    from sciarena.quality import cli as quality_cli
    from sciarena.retrieval import cli as index_cli
    from sciarena.votes import cli as export_cli

    parser = argparse.ArgumentParser(prog="python -m sciarena", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    leaderboard_cli.add_parser(commands)
    index_cli.add_parser(commands)
    export_cli.add_parser(commands)
    eval_cli.add_parser(commands)
    quality_cli.add_parser(commands)
    label_cli.add_parser(commands)
    agreement_cli.add_parser(commands)
    stats_cli.add_parser(commands)
    review_cli.add_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.run(args))

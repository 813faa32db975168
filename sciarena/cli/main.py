"""The command line: `python -m sciarena <command> …`.

Each command lives next to the code it drives and registers itself here:
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
from typing import Sequence

from sciarena.cli.common import OneLineParser, guarded


def build_parser() -> argparse.ArgumentParser:
    from sciarena.cli import agreement as agreement_cli  # start-up time: loaded only when this command runs
    from sciarena.cli import card as card_cli  # start-up time: loaded only when this command runs
    from sciarena.cli import eval as eval_cli  # start-up time: loaded only when this command runs
    from sciarena.cli import export as export_cli  # start-up time: loaded only when this command runs
    from sciarena.cli import index as index_cli  # start-up time: loaded only when this command runs
    from sciarena.cli import label as label_cli  # start-up time: loaded only when this command runs
    from sciarena.cli import leaderboard as leaderboard_cli  # start-up time: loaded only when this command runs
    from sciarena.cli import quality as quality_cli  # start-up time: loaded only when this command runs
    from sciarena.cli import reviews as review_cli  # start-up time: loaded only when this command runs
    from sciarena.cli import stats as stats_cli  # start-up time: loaded only when this command runs

    parser = OneLineParser(prog="python -m sciarena", description=__doc__.splitlines()[0])
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
    card_cli.add_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return guarded(args.command, lambda: int(args.run(args)))

"""``python -m sciarena reviews REVIEWS --out DIR``: the expert reviews as the vote sets ``agreement`` compares.

    python -m sciarena reviews data/reviews --out review-sets
    python -m sciarena agreement data/votes review-sets/second-votes.jsonl      # inter-annotator agreement
    python -m sciarena agreement review-sets/round1.jsonl review-sets/round2.jsonl  # self-consistency

REVIEWS is a review file or folder (the Review tab writes ``<data_dir>/reviews``; the Hub copy is the
dataset's ``reviews/`` folder). Written to DIR: ``second-votes.jsonl`` (one review per battle, id = the
vote's id), ``round1.jsonl`` / ``round2.jsonl`` (a reviewer's first and repeat vote on the same battle,
matched by one id per battle and reviewer). Printed: how many of each, and the audit labels of the
original votes as the paper reports them (shares of the judged ones). Bad input: one line, exit 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TextIO

from sciarena.core.errors import SciArenaError

FILES = ("second-votes.jsonl", "round1.jsonl", "round2.jsonl")


def add_parser(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register ``reviews``; sets ``run``."""
    parser = commands.add_parser(
        "reviews", help="expert reviews as vote sets for agreement, and the audit labels",
        description="Split the Review tab's records into the vote sets `agreement` compares: second votes "
                    "(against the original votes) and first/repeat votes of one reviewer (self-consistency).")
    parser.add_argument("reviews", metavar="REVIEWS", help="review file or folder")
    parser.add_argument("--out", required=True, metavar="DIR", help="folder for the three files (created)")
    parser.set_defaults(run=run)
    return parser


def run(args: argparse.Namespace, *, out: TextIO | None = None, err: TextIO | None = None) -> int:
    from sciarena.core.files import atomic_output  # start-up time: loaded only when this command runs
    from sciarena.science.review import AUDIT_LABELS, review_sets  # start-up time: loaded only when this command runs

    out, err = out or sys.stdout, err or sys.stderr
    try:
        records = read_reviews(Path(args.reviews))
        if not records:
            raise SciArenaError(f"no reviews in {args.reviews}")
        if not all("audit" in r and "reviewer_id" in r for r in records):
            raise SciArenaError(f"{args.reviews}: not review records (they have no audit or reviewer_id field)")
        sets = review_sets(records)
        folder = Path(args.out)
        folder.mkdir(parents=True, exist_ok=True)
        for name, rows in zip(FILES, (sets.second, sets.round1, sets.round2)):
            with atomic_output(folder / name) as handle:
                handle.write("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    except (SciArenaError, OSError) as error:
        print(f"sciarena reviews: {error}", file=err)
        return 2
    judged = sum(n for label, n in sets.audits.items() if label != "cant_judge")
    print(f"{len(sets.second)} battle(s) with a second vote; {len(sets.round1)} repeat pair(s); "
          f"written to {folder}", file=out)
    for label, text in AUDIT_LABELS.items():
        share = "" if label == "cant_judge" or not judged else f" ({100 * sets.audits[label] / judged:.1f}% of judged)"
        print(f"  {text}: {sets.audits[label]}{share}", file=out)
    return 0


def read_reviews(path: Path) -> list[dict]:
    """Every review record under ``path`` — all of them: ``load`` keeps one record per id, and a battle's
    reviews share its id. A last line cut short (a writer mid-append) is skipped; any other bad line is an error."""
    from sciarena.votes.read import local_vote_files  # start-up time: loaded only when this command runs
    from sciarena.votes.read.parse import UNREADABLE, json_lines  # start-up time: loaded only when this command runs

    if not path.exists():
        raise SciArenaError(f"{path}: no such file or folder")
    records = []
    for file in local_vote_files(path):
        data = file.read_bytes()
        last = data.count(b"\n") + 1
        for number, value in json_lines(data):
            if value is UNREADABLE and number == last:
                break
            if not isinstance(value, dict):
                raise SciArenaError(f"{file}: line {number} is not a JSON object")
            records.append(value)
    return records

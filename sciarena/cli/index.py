"""``index``: build a local BM25 datastore from corpus files.

    python -m sciarena index --corpus papers.jsonl --corpus refs.bib --out data/index

Then run the app with ``SCIARENA_RETRIEVER=local:data/index``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any, Sequence

from sciarena.core.errors import RetrievalError
from sciarena.retrieval.passages import DEFAULT_PASSAGE_WORDS


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register the ``index`` command on an ``argparse`` subparsers object."""
    parser = subparsers.add_parser(
        "index",
        help="build a local BM25 index from .jsonl/.json/.bib files",
        description="Split papers into passages and build a BM25 index that "
        "SCIARENA_RETRIEVER=local:DIR can use.",
    )
    parser.add_argument("--corpus", action="append", required=True, type=Path, metavar="FILE",
                        help="a .jsonl, .json or .bib file of papers (repeatable)")
    parser.add_argument("--out", required=True, type=Path, metavar="DIR",
                        help="directory to write the index to (replaced if it holds an index)")
    parser.add_argument("--passage-words", type=int, default=DEFAULT_PASSAGE_WORDS, metavar="N",
                        help=f"maximum words per passage (default {DEFAULT_PASSAGE_WORDS})")
    parser.set_defaults(run=run)
    return parser


def run(args: argparse.Namespace) -> int:
    """Build and save the index; print counts and timings. Returns the exit status."""
    # Imported here so `python -m sciarena --help` does not pay for bm25s/scipy.
    from sciarena.retrieval.corpus import read_corpus  # start-up time: loaded only when this command runs
    from sciarena.retrieval.local import LocalIndex  # start-up time: loaded only when this command runs

    if args.passage_words < 20:
        print("sciarena index: --passage-words must be at least 20", file=sys.stderr)
        return 2
    try:
        started = time.perf_counter()
        pairs = read_corpus(args.corpus)
        read_s = time.perf_counter() - started
        index = LocalIndex.build(pairs, max_words=args.passage_words)
        build_s = time.perf_counter() - started - read_s
        index.save(args.out)
    except RetrievalError as err:
        print(f"sciarena index: {err}", file=sys.stderr)
        return 2
    total_s = time.perf_counter() - started
    print(f"indexed {index.num_papers} papers as {index.num_passages} passages "
          f"from {len(args.corpus)} file(s)")
    print(f"read {read_s:.2f} s, build {build_s:.2f} s, total {total_s:.2f} s -> {args.out}")
    print(f"use it with SCIARENA_RETRIEVER=local:{args.out}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Stand-alone entry point: ``python -m sciarena.cli.index index ...``."""
    parser = argparse.ArgumentParser(prog="python -m sciarena.cli.index")
    subparsers = parser.add_subparsers(dest="command", required=True)
    add_parser(subparsers)
    args = parser.parse_args(argv)
    return int(args.run(args))


if __name__ == "__main__":
    sys.exit(main())

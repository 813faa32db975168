"""Argument types shared by the ``python -m sciarena`` commands: a bad value gets argparse's
one-line usage error naming the option, never a traceback."""

from __future__ import annotations

import argparse
from typing import Callable


def whole_number(minimum: int) -> Callable[[str], int]:
    """An int option that must be at least ``minimum``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(
                "must not be negative" if minimum == 0 else f"must be at least {minimum}")
        return value

    return parse


def positive_number(text: str) -> float:
    """A float option that must be above zero."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError("must be positive")
    return value


def add_model_run_options(parser: argparse.ArgumentParser) -> None:
    """The options every batch of model calls over stored votes shares (``label categories``,
    ``label disciplines``, ``label attribution``)."""
    parser.add_argument("--concurrency", type=whole_number(1), default=4, help="calls in flight (default 4)")
    parser.add_argument("--limit", type=whole_number(1), default=None, metavar="N", help="only the first N votes")
    parser.add_argument("--timeout", type=positive_number, default=None, metavar="SECONDS",
                        help="per call, retries included (default: SCIARENA_GENERATION_TIMEOUT, 120)")
    parser.add_argument("--dry-run", action="store_true", help="print the calls and the cost, call nothing")
    parser.add_argument("--cache-dir", default=None, help="where Hub files are downloaded")

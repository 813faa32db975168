"""``sciarena leaderboard``: print the leaderboard of vote files, folders or Hub dataset ids.

``add_parser(subparsers)`` registers the sub-command (``python -m sciarena``);
``main(argv)`` runs it standalone. Bad input is a message on stderr and exit code 2,
never a traceback. Flagged voters' votes and redacted battles are left out unless
``--include-flagged`` / ``--include-redacted``; the footer (and ``"excluded"`` in JSON) says how many.
"""

from __future__ import annotations

import argparse
import logging
import sys
from typing import Sequence, TextIO

from sciarena.board import history
from sciarena.board.board import NO_INTERVAL, few_votes_note, has_interval, outcome_words
from sciarena.board.compute import (
    GROUP_KEYS,
    METHODS,
    PROVISIONAL_BATTLES,
    RATINGS,
    Leaderboard,
    compute_leaderboard,
    to_json,
)
from sciarena.board.elo import DEFAULT_K
from sciarena.board.fields import fields_by_discipline
from sciarena.board.style import PAPER_SAMPLE, STYLE_FEATURES, STYLE_PROCEDURES
from sciarena.board.table import Exclusions
from sciarena.cli.args import positive_number, whole_number
from sciarena.cli.common import guarded, hub_token
from sciarena.core.errors import LeaderboardInputError
from sciarena.core.text import counted, number
from sciarena.science.quality.vouch import load_votes

log = logging.getLogger(__name__)



def _style(text: str) -> tuple[str, ...]:
    names = tuple(dict.fromkeys(part.strip() for part in text.split(",") if part.strip()))
    unknown = [n for n in names if n not in STYLE_FEATURES]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown style feature(s) {', '.join(unknown) or '(none)'}; "
            f"choose from {','.join(STYLE_FEATURES)}")
    return names


def _anchor(text: str) -> tuple[str, float]:
    model, sep, rating = text.rpartition("=")
    try:
        if not sep or not model.strip():
            raise ValueError
        return model.strip(), float(rating)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected MODEL=RATING, got {text!r}") from None


def configure(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add the leaderboard options to ``parser``."""
    parser.add_argument("--votes", action="append", required=True, metavar="PATH",
                        help="vote file, folder or Hub dataset id (owner/name): JSON array, JSON lines "
                             "or Parquet; our schema, the released SciArena one or FastChat battles; "
                             "repeatable (a vote in two sources counts once)")
    parser.add_argument("--format", choices=("table", "json"), default="table")
    parser.add_argument("--bootstrap", type=whole_number(0), default=100, metavar="N",
                        help="bootstrap rounds for the shown rating (their mean) and the 95%% intervals (default 100; 0 = point fit, no interval)")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    parser.add_argument("--min-battles", type=whole_number(0), default=0, metavar="K",
                        help="hide models with fewer battles (default 0: every model, as the Leaderboard tab "
                             f"shows them, those under {PROVISIONAL_BATTLES} marked provisional; the paper's "
                             f"Table 2 lists from {PROVISIONAL_BATTLES})")
    parser.add_argument("--by", action="append", metavar="|".join(GROUP_KEYS + ("none",)),
                        choices=GROUP_KEYS + ("none",),
                        help="per-group rating columns (repeatable; default subject; turns: battles of one "
                             "question against battles with follow-up questions)")
    parser.add_argument("--method", choices=METHODS, default="bt",
                        help="bt = Bradley–Terry (default); elo = online Elo")
    parser.add_argument("--k", type=positive_number, default=DEFAULT_K,
                        help=f"online Elo K factor (default {DEFAULT_K:g})")
    parser.add_argument("--style", type=_style, default=(), metavar=",".join(STYLE_FEATURES),
                        help="control for these style features (Bradley–Terry only)")
    parser.add_argument("--style-procedure", choices=STYLE_PROCEDURES, default="ours",
                        help="votes and fits of style control: ours = all votes, ties and both-bad as half a "
                             "win, one joint fit (default); paper = the authors' released script: decisive votes "
                             "in which both answers cite, each feature fitted on its own; paper-sample = the "
                             f"paper's text: a sample of {PAPER_SAMPLE:,} decisive votes drawn with --seed, one "
                             "joint fit (docs/leaderboard.md)")
    parser.add_argument("--anchor", type=_anchor, default=None, metavar="MODEL=RATING",
                        help="shift ratings so MODEL has RATING (default: mean 1000)")
    parser.add_argument("--rating", choices=RATINGS, default="bootstrap-mean",
                        help="shown rating: bootstrap-mean (the authors' code, default) or point "
                             "(the fitted coefficient, as the paper defines it); the CI is the same")
    parser.add_argument("--as-of", default=None, metavar="DATE",
                        help="the board as it stood: only votes up to the end of DATE (YYYY-MM-DD, UTC) "
                             "or up to an ISO time; votes without a timestamp are left out")
    parser.add_argument("--include-flagged", action="store_true",
                        help="count the votes of voters the quality check flags (left out by default)")
    parser.add_argument("--include-redacted", action="store_true",
                        help="count battles whose answers were redacted for naming a model, or that revealed one "
                             "(identity_revealed), left out by default")
    parser.add_argument("--no-cache", action="store_true",
                        help="parse JSON lines files afresh, without the columnar copy")
    parser.add_argument("--cache-dir", default=None, metavar="DIR",
                        help="where Hub files are downloaded (default: under the Hugging Face cache)")
    return parser


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register the ``leaderboard`` sub-command; its handler is ``run``."""
    parser = subparsers.add_parser(
        "leaderboard", help="rank models from stored votes",
        description="Bradley–Terry ratings with 95% intervals from vote files.")
    configure(parser)
    parser.set_defaults(run=run)
    return parser


DASH = "—"


def _ci(lower: float, upper: float) -> str:
    return f"{number(lower, 1)}–{number(upper, 1)}" if has_interval(lower, upper) else DASH


def format_table(lb: Leaderboard) -> str:
    """A fixed-width text table with a short footer."""
    groups = [(key, g) for key in lb.by for g in lb.groups.get(key, ())]
    shown = "bootstrap mean" if lb.rating == "bootstrap mean" else "point"
    rating = f"{'SC rating' if lb.style else 'Rating'} ({shown})"
    # per-group columns are each group's own fit, without a bootstrap: point estimates
    head = ["Rank", "Model", rating, "95% CI", "Battles"] + [f"{g} (point)" for _, g in groups]
    body = []
    for row in lb.rows:
        cells = [str(row.rank), row.model + (" *" if row.provisional else ""),
                 number(row.rating, 1), _ci(row.ci_lower, row.ci_upper), str(row.battles)]
        for key, g in groups:
            value = row.groups.get(key, {}).get(g)
            cells.append("-" if value is None else number(value, 1))
        body.append(cells)
    widths = [max(len(r[c]) for r in [head] + body) for c in range(len(head))]
    right = {0, 2, 3, 4} | set(range(5, len(head)))

    def line(cells: list[str]) -> str:
        return "  ".join(c.rjust(w) if k in right else c.ljust(w)
                         for k, (c, w) in enumerate(zip(cells, widths))).rstrip()

    out = [line(head), line(["-" * w for w in widths])] + [line(r) for r in body]
    out.append("")
    out.append(f"{counted(lb.total_votes, 'vote')} ({outcome_words(lb)}) on {counted(len(lb.rows), 'model')}; {rating.lower()}"
               + (f" of {lb.bootstrap} rounds, seed {lb.seed}" if lb.bootstrap and shown == "bootstrap mean" else "")
               + ("; SC = style-controlled: " + ", ".join(c.feature for c in lb.style) if lb.style else "")
               + ("; group columns: each group's point estimate" if groups else ""))
    if any(r.provisional for r in lb.rows):
        out.append(f"* provisional: fewer than {PROVISIONAL_BATTLES} battles")
    if any(not has_interval(r.ci_lower, r.ci_upper) for r in lb.rows):
        out.append(f"{DASH} in 95% CI: " + (NO_INTERVAL if lb.bootstrap else "no bootstrap (--bootstrap 0)"))
    if note := few_votes_note(lb.total_votes):
        out.append(note)
    if lb.hidden:
        out.append(f"hidden (fewer than {lb.min_battles} battles): {', '.join(lb.hidden)}")
    if lb.skipped:
        out.append("skipped: " + ", ".join(f"{k}: {v}" for k, v in lb.skipped.items()))
    for c in lb.style:
        out.append(f"style {c.feature}: γ = {number(c.coefficient, 3, signed=True)} "
                   f"(95% CI {number(c.ci_lower, 3, signed=True)} to {number(c.ci_upper, 3, signed=True)})")
    out.extend(lb.notes)
    return "\n".join(out)


def run(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Run the sub-command; returns the exit code (0 ok, 2 refused: unusable input or nothing to rank)."""
    out, err = out or sys.stdout, err or sys.stderr
    by = tuple(b for b in (args.by or ["subject"]) if b != "none")
    table = load_votes(args.votes, cache=not getattr(args, "no_cache", False), texts=bool(args.style),
                       token=hub_token(args, args.votes), cache_dir=getattr(args, "cache_dir", None),
                       include_flagged=getattr(args, "include_flagged", False),
                       include_redacted=getattr(args, "include_redacted", False))
    as_of = getattr(args, "as_of", None)
    if as_of:
        cut = history.as_of(table, history.parse_cutoff(as_of))
        table = cut.table
        if cut.undated:
            print(f"sciarena leaderboard: --as-of left out {cut.undated} vote(s) without a timestamp", file=err)
    lb = compute_leaderboard(
        table, bootstrap=args.bootstrap, seed=args.seed, min_battles=args.min_battles,
        by=by, method=args.method, k=args.k, style=args.style or (), anchor=args.anchor,
        rating=getattr(args, "rating", "bootstrap-mean"),
        style_procedure=getattr(args, "style_procedure", "ours"))
    if not lb.rows:
        raise LeaderboardInputError(f"no model has at least {args.min_battles} battles ({counted(table.n_votes, 'vote')}); "
                                    "lower --min-battles")
    # The per-discipline columns stand on the votes' fields: say how they were decided.
    fields = fields_by_discipline(table) if "subject" in by and table.subjects else ""
    print(report(lb, table.excluded, args.format, fields), file=out)
    out.flush()
    return 0


def report(lb: Leaderboard, excluded: Exclusions | None, fmt: str, fields: str = "") -> str:
    """The table (with ``fields``, how the votes' fields were decided, and a line saying what was left out)
    or the JSON (with ``"excluded"``)."""
    if fmt == "json":
        return to_json(lb, excluded)
    note = excluded.describe(flags=True) if excluded else ""
    return format_table(lb) + "".join(f"\n{line}" for line in (fields, note) if line)


def main(argv: Sequence[str] | None = None) -> int:
    """Standalone entry: ``python -c 'from sciarena.cli.leaderboard import main; main()'``."""
    parser = configure(argparse.ArgumentParser(
        prog="sciarena leaderboard",
        description="Bradley–Terry ratings with 95% intervals from vote files."))
    args = parser.parse_args(argv)
    return guarded("leaderboard", lambda: run(args))

"""``sciarena stats``: the data statistics and failure cases of stored votes (§4.2, B.2, §5.3).

``add_parser(subparsers)`` registers the sub-command (``python -m sciarena``); ``main(argv)``
runs it standalone. ``--failures FILE`` writes the failure cases' records (JSON lines, each
with a ``failure`` field); ``--plots DIR`` writes the figures as PNG files. Bad input is a
message on stderr and exit code 2, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Sequence, TextIO

from sciarena.cli.args import whole_number
from sciarena.cli.common import guarded, hub_token, os_errors_said
from sciarena.core.errors import StatsInputError
from sciarena.core.text import counted
from sciarena.science.stats.fields import field_provenance
from sciarena.science.stats.stats import (
    BOTH_BAD,
    DEFAULT_MIN_BATTLES,
    DEFAULT_TOP,
    NO_TIMESTAMPS,
    TOP_MODEL_LOST,
    DataStats,
    Spread,
    Tally,
    compute_stats,
    failure_records,
    to_json,
)
from sciarena.votes.schema import OUTCOME_NAMES

DESCRIPTION = ("Vote outcomes, question categories, disciplines, per-model citation counts and answer "
               "lengths, votes per day, and the paper's failure cases (both-bad votes; a top model "
               "voted worse than a model outside the top).")


def configure(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add the stats options to ``parser``."""
    parser.add_argument("--votes", required=True, metavar="PATH",
                        help="vote file, folder or Hub dataset id (owner/name): our schema, the released "
                             "SciArena one or FastChat battles")
    parser.add_argument("--format", choices=("table", "json"), default="table")
    parser.add_argument("--plots", default=None, metavar="DIR", help="write the figures as PNG files into DIR")
    parser.add_argument("--failures", default=None, metavar="FILE",
                        help="write the failure cases' records (JSON lines, with a 'failure' field) to FILE")
    parser.add_argument("--top", type=whole_number(1), default=DEFAULT_TOP, metavar="K",
                        help=f"how many leaderboard models count as the top (default {DEFAULT_TOP}, as the paper)")
    parser.add_argument("--min-battles", type=whole_number(0), default=DEFAULT_MIN_BATTLES, metavar="N",
                        help=f"models on the leaderboard that picks the top (default {DEFAULT_MIN_BATTLES})")
    parser.add_argument("--bootstrap", type=whole_number(0), default=100, metavar="N",
                        help="bootstrap rounds of that leaderboard (default 100, as `leaderboard`)")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    parser.add_argument("--include-flagged", action="store_true",
                        help="count flagged voters' and campaigns' votes, as `leaderboard --include-flagged`")
    parser.add_argument("--include-redacted", action="store_true",
                        help="count battles with a redacted answer, as `leaderboard --include-redacted`")
    parser.add_argument("--cache-dir", default=None, metavar="DIR",
                        help="where Hub files are downloaded (default: under the Hugging Face cache)")
    parser.add_argument("--same-answers", default=None, metavar="DIR",
                        help="the app's record of battles not offered for a vote because both answers said the "
                             "same (default: a same-answers folder in or beside a local --votes folder)")
    return parser


def same_answers_folder(votes: str, given: str | None) -> Path | None:
    """Where the withheld battles are recorded: ``given``, else a ``same-answers`` folder in or beside the
    local votes folder (the app writes ``<data_dir>/same-answers`` beside ``<data_dir>/votes``)."""
    from sciarena.votes.store.same_answers import SAME_ANSWERS_SUBDIR  # loaded only when this command runs

    if given is not None:
        return Path(given)
    path = Path(votes)
    if not path.exists():
        return None  # a Hub dataset id: the app's local record is not part of it
    folder = path if path.is_dir() else path.parent
    for candidate in (folder / SAME_ANSWERS_SUBDIR, folder.parent / SAME_ANSWERS_SUBDIR):
        if candidate.is_dir():
            return candidate
    return None


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register the ``stats`` sub-command; its handler is ``run``."""
    parser = subparsers.add_parser("stats", help="data statistics and failure cases of stored votes",
                                   description=DESCRIPTION)
    configure(parser)
    parser.set_defaults(run=run)
    return parser


def _votes(count: int) -> str:
    return f"{count:,} vote" + ("" if count == 1 else "s")


def _pct(count: int, total: int) -> str:
    return f"{100.0 * count / total:.1f}%" if total else "-"


def _columns(rows: list[list[str]], right: set[int]) -> list[str]:
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
    return ["  " + "  ".join(c.rjust(w) if k in right else c.ljust(w)
                             for k, (c, w) in enumerate(zip(r, widths))).rstrip() for r in rows]


def _tally_lines(title: str, tally: Tally, votes: int) -> list[str]:
    rows = [[label, _votes(count), _pct(count, votes)] for label, count in tally.counts.items()]
    if tally.missing:
        rows.append(["(no label)", _votes(tally.missing), _pct(tally.missing, votes)])
    return [title] + _columns(rows, {1, 2})


def _spread(s: Spread | None, digits: int) -> tuple[str, str]:
    if s is None:
        return "-", "-"
    return f"{s.mean:,.{digits}f}", f"{s.median:,.0f} ({s.q1:,.0f}–{s.q3:,.0f})"


def format_table(stats: DataStats) -> str:
    """The statistics as text: every number next to what it counts."""
    n = stats.votes
    out = [f"Votes counted (the board's votes; every figure counts these): {n:,} of {stats.records:,} records read"]
    if stats.left_out:
        out.append(f"Usable votes left out, as on the board: {stats.left_out:,}. {stats.left_out_why}".rstrip())
    if stats.skipped:
        out.append("Records skipped: " + ", ".join(f"{k}: {v:,}" for k, v in stats.skipped.items()))
    out += ["", "Vote outcomes (votes, share of counted votes)"]
    out += _columns([[OUTCOME_NAMES.get(k, k), _votes(v), _pct(v, n)] for k, v in stats.outcomes.items()],
                    {1, 2})
    out.append("  A : B : tie : both bad = " + " : ".join(f"{v:,}" for v in stats.outcomes.values()))
    out += [""] + _tally_lines("Question categories (votes, share of counted votes)", stats.question_types, n)
    out += [""] + _tally_lines("Disciplines (votes, share of counted votes)", stats.subjects, n)
    out += ["", "Per model (over its answers; median with quartiles)"]
    head = ["Model", "Battles", "Avg citations", "Median citations", "Avg length (chars)", "Median length (chars)"]
    rows = [[m.model, f"{m.battles:,}", *_spread(m.citations, 2), *_spread(m.length, 0)] for m in stats.models]
    out += _columns([head, ["-" * len(h) for h in head]] + rows, {1, 2, 3, 4, 5})
    if stats.days:
        first, last = stats.days[0][0], stats.days[-1][0]
        out += ["", f"Votes per day (UTC; {counted(len(stats.days), 'day')} with votes, {first} to {last})"]
        out += _columns([[day, _votes(count)] for day, count in stats.days], {1})
    else:
        out += ["", f"Votes per day: {NO_TIMESTAMPS}"]
    f = stats.failures
    out += ["", "Failure cases (paper §5.3)"]
    out.append(f"  both bad: {_votes(f.count(BOTH_BAD))} ({_pct(f.count(BOTH_BAD), n)} of counted votes)")
    if f.top_models:
        out.append(f"  top {f.top} models: {', '.join(f.top_models)} — by the {f.leaderboard}")
        lost = f.count(TOP_MODEL_LOST)
        out.append(f"  a top-{f.top} model voted worse than a model outside the top {f.top}: {_votes(lost)} "
                   f"({_pct(lost, f.top_vs_other)} of the {f.top_vs_other:,} decisive top-vs-other votes)")
        out += _columns([[model, f"voted worse in {_votes(count)}"]
                         for model, count in f.losses_by_model().items()], {1})
    notes = [note for note in stats.notes if note != NO_TIMESTAMPS]  # said under "Votes per day"
    out += [""] + [f"note: {note}" for note in notes] if notes else []
    return "\n".join(out).rstrip()


def same_answers_line(withheld: int | None) -> str:
    """The table's line on battles withheld from the vote (None: no record of them was found)."""
    if withheld is None:
        return "Battles not offered for a vote (both answers said the same): no record found (--same-answers)"
    return (f"Battles not offered for a vote (both answers said the same): {withheld:,}"
            " — not votes, counted in no other figure")


def write_failures(records: Sequence[dict[str, Any]], stats: DataStats, path: str) -> int:
    """Write the failure cases' records as JSON lines (atomically); returns how many."""
    from sciarena.core.files import atomic_output  # start-up time: loaded only when this command runs

    rows = failure_records(records, stats.failures)
    with atomic_output(path) as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")
    return len(rows)


def run(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Run the sub-command; returns the exit code (0 ok). Unusable input or unwritable output raises;
    ``guarded`` (here in ``main``, or the ``python -m sciarena`` entry) says why on stderr, exit code 2."""
    from sciarena.votes.read import load  # start-up time: loaded only when this command runs

    out, err = out or sys.stdout, err or sys.stderr
    with os_errors_said("read the votes"):
        token = hub_token(args, str(args.votes))
        records = load(args.votes, token=token, cache_dir=args.cache_dir)
        if not records:
            raise StatsInputError(f"{args.votes}: no vote records")
        stats = compute_stats(records, top=args.top, min_battles=args.min_battles,
                              bootstrap=args.bootstrap, seed=args.seed, include_flagged=args.include_flagged,
                              include_redacted=args.include_redacted)
    written: list[str] = []
    if args.failures:
        with os_errors_said(f"write {args.failures}", brief=True):
            count = write_failures(records, stats, args.failures)
        written.append(f"wrote {count:,} failure case(s) to {args.failures}")
    if args.plots:
        with os_errors_said(f"write {args.plots}", brief=True):
            names = write_plots(stats, Path(args.plots))
        written.append(f"wrote {len(names)} figure(s) to {args.plots}: {', '.join(names)}")
    from sciarena.votes.store.same_answers import count_same_answers  # loaded only when this command runs

    folder = same_answers_folder(str(args.votes), args.same_answers)
    with os_errors_said("read the same-answer record"):
        withheld = None if folder is None else count_same_answers(folder)
    if args.format == "json":
        print(json.dumps({**json.loads(to_json(stats)), "same_answer_battles": withheld}, indent=2,
                         ensure_ascii=False), file=out)
    else:
        print(format_table(stats), file=out)
        print("", file=out)
        print(same_answers_line(withheld), file=out)
    if args.format != "json":  # how the per-discipline fields were decided (science/stats/fields.py)
        print("\n".join(field_provenance(records).lines()), file=out)
    for line in written:
        print(line, file=err)
    out.flush()
    return 0


def write_plots(stats: DataStats, folder: Path) -> list[str]:
    """Each figure of ``plots.FIGURES`` the statistics can draw, as ``folder/<name>.png``."""
    from sciarena.core.files import atomic_output  # start-up time: loaded only when this command runs
    from sciarena.science.stats.plots import FIGURES  # start-up time: loaded only when this command runs

    folder.mkdir(parents=True, exist_ok=True)
    names = []
    for name, draw in FIGURES.items():
        fig = draw(stats)
        if fig is None:
            continue
        with atomic_output(folder / f"{name}.png", "wb") as handle:
            fig.savefig(handle, format="png", dpi=150)
        names.append(f"{name}.png")
    return names


def main(argv: Sequence[str] | None = None) -> int:
    """Standalone entry: ``python -c 'from sciarena.cli.stats import main; main()'``."""
    parser = configure(argparse.ArgumentParser(prog="sciarena stats", description=DESCRIPTION))
    args = parser.parse_args(argv)
    return guarded("stats", lambda: run(args))

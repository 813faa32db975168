"""One view of the leaderboard, everything the tab shows for it: plain and style-controlled
Bradley–Terry, online Elo, head-to-head matrices, the rating history and the display rows.

A view is ``"overall"``, ``"subject:<discipline>"``, ``"question_type:<category>"`` or ``"turns:single-turn"`` /
``"turns:multi-turn"`` (battles without / with follow-up questions): the
ratings of that view are fitted on its votes only. Pure functions of a :class:`VoteTable`
and the catalogue facts (:class:`ModelFacts`); the UI memoises :func:`build_board`.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from sciarena.board import history
from sciarena.board.compute import PROVISIONAL_BATTLES, Leaderboard, compute_leaderboard
from sciarena.board.style import STYLE_FEATURES, style_matrix
from sciarena.board.table import VoteTable, played_only
from sciarena.board.views import (
    HeadToHead,
    cost_per_100_calls,
    head_to_head,
    mean_tokens,
)
from sciarena.core.errors import LeaderboardInputError
from sciarena.core.text import counted

NO_INTERVAL = "too few votes in this view for an interval"


def has_interval(lower: float, upper: float) -> bool:
    """False when the 95% interval is one number at the shown precision (0.1): a bootstrap of a handful
    of votes resamples the same few outcomes, and "1145.4–1145.4" would claim a certainty it lacks."""
    return bool(np.isfinite(lower) and np.isfinite(upper) and upper - lower >= 0.05)


OUTCOME_WORDS = {"A": "A better", "B": "B better", "tie": "tie", "bad": "both bad"}


def outcome_words(lb: Leaderboard) -> str:
    """"A better 1, B better 1, tie 1, both bad 1": what the board's votes said (goes after their count)."""
    return ", ".join(f"{OUTCOME_WORDS.get(k, k)} {v:,}" for k, v in lb.outcomes.items())


def few_votes_note(votes: int) -> str:
    """The view-level warning for a board resting on fewer than PROVISIONAL_BATTLES votes ("" otherwise)."""
    if votes >= PROVISIONAL_BATTLES:
        return ""
    return (f"This view rests on {counted(votes, 'vote')} (fewer than {PROVISIONAL_BATTLES}): "
            "its ratings, intervals and ranks say little yet.")


OVERALL = "overall"
VIEW_KINDS = {"subject": "Discipline", "question_type": "Category", "turns": "Turns"}
ELO_VS_BT = ("Online Elo updates two ratings after every vote, in the order the votes came in, so recent "
             "votes weigh more and the result depends on that order; Bradley–Terry fits all votes at once "
             "and ignores their order. They agree when strengths are stable; they differ when a model "
             "changed over time or when few votes decide. The board ranks by Bradley–Terry.")


@dataclass(frozen=True)
class ModelFacts:
    """What the catalogue knows about a model (None / "" when it does not)."""

    organisation: str = ""
    open_weights: bool | None = None
    release: str | None = None
    licence: str | None = None
    price_input_per_m: float | None = None
    price_output_per_m: float | None = None


def view_choices(table: VoteTable) -> list[tuple[str, str]]:
    """(label, key) for the view selector: overall, each discipline, each question category, and single- and
    multi-turn battles once both kinds have votes (before, that view would only repeat another)."""
    choices = [("Overall", OVERALL)]
    for by, label in VIEW_KINDS.items():
        names, codes = table.group_codes(by)
        counts = np.bincount(codes[codes >= 0], minlength=len(names))
        if by == "turns" and np.count_nonzero(counts) < 2:
            continue
        choices += [(f"{label}: {name} ({counted(int(n), 'vote')})", f"{by}:{name}")
                    for name, n in zip(names, counts) if n]
    return choices


def select_view(table: VoteTable, key: str) -> VoteTable:
    """The votes of one view, its models only those with a battle in it (one that never played there
    has no rating to show); raises for an unknown view or one with fewer than two models."""
    if key == OVERALL:
        return table
    by, _, name = key.partition(":")
    if by not in VIEW_KINDS:
        raise LeaderboardInputError(f"unknown view {key!r}")
    names, codes = table.group_codes(by)
    if name not in names:
        raise LeaderboardInputError(f"no votes in {VIEW_KINDS[by].lower()} {name!r}")
    sub = table.subset(codes == names.index(name))
    if np.unique(np.concatenate([sub.a, sub.b])).size < 2:
        raise LeaderboardInputError(f"{VIEW_KINDS[by].lower()} {name!r} has votes for one model only")
    return played_only(sub)


def style_features(table: VoteTable) -> tuple[str, ...]:
    """The style features the votes carry and that vary between answers, taken in STYLE_FEATURES
    order while the votes carrying all of them still let each one vary."""
    kept: tuple[str, ...] = ()
    for name in STYLE_FEATURES:
        values = table.features.get(name)
        if values is None or not np.isfinite(values).all(axis=1).any():
            continue
        try:
            style_matrix(table, kept + (name,))
        except LeaderboardInputError:
            continue
        kept += (name,)
    return kept


@dataclass(frozen=True, eq=False)
class Board:
    view: str
    table: VoteTable  # the view's votes
    plain: Leaderboard
    styled: Leaderboard | None  # None when style control is off or no feature is recorded
    elo: Leaderboard
    h2h: HeadToHead  # models in the plain board's order
    history: history.History | None
    tokens: Mapping[str, tuple[float, float]]
    last_vote: float | None  # epoch seconds of the newest vote in the view
    unplayed: tuple[str, ...] = ()  # models with votes elsewhere but no battle in this view: not ranked


def build_board(table: VoteTable, view: str = OVERALL, *, style: bool = False, rating: str = "bootstrap-mean",
                bootstrap: int = 100, seed: int = 0) -> Board:
    """Every table and fit the tab shows for ``view``."""
    sub = select_view(table, view)
    played = set(sub.models)
    plain = compute_leaderboard(sub, bootstrap=bootstrap, seed=seed, by=(), rating=rating)
    styled = None
    features = style_features(sub) if style else ()
    if features:
        styled = compute_leaderboard(sub, bootstrap=bootstrap, seed=seed, by=(), style=features, rating=rating)
    elo = compute_leaderboard(sub, bootstrap=0, method="elo", by=())
    return Board(view=view, table=sub, plain=plain, styled=styled, elo=elo,
                 h2h=head_to_head(sub, [r.model for r in plain.rows]),
                 history=history.rating_history(sub), tokens=mean_tokens(sub),
                 last_vote=history.last_vote(sub),
                 unplayed=tuple(m for m in table.models if m not in played))


def _cost(facts: ModelFacts | None, tokens: tuple[float, float] | None) -> float | None:
    if facts is None or tokens is None or facts.price_input_per_m is None or facts.price_output_per_m is None:
        return None
    return cost_per_100_calls(facts.price_input_per_m, facts.price_output_per_m, *tokens)


def _interval(prefix: str, lb: Leaderboard, row: Any) -> dict[str, float | None]:
    """The row's interval bounds, None without a bootstrap (a fit without one has no interval, and the
    table's "too few votes" note would be untrue for it)."""
    known = row is not None and lb.bootstrap > 0
    return {f"{prefix}ci_lower": row.ci_lower if known else None, f"{prefix}ci_upper": row.ci_upper if known else None}


def board_rows(board: Board, facts: Mapping[str, ModelFacts]) -> list[dict[str, Any]]:
    """One flat record per model (best first): the CSV rows and what the HTML table renders.

    Numbers stay numbers (None when unknown); formatting is the renderer's job."""
    styled = {r.model: r for r in board.styled.rows} if board.styled else {}
    rows = []
    for row in board.plain.rows:
        info = facts.get(row.model)
        entry: dict[str, Any] = {
            "rank": row.rank, "model": row.model, "provisional": row.provisional,
            "rating": row.rating, "battles": row.battles, **_interval("", board.plain, row),
        }
        if board.styled is not None:
            sc = styled.get(row.model)
            entry.update(style_rank=sc.rank if sc else None, style_rating=sc.rating if sc else None,
                         **_interval("style_", board.styled, sc))
        entry.update(
            organisation=(info.organisation or None) if info else None,
            open_weights=info.open_weights if info else None,
            release=info.release if info else None, licence=info.licence if info else None,
            cost_per_100_calls=_cost(info, board.tokens.get(row.model)),
        )
        rows.append(entry)
    return rows


CSV_HEADERS = {
    "rank": "Rank", "model": "Model", "provisional": "Provisional", "rating": "Rating",
    "ci_lower": "95% CI lower", "ci_upper": "95% CI upper", "battles": "Battles",
    "style_rank": "Style-controlled rank", "style_rating": "Style-controlled rating",
    "style_ci_lower": "Style-controlled 95% CI lower", "style_ci_upper": "Style-controlled 95% CI upper",
    "organisation": "Organisation", "open_weights": "Open weights", "release": "Release",
    "licence": "Licence", "cost_per_100_calls": "Cost / 100 calls (USD)",
}


def rows_csv(rows: Sequence[Mapping[str, Any]]) -> str:
    """CSV text of :func:`board_rows` (ratings to 0.1, empty cell when unknown)."""
    out = io.StringIO()
    keys = [k for k in CSV_HEADERS if rows and k in rows[0]]
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([CSV_HEADERS[k] for k in keys])
    for row in rows:
        cells = []
        for k in keys:
            value = row[k]
            if value is None:
                cells.append("")
            elif isinstance(value, bool):
                cells.append("yes" if value else "no")
            elif isinstance(value, float):
                cells.append(f"{value:.4f}" if k == "cost_per_100_calls" else f"{value:.1f}")
            else:
                cells.append(str(value))
        writer.writerow(cells)
    return out.getvalue()

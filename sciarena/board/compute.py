"""compute_leaderboard: the one pure function the UI, the CLI and notebooks share.

Shown rating (``rating=``): "bootstrap-mean", the mean over bootstrap rounds (what the
authors' released code shows; the point estimate when ``bootstrap=0``), or "point", the
fitted coefficient itself (how the paper's text defines it); ``Row.point`` always holds the
point estimate. The 95% interval of a plain Bradley–Terry board (with bootstrap rounds asked for) is the
point estimate ± 1.96 standard deviations under a weak N(0, 400²) prior on ratings
(``bradley_terry.prior_sd``: it held the true rating 0.95–0.98 of the time where the bootstrap
percentiles held it 0.92, benchmarks/bench_coverage.py), widened to hold the shown rating; with style
control or online Elo it is the 2.5/97.5 percentiles of the bootstrap ratings. Rank = 1 + the number of shown
models whose lower bound is above this model's upper bound, so models whose intervals
overlap share a rank. Ratings are centred on a mean of 1000 over all models with
votes, or shifted by one constant so ``anchor=(model, rating)`` holds for the shown
rating; the same constant moves every bootstrap round, so anchoring never changes an
interval's width. Per-group columns (subject, question type) are point fits of the
same method (plain Bradley–Terry when style control is on) on that group's votes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from sciarena.board import bradley_terry as bt
from sciarena.board import cells as vote_cells
from sciarena.board import elo
from sciarena.board.style import STYLE_PROCEDURES, StyleResult, fit_style, fit_style_paper
from sciarena.board.table import Exclusions, VoteTable
from sciarena.core.errors import LeaderboardInputError

Z95 = 1.959963984540054  # the normal 97.5 % quantile
PROVISIONAL_BATTLES = 100  # the paper lists only models with at least 100 votes
METHODS = ("bt", "elo")
RATINGS = ("bootstrap-mean", "point")
GROUP_KEYS = ("subject", "question_type", "turns")  # turns: single- vs multi-turn battles


@dataclass(frozen=True)
class Row:
    model: str
    rating: float
    ci_lower: float
    ci_upper: float
    rank: int
    battles: int
    provisional: bool  # fewer than PROVISIONAL_BATTLES battles
    point: float
    wins: int
    losses: int
    ties: int
    both_bad: int
    groups: Mapping[str, Mapping[str, float]] = field(default_factory=dict)  # by → group → rating


@dataclass(frozen=True)
class StyleCoefficient:
    feature: str
    coefficient: float  # bootstrap mean (point estimate without bootstrap)
    ci_lower: float
    ci_upper: float
    point: float


@dataclass(frozen=True)
class Leaderboard:
    rows: tuple[Row, ...]
    method: str
    rating: str  # "bootstrap mean" or "point estimate"
    bootstrap: int
    seed: int
    k: float | None
    total_votes: int
    outcomes: Mapping[str, int]
    skipped: Mapping[str, int]
    min_battles: int
    hidden: tuple[str, ...]  # models with fewer than min_battles battles
    by: tuple[str, ...]
    groups: Mapping[str, tuple[str, ...]]
    anchor: tuple[str, float] | None
    style: tuple[StyleCoefficient, ...] = ()
    style_votes_used: int = 0
    notes: tuple[str, ...] = ()
    style_procedure: str = "ours"  # which votes the style fit used (style.STYLE_PROCEDURES)


def _check(table: VoteTable, bootstrap: int, min_battles: int, by: Sequence[str], method: str,
           style: Sequence[str], anchor: tuple[str, float] | None, k: float, rating: str,
           style_procedure: str) -> None:
    if rating not in RATINGS:
        raise LeaderboardInputError(f"unknown rating {rating!r}; use 'point' or 'bootstrap-mean'")
    if method not in METHODS:
        raise LeaderboardInputError(f"unknown method {method!r}; use 'bt' or 'elo'")
    if bootstrap < 0 or min_battles < 0:
        raise LeaderboardInputError("bootstrap rounds and min_battles cannot be negative")
    if not k > 0:
        raise LeaderboardInputError("the Elo K factor must be positive")
    for key in by:
        if key not in GROUP_KEYS:
            raise LeaderboardInputError(f"cannot break down by {key!r}; use subject, question_type or turns")
    if style and method != "bt":
        raise LeaderboardInputError("style control works with the Bradley–Terry method only")
    if style_procedure not in STYLE_PROCEDURES:
        raise LeaderboardInputError(f"unknown style procedure {style_procedure!r}; use "
                                    f"{' or '.join(STYLE_PROCEDURES)}")
    if anchor is not None and anchor[0] not in table.models:
        raise LeaderboardInputError(f"anchor model {anchor[0]!r} has no votes")


def _bt_groups(table: VoteTable, by: str) -> list[dict[int, float]]:
    """Plain BT point fits per group of ``by``, each over the models present in that group, from the
    table's vote counts per (group, a, b, outcome) (``VoteTable.cells``: one pass, kept with the table)."""
    fitted = []
    for block in table.cells(by)[1:]:  # slot 0: group unknown
        present = np.flatnonzero(block.sum(axis=(1, 2)) + block.sum(axis=(0, 2)))
        if present.size < 2:
            fitted.append({})
            continue
        sub = block[np.ix_(present, present)].ravel()
        theta, _ = bt.fit_counts(bt.from_cells(sub, present.size))
        fitted.append(dict(zip(present.tolist(), bt.to_elo(theta).tolist())))
    return fitted


def _elo_point(table: VoteTable, mask: np.ndarray, k: float) -> dict[int, float]:
    present = np.unique(np.concatenate([table.a[mask], table.b[mask]]))
    if present.size < 2:
        return {}
    ratings = elo.table_elo(table, k=k, mask=mask)
    return {i: float(ratings[i]) for i in present.tolist()}


def _group_ratings(table: VoteTable, by: Sequence[str], method: str, k: float,
                   anchor: tuple[str, float] | None) -> tuple[dict, dict]:
    names: dict[str, tuple[str, ...]] = {}
    per_model: dict[int, dict[str, dict[str, float]]] = {}
    anchor_idx = table.models.index(anchor[0]) if anchor else -1
    for key in by:
        groups, codes = table.group_codes(key)
        names[key] = groups
        if method == "bt":
            fits = _bt_groups(table, key)
        else:
            fits = [_elo_point(table, codes == g, k) for g in range(len(groups))]
        for group, fitted in zip(groups, fits):
            if anchor and anchor_idx in fitted:
                shift = anchor[1] - fitted[anchor_idx]
                fitted = {i: r + shift for i, r in fitted.items()}
            for i, rating in fitted.items():
                per_model.setdefault(i, {}).setdefault(key, {})[group] = rating
    return names, per_model


@dataclass(frozen=True, eq=False)
class _Fit:
    point: np.ndarray  # (M,) Elo, NaN for models the fit could not rate
    boot: np.ndarray | None  # (rounds, M) or None without bootstrap
    notes: tuple[str, ...] = ()
    style: tuple[StyleCoefficient, ...] = ()
    style_used: int = 0
    sd: np.ndarray | None = None  # (M,) Elo: the weak-prior standard deviation (plain Bradley–Terry only)


def _fit_bt(table: VoteTable, bootstrap: int, seed: int) -> _Fit:
    counts = bt.from_cells(table.cells().ravel(), len(table.models))
    theta, ridged = bt.fit_counts(counts)
    notes = []
    if ridged:
        notes.append("the votes do not identify every rating (a model never lost or never "
                     "won, or groups never met): a N(0, 400²) prior on ratings was added")
    boot = None
    if bootstrap:
        boot_theta, n_ridged = bt.bootstrap_counts(counts, bootstrap, seed, start=theta)
        boot = bt.to_elo(boot_theta)
        if n_ridged and not ridged:
            notes.append(f"{n_ridged} bootstrap round(s) needed the N(0, 400²) prior")
    return _Fit(bt.to_elo(theta), boot, tuple(notes), sd=bt.NATURAL_TO_ELO * bt.prior_sd(counts, theta))


def _coefficients(fitted: StyleResult, bootstrap: int) -> list[StyleCoefficient]:
    out = []
    for s, feature in enumerate(fitted.features):
        samples = fitted.boot_gamma[:, s] if bootstrap else fitted.gamma[s: s + 1]
        lo, hi = np.percentile(samples, [2.5, 97.5])
        out.append(StyleCoefficient(feature, float(samples.mean()), float(lo), float(hi), float(fitted.gamma[s])))
    return out


def _procedure_note(fitted: StyleResult, fits: int, seed: int) -> str:
    """One sentence naming the procedure and what it left out (printed under the table and in JSON)."""
    if fitted.procedure == "ours":
        return ("style procedure 'ours': every vote carrying the features, ties and both-bad as half a win, "
                "all features in one fit")
    if fitted.procedure == "paper-sample":
        sample = (f", and {fitted.n_unsampled} decisive vote(s) beyond a sample of {fitted.n_used} "
                  f"(seed {seed})") if fitted.n_unsampled else ""
        return ("style procedure 'paper-sample' (the paper's appendix C.2): decisive votes only, all features "
                f"in one fit; it leaves out {fitted.n_undecided} tie and both-bad vote(s){sample}")
    each = (f"; each feature fitted on its own (supporting and irrelevant together), {fits} fits, "
            f"ratings from the {'+'.join(fitted.features)} fit") if fits > 1 else ""
    return ("style procedure 'paper' (the authors' released script): decisive votes in which both answers "
            f"cite at least once; it leaves out {fitted.n_undecided} tie and both-bad vote(s) and "
            f"{fitted.n_uncited} decisive vote(s) where an answer cites nothing or its count is unknown{each}")


def _fit_style(table: VoteTable, style: tuple[str, ...], bootstrap: int, seed: int, procedure: str) -> _Fit:
    if procedure == "paper":
        fits = fit_style_paper(table, style, bootstrap=bootstrap, seed=seed)
    else:
        fits = (fit_style(table, style, bootstrap=bootstrap, seed=seed, procedure=procedure),)
    fitted = fits[0]  # the ratings shown come from the first fit (the only one unless "paper")
    m = len(table.models)
    point = np.full(m, np.nan)
    point[fitted.models] = bt.to_elo(fitted.theta)
    boot = None
    if bootstrap:
        boot = np.full((bootstrap, m), np.nan)
        boot[:, fitted.models] = bt.to_elo(fitted.boot_theta)
    notes: tuple[str, ...] = ()
    if fitted.n_excluded:
        notes = (f"{fitted.n_excluded} vote(s) lack a style feature and are left out of the "
                 "style-controlled fit",)
    notes += (_procedure_note(fitted, len(fits), seed),)
    coefficients = [c for f in fits for c in _coefficients(f, bootstrap)]
    return _Fit(point, boot, notes, tuple(coefficients), fitted.n_used)


def _fit_elo(table: VoteTable, bootstrap: int, seed: int, k: float) -> _Fit:
    boot = elo.bootstrap_elo(table, bootstrap, seed, k=k) if bootstrap else None
    return _Fit(elo.table_elo(table, k=k), boot)


def compute_leaderboard(
    table: VoteTable,
    *,
    bootstrap: int = 100,
    seed: int = 0,
    min_battles: int = 0,
    by: Sequence[str] = ("subject",),
    method: str = "bt",
    k: float = elo.DEFAULT_K,
    style: Sequence[str] = (),
    anchor: tuple[str, float] | None = None,
    rating: str = "bootstrap-mean",
    style_procedure: str = "ours",
) -> Leaderboard:
    """Ratings, 95% intervals, ranks and breakdowns for the votes in ``table``.

    ``style_procedure`` chooses the votes and fits of style control: "ours" (all votes, ties as half a
    win, one joint fit), "paper" (the authors' released script: decisive votes where both answers cite,
    one fit per feature) or "paper-sample" (the paper's text: a decisive-vote sample, one joint fit);
    see style.py and docs/leaderboard.md."""
    by, style = tuple(dict.fromkeys(by)), tuple(dict.fromkeys(style))
    _check(table, bootstrap, min_battles, by, method, style, anchor, k, rating, style_procedure)
    m = len(table.models)
    if method == "elo":
        fit = _fit_elo(table, bootstrap, seed, k)
    elif style:
        fit = _fit_style(table, style, bootstrap, seed, style_procedure)
    else:
        fit = _fit_bt(table, bootstrap, seed)
    point, boot = fit.point, fit.boot
    if boot is not None:
        shown = boot.mean(axis=0) if rating == "bootstrap-mean" else point.copy()
        lower, upper = np.percentile(boot, [2.5, 97.5], axis=0)
        if fit.sd is not None:  # plain Bradley–Terry: the weak-prior interval (it holds 95 %; see prior_sd),
            # except where every round gave one number: a handful of votes resampled, said as no interval
            spread = upper - lower >= 0.05
            lower = np.where(spread, np.minimum(point - Z95 * fit.sd, shown), lower)
            upper = np.where(spread, np.maximum(point + Z95 * fit.sd, shown), upper)
    else:
        shown, lower, upper = point.copy(), point.copy(), point.copy()
    if anchor is not None:
        shift = anchor[1] - shown[table.models.index(anchor[0])]
        if not np.isfinite(shift):
            raise LeaderboardInputError(
                f"anchor model {anchor[0]!r} has no votes carrying the style features")
        shown, lower, upper, point = shown + shift, lower + shift, upper + shift, point + shift
    names, per_model = _group_ratings(table, by, method, k, anchor)
    battles, record = table.battles(), vote_cells.record(table.cells())
    keep = np.flatnonzero((battles >= min_battles) & np.isfinite(shown))
    shown_set = set(keep.tolist())
    hidden = tuple(table.models[i] for i in range(m) if i not in shown_set)
    keep = keep[np.argsort(-shown[keep], kind="stable")]
    rows = tuple(
        Row(
            model=table.models[i], rating=float(shown[i]), ci_lower=float(lower[i]),
            ci_upper=float(upper[i]), rank=1 + int((lower[keep] > upper[i]).sum()),
            battles=int(battles[i]), provisional=bool(battles[i] < PROVISIONAL_BATTLES),
            point=float(point[i]), wins=int(record[i, 0]), losses=int(record[i, 1]),
            ties=int(record[i, 2]), both_bad=int(record[i, 3]), groups=per_model.get(i, {}),
        )
        for i in keep.tolist()
    )
    return Leaderboard(
        rows=rows, method=method,
        rating="bootstrap mean" if boot is not None and rating == "bootstrap-mean" else "point estimate",
        bootstrap=bootstrap, seed=seed, k=k if method == "elo" else None,
        total_votes=table.n_votes,
        outcomes=dict(zip(("A", "B", "tie", "bad"), table.cells().sum(axis=(0, 1, 2)).tolist())),
        skipped=dict(table.skipped), min_battles=min_battles, hidden=hidden, by=by,
        groups=names, anchor=anchor, style=fit.style, style_votes_used=fit.style_used,
        notes=fit.notes, style_procedure=style_procedure,
    )


def _num(x: float) -> float:
    return round(float(x), 2)


def to_dict(lb: Leaderboard, excluded: Exclusions | None = None) -> dict[str, Any]:
    """The JSON-ready form (ratings rounded to 0.01), with what the vote table left out."""
    models = []
    for row in lb.rows:
        entry: dict[str, Any] = {
            "model": row.model, "rating": _num(row.rating), "ci_lower": _num(row.ci_lower),
            "ci_upper": _num(row.ci_upper), "rank": row.rank, "battles": row.battles,
            "provisional": row.provisional, "point_estimate": _num(row.point),
            "wins": row.wins, "losses": row.losses, "ties": row.ties, "both_bad": row.both_bad,
        }
        for key in lb.by:
            entry[f"by_{key}"] = {g: _num(r) for g, r in row.groups.get(key, {}).items()}
        models.append(entry)
    out: dict[str, Any] = {
        "models": models,
        "skipped": dict(lb.skipped),
        "total_votes": lb.total_votes,
        "outcomes": dict(lb.outcomes),
        "method": lb.method,
        "rating": lb.rating,
        "bootstrap": lb.bootstrap,
        "seed": lb.seed,
        "min_battles": lb.min_battles,
        "hidden_models": list(lb.hidden),
        "groups": {key: list(v) for key, v in lb.groups.items()},
        "anchor": None if lb.anchor is None else {"model": lb.anchor[0], "rating": lb.anchor[1]},
        "notes": list(lb.notes),
        "excluded": excluded.to_dict() if excluded else None,
    }
    if lb.k is not None:
        out["k"] = lb.k
    if lb.style:
        out["style"] = {
            "procedure": lb.style_procedure,
            "votes_used": lb.style_votes_used,
            "coefficients": [{"feature": c.feature, "coefficient": round(c.coefficient, 4),
                              "ci_lower": round(c.ci_lower, 4), "ci_upper": round(c.ci_upper, 4),
                              "point_estimate": round(c.point, 4)} for c in lb.style],
        }
    return out


def to_json(lb: Leaderboard, excluded: Exclusions | None = None, *, indent: int | None = 2) -> str:
    """The leaderboard as JSON text (the CLI's ``--format json``, the tab's download and ``/leaderboard``)."""
    return json.dumps(to_dict(lb, excluded), indent=indent, ensure_ascii=False, allow_nan=False)

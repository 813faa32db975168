"""The data statistics of the paper (§4.2 Figure 3, appendix B.2) and its failure cases (§5.3).

:func:`compute_stats` is a pure function from vote records (``sciarena.votes.read.records.load``) to a
:class:`DataStats`: vote outcomes, question categories, disciplines, per-model citation counts
and answer lengths, votes per day, and the failure cases. Records are read into columns by
the leaderboard's own reader (``records_to_raw`` with texts, then ``usable_votes``) and vouched as the
board vouches them (``science.quality.vouch.vouch_mask``: flagged voters, campaigns and redacted
battles left out unless included), so a vote counts here exactly when it counts on the leaderboard;
``DataStats.left_out`` says how many usable votes the board leaves out and why. A released-schema
record's citation count and answer length are counted from its citation list and answer text as there.

Failure cases, as the paper filters them (§5.3 "Analysis of Model Failure Case"):

- ``both_bad``: the voter judged both answers poor (vote "bad").
- ``top_model_lost``: one side is one of the leaderboard's top ``top`` models (3 in the paper),
  the other side is not, and the vote went to the other side. Ties and both-bad votes are not
  "voted worse". The top models are the first ``top`` rows of our Bradley–Terry leaderboard
  (``compute_leaderboard``: bootstrap-mean rating, models with at least ``min_battles``
  battles, as Table 2 lists only models with 100 votes or more) over the same counted votes,
  ordered by rating — not by the interval-based rank, which can give several models rank 1.

A vote is at most one case: a both-bad vote is not decisive.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from sciarena.board.compute import compute_leaderboard
from sciarena.board.table import Exclusions, VoteTable, leave_out, vote_table
from sciarena.core.errors import LeaderboardInputError, SciArenaError, StatsInputError
from sciarena.core.text import counted
from sciarena.core.types import DISCIPLINES, QUESTION_TYPES
from sciarena.science.quality.vouch import vouch_mask
from sciarena.votes.read.parse import records_to_raw
from sciarena.votes.read.raw import NUMERIC_COLUMNS, RawColumns, usable_votes
from sciarena.votes.schema import OUTCOME_A, OUTCOME_B, OUTCOME_BAD, OUTCOMES

BOTH_BAD = "both_bad"
TOP_MODEL_LOST = "top_model_lost"
FAILURE_CASES: tuple[str, ...] = (BOTH_BAD, TOP_MODEL_LOST)
DEFAULT_TOP = 3
DEFAULT_MIN_BATTLES = 100  # the paper's Table 2 lists only models with at least 100 votes
NO_TIMESTAMPS = ("no vote carries a timestamp (the released SciArena data has none), "
                 "so votes per day are not counted")


@dataclass(frozen=True)
class Tally:
    """Counted votes per label of one field: the paper's labels first, in its order (zeros kept),
    then any other label found, most votes first."""

    counts: Mapping[str, int]
    missing: int  # counted votes without a label

    @property
    def labelled(self) -> int:
        return sum(self.counts.values())


@dataclass(frozen=True)
class Spread:
    """One per-answer number (citation count, answer length) over a model's answers."""

    answers: int  # answers carrying the number
    mean: float
    minimum: float
    q1: float
    median: float
    q3: float
    maximum: float


@dataclass(frozen=True)
class ModelStats:
    model: str
    battles: int  # counted votes with the model on one side = its answers (the board's battles)
    citations: Spread | None  # None when none of its answers carries a citation count
    length: Spread | None  # answer length in characters


@dataclass(frozen=True)
class Failure:
    index: int  # position of the record in the records given to compute_stats
    case: str  # BOTH_BAD or TOP_MODEL_LOST
    loser: str = ""  # TOP_MODEL_LOST: the top model voted worse
    winner: str = ""  # TOP_MODEL_LOST: the model outside the top that won


@dataclass(frozen=True)
class Failures:
    top: int
    top_models: tuple[str, ...]  # empty when the leaderboard has fewer than ``top`` models
    leaderboard: str  # which leaderboard chose the top models
    top_vs_other: int  # decisive votes between a top model and a model outside the top
    cases: tuple[Failure, ...] = ()

    def count(self, case: str) -> int:
        return sum(1 for f in self.cases if f.case == case)

    def losses_by_model(self) -> dict[str, int]:
        """TOP_MODEL_LOST votes per top model, in leaderboard order."""
        out = {m: 0 for m in self.top_models}
        for f in self.cases:
            if f.case == TOP_MODEL_LOST:
                out[f.loser] += 1
        return out


@dataclass(frozen=True)
class DataStats:
    records: int  # records read
    votes: int  # votes the board counts (usable and vouched): everything below counts these
    skipped: Mapping[str, int]  # records that are not usable votes, by reason
    outcomes: Mapping[str, int]  # "A", "B", "tie", "bad" → votes
    question_types: Tally
    subjects: Tally
    models: tuple[ModelStats, ...]  # most battles first
    days: tuple[tuple[str, int], ...]  # (UTC date, votes) for each day with votes, in date order
    undated: int  # counted votes without a timestamp
    failures: Failures
    notes: tuple[str, ...] = field(default_factory=tuple)
    left_out: int = 0  # usable votes the board leaves out (flagged voters, campaigns, redacted battles)
    left_out_why: str = ""  # the board's sentence for them (Exclusions.describe)

    @property
    def usable(self) -> int:
        """Records that are usable votes, counted on the board or not."""
        return self.votes + self.left_out

    def counted_sentence(self) -> str:
        """What set of votes the figures count, in one or two sentences."""
        text = f"{self.records:,} records, {self.votes:,} of them votes counted on the board"
        if self.left_out:
            text += f" ({self.left_out:,} usable vote{'' if self.left_out == 1 else 's'} left out)"
        text += ". Every figure below counts those votes."
        return text + (f" {self.left_out_why}" if self.left_out_why else "")


def compute_stats(records: Sequence[Mapping[str, Any]], *, top: int = DEFAULT_TOP,
                  min_battles: int = DEFAULT_MIN_BATTLES, bootstrap: int = 100, seed: int = 0,
                  ranked: Sequence[str] | None = None, **vouching: Any) -> DataStats:
    """The statistics of ``records``; raises StatsInputError when no record is a usable vote.

    ``ranked``: the leaderboard's models, best first, when the caller already has them (the
    Leaderboard tab); otherwise a Bradley–Terry leaderboard (``bootstrap`` rounds, ``seed``,
    ``min_battles``) is fitted on the same votes. ``vouching``: ``vouch_mask``'s options
    (include_flagged, include_redacted, count_anonymous)."""

    if not records:
        raise StatsInputError("no vote records")
    try:
        raw = records_to_raw(list(records), texts=True)
    except SciArenaError as err:
        raise StatsInputError(str(err)) from None
    return stats_from_columns(raw, top=top, min_battles=min_battles, bootstrap=bootstrap, seed=seed, ranked=ranked,
                              **vouching)


def _board_votes(raw: RawColumns, usable: np.ndarray, vouching: Mapping[str, Any],
                 board: tuple[np.ndarray, Exclusions] | None
                 ) -> tuple[np.ndarray, VoteTable | None, Exclusions | None]:
    """(records the board counts, its vote table, what vouching left out): the usable votes less those
    the board's mask drops (``board``, the board service's) or else ``vouch_mask``. A table that cannot
    be made (one model) is left unvouched, as unrankable."""
    try:
        table = vote_table(raw)  # its rows are the usable records, in order
    except LeaderboardInputError:
        return usable, None, None
    drop, excluded = vouch_mask(table, **vouching) if board is None else board
    if len(drop) != table.n_votes:
        raise StatsInputError("the vote files changed while they were read; the next load counts them again")
    keep = usable.copy()
    keep[np.flatnonzero(usable)[drop]] = False
    try:
        return keep, leave_out(table, drop, excluded), excluded
    except LeaderboardInputError:
        return keep, None, excluded


def stats_from_columns(raw: RawColumns, *, top: int = DEFAULT_TOP, min_battles: int = DEFAULT_MIN_BATTLES,
                       bootstrap: int = 100, seed: int = 0, ranked: Sequence[str] | None = None,
                       board_vouching: tuple[np.ndarray, Exclusions] | None = None, board_models: int | None = None,
                       **vouching: Any) -> DataStats:
    """``compute_stats`` over columns the vote reader made (read with ``texts=True``, so lengths and
    citation counts a record does not store are counted): the Leaderboard tab's fast path.
    ``board_vouching``: the board service's (mask, exclusions) over these columns' usable votes, so the
    statistics count the board's votes without vouching them again (``vouching`` is then unused).
    ``board_models``: how many models the board that gave ``ranked`` lists, for the failure cases' note."""
    if top < 1:
        raise StatsInputError("the number of top models must be at least 1")
    usable = usable_votes(raw)
    if not usable.keep.any():
        detail = ", ".join(f"{k}: {v}" for k, v in usable.skipped.items())
        raise StatsInputError(f"none of the {len(raw)} records is a usable vote ({detail})")
    keep, table, excluded = _board_votes(raw, usable.keep, vouching, board_vouching)
    n = int(keep.sum())
    left_out = int(usable.keep.sum()) - n
    why = excluded.describe() if excluded is not None else ""
    if not n:
        raise StatsInputError(f"the board leaves out every usable vote: {why}")
    outcome = usable.outcome[keep]
    notes: list[str] = []
    models = _model_stats(raw, keep)
    for feature, what in (("citations", "a citation count (num_citations_a/b or a citations_a/b list)"),
                          ("length", "an answer text or length")):
        if all(getattr(m, feature) is None for m in models):
            notes.append(f"no answer carries {what}: no per-model {feature} statistics")
    days, undated = _per_day(raw.timestamp[keep])
    if undated == n:
        notes.append(NO_TIMESTAMPS)
    elif undated:
        notes.append(f"{undated} vote(s) without a timestamp are left out of the votes per day")
    failures, note = _failures(raw, table, keep, outcome, top, min_battles, bootstrap, seed, ranked, board_models)
    notes.extend(note)
    return DataStats(
        records=len(raw), votes=n, skipped=dict(usable.skipped),
        outcomes={name: int(c) for name, c in zip(OUTCOMES, np.bincount(outcome, minlength=len(OUTCOMES)))},
        question_types=_tally(raw.question_types, raw.question_type[keep], QUESTION_TYPES),
        subjects=_tally(raw.subjects, raw.subject[keep], DISCIPLINES),
        models=models, days=days, undated=undated, failures=failures, notes=tuple(notes),
        left_out=left_out, left_out_why=why,
    )


def _tally(vocab: tuple[str, ...], codes: np.ndarray, known: tuple[str, ...]) -> Tally:
    counts = np.bincount(codes[codes >= 0], minlength=len(vocab))
    found = {vocab[i]: int(c) for i, c in enumerate(counts) if c}
    ordered = {label: found.pop(label, 0) for label in known}
    ordered.update(sorted(found.items(), key=lambda kv: (-kv[1], kv[0])))
    return Tally(ordered, int((codes < 0).sum()))


def _spread(values: np.ndarray) -> Spread | None:
    values = values[np.isfinite(values)].astype(np.float64)
    if not values.size:
        return None
    lo, q1, median, q3, hi = np.percentile(values, [0, 25, 50, 75, 100])
    return Spread(int(values.size), float(values.mean()), float(lo), float(q1), float(median),
                  float(q3), float(hi))


def _model_stats(raw: RawColumns, keep: np.ndarray) -> tuple[ModelStats, ...]:
    who = np.concatenate([raw.model_a[keep], raw.model_b[keep]])
    numeric = raw.numeric[keep]

    def both_sides(feature: str) -> np.ndarray:
        a, b = NUMERIC_COLUMNS.index(f"{feature}_a"), NUMERIC_COLUMNS.index(f"{feature}_b")
        return np.concatenate([numeric[:, a], numeric[:, b]])

    citations, length = both_sides("citations"), both_sides("length")
    battles = np.bincount(who, minlength=len(raw.models))
    order = sorted(np.flatnonzero(battles).tolist(), key=lambda i: (-battles[i], raw.models[i]))
    return tuple(ModelStats(raw.models[i], int(battles[i]), _spread(citations[who == i]),
                            _spread(length[who == i])) for i in order)


def _per_day(seconds: np.ndarray) -> tuple[tuple[tuple[str, int], ...], int]:
    dated = np.isfinite(seconds)
    day = np.floor(seconds[dated] / 86400.0).astype(np.int64)
    days, counts = np.unique(day, return_counts=True)
    labels = np.datetime_as_string(days.astype("datetime64[D]"), unit="D")
    return tuple(zip(labels.tolist(), counts.tolist())), int((~dated).sum())


def _ranking(table: VoteTable | None, min_battles: int, bootstrap: int, seed: int
             ) -> tuple[tuple[str, ...], str, tuple[str, ...], int]:
    """(models with at least ``min_battles`` battles best first, how they were ranked, notes, models rated
    at all) from our Bradley–Terry leaderboard."""

    try:
        if table is None:
            raise LeaderboardInputError("fewer than two models have votes")
        lb = compute_leaderboard(table, bootstrap=bootstrap, seed=seed, min_battles=min_battles, by=())
    except SciArenaError as err:
        return (), "Bradley–Terry leaderboard", (f"no leaderboard ({err}): no top models",), 0
    how = (f"Bradley–Terry leaderboard over the same votes ({lb.rating}"
           + (f" of {bootstrap} rounds, seed {seed}" if bootstrap else "")
           + f"; models with at least {min_battles} battles)")
    return tuple(r.model for r in lb.rows), how, lb.notes, len(lb.rows) + len(lb.hidden)


def _failures(raw: RawColumns, table: VoteTable | None, keep: np.ndarray, outcome: np.ndarray, top: int,
              min_battles: int, bootstrap: int, seed: int, ranked: Sequence[str] | None,
              rated: int | None = None) -> tuple[Failures, list[str]]:
    notes: list[str] = []
    if ranked is None:
        ranked, how, fit_notes, rated = _ranking(table, min_battles, bootstrap, seed)
        notes.extend(fit_notes)
        # the leaderboard itself lists every rated model (those under 100 battles provisional): name both
        listed = (f"{counted(len(ranked), 'model')} listed with at least {min_battles} battles "
                  f"({counted(rated, 'model')} rated)")
        hint = " (lower --min-battles or --top)"
    else:
        # The page's board: ``rated`` is what its table lists, ``ranked`` those with the battles asked for.
        ranked, how, hint = tuple(ranked), "the leaderboard given", ""
        verb = "has" if len(ranked) == 1 and rated == 1 else "have"
        listed = f"{len(ranked):,} of the {counted(rated, 'model')} on the leaderboard {verb} at least " \
                 f"{min_battles} battles" if rated is not None else \
                 f"{counted(len(ranked), 'model')} on the leaderboard {verb} at least {min_battles} battles"
    top_models = tuple(ranked[:top])
    if len(top_models) < top:
        notes.append(f"{listed}, fewer than the top {top}: no top-model failure cases yet{hint}")
        top_models = ()
    index = np.flatnonzero(keep)
    a, b = raw.model_a[keep], raw.model_b[keep]
    is_top = np.zeros(len(raw.models) + 1, dtype=bool)
    is_top[[raw.models.index(m) for m in top_models if m in raw.models]] = True
    winner = np.where(outcome == OUTCOME_A, a, b)
    loser = np.where(outcome == OUTCOME_A, b, a)
    decisive = (outcome == OUTCOME_A) | (outcome == OUTCOME_B)
    mixed = decisive & (is_top[a] != is_top[b])
    lost = mixed & is_top[loser]
    cases = [Failure(int(index[k]), BOTH_BAD) if outcome[k] == OUTCOME_BAD else
             Failure(int(index[k]), TOP_MODEL_LOST, raw.models[loser[k]], raw.models[winner[k]])
             for k in np.flatnonzero((outcome == OUTCOME_BAD) | lost).tolist()]
    return Failures(top, top_models, how, int(mixed.sum()), tuple(cases)), notes


def failure_records(records: Sequence[Mapping[str, Any]], failures: Failures) -> list[dict[str, Any]]:
    """The failure cases' records as they are, each with a ``failure`` field naming its case."""
    return [{**records[f.index], "failure": f.case} for f in failures.cases]


def to_dict(stats: DataStats) -> dict[str, Any]:
    """The JSON-ready form: every count named, shares in percent of the counted votes."""
    def share(count: int, total: int) -> float:
        return round(100.0 * count / total, 2) if total else 0.0

    def tally(t: Tally) -> dict[str, Any]:
        return {"votes": [{"label": k, "votes": v, "percent": share(v, stats.votes)} for k, v in t.counts.items()],
                "without_label": t.missing}

    def spread(s: Spread | None) -> dict[str, Any] | None:
        return None if s is None else {k: (v if k == "answers" else round(v, 2)) for k, v in asdict(s).items()}

    f = stats.failures
    return {
        "records_read": stats.records,
        "usable_votes": stats.usable,
        "counted_votes": stats.votes,  # what every figure below counts: the board's votes
        "left_out_votes": stats.left_out,
        "left_out_why": stats.left_out_why,
        "skipped": dict(stats.skipped),
        "outcomes": {k: {"votes": v, "percent": share(v, stats.votes)} for k, v in stats.outcomes.items()},
        "question_types": tally(stats.question_types),
        "subjects": tally(stats.subjects),
        "models": [{"model": m.model, "battles": m.battles, "citation_count": spread(m.citations),
                    "answer_length_chars": spread(m.length)} for m in stats.models],
        "votes_per_day": [{"date": d, "votes": c} for d, c in stats.days],
        "votes_without_timestamp": stats.undated,
        "failures": {
            "top": f.top, "top_models": list(f.top_models), "chosen_by": f.leaderboard,
            "both_bad": f.count(BOTH_BAD), "top_model_lost": f.count(TOP_MODEL_LOST),
            "top_vs_other_decisive_votes": f.top_vs_other,
            "top_model_lost_by_model": f.losses_by_model(),
        },
        "notes": list(stats.notes),
    }


def to_json(stats: DataStats, *, indent: int | None = 2) -> str:
    return json.dumps(to_dict(stats), indent=indent, ensure_ascii=False, allow_nan=False)

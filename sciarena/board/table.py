"""The vote table every leaderboard computation reads, and how it is made from votes.

:func:`vote_table` turns what the vote readers produce (``sciarena.votes.read.raw.RawColumns``)
or plain vote records into a :class:`VoteTable`: model indices, outcome codes, style
features, with every vote it cannot use counted by reason instead of dropped silently.
Reading files, the columnar copy and deduplication are ``sciarena.votes``' business.
:func:`read_table` reads sources into a table. Which votes count is a filter step the caller
chooses (``sciarena.science.quality.vouch``, which the board never imports): it marks votes to
drop and :func:`leave_out` removes them, recording on the table what was left out and why
(:class:`Exclusions`) so that every view can say so.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from sciarena.board.cells import battles as cell_battles
from sciarena.board.cells import count_cells, keep_models
from sciarena.core.errors import LeaderboardInputError
from sciarena.votes.read import read_columns
from sciarena.votes.read.parse import records_to_raw
from sciarena.votes.read.raw import FEATURES, RawColumns, usable_votes
from sciarena.votes.schema import OUTCOME_BAD


@dataclass(frozen=True)
class Exclusions:
    """What a filter step (vouching) left out of a table, and what it could not check."""

    flagged_voters: int = 0  # voters the quality check flagged
    flagged_votes: int = 0  # their votes (left out unless include_flagged)
    redacted_votes: int = 0  # battles with a redacted answer (left out unless include_redacted)
    left_out: int = 0  # votes actually left out (a flagged voter's redacted battle counts once)
    checked_voters: int = 0
    unchecked_votes: int = 0  # votes without a voter id (the released data): kept, not checked
    include_flagged: bool = False
    include_redacted: bool = False
    alpha: float = 0.05
    seed: int = 0
    campaigns: int = 0  # campaigns detected (sciarena.science.quality.campaign)
    campaign_votes: int = 0  # new voters' votes in battles with a campaign's model (left out unless include_flagged)
    anonymous_votes: int = 0  # votes without a signed-in voter, left out when the operator counts only signed-in votes
    campaigns_counted_again: int = 0  # detected campaigns whose votes the guard counted again (leaving them out would do harm)
    campaign_warnings: tuple[str, ...] = ()  # the guard's remarks, one per campaign it had one for, to say on the board

    def describe(self, *, flags: bool = False) -> str:
        """One or two sentences for a page or a CLI footer (``flags``: name the CLI options)."""
        parts = []
        if self.flagged_votes:
            what = f"{self.flagged_votes:,} vote(s) from {self.flagged_voters:,} flagged voter(s)"
            parts.append(f"counted {what}" if self.include_flagged else
                         f"left out {what}" + (" (--include-flagged counts them)" if flags else ""))
        if self.campaign_votes:
            what = (f"{self.campaign_votes:,} vote(s) in {self.campaigns:,} detected "
                    "campaign(s)")
            parts.append(f"counted {what}" if self.include_flagged else
                         f"left out {what}" + (" (--include-flagged counts them)" if flags else ""))
        if self.campaign_warnings:
            parts.append("campaign filter: " + "; ".join(self.campaign_warnings))
        if self.anonymous_votes:
            parts.append(f"left out {self.anonymous_votes:,} vote(s) without sign-in (SCIARENA_COUNT_ANONYMOUS=0)")
        if self.redacted_votes:
            what = (f"{self.redacted_votes:,} battle(s) whose answers were redacted for naming a model or that "
                    "revealed one (a name reached the voter, or the voter asked who a model is)")
            parts.append(f"counted {what}" if self.include_redacted else
                         f"left out {what}" + (" (--include-redacted counts them)" if flags else ""))
        text = "; ".join(parts)
        text = text[:1].upper() + text[1:] + "." if text else ""
        checked = (f"{self.checked_voters:,} voter(s) checked (α = {self.alpha:g}), none flagged."
                   if self.checked_voters and not self.flagged_voters else "")
        unchecked = (f"{self.unchecked_votes:,} vote(s) without a voter id kept unchecked."
                     if self.unchecked_votes else "")
        return " ".join(x for x in (text, checked, unchecked) if x)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


# The ``turns`` breakdown's groups: battles of one question, and battles with follow-up questions.
TURN_GROUPS: tuple[str, ...] = ("single-turn", "multi-turn")


@dataclass(frozen=True, eq=False)
class VoteTable:
    """Usable votes as arrays; ``models``/``subjects``/``question_types`` name the codes.

    ``outcome`` uses OUTCOME_A/B/TIE/BAD; ``subject``/``question_type`` are -1 when
    unknown; ``features[name]`` is a float32 (n, 2) array (side a, side b; NaN when
    absent); ``skipped`` counts the votes that could not be used, by reason.
    """

    models: tuple[str, ...]
    a: np.ndarray
    b: np.ndarray
    outcome: np.ndarray
    subjects: tuple[str, ...]
    subject: np.ndarray
    question_types: tuple[str, ...]
    question_type: np.ndarray
    features: Mapping[str, np.ndarray]
    timestamp: np.ndarray
    skipped: Mapping[str, int] = field(default_factory=dict)
    sources: tuple[str, ...] = ()
    voters: tuple[str, ...] = ()
    voter: np.ndarray | None = None  # int32 codes into ``voters``, -1 = no voter id; None = none known
    redacted: np.ndarray | None = None  # bool: an answer was redacted for naming a model; None = none known
    excluded: Exclusions | None = None  # set by ``vouched``: what it left out
    asker: np.ndarray | None = None  # bool: the asker chose the vote's field (subject_source "asker"); None = unknown
    # Vote counts per grouping (``cells``), filled on first use: the arrays never change after the
    # table is made, so the counts of a grouping are computed once (``dataclasses.replace`` starts empty).
    _cells: dict[str, np.ndarray] = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def n_votes(self) -> int:
        return int(self.a.shape[0])

    def cells(self, by: str = "") -> np.ndarray:
        """(G + 1, M, M, 4) vote counts per (group of ``by``, a, b, outcome); slot 0 is "group unknown".
        ``by=""``: no grouping, (1, M, M, 4), summed from the subject counts (one pass gives both)."""
        found = self._cells.get(by)
        if found is None:
            if by:
                groups, codes = self.group_codes(by)
                found = count_cells(self.a, self.b, self.outcome, len(self.models), codes, len(groups))
            else:
                found = self.cells("subject").sum(axis=0, keepdims=True)
            self._cells[by] = found
        return found

    def battles(self) -> np.ndarray:
        """Battles per model (every outcome counts)."""
        return cell_battles(self.cells())

    def group_codes(self, by: str) -> tuple[tuple[str, ...], np.ndarray]:
        """(group names, per-vote group code) for ``by`` in {"subject", "question_type", "turns"}."""
        if by == "subject":
            return self.subjects, self.subject
        if by == "question_type":
            return self.question_types, self.question_type
        if by == "turns":  # a record without num_turns (before schema 5, released data) is one question
            turns = self.features["turns"][:, 0]
            return TURN_GROUPS, (np.isfinite(turns) & (turns > 1)).astype(np.int16)
        raise LeaderboardInputError(f"cannot break the leaderboard down by {by!r}; "
                                    "use 'subject', 'question_type' or 'turns'")

    def subset(self, mask: np.ndarray) -> "VoteTable":
        """The votes selected by a boolean mask (vocabularies kept)."""
        return VoteTable(
            models=self.models, a=self.a[mask], b=self.b[mask], outcome=self.outcome[mask],
            subjects=self.subjects, subject=self.subject[mask],
            question_types=self.question_types, question_type=self.question_type[mask],
            features={k: v[mask] for k, v in self.features.items()},
            timestamp=self.timestamp[mask], skipped=self.skipped, sources=self.sources,
            voters=self.voters, voter=None if self.voter is None else self.voter[mask],
            redacted=None if self.redacted is None else self.redacted[mask], excluded=self.excluded,
            asker=None if self.asker is None else self.asker[mask],
        )


def _compact(vocab: tuple[str, ...], codes: np.ndarray) -> tuple[tuple[str, ...], np.ndarray]:
    """Drop unused words and sort the vocabulary, so tables are deterministic."""
    used = np.flatnonzero(np.bincount(codes + 1, minlength=len(vocab) + 1)[1:])
    names = [vocab[i] for i in used]
    order = sorted(range(len(names)), key=names.__getitem__)
    table = np.full(len(vocab) + 1, -1, dtype=np.int32)
    table[used[order]] = np.arange(len(order), dtype=np.int32)
    return tuple(names[i] for i in order), table[codes]


def vote_table(votes: RawColumns | Iterable[Mapping[str, Any]], *, sources: Sequence[str] = ()) -> VoteTable:
    """The usable votes of raw columns or of vote records (dicts); raises when none are usable
    or only one model has votes."""
    if not isinstance(votes, RawColumns):
        votes = records_to_raw(list(votes), texts=True)
    raw = votes
    shown = ", ".join(sources[:3]) + (f" and {len(sources) - 3} more" if len(sources) > 3 else "")
    where = f" in {shown}" if sources else ""
    usable = usable_votes(raw)
    keep, skipped = usable.keep, dict(usable.skipped)
    if not keep.any():
        detail = f" (skipped: {skipped})" if skipped else ""
        raise LeaderboardInputError(f"no usable votes{where}{detail}")
    models, ab = _compact(raw.models, np.concatenate([raw.model_a[keep], raw.model_b[keep]]))
    n = int(keep.sum())
    if len(models) < 2:
        raise LeaderboardInputError(f"only one model ({models[0]!r}) has votes{where}; "
                                    "a leaderboard needs at least two")
    subjects, subject = _compact(raw.subjects, raw.subject[keep])
    qtypes, qtype = _compact(raw.question_types, raw.question_type[keep])
    numeric = raw.numeric[keep]
    features = {name: numeric[:, 2 * k: 2 * k + 2] for k, name in enumerate(FEATURES)}
    voters, voter = _compact(raw.voters, raw.voter[keep]) if raw.voter is not None else ((), None)
    return VoteTable(
        models=models, a=ab[:n], b=ab[n:], outcome=usable.outcome[keep],
        subjects=subjects, subject=subject.astype(np.int16),
        question_types=qtypes, question_type=qtype.astype(np.int16),
        features=features, timestamp=raw.timestamp[keep],
        skipped=skipped, sources=tuple(sources),
        voters=voters, voter=voter, redacted=None if raw.redacted is None else raw.redacted[keep],
        asker=None if raw.asker is None else raw.asker[keep],
    )


def leave_out(table: VoteTable, drop: np.ndarray, excluded: Exclusions) -> VoteTable:
    """``table`` without the votes ``drop`` marks, carrying ``excluded`` (what a filter step such as
    vouching left out and why); raises LeaderboardInputError when fewer than two models are left."""
    if drop.all():
        raise LeaderboardInputError(f"no votes left to rank: {excluded.describe(flags=True)}")
    kept = table.subset(~drop) if drop.any() else table
    if drop.any():  # a model whose every vote was left out is no longer on the board
        models, ab = _compact(kept.models, np.concatenate([kept.a, kept.b]).astype(np.int32))
        if len(models) < 2:
            raise LeaderboardInputError(f"only one model has votes left to rank: {excluded.describe(flags=True)}")
        kept = dataclasses.replace(kept, models=models, a=ab[:kept.n_votes], b=ab[kept.n_votes:])
    kept = dataclasses.replace(kept, excluded=excluded)
    if drop.any():
        _derive_cells(table, drop, kept)
    else:  # the same votes: the counts carry over
        kept._cells.update(table._cells)
    return kept


def _derive_cells(parent: VoteTable, drop: np.ndarray, kept: VoteTable) -> None:
    """Give ``kept`` (``parent`` without ``drop``) the subject counts as the parent's minus the left-out
    votes': a filter leaves out few votes, so this costs a pass over those, not over the history."""
    groups, codes = parent.group_codes("subject")
    m = len(parent.models)
    gone = count_cells(parent.a[drop], parent.b[drop], parent.outcome[drop], m, codes[drop], len(groups))
    index = {name: i for i, name in enumerate(parent.models)}
    used = np.array([index[name] for name in kept.models], dtype=np.intp)
    kept._cells["subject"] = keep_models(parent.cells("subject") - gone, used)


def played_only(table: VoteTable) -> VoteTable:
    """``table`` without the models that have no battle in it (a view's subset keeps the whole
    vocabulary; a model that never played there has nothing to be rated on)."""
    models, ab = _compact(table.models, np.concatenate([table.a, table.b]).astype(np.int32))
    if len(models) == len(table.models):
        return table
    return dataclasses.replace(table, models=models, a=ab[:table.n_votes], b=ab[table.n_votes:])


def table_from_arrays(
    models: Sequence[str],
    a: Iterable[int],
    b: Iterable[int],
    outcome: Iterable[int],
    *,
    subjects: Sequence[str] = (),
    subject: Iterable[int] | None = None,
    question_types: Sequence[str] = (),
    question_type: Iterable[int] | None = None,
    features: Mapping[str, np.ndarray] | None = None,
) -> VoteTable:
    """A table from in-memory arrays (synthetic data, notebooks); indices must be valid."""
    a_ = np.asarray(a, dtype=np.int32)
    b_ = np.asarray(b, dtype=np.int32)
    o_ = np.asarray(outcome, dtype=np.int8)
    n = a_.shape[0]
    if b_.shape != (n,) or o_.shape != (n,):
        raise LeaderboardInputError("a, b and outcome must be 1-D arrays of the same length")
    if n == 0:
        raise LeaderboardInputError("no votes")
    if len(models) < 2:
        raise LeaderboardInputError("a leaderboard needs at least two models")
    if min(a_.min(), b_.min()) < 0 or max(a_.max(), b_.max()) >= len(models) or (a_ == b_).any():
        raise LeaderboardInputError("model indices out of range or equal on both sides")
    if o_.min() < 0 or o_.max() > OUTCOME_BAD:
        raise LeaderboardInputError("outcome codes must be 0 (A), 1 (B), 2 (tie) or 3 (bad)")
    feats = {name: np.full((n, 2), np.nan, dtype=np.float32) for name in FEATURES}
    for name, values in (features or {}).items():
        if name not in feats:
            raise LeaderboardInputError(f"unknown feature {name!r}; known: {', '.join(FEATURES)}")
        feats[name] = np.asarray(values, dtype=np.float32).reshape(n, 2)
    none = np.full(n, -1, dtype=np.int16)
    return VoteTable(
        models=tuple(models), a=a_, b=b_, outcome=o_,
        subjects=tuple(subjects),
        subject=none if subject is None else np.asarray(subject, dtype=np.int16),
        question_types=tuple(question_types),
        question_type=none if question_type is None else np.asarray(question_type, dtype=np.int16),
        features=feats, timestamp=np.full(n, np.nan),
    )


def read_table(sources: str | os.PathLike[str] | Iterable[str | os.PathLike[str]], cache: bool = True, *,
               strict: bool = True, texts: bool = False, token: str | None = None,
               cache_dir: str | os.PathLike[str] | None = None) -> VoteTable:
    """Every usable vote of files, folders and/or Hub dataset ids (``sciarena.votes.read.columns``), none
    left out: which votes count is the vouching step's decision (``sciarena.science.quality.vouch``).

    ``texts``: also count lengths and citations from the answers where a record does not store
    them (released-schema files; only style control needs them)."""
    read = read_columns(sources, copy=cache, strict=strict, texts=texts, token=token, cache_dir=cache_dir)
    return vote_table(read.columns, sources=read.sources)

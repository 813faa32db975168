"""The columnar vote table every leaderboard computation reads.

Parsing (``parse.py``), caching (``cache.py``) and the statistics are separate
steps that meet here: readers produce :class:`RawColumns` (codes into per-file
vocabularies, nothing interpreted yet), :func:`build_table` turns them into a
:class:`VoteTable` (model indices, outcome codes, style features) and counts
every vote it cannot use instead of dropping it silently.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

import numpy as np

from sciarena.errors import LeaderboardInputError

OUTCOME_A, OUTCOME_B, OUTCOME_TIE, OUTCOME_BAD = 0, 1, 2, 3
OUTCOMES: tuple[str, ...] = ("A", "B", "tie", "bad")

# Normalised (stripped, lower-cased) vote labels → outcome. The released data mixes
# cases; FastChat's log names are accepted so its exports load too.
VOTE_LABELS: Mapping[str, int] = {
    "a": OUTCOME_A, "model_a": OUTCOME_A, "leftvote": OUTCOME_A,
    "b": OUTCOME_B, "model_b": OUTCOME_B, "rightvote": OUTCOME_B,
    "tie": OUTCOME_TIE, "tievote": OUTCOME_TIE,
    "bad": OUTCOME_BAD, "both bad": OUTCOME_BAD, "both_bad": OUTCOME_BAD, "bothbad": OUTCOME_BAD,
    "bothbad_vote": OUTCOME_BAD, "tie (bothbad)": OUTCOME_BAD,
}

# Per-side numeric features a vote may carry (NaN when absent).
FEATURES: tuple[str, ...] = (
    "length", "citations", "supporting", "irrelevant", "input_tokens", "output_tokens",
)
# Layout of RawColumns.numeric: each feature for side a then side b.
NUMERIC_COLUMNS: tuple[str, ...] = tuple(
    f"{name}_{side}" for name in FEATURES for side in ("a", "b")
)


@dataclass(frozen=True, eq=False)
class RawColumns:
    """Votes as read from one source: string columns as codes into vocabularies (-1 = missing)."""

    models: tuple[str, ...]
    model_a: np.ndarray
    model_b: np.ndarray
    labels: tuple[str, ...]  # normalised vote labels as found
    vote: np.ndarray
    subjects: tuple[str, ...]
    subject: np.ndarray
    question_types: tuple[str, ...]
    question_type: np.ndarray
    numeric: np.ndarray  # float32 (n, len(NUMERIC_COLUMNS)), NaN = missing
    timestamp: np.ndarray  # float64 seconds since the epoch, NaN = missing
    skipped: Mapping[str, int] = field(default_factory=dict)  # records unreadable at parse time

    def __len__(self) -> int:
        return int(self.model_a.shape[0])


def encode(values: Sequence[object]) -> tuple[tuple[str, ...], np.ndarray]:
    """Strings → (vocabulary, int32 codes); None, non-strings and blanks become -1."""
    vocab: dict[str, int] = {}
    codes = np.empty(len(values), dtype=np.int32)
    for k, value in enumerate(values):
        if isinstance(value, str) and (text := value.strip()):
            codes[k] = vocab.setdefault(text, len(vocab))
        else:
            codes[k] = -1
    return tuple(vocab), codes


def empty_raw() -> RawColumns:
    none = np.empty(0, dtype=np.int32)
    return RawColumns((), none, none, (), none, (), none, (), none,
                      np.empty((0, len(NUMERIC_COLUMNS)), dtype=np.float32), np.empty(0), {})


def _remap(parts: Sequence[tuple[tuple[str, ...], np.ndarray]]) -> tuple[tuple[str, ...], np.ndarray]:
    vocab: dict[str, int] = {}
    out = []
    for words, codes in parts:
        table = np.array([vocab.setdefault(w, len(vocab)) for w in words] + [-1], dtype=np.int32)
        out.append(table[codes])  # code -1 picks the trailing -1
    return tuple(vocab), (np.concatenate(out) if out else np.empty(0, dtype=np.int32))


def concat_raw(parts: Sequence[RawColumns]) -> RawColumns:
    """Concatenate raw columns, merging their vocabularies."""
    if not parts:
        return empty_raw()
    if len(parts) == 1:
        return parts[0]
    models, ab = _remap([(p.models, np.concatenate([p.model_a, p.model_b])) for p in parts])
    sizes = [len(p) for p in parts]
    splits = np.cumsum([s for n in sizes for s in (n, n)])[:-1]
    pieces = np.split(ab, splits)
    skipped: Counter[str] = Counter()
    for p in parts:
        skipped.update(p.skipped)
    labels, vote = _remap([(p.labels, p.vote) for p in parts])
    subjects, subject = _remap([(p.subjects, p.subject) for p in parts])
    qtypes, qtype = _remap([(p.question_types, p.question_type) for p in parts])
    return RawColumns(
        models=models,
        model_a=np.concatenate(pieces[0::2]),
        model_b=np.concatenate(pieces[1::2]),
        labels=labels, vote=vote,
        subjects=subjects, subject=subject,
        question_types=qtypes, question_type=qtype,
        numeric=np.concatenate([p.numeric for p in parts]),
        timestamp=np.concatenate([p.timestamp for p in parts]),
        skipped=dict(skipped),
    )


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

    @property
    def n_votes(self) -> int:
        return int(self.a.shape[0])

    def battles(self) -> np.ndarray:
        """Battles per model (every outcome counts)."""
        m = len(self.models)
        return np.bincount(self.a, minlength=m) + np.bincount(self.b, minlength=m)

    def group_codes(self, by: str) -> tuple[tuple[str, ...], np.ndarray]:
        """(group names, per-vote group code) for ``by`` in {"subject", "question_type"}."""
        if by == "subject":
            return self.subjects, self.subject
        if by == "question_type":
            return self.question_types, self.question_type
        raise LeaderboardInputError(f"cannot break the leaderboard down by {by!r}; "
                                    "use 'subject' or 'question_type'")

    def subset(self, mask: np.ndarray) -> "VoteTable":
        """The votes selected by a boolean mask (vocabularies kept)."""
        return VoteTable(
            models=self.models, a=self.a[mask], b=self.b[mask], outcome=self.outcome[mask],
            subjects=self.subjects, subject=self.subject[mask],
            question_types=self.question_types, question_type=self.question_type[mask],
            features={k: v[mask] for k, v in self.features.items()},
            timestamp=self.timestamp[mask], skipped=self.skipped, sources=self.sources,
        )


def _compact(vocab: tuple[str, ...], codes: np.ndarray) -> tuple[tuple[str, ...], np.ndarray]:
    """Drop unused words and sort the vocabulary, so tables are deterministic."""
    used = np.flatnonzero(np.bincount(codes + 1, minlength=len(vocab) + 1)[1:])
    names = [vocab[i] for i in used]
    order = sorted(range(len(names)), key=names.__getitem__)
    table = np.full(len(vocab) + 1, -1, dtype=np.int32)
    table[used[order]] = np.arange(len(order), dtype=np.int32)
    return tuple(names[i] for i in order), table[codes]


def build_table(raw: RawColumns, *, sources: Sequence[str] = ()) -> VoteTable:
    """Interpret raw columns: map vote labels, drop and count unusable votes, validate."""
    shown = ", ".join(sources[:3]) + (f" and {len(sources) - 3} more" if len(sources) > 3 else "")
    where = f" in {shown}" if sources else ""
    label_codes = np.array([VOTE_LABELS.get(w, -1) for w in raw.labels] + [-1], dtype=np.int8)
    outcome = label_codes[raw.vote]
    skipped: Counter[str] = Counter(raw.skipped)
    bad_model = (raw.model_a < 0) | (raw.model_b < 0)
    skipped["missing model name"] += int(bad_model.sum())
    same = ~bad_model & (raw.model_a == raw.model_b)
    skipped["same model on both sides"] += int(same.sum())
    rest = ~bad_model & ~same
    skipped["missing vote"] += int((rest & (raw.vote < 0)).sum())
    unknown = rest & (raw.vote >= 0) & (outcome < 0)
    if unknown.any():
        for code, count in zip(*np.unique(raw.vote[unknown], return_counts=True)):
            skipped[f"unknown vote label {raw.labels[code]!r}"] += int(count)
    keep = rest & (outcome >= 0)
    skipped = Counter({k: v for k, v in skipped.items() if v})
    if not keep.any():
        detail = f" (skipped: {dict(skipped)})" if skipped else ""
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
    return VoteTable(
        models=models, a=ab[:n], b=ab[n:], outcome=outcome[keep],
        subjects=subjects, subject=subject.astype(np.int16),
        question_types=qtypes, question_type=qtype.astype(np.int16),
        features=features, timestamp=raw.timestamp[keep],
        skipped=dict(skipped), sources=tuple(sources),
    )


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

"""Votes as columns: what every vote reader produces and the leaderboard reads.

:class:`RawColumns` holds the fields the statistics use, straight from the files:
string fields as codes into per-source vocabularies (nothing interpreted yet), the
per-side numbers as a float32 block, a 64-bit fingerprint of each record's
``id``, the voter ids (codes into their vocabulary) and whether a battle's answers were
redacted. :func:`usable_votes` applies the vote vocabulary (``schema.VOTE_LABELS``)
and counts every vote it cannot use by reason; :func:`drop_duplicates` keeps the
first record of each ``id`` (records without one are all kept).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np

from sciarena.core.types import SOURCE_ASKER
from sciarena.votes.schema import VOTE_LABELS

# Per-side numeric features a vote may carry (NaN when absent).
FEATURES: tuple[str, ...] = (
    "length", "citations", "supporting", "irrelevant", "input_tokens", "output_tokens",
    "turns",  # the battle's number of questions (num_turns, the same for both sides; NaN = one)
)
# Layout of RawColumns.numeric: each feature for side a then side b.
NUMERIC_COLUMNS: tuple[str, ...] = tuple(
    f"{name}_{side}" for name in FEATURES for side in ("a", "b")
)
DUPLICATE = "duplicate id"


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
    ids: np.ndarray  # uint64 fingerprint of the record's id (see id_fingerprints); 0 = no id
    skipped: Mapping[str, int] = field(default_factory=dict)  # records unreadable at parse time
    # False when a length or citation count had to be counted from an answer text that was not
    # read (the caller did not ask for texts): such values are NaN here.
    complete: bool = True
    voters: tuple[str, ...] = ()
    # int32 codes into ``voters`` (-1 = no voter id); None = not read (a columnar copy written
    # before voter ids were read: ``read.read_file`` then parses the file again)
    voter: np.ndarray | None = None
    redacted: np.ndarray | None = None  # bool: either answer was redacted for naming a model, or the battle revealed
    # one (identity_revealed); None = not read
    asker: np.ndarray | None = None  # bool: the asker chose the field (subject_source "asker"); None = not read

    def __len__(self) -> int:
        return int(self.model_a.shape[0])

    @property
    def has_voters(self) -> bool:
        """Whether the voter and redaction columns were read (else they are unknown, not empty)."""
        return self.voter is not None and self.redacted is not None

    def take(self, mask: np.ndarray) -> "RawColumns":
        """The records selected by a boolean mask (vocabularies kept)."""
        return dataclasses.replace(
            self, model_a=self.model_a[mask], model_b=self.model_b[mask], vote=self.vote[mask],
            subject=self.subject[mask], question_type=self.question_type[mask],
            numeric=self.numeric[mask], timestamp=self.timestamp[mask], ids=self.ids[mask],
            voter=None if self.voter is None else self.voter[mask],
            redacted=None if self.redacted is None else self.redacted[mask],
            asker=None if self.asker is None else self.asker[mask])

    def with_skipped(self, skipped: Mapping[str, int]) -> "RawColumns":
        counts = Counter(self.skipped)
        counts.update(skipped)
        return dataclasses.replace(self, skipped={k: v for k, v in counts.items() if v})


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


def empty_raw(skipped: Mapping[str, int] | None = None) -> RawColumns:
    none = np.empty(0, dtype=np.int32)
    return RawColumns((), none, none, (), none, (), none, (), none,
                      np.empty((0, len(NUMERIC_COLUMNS)), dtype=np.float32), np.empty(0),
                      np.empty(0, dtype=np.uint64), dict(skipped or {}),
                      voter=none, redacted=np.zeros(0, dtype=bool), asker=np.zeros(0, dtype=bool))


def is_asker(encoded: tuple[tuple[str, ...], np.ndarray]) -> np.ndarray:
    """The asker column from an encoded ``subject_source`` column (vocabulary, codes; values stripped)."""
    words, codes = encoded
    return codes == words.index(SOURCE_ASKER) if SOURCE_ASKER in words else np.zeros(codes.shape, dtype=bool)


def flags(*columns: np.ndarray) -> np.ndarray:
    """The redacted column from the per-side flags and identity_revealed (FLAG_FIELDS): any of them."""
    out = np.asarray(columns[0], dtype=bool)
    for column in columns[1:]:
        out = out | np.asarray(column, dtype=bool)
    return out


# --- id fingerprints: a 64-bit hash of the id's JSON text, computed column-wise -----------------------
_M1, _M2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)  # splitmix64's multipliers


def _mix(z: np.ndarray) -> np.ndarray:
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


def id_fingerprints(offsets: np.ndarray, data: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """uint64 per text (Arrow layout: ``data[offsets[i]:offsets[i + 1]]``), 0 where not ``valid``.

    The texts are ids written as JSON (``"abc"`` with its quotes, ``12``), so a string id and a
    number never share a fingerprint. The value depends on the bytes only (never 0 for an id):
    the length, then each 8-byte word (zero-padded) folded in with splitmix64's mixer."""
    offsets = np.asarray(offsets, dtype=np.int64)
    valid = np.asarray(valid, dtype=bool)
    lengths = np.where(valid, np.diff(offsets), 0)
    padded = np.zeros(len(data) + 8, dtype=np.uint8)  # 8-byte reads past the last text stay in bounds
    padded[:len(data)] = data
    # every byte position as the start of a little-endian 8-byte word (unaligned reads)
    words = np.ndarray((len(padded) - 7,), dtype="<u8", buffer=padded, strides=(1,))
    starts = offsets[:-1]
    z = lengths.astype(np.uint64) * _M2
    with np.errstate(over="ignore"):
        for k in range(int((lengths.max(initial=0) + 7) // 8)):
            left = lengths - 8 * k  # bytes of this text from word k on
            rows = slice(None) if left.min() > 0 else np.flatnonzero(left > 0)  # usually all of them
            part = left[rows]
            word = words[starts[rows] + 8 * k]
            if part.min() < 8:
                keep = (np.uint64(1) << (8 * np.minimum(part, 7)).astype(np.uint64)) - np.uint64(1)
                word &= np.where(part < 8, keep, np.uint64(0xFFFFFFFFFFFFFFFF))
            z[rows] = _mix(z[rows] ^ word)
    return np.where(valid, z | np.uint64(1), np.uint64(0))


def fingerprints_of(texts: Sequence[str | None]) -> np.ndarray:
    """id_fingerprints for a few JSON texts held as Python strings (None = no id)."""
    encoded = [t.encode("utf-8") if t is not None else b"" for t in texts]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(e) for e in encoded], out=offsets[1:])
    data = np.frombuffer(b"".join(encoded), dtype=np.uint8)
    return id_fingerprints(offsets, data, np.array([t is not None for t in texts], dtype=bool))


# --- combining sources ---------------------------------------------------------------------------------
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
    known = all(p.has_voters for p in parts)  # one part not read: the whole is unknown
    voters, voter = _remap([(p.voters, p.voter) for p in parts]) if known else ((), None)
    return RawColumns(
        models=models,
        model_a=np.concatenate(pieces[0::2]),
        model_b=np.concatenate(pieces[1::2]),
        labels=labels, vote=vote,
        subjects=subjects, subject=subject,
        question_types=qtypes, question_type=qtype,
        numeric=np.concatenate([p.numeric for p in parts]),
        timestamp=np.concatenate([p.timestamp for p in parts]),
        ids=np.concatenate([p.ids for p in parts]),
        skipped=dict(skipped),
        complete=all(p.complete for p in parts),
        voters=voters, voter=voter,
        redacted=np.concatenate([p.redacted for p in parts]) if known else None,  # type: ignore[misc]
        asker=(np.concatenate([p.asker for p in parts])  # type: ignore[misc]
               if all(p.asker is not None for p in parts) else None),
    )


def drop_duplicates(raw: RawColumns) -> RawColumns:
    """The first record of each id, in order; the others are counted under ``"duplicate id"``."""
    ordered = np.sort(raw.ids)
    if not ((ordered[1:] == ordered[:-1]) & (ordered[1:] != 0)).any():
        return raw  # the usual case, told by a plain sort
    order = np.argsort(raw.ids, kind="stable")  # stable: the first in reading order comes first
    ordered = raw.ids[order]
    repeat = np.zeros(len(raw), dtype=bool)
    repeat[1:] = (ordered[1:] == ordered[:-1]) & (ordered[1:] != 0)
    if not repeat.any():
        return raw
    drop = np.zeros(len(raw), dtype=bool)
    drop[order[repeat]] = True
    return raw.take(~drop).with_skipped({DUPLICATE: int(drop.sum())})


@dataclass(frozen=True, eq=False)
class Usable:
    """Which raw records are votes the statistics can use, their outcome codes, and why others are not."""

    keep: np.ndarray  # bool per raw record
    outcome: np.ndarray  # int8 outcome code per raw record (-1 where not a known label)
    skipped: Mapping[str, int]


def usable_votes(raw: RawColumns) -> Usable:
    """Interpret the vote labels and count the records that are not usable votes, by reason."""
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
    return Usable(rest & (outcome >= 0), outcome, {k: v for k, v in skipped.items() if v})


def battles_per_model(raw: RawColumns) -> dict[str, int]:
    """Usable votes each model took part in (the pair sampler's counts)."""
    keep = usable_votes(raw).keep
    counts = np.bincount(np.concatenate([raw.model_a[keep], raw.model_b[keep]]), minlength=len(raw.models))
    return {name: int(n) for name, n in zip(raw.models, counts) if n}

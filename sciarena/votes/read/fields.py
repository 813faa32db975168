"""The record fields the vote readers take, in every layout we accept, and how a value is read.

Layouts: our records (``schema.VOTE_FIELDS``), the released SciArena data (no length or
citation-count fields: they are counted from the answers and citation lists), the authors'
analysis layout (their count keys, below), and Chatbot Arena / FastChat battle files
(``model_a``, ``model_b``, ``winner``, ``tstamp``, ``question_id``). Which alternative key a file
uses is decided by the keys of its first SEEN_RECORDS records. The value readers
(:func:`number_of`, :func:`timestamp_of`, :func:`derived_of`) define the result every reader
gives; :func:`iso_seconds` is timestamp_of for a column of texts, vectorised.
"""

from __future__ import annotations

import math
from datetime import datetime, timezone
from typing import Any, Iterable, Mapping

import numpy as np

from sciarena.core.errors import LeaderboardInputError

# The alternative keys are picked from the first this-many records.
SEEN_RECORDS = 1000

# Our field → record keys that may hold it (ours first; FastChat battle files second).
ALIASES: Mapping[str, tuple[str, ...]] = {
    "id": ("id", "question_id"),
    "modelA": ("modelA", "model_a"),
    "modelB": ("modelB", "model_b"),
    "vote": ("vote", "winner"),
    "subject": ("subject",),
    "question_type": ("question_type",),
    "timestamp": ("timestamp", "tstamp"),
    "voter_id": ("voter_id",),
}
REQUIRED = ("modelA", "modelB", "vote")
STRING_FIELDS = ("modelA", "modelB", "vote", "subject", "question_type", "voter_id")
# Per-side flags: an answer had a word naming a model redacted (only JSON true counts). Short fields,
# read with the others so that the leaderboard can leave such battles out without reading answers.
# ``identity_revealed`` (schema 6): a name reached the voter or the voter asked for one; left out the same way.
FLAG_FIELDS = ("redacted_a", "redacted_b", "identity_revealed")
# Who chose the vote's field (schema 4): read only to count the votes whose field the asker set
# (``subject_source`` "asker"; "labeller" when the asker kept the proposed field), which the per-discipline views report.
SUBJECT_SOURCE_FIELD = "subject_source"
# Numeric column → record keys that may hold it, first found wins (ours, then the analysis layout's).
NUMERIC_SOURCES: Mapping[str, tuple[str, ...]] = {
    "length_a": ("length_a", "response_length_a"),
    "length_b": ("length_b", "response_length_b"),
    "citations_a": ("num_citations_a", "citation_count_a"),
    "citations_b": ("num_citations_b", "citation_count_b"),
    "supporting_a": ("num_supporting_a", "support_count_a"),
    "supporting_b": ("num_supporting_b", "support_count_b"),
    "irrelevant_a": ("num_irrelevant_a", "irrelevant_count_a"),
    "irrelevant_b": ("num_irrelevant_b", "irrelevant_count_b"),
    "input_tokens_a": ("input_tokens_a",),
    "input_tokens_b": ("input_tokens_b",),
    "output_tokens_a": ("output_tokens_a",),
    "output_tokens_b": ("output_tokens_b",),
    # Not per side, but a numeric column like these: the leaderboard's single- and multi-turn breakdown.
    "turns_a": ("num_turns",),
    "turns_b": ("num_turns",),
}
# Released-schema fallbacks: derived from the text and citation lists (read only when asked for).
DERIVED: Mapping[str, str] = {
    "length_a": "responseA", "length_b": "responseB",
    "citations_a": "citations_a", "citations_b": "citations_b",
}


def key_of(name: str, keys: Iterable[str]) -> str | None:
    """The record key that holds our field ``name`` in a file whose records have ``keys``."""
    present = set(keys)
    return next((k for k in ALIASES[name] if k in present), None)


def check_fields(keys: Iterable[str], origin: str) -> None:
    present = set(keys)
    missing = [f for f in REQUIRED if key_of(f, present) is None]
    if missing:
        raise LeaderboardInputError(
            f"{origin}: votes lack the field(s) {', '.join(missing)}; expected SciArena vote "
            "records (modelA, modelB, vote, …) or battle records (model_a, model_b, winner)")


def number_of(value: Any) -> float:
    """A numeric field: ints and floats as float, anything else (bools too) NaN."""
    if isinstance(value, bool) or value is None:
        return math.nan
    if isinstance(value, (int, float)):
        return float(value)
    return math.nan


def timestamp_of(value: Any) -> float:
    """ISO 8601 text (UTC when it has no offset) or epoch seconds → seconds; else NaN."""
    if isinstance(value, str) and value:
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            return math.nan
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=timezone.utc)
        return moment.timestamp()
    return number_of(value)


def derived_of(value: Any) -> float:
    """Released-schema fallback: the length of a text or of a citation list."""
    if isinstance(value, (str, list)):
        return float(len(value))
    return math.nan


# --- timestamp_of for many texts: 8 bytes at a time as integers (SWAR) ---
_U64 = np.uint64
_HIGH, _LOW7 = _U64(0x8080808080808080), _U64(0x7F7F7F7F7F7F7F7F)
_LOW32, _MASK64 = _U64(0xFFFFFFFF), (1 << 64) - 1


def _digit_bytes(w: np.ndarray) -> np.ndarray:
    """0x80 in every byte of ``w`` that is an ASCII digit (per byte: no carries)."""
    at_least = ((w | _HIGH) - _U64(0x3030303030303030)) & _HIGH
    at_most = (_U64(0xB9B9B9B9B9B9B9B9) - (w & _LOW7)) & _HIGH
    return at_least & at_most & ~w


def _decimal(w: np.ndarray) -> np.ndarray:
    """Eight ASCII digits (most significant first in memory) → their value."""
    v = w & _U64(0x0F0F0F0F0F0F0F0F)
    v = (v * _U64(10) + (v >> _U64(8))) & _U64(0x00FF00FF00FF00FF)
    v = (v * _U64(100) + (v >> _U64(16))) & _U64(0x0000FFFF0000FFFF)
    return ((v * _U64(10000) + (v >> _U64(32))) & _LOW32).astype(np.int64)


def _two(pair: np.ndarray) -> np.ndarray:
    """Two ASCII digits in the low 16 bits (first in memory first) → value."""
    return ((pair & _U64(0x0F)) * _U64(10) + ((pair >> _U64(8)) & _U64(0x0F))).astype(np.int64)


def _pattern(text: bytes) -> tuple[int, int, int]:
    """(digit flags, punctuation mask, punctuation bytes) of a template: 'd' = a digit,
    '?' = not checked, anything else = that byte."""
    digit = punct = value = 0
    for k, char in enumerate(text):
        if char == ord("d"):
            digit |= 0x80 << (8 * k)
        elif char != ord("?"):
            punct |= 0xFF << (8 * k)
            value |= char << (8 * k)
    return digit, punct, value


def _fits(word: np.ndarray, digit: int, punct: int, value: int) -> np.ndarray:
    ok = np.ones(len(word), dtype=bool)
    if digit:
        ok &= (_digit_bytes(word) & _U64(digit)) == _U64(digit)
    if punct:
        ok &= (word & _U64(punct)) == _U64(value)
    return ok


# 'YYYY-MM-DDThh:mm:ss' then one of these tails (fraction digits); other forms are
# read one by one by fields.timestamp_of.
_ISO_HEAD = (_pattern(b"dddd-dd-"), _pattern(b"ddTdd:dd"), _pattern(b":dd?????"))
_ISO_TAILS = tuple((_pattern(tail), len(tail), fraction) for tail, fraction in (
    (b"", 0), (b"Z", 0), (b"+00:00", 0), (b".ddd", 3), (b".dddZ", 3), (b".ddd+00:00", 3),
    (b".dddddd", 6), (b".ddddddZ", 6), (b".dddddd+00:00", 6)))
_MONTH_DAYS = (0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def iso_seconds(offsets: np.ndarray, data: np.ndarray, valid: np.ndarray, *, quoted: bool = False
                ) -> tuple[np.ndarray, np.ndarray]:
    """Texts (Arrow layout: ``data[offsets[i]:offsets[i + 1]]``, ``valid`` per row) →
    (seconds, rows left for :func:`timestamp_of`). Seconds equal
    ``datetime.fromisoformat(text).timestamp()`` (UTC when naive) for the common
    forms read here; empty texts and invalid rows are NaN, as timestamp_of gives them.
    ``quoted``: the texts are JSON (a string's quotes are skipped; anything else is left)."""
    n = len(valid)
    seconds = np.full(n, np.nan)
    starts, lengths = offsets[:-1].astype(np.int64), np.diff(offsets)
    padded = np.zeros(len(data) + 48, dtype=np.uint8)  # 40-byte reads past the last text
    padded[:len(data)] = data
    candidates = valid
    if quoted:
        candidates = valid & (padded[starts] == ord('"')) & (lengths >= 2)
        starts, lengths = starts + 1, lengths - 2
    rows = np.flatnonzero(candidates & (lengths >= 19) & (lengths <= 32))
    # every byte position as the start of a little-endian 8-byte word (unaligned reads)
    words = np.ndarray((len(padded) - 7,), dtype="<u8", buffer=padded, strides=(1,))
    done = np.zeros(len(rows), dtype=bool)
    # blocks keep the temporaries in cache (fresh large arrays cost page faults)
    for lo in range(0, len(rows), 1 << 16):
        block = rows[lo:lo + (1 << 16)]
        head = starts[block]
        w = np.stack([words[head + 8 * k] for k in range(5)], axis=1)
        ok, value = _iso_block(w, lengths[block])
        seconds[block[ok]] = value[ok]
        done[lo:lo + len(block)] = ok
    left = valid & (np.diff(offsets) > 0)
    left[rows[done]] = False
    return seconds, np.flatnonzero(left)


def _iso_block(w: np.ndarray, size: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(read, seconds) for texts whose first 40 bytes are the rows of ``w``."""
    ok = np.ones(len(w), dtype=bool)
    for col, pattern in enumerate(_ISO_HEAD):
        ok &= _fits(w[:, col], *pattern)
    tail0 = (w[:, 2] >> _U64(24)) | (w[:, 3] << _U64(40))  # bytes 19..26
    tail1 = (w[:, 3] >> _U64(24)) | (w[:, 4] << _U64(40))  # bytes 27..34
    form = np.zeros(len(w), dtype=bool)
    micro = np.zeros(len(w), dtype=np.int64)
    present = np.bincount(size, minlength=33)  # a file usually holds one form: test only those
    for (digit, punct, value), length, fraction in _ISO_TAILS:
        if not present[19 + length]:
            continue
        good = (size == 19 + length) & _fits(tail0, digit & _MASK64, punct & _MASK64,
                                            value & _MASK64)
        if length > 8:
            good &= _fits(tail1, digit >> 64, punct >> 64, value >> 64)
        form |= good
        if fraction:  # digits at tail bytes 1..fraction, moved to the top of a word
            frac = _decimal((tail0 >> _U64(8)) << _U64(64 - 8 * fraction))
            micro = np.where(good, frac * (1000 if fraction == 3 else 1), micro)
    ok &= form
    w0, w1, w2 = w[:, 0], w[:, 1], w[:, 2]
    year = _decimal(w0 << _U64(32))
    month, day, hour = _two(w0 >> _U64(40)), _two(w1), _two(w1 >> _U64(24))
    minute, second = _two(w1 >> _U64(48)), _two(w2 >> _U64(8))
    leap = (year % 4 == 0) & ((year % 100 != 0) | (year % 400 == 0))
    last = np.array(_MONTH_DAYS)[np.clip(month, 0, 12)] + ((month == 2) & leap)
    ok &= (year >= 1) & (month >= 1) & (month <= 12) & (day >= 1) & (day <= last)
    ok &= (hour <= 23) & (minute <= 59) & (second <= 59)
    # days since 1970-01-01, proleptic Gregorian (H. Hinnant's days_from_civil)
    y = year - (month <= 2)
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (month + np.where(month > 2, -3, 9)) + 2) // 5 + day - 1
    days = era * 146097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719468
    total = (days * 86400 + hour * 3600 + minute * 60 + second) * 1_000_000 + micro
    # Python divides the exact integer: float(total) must be exact too (|total| < 2**53).
    ok &= np.abs(total) < (1 << 53)
    return ok, total.astype(np.float64) / 1e6

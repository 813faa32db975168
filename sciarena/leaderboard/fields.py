"""The vote-record fields the leaderboard reads, in both schemas."""

from __future__ import annotations

from typing import Iterable, Mapping

from sciarena.errors import LeaderboardInputError

REQUIRED = ("modelA", "modelB", "vote")
STRING_FIELDS = ("modelA", "modelB", "vote", "subject", "question_type")
# Numeric column → record keys that may hold it, first found wins.
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
}
# Released-schema fallbacks: derived from the text and citation lists.
DERIVED: Mapping[str, str] = {
    "length_a": "responseA", "length_b": "responseB",
    "citations_a": "citations_a", "citations_b": "citations_b",
}


def check_fields(keys: Iterable[str], origin: str) -> None:
    missing = [f for f in REQUIRED if f not in set(keys)]
    if missing:
        raise LeaderboardInputError(
            f"{origin}: votes lack the field(s) {', '.join(missing)}; expected SciArena vote "
            "records (modelA, modelB, vote, …)")

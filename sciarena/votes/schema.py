"""The vote record (a superset of the released SciArena fields) and the vote vocabulary.

Every record carries every field of its schema version (null when empty) and a
``schema_version`` so readers can accept older records; records of older versions
lack the fields added since, so the dataset card declares the current version's
features (votes/features.py) for ``datasets.load_dataset`` to read them together. The vocabulary — outcome
codes, the labels that name them in our records, the released data and FastChat
battle files, and the score of side A — is defined here once; the readers, the
leaderboard and SciArena-Eval import it.
"""

from __future__ import annotations

import json
from typing import Any, Mapping

from sciarena import __version__
from sciarena.core.types import Battle, QuestionLabels, Reference, SideResult, Vote

# Vote shards are <data_dir>/votes/<date>/votes-<uuid>.jsonl, locally and in the votes dataset's data/.
VOTE_GLOB = "*/votes-*.jsonl"

# 2 added question_type_labeller and subject_labeller; 3 added pipeline_a/b; 4 added subject_source and
# subject_labelled (the asker may change the field the labeller proposed), shared and shared_reason; 5 added
# num_turns and turns (follow-up questions: the released fields keep the first turn, ``turns`` holds every one)
SCHEMA_VERSION = 6

# --- the vote vocabulary -----------------------------------------------------------------------------
OUTCOME_A, OUTCOME_B, OUTCOME_TIE, OUTCOME_BAD = 0, 1, 2, 3
OUTCOMES: tuple[str, ...] = ("A", "B", "tie", "bad")  # the label we write for each outcome code
OUTCOME_NAMES = {"A": "A better", "B": "B better", "tie": "Tie", "bad": "Both bad"}  # how pages and tables say them

# Normalised (stripped, lower-cased) vote labels → outcome. The released data mixes cases;
# FastChat battle files name the winner (``winner`` ∈ model_a, model_b, tie, tie (bothbad)) and its
# logs name the button.
VOTE_LABELS: Mapping[str, int] = {
    "a": OUTCOME_A, "model_a": OUTCOME_A, "leftvote": OUTCOME_A,
    "b": OUTCOME_B, "model_b": OUTCOME_B, "rightvote": OUTCOME_B,
    "tie": OUTCOME_TIE, "tievote": OUTCOME_TIE,
    "bad": OUTCOME_BAD, "both bad": OUTCOME_BAD, "both_bad": OUTCOME_BAD, "bothbad": OUTCOME_BAD,
    "bothbad_vote": OUTCOME_BAD, "tie (bothbad)": OUTCOME_BAD,
}

# Score of side A per outcome code: a tie and "both bad" are half a win each way (the paper's rule).
SCORE_OF_A: tuple[float, ...] = (1.0, 0.0, 0.5, 0.5)


def outcome_of(label: object) -> int | None:
    """The outcome code a vote label names (any case, surrounding blanks ignored); None when none."""
    return VOTE_LABELS.get(label.strip().lower()) if isinstance(label, str) else None


def score_of_a(outcome: Any) -> Any:
    """Score of side A (1, 0 or ½) for an array of outcome codes."""
    import numpy as np

    return np.asarray(SCORE_OF_A)[np.asarray(outcome)]

# The fields of the released yale-nlp/SciArena data, kept with the same names.
RELEASED_FIELDS: tuple[str, ...] = (
    "id",
    "question",
    "responseA",
    "responseB",
    "modelA",
    "modelB",
    "vote",
    "citations_a",
    "citations_b",
    "question_type",
    "subject",
)

# Our own fields, in the order they are written.
OWN_FIELDS: tuple[str, ...] = (
    "schema_version",
    "timestamp",
    "reason",
    "voter_id",
    "consent",
    "retrieval_backend",
    "retrieval_queries",
    "retrieval_filters",  # JSON text: filter keys vary, a string column keeps the schema fixed
    "context_ids",
    "length_a",
    "length_b",
    "num_citations_a",
    "num_citations_b",
    "first_token_s_a",
    "first_token_s_b",
    "latency_s_a",
    "latency_s_b",
    "input_tokens_a",
    "input_tokens_b",
    "output_tokens_a",
    "output_tokens_b",
    "cost_usd_a",
    "cost_usd_b",
    "redacted_a",
    "redacted_b",
    "masked_a",  # a model name the question shares with the catalogue was hidden in this answer until the vote
    "masked_b",
    "question_type_labeller",  # who gave question_type: "offline:rules:category" or a catalogue model's name
    "subject_labeller",  # who gave subject_labelled ("offline:classifier:discipline" offline, or a model's name)
    # who decided subject: "asker" (changed the field the vote bar proposed), "labeller" (the offline one) or
    # "model" (a catalogue model); null in records written before schema 4
    "subject_source",
    "subject_labelled",  # the labeller's field (equal to subject unless the asker changed it)
    # JSON text of a multi-step contestant's report (types.PipelineReport: steps, calls, extra passages,
    # verification counts); null for a plain model. Text, so the column's type never varies.
    "pipeline_a",
    "pipeline_b",
    "app_version",
    # The voter's share choice (added in version 4): ``shared`` gives the battle a read-only link;
    # ``shared_reason`` lets that view show the reason. Null in older records: not shared.
    "shared",
    "shared_reason",
    # Follow-up questions (version 5). Every field above describes the FIRST turn, exactly as a one-question
    # battle is recorded, so readers of the released schema read the first turn; the vote is on the whole
    # conversation. ``num_turns`` counts the questions (1 without follow-ups); ``turns`` lists every turn,
    # the first included, as TURN_FIELDS objects. Null in older records: one turn, the fields above.
    "num_turns",
    "turns",
    # Checked once more at vote time (version 6, arena/identity.py): a model's name reached the voter before the
    # vote, or the voter asked a contestant who it is; the reason says which turn and answer. The board leaves
    # such votes out like redacted ones. Null in older records: not checked.
    "identity_revealed",
    "identity_reason",
)

VOTE_FIELDS: tuple[str, ...] = RELEASED_FIELDS + OWN_FIELDS

# One turn of ``turns``: its question, both answers, what each cited (citation records), the references its own
# search added (follow-ups only: the first turn's are ``context_ids`` and the citations above) and the figures.
TURN_FIELDS: tuple[str, ...] = (
    "question", "responseA", "responseB", "citations_a", "citations_b", "references_added", "retrieval_queries",
    "context_ids",
    *(f"{name}_{side}" for name in ("first_token_s", "latency_s", "input_tokens", "output_tokens", "cost_usd",
                                    "redacted", "masked", "pipeline") for side in "ab"),
)

CITATION_FIELDS: tuple[str, ...] = (
    "number",
    "id",
    "concise_authors",
    "title",
    "authors",
    "year",
    "venue",
    "url",
    "content",
)


def citation_record(reference: Reference) -> dict[str, Any]:
    paper = reference.paper
    return {
        "number": reference.number,
        "id": paper.paper_id,
        "concise_authors": paper.concise_authors,
        "title": paper.title,
        "authors": paper.author_line,
        "year": paper.year,
        "venue": paper.venue or None,
        "url": paper.link,
        "content": reference.context,
    }


def pipeline_json(side: SideResult) -> str | None:
    """A side's pipeline report as JSON text, or None for a single-call contestant."""
    return None if side.report is None else json.dumps(side.report.to_dict(), sort_keys=True)


def turn_records(battle: Battle) -> list[dict[str, Any]]:
    """Every turn of a finished battle as TURN_FIELDS objects, the first included."""
    out = []
    for index, turn in enumerate(battle.turns):
        a, b = turn.side_a, turn.side_b
        if a is None or b is None or a.answer is None or b.answer is None:
            raise ValueError("only a finished battle with two answers in every turn can be recorded")
        first = index == 0
        record: dict[str, Any] = {
            "question": turn.question, "responseA": a.answer.text, "responseB": b.answer.text,
            "citations_a": [citation_record(r) for r in battle.cited_in("a", index)],
            "citations_b": [citation_record(r) for r in battle.cited_in("b", index)],
            "references_added": [] if first else [citation_record(r) for r in turn.added],
            "retrieval_queries": list(turn.retrieval.queries),
            "context_ids": [p.passage_id for r in turn.added for p in r.passages],
        }
        for letter, side in (("a", a), ("b", b)):
            record |= {f"first_token_s_{letter}": side.first_token_s, f"latency_s_{letter}": side.total_s,
                       f"input_tokens_{letter}": side.usage.input_tokens,
                       f"output_tokens_{letter}": side.usage.output_tokens, f"cost_usd_{letter}": side.cost_usd,
                       f"redacted_{letter}": side.answer.redacted, f"masked_{letter}": side.answer.masked,  # type: ignore[union-attr]
                       f"pipeline_{letter}": pipeline_json(side)}
        out.append({name: record[name] for name in TURN_FIELDS})
    return out


def turn_count(record: Mapping[str, Any]) -> int:
    """How many questions a vote record's battle had: ``num_turns``, else the length of ``turns``, else 1
    (records before version 5, the released data and battle files are one question)."""
    count = record.get("num_turns")
    if isinstance(count, int) and not isinstance(count, bool) and count >= 1:
        return count
    turns = record.get("turns")
    return len(turns) if isinstance(turns, list) and turns else 1


def vote_record(vote: Vote, labels: QuestionLabels | None = None) -> dict[str, Any]:
    """The JSON-ready record of a vote, with every field of VOTE_FIELDS.

    ``labels`` are the question's labels and who gave them (the arena labels at vote time); without
    them the battle's own labels are written and the labeller fields are null (unknown)."""
    battle = vote.battle
    a, b = battle.side_a, battle.side_b
    if a is None or b is None or a.answer is None or b.answer is None:
        raise ValueError("only a finished battle with two answers can be recorded")
    record: dict[str, Any] = {
        "id": battle.battle_id,
        "question": battle.question,
        "responseA": a.answer.text,
        "responseB": b.answer.text,
        "modelA": battle.model_a.name,
        "modelB": battle.model_b.name,
        "vote": vote.choice,
        "citations_a": [citation_record(r) for r in a.cited_references(battle.retrieval)],
        "citations_b": [citation_record(r) for r in b.cited_references(battle.retrieval)],
        "question_type": (labels.question_type if labels else battle.question_type) or None,
        "subject": (labels.subject if labels else battle.subject) or None,
        "schema_version": SCHEMA_VERSION,
        "timestamp": vote.timestamp,
        "reason": vote.reason or None,
        "voter_id": vote.voter_id or None,
        "consent": bool(vote.consent),
        "retrieval_backend": battle.retrieval.backend,
        "retrieval_queries": list(battle.retrieval.queries),
        "retrieval_filters": json.dumps(dict(battle.retrieval.filters), sort_keys=True, default=str),
        "context_ids": list(battle.retrieval.context_ids),
        "length_a": len(a.answer.text),
        "length_b": len(b.answer.text),
        "num_citations_a": len(a.answer.cited),
        "num_citations_b": len(b.answer.cited),
        "first_token_s_a": a.first_token_s,
        "first_token_s_b": b.first_token_s,
        "latency_s_a": a.total_s,
        "latency_s_b": b.total_s,
        "input_tokens_a": a.usage.input_tokens,
        "input_tokens_b": b.usage.input_tokens,
        "output_tokens_a": a.usage.output_tokens,
        "output_tokens_b": b.usage.output_tokens,
        "cost_usd_a": a.cost_usd,
        "cost_usd_b": b.cost_usd,
        "redacted_a": a.answer.redacted,
        "redacted_b": b.answer.redacted,
        "masked_a": a.answer.masked,
        "masked_b": b.answer.masked,
        "question_type_labeller": labels.question_type_labeller if labels else None,
        "subject_labeller": labels.subject_labeller if labels else None,
        "subject_source": labels.subject_source if labels and labels.subject else None,
        "subject_labelled": (labels.subject_labelled or None) if labels else None,
        "pipeline_a": pipeline_json(a),
        "pipeline_b": pipeline_json(b),
        "app_version": __version__,
        "shared": bool(vote.shared),
        "shared_reason": bool(vote.shared and vote.shared_reason),
        "num_turns": len(battle.turns),
        "turns": turn_records(battle),
        "identity_revealed": bool(vote.identity_revealed),
        "identity_reason": vote.identity_reason or None,
    }
    assert tuple(record) == VOTE_FIELDS, "vote_record and VOTE_FIELDS drifted apart"
    return record

"""Synthetic votes from known strengths: for tests, benchmarks and demos.

Ties and "both bad" are drawn so that the expected score of side a (1 win, 0.5 tie
or both-bad, 0 loss) is exactly the Bradley–Terry probability: with tie-or-bad rate
q the decisive votes go to a with probability (P − q/2)/(1 − q). The half-win fit is
then consistent for the true ratings (this needs q/2 ≤ P ≤ 1 − q/2; P is clipped
otherwise).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Sequence

import numpy as np

from sciarena.board.table import VoteTable, table_from_arrays
from sciarena.core.types import DISCIPLINES, QUESTION_TYPES
from sciarena.votes.schema import OUTCOMES, VOTE_FIELDS


def simulate(ratings: Sequence[float], n_votes: int, *, seed: int = 0, tie_rate: float = 0.09,
             bad_rate: float = 0.03, length_effect: float = 0.0,
             verbosity: Sequence[float] | None = None) -> VoteTable:
    """Votes between random pairs of models with the given Elo ratings.

    ``verbosity`` (log-length offsets per model) and ``length_effect`` (γ on the
    z-scored length feature) inject a style effect; lengths and citation counts are
    always recorded as features.
    """
    rng = np.random.default_rng(seed)
    r = np.asarray(ratings, dtype=np.float64)
    m = r.size
    a = rng.integers(0, m, n_votes)
    b = (a + rng.integers(1, m, n_votes)) % m
    verbose = np.zeros(m) if verbosity is None else np.asarray(verbosity, dtype=np.float64)
    length = np.exp(7.0 + verbose[np.c_[a, b]] + 0.3 * rng.standard_normal((n_votes, 2))).round()
    citations = rng.poisson(6.0, (n_votes, 2)).astype(np.float64)
    diff = (length[:, 0] - length[:, 1]) / (length.sum(axis=1) + 1.0)
    z = (diff - diff.mean()) / diff.std() if diff.std() > 0 else np.zeros(n_votes)
    logit = (r[a] - r[b]) * math.log(10.0) / 400.0 + length_effect * z
    p = 1.0 / (1.0 + np.exp(-logit))
    q = tie_rate + bad_rate
    decisive_a = np.clip((p - q / 2) / (1.0 - q), 0.0, 1.0) if q < 1 else np.full(n_votes, 0.5)
    u = rng.random(n_votes)
    outcome = np.where(u < tie_rate, 2, np.where(u < q, 3, np.where(rng.random(n_votes) < decisive_a, 0, 1)))
    return table_from_arrays(
        [f"model-{i:02d}" for i in range(m)], a, b, outcome,
        subjects=DISCIPLINES, subject=rng.integers(0, len(DISCIPLINES), n_votes),
        question_types=QUESTION_TYPES,
        question_type=rng.integers(0, len(QUESTION_TYPES), n_votes),
        features={"length": length, "citations": citations},
    )


def _template(constants: dict[str, object], variable: Sequence[str]) -> str:
    record: dict[str, object] = {f: None for f in VOTE_FIELDS}
    record.update(constants)
    for name in variable:
        record[name] = f"@@{name}@@"
    text = json.dumps(record, ensure_ascii=False).replace("%", "%%")
    for name in variable:
        text = text.replace(f'"@@{name}@@"', f"%({name})s")
    return text + "\n"


def write_jsonl(table: VoteTable, path: Path, *, start: int = 0, stop: int | None = None,
                mode: str = "w", day_of: Sequence[str] | None = None) -> None:
    """Write votes [start, stop) as JSON lines in our schema (every VOTE_FIELDS key).

    ``day_of[i]``: vote i's date (YYYY-MM-DD); default a spread over June 2025."""
    variable = ("id", "modelA", "modelB", "vote", "subject", "question_type", "timestamp",
                "length_a", "length_b", "num_citations_a", "num_citations_b")
    template = _template({
        "question": "What limits the efficiency of perovskite solar cells?",
        "responseA": "Ion migration and defects at grain boundaries [1].",
        "responseB": "Non-radiative recombination at interfaces [2].",
        "citations_a": [], "citations_b": [], "schema_version": 1, "consent": True,
        "retrieval_backend": "local", "retrieval_queries": [], "retrieval_filters": "{}",
        "context_ids": [], "app_version": "synthetic",
    }, variable)
    quoted = lambda names: [json.dumps(n, ensure_ascii=False) for n in names]  # noqa: E731
    models = quoted(table.models)
    subjects = quoted(table.subjects) + ["null"]  # index -1 → null
    qtypes = quoted(table.question_types) + ["null"]
    votes = quoted(OUTCOMES)
    stop = table.n_votes if stop is None else stop
    span = slice(start, stop)
    # Python lists: per-element numpy access would dominate the writing time
    columns = zip(
        range(start, stop), table.a[span].tolist(), table.b[span].tolist(),
        table.outcome[span].tolist(), table.subject[span].tolist(),
        table.question_type[span].tolist(),
        *(_ints(table.features[name][span, side]) for name in ("length", "citations")
          for side in (0, 1)),
    )
    with open(path, mode, encoding="utf-8") as out:
        lines = []
        for i, a, b, o, s, q, len_a, len_b, cit_a, cit_b in columns:
            lines.append(template % {
                "id": f'"v{i:08d}"', "modelA": models[a], "modelB": models[b], "vote": votes[o],
                "subject": subjects[s], "question_type": qtypes[q],
                "timestamp": (f'"{day_of[i]}T{i // 60 % 24:02d}:{i % 60:02d}:00Z"' if day_of is not None
                              else f'"2025-06-{1 + i % 28:02d}T{i // 60 % 24:02d}:{i % 60:02d}:00Z"'),
                "length_a": len_a, "length_b": len_b, "num_citations_a": cit_a,
                "num_citations_b": cit_b,
            })
            if len(lines) >= 10_000:
                out.write("".join(lines))
                lines.clear()
        out.write("".join(lines))


def _ints(values: np.ndarray) -> list[str]:
    """JSON text of whole numbers, null for NaN."""
    return ["null" if v != v else str(int(v)) for v in values.tolist()]


_WORDS = ("perovskite", "grain", "boundary", "ion", "migration", "defect", "interface", "layer",
          "recombination", "efficiency", "[1]", "(Smith et al. 2023a)", "the", "of", "and", "in")


def write_released_jsonl(table: VoteTable, path: Path, *, text_scale: float = 0.1) -> None:
    """Write the votes as JSON lines in the released SciArena schema (no length or count fields).

    Answers have ``text_scale`` × the table's lengths in characters (the default keeps the file
    near the size of ``write_jsonl``'s); citation lists have the table's citation counts."""
    rng = np.random.default_rng(0)
    filler = " ".join(rng.choice(_WORDS, 4000).tolist())
    citation = {"concise_authors": "Smith et al. 2023a", "content": filler[:12]}
    lengths = (np.nan_to_num(table.features["length"]) * text_scale).astype(int).tolist()
    counts = np.nan_to_num(table.features["citations"]).astype(int).tolist()
    subjects = list(table.subjects) + [None]
    qtypes = list(table.question_types) + [None]
    with open(path, "w", encoding="utf-8") as out:
        lines = []
        for i in range(table.n_votes):
            (len_a, len_b), (cit_a, cit_b) = lengths[i], counts[i]
            lines.append(json.dumps({
                "id": f"r{i:08d}", "question": "What limits the efficiency of perovskite solar cells?",
                "responseA": filler[:len_a], "responseB": filler[i % 7:i % 7 + len_b],
                "modelA": table.models[table.a[i]], "modelB": table.models[table.b[i]],
                "vote": OUTCOMES[table.outcome[i]], "citations_a": [citation] * cit_a,
                "citations_b": [citation] * cit_b, "question_type": qtypes[table.question_type[i]],
                "subject": subjects[table.subject[i]],
            }) + "\n")
            if len(lines) >= 10_000:
                out.write("".join(lines))
                lines.clear()
        out.write("".join(lines))


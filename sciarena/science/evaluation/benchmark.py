"""SciArena-Eval: a balanced sample of decisive human votes, written as JSON lines.

Per discipline the benchmark holds ``per_side`` votes where the voter preferred
answer A and ``per_side`` where they preferred B (the paper: 250 + 250 per
discipline, 2,000 in all). Ties and "both bad" carry no preference and are left
out. Sampling is seeded and independent of the order the records arrive in: the
candidates are sorted by id, and each (discipline, side) draws from its own
random stream, so adding votes of one discipline leaves the others' samples as
they were.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sciarena.core.errors import EvaluationInputError
from sciarena.core.files import atomic_output
from sciarena.core.types import DISCIPLINES
from sciarena.votes.schema import OUTCOMES, outcome_of, turn_count

DEFAULT_PER_SIDE = 250


@dataclass(frozen=True)
class EvalItem:
    """One benchmark item: a question, two answers and the side the human preferred."""

    id: str
    question: str
    response_a: str
    response_b: str
    human: str  # "A" or "B"
    subject: str
    model_a: str = ""
    model_b: str = ""
    question_type: str = ""
    citations_a: tuple[Mapping[str, Any], ...] | None = None
    citations_b: tuple[Mapping[str, Any], ...] | None = None

    @property
    def fingerprint(self) -> str:
        """A digest of what a judge sees and what it is scored against: a saved prediction is reused
        only for an item with the same fingerprint (ids alone repeat across benchmarks)."""
        cited = json.dumps([self.citations_a, self.citations_b], sort_keys=True, ensure_ascii=False, default=str)
        parts = (self.question, self.response_a, self.response_b, self.human, self.subject, cited)
        return hashlib.sha1("\x1f".join(parts).encode("utf-8")).hexdigest()[:16]

    def to_json(self) -> dict[str, Any]:
        """The JSON-lines record (field names as in the released SciArena data)."""
        out: dict[str, Any] = {
            "id": self.id, "question": self.question, "responseA": self.response_a,
            "responseB": self.response_b, "modelA": self.model_a, "modelB": self.model_b,
            "subject": self.subject, "question_type": self.question_type, "human": self.human,
        }
        if self.citations_a is not None:
            out["citations_a"] = [dict(c) for c in self.citations_a]
        if self.citations_b is not None:
            out["citations_b"] = [dict(c) for c in self.citations_b]
        return out

    @classmethod
    def from_json(cls, record: Mapping[str, Any]) -> "EvalItem":
        """Inverse of ``to_json``; raises ValueError naming the first bad field."""
        for name in ("id", "question", "responseA", "responseB", "subject"):
            if not isinstance(record.get(name), str) or not record[name]:
                raise ValueError(f"field {name!r} is missing or empty")
        if record.get("human") not in ("A", "B"):
            raise ValueError("field 'human' must be \"A\" or \"B\"")
        return cls(id=record["id"], question=record["question"], response_a=record["responseA"],
                   response_b=record["responseB"], human=record["human"], subject=record["subject"],
                   model_a=str(record.get("modelA") or ""), model_b=str(record.get("modelB") or ""),
                   question_type=str(record.get("question_type") or ""),
                   citations_a=_citations(record.get("citations_a")),
                   citations_b=_citations(record.get("citations_b")))


@dataclass(frozen=True)
class DisciplineCount:
    """What one discipline contributed: taken and available per side."""

    taken_a: int
    taken_b: int
    available_a: int
    available_b: int


@dataclass(frozen=True)
class BuildReport:
    """How the benchmark was drawn and what was left out, and why."""

    per_side: int
    seed: int
    records: int
    disciplines: Mapping[str, DisciplineCount]
    excluded: Mapping[str, int] = field(default_factory=dict)  # reason → count
    notes: tuple[str, ...] = ()  # e.g. a discipline short of per_side votes on one side

    @property
    def total(self) -> int:
        return sum(c.taken_a + c.taken_b for c in self.disciplines.values())


@dataclass(frozen=True)
class Benchmark:
    items: tuple[EvalItem, ...]
    report: BuildReport


def normalise_vote(label: object) -> str | None:
    """"A", "B", "tie" or "bad" from a vote label, read as the leaderboard reads it; None when unrecognised."""
    code = outcome_of(label)
    return None if code is None else OUTCOMES[code]


def match_discipline(subject: object, disciplines: Sequence[str] = DISCIPLINES) -> str | None:
    """The discipline ``subject`` names, ignoring case, spacing and "&" versus "and"."""
    if not isinstance(subject, str):
        return None
    key = _subject_key(subject)
    return next((d for d in disciplines if _subject_key(d) == key), None)


def build_benchmark(records: Iterable[Mapping[str, Any]], *, per_side: int = DEFAULT_PER_SIDE, seed: int = 0,
                    disciplines: Sequence[str] = DISCIPLINES) -> Benchmark:
    """Sample ``per_side`` A-preferred and ``per_side`` B-preferred votes per discipline.

    Never raises on short data: a discipline with fewer votes of a side gives all it has, and
    the report says so. Records without a question or either answer, and multi-turn battles (their vote is
    on the whole conversation), are skipped and counted.
    """
    if per_side < 1:
        raise ValueError("per_side must be at least 1")
    excluded: Counter[str] = Counter()
    pools: dict[tuple[str, str], dict[str, EvalItem]] = {(d, s): {} for d in disciplines for s in "AB"}
    seen: set[str] = set()
    total = 0
    for record in records:
        total += 1
        vote = normalise_vote(record.get("vote"))
        if vote is None:
            excluded["unrecognised vote label"] += 1
            continue
        if vote == "tie":
            excluded["tie"] += 1
            continue
        if vote == "bad":
            excluded["both bad"] += 1
            continue
        if turn_count(record) > 1:
            # The vote judged the whole conversation; an item is one question and two answers, and judging
            # the first turn against a verdict on later ones would put the wrong label on it.
            excluded["multi-turn battle"] += 1
            continue
        if not all(isinstance(record.get(k), str) and record[k].strip()
                   for k in ("question", "responseA", "responseB")):
            excluded["missing question or answer"] += 1
            continue
        discipline = match_discipline(record.get("subject"), disciplines)
        if discipline is None:
            excluded["subject outside the disciplines"] += 1
            continue
        item = _item(record, vote, discipline)
        if item.id in seen:
            excluded["duplicate id"] += 1
            continue
        seen.add(item.id)
        pools[(discipline, vote)][item.id] = item
    chosen: list[EvalItem] = []
    counts: dict[str, DisciplineCount] = {}
    notes: list[str] = []
    for discipline in disciplines:
        taken: dict[str, list[EvalItem]] = {}
        for side in "AB":
            pool = [pools[(discipline, side)][k] for k in sorted(pools[(discipline, side)])]
            rng = random.Random(f"sciarena-eval:{seed}:{discipline}:{side}")
            taken[side] = rng.sample(pool, min(per_side, len(pool)))
            if len(pool) < per_side:
                notes.append(f"{discipline}: only {len(pool)} vote(s) preferring {side} "
                             f"(wanted {per_side}); took all of them")
        counts[discipline] = DisciplineCount(len(taken["A"]), len(taken["B"]),
                                             len(pools[(discipline, "A")]), len(pools[(discipline, "B")]))
        chosen.extend(taken["A"] + taken["B"])
    # One global shuffle so that the first N items (``eval run --limit N``) mix disciplines and sides.
    random.Random(f"sciarena-eval:{seed}:order").shuffle(chosen)
    report = BuildReport(per_side=per_side, seed=seed, records=total, disciplines=counts,
                         excluded=dict(sorted(excluded.items())), notes=tuple(notes))
    return Benchmark(items=tuple(chosen), report=report)


def write_benchmark(items: Iterable[EvalItem], path: str | Path) -> int:
    """Write items as JSON lines (replacing ``path`` atomically); returns how many were written."""
    count = 0
    with atomic_output(path) as handle:
        for item in items:
            handle.write(json.dumps(item.to_json(), ensure_ascii=False) + "\n")
            count += 1
    return count


def read_benchmark(path: str | Path) -> tuple[EvalItem, ...]:
    """Items of a benchmark file; EvaluationInputError when missing, unreadable, malformed or empty."""
    source = Path(path)
    try:
        text = source.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise EvaluationInputError(f"{source}: no such benchmark file") from None
    except (OSError, UnicodeDecodeError) as err:
        raise EvaluationInputError(f"{source}: cannot read the benchmark ({err})") from None
    items: list[EvalItem] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            if not isinstance(record, dict):
                raise ValueError("not a JSON object")
            items.append(EvalItem.from_json(record))
        except ValueError as err:
            raise EvaluationInputError(f"{source}: line {number} is not a benchmark item ({err})") from None
    if not items:
        raise EvaluationInputError(f"{source}: the benchmark is empty")
    ids = Counter(item.id for item in items)
    repeated = [k for k, n in ids.items() if n > 1]
    if repeated:
        raise EvaluationInputError(f"{source}: item id {repeated[0]!r} appears {ids[repeated[0]]} times")
    return tuple(items)


def _item(record: Mapping[str, Any], vote: str, discipline: str) -> EvalItem:
    raw_id = record.get("id")
    if raw_id is None or str(raw_id).strip() == "":
        # Without an id, a content hash keeps the item identifiable across rebuilds (resume needs it).
        digest = hashlib.sha1("\x1f".join(str(record[k]) for k in ("question", "responseA", "responseB"))
                              .encode("utf-8")).hexdigest()
        raw_id = f"sha1:{digest[:16]}"
    return EvalItem(id=str(raw_id), question=record["question"].strip(), response_a=record["responseA"].strip(),
                    response_b=record["responseB"].strip(), human=vote, subject=discipline,
                    model_a=str(record.get("modelA") or ""), model_b=str(record.get("modelB") or ""),
                    question_type=str(record.get("question_type") or ""),
                    citations_a=_citations(record.get("citations_a")),
                    citations_b=_citations(record.get("citations_b")))


def _citations(value: object) -> tuple[Mapping[str, Any], ...] | None:
    if not isinstance(value, (list, tuple)):
        return None
    return tuple(dict(c) for c in value if isinstance(c, Mapping))


def _subject_key(text: str) -> str:
    return " ".join(text.replace("&", " and ").lower().split())

"""Per-vote labels: the resumable output file of ``label categories|disciplines``, and the loop that fills it.

Model calls cost money, so each label is appended (one flushed JSON line) as soon as it
arrives, keyed by vote id and a hash of the question, and a rerun with the same file skips
the votes this labeller has already labelled for this task. Failed calls are recorded with
their error and tried again on the next run; an "invalid" reply is a result, not retried.
Votes sharing a question are labelled with one call.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sciarena.answer.label_reply import INVALID, MAX_RAW_CHARS
from sciarena.arena.labels.labellers import Label, Labeller
from sciarena.core.errors import SciArenaError
from sciarena.core.files import ResumeLog
from sciarena.providers.paid_calls import run_calls

log = logging.getLogger(__name__)

STATUSES = ("ok", "invalid", "none", "error")  # none: an offline rule found no cue


def question_hash(question: str) -> str:
    """A short fingerprint of the question's words: a vote whose question changed is labelled again."""
    return hashlib.sha1(" ".join(question.split()).encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class VoteQuestion:
    vote_id: str
    question: str

    @property
    def key(self) -> tuple[str, str]:
        return self.vote_id, question_hash(self.question)


@dataclass(frozen=True)
class VoteLabel:
    """One vote's label for one task, and who produced it."""

    vote_id: str
    question_hash: str
    task: str  # "category" | "discipline"
    labeller: str
    label: str  # a task label; "" when status is not "ok"
    status: str  # one of STATUSES
    raw: str = ""
    error: str = ""

    @property
    def key(self) -> tuple[str, str]:
        return self.vote_id, self.question_hash

    def to_json(self) -> dict[str, Any]:
        return {"vote_id": self.vote_id, "question_hash": self.question_hash, "task": self.task,
                "labeller": self.labeller, "label": self.label or None, "status": self.status,
                "raw": self.raw or None, "error": self.error or None}

    @classmethod
    def from_json(cls, record: Mapping[str, Any]) -> "VoteLabel":
        if record.get("status") not in STATUSES:
            raise ValueError("unknown status")
        return cls(vote_id=str(record["vote_id"]), question_hash=str(record["question_hash"]),
                   task=str(record["task"]), labeller=str(record["labeller"]), label=str(record.get("label") or ""),
                   status=record["status"], raw=str(record.get("raw") or ""), error=str(record.get("error") or ""))


def _vote_label(item: VoteQuestion, task: str, labeller: str, label: Label | None, error: str = "") -> VoteLabel:
    if label is None:
        return VoteLabel(item.vote_id, item.key[1], task, labeller, "", "error", error=error)
    status = "ok" if label.valid else ("invalid" if label.value == INVALID else "none")
    return VoteLabel(item.vote_id, item.key[1], task, label.labeller, label.value if status == "ok" else "",
                     status, raw=label.raw[:MAX_RAW_CHARS])


class LabelLog(ResumeLog[VoteLabel]):
    """The labels file: one label per line, read back to resume a run."""

    def __init__(self, path: str | Path) -> None:
        super().__init__(path, VoteLabel.from_json, noun="vote label", error=SciArenaError,
                         hint="; choose another --out file")

    def latest(self, task: str, labeller: str) -> dict[tuple[str, str], VoteLabel]:
        """The last label per (vote id, question hash) that ``labeller`` gave for ``task``."""
        return {v.key: v for v in self.read() if v.task == task and v.labeller == labeller}


def pending(items: Sequence[VoteQuestion], done: Mapping[tuple[str, str], VoteLabel]) -> list[VoteQuestion]:
    """Votes without a usable label yet (none saved, or a failed call: tried again)."""
    return [item for item in items if (saved := done.get(item.key)) is None or saved.status == "error"]


def distinct_questions(items: Iterable[VoteQuestion]) -> dict[str, list[VoteQuestion]]:
    """Votes grouped by question hash, in first-seen order: one call per group."""
    groups: dict[str, list[VoteQuestion]] = {}
    for item in items:
        groups.setdefault(item.key[1], []).append(item)
    return groups


@dataclass(frozen=True)
class LabelOutcome:
    labels: tuple[VoteLabel, ...]  # new ones, in the order they arrived
    stopped: str = ""  # why the run stopped early, if it did


def label_votes(items: Sequence[VoteQuestion], labeller: Labeller, *, concurrency: int = 4,
                on_label: Callable[[VoteLabel], None] = lambda v: None,
                max_consecutive_errors: int = 20) -> LabelOutcome:
    """Label each distinct question once, at most ``concurrency`` calls in flight; ``on_label``
    sees each vote's label as soon as its question's call returns.

    After ``max_consecutive_errors`` failed calls in a row (a revoked key, an outage) no new
    call is started. On Ctrl-C no new call is started and the calls in flight are waited for,
    so their (paid) labels reach ``on_label``; then KeyboardInterrupt is raised again.
    """
    results: list[VoteLabel] = []

    def record(group: list[VoteQuestion], label: Label | None, error: str) -> None:
        for item in group:
            vote = _vote_label(item, labeller.task.name, labeller.name, label, error)
            results.append(vote)
            on_label(vote)

    stopped = run_calls(distinct_questions(items).values(), lambda group: labeller.label(group[0].question),
                        record, concurrency=concurrency, max_consecutive_errors=max_consecutive_errors,
                        name="sciarena-label")
    return LabelOutcome(labels=tuple(results), stopped=stopped)

"""Running a judge over benchmark items: bounded concurrency, one prediction per item, resumable.

Judge calls cost money, so each prediction is appended to the predictions file as
soon as it arrives, and a rerun with the same file skips the items this judge (in
this mode) has already judged. Failed calls are recorded too, with their error,
but are tried again on the next run.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sciarena.core.errors import EvaluationInputError, SciArenaError
from sciarena.core.files import ResumeLog
from sciarena.providers.paid_calls import run_calls
from sciarena.science.evaluation.benchmark import EvalItem
from sciarena.science.evaluation.judge import Judge, Reply

log = logging.getLogger(__name__)

STATUSES = ("ok", "invalid", "inconsistent", "error")
MAX_OUTPUT_CHARS = 4000  # raw judge text kept for auditing; a long reasoning trace is cut
_FLIP = {"A": "B", "B": "A"}


@dataclass(frozen=True)
class Prediction:
    """A judge's verdict on one item, in the item's own A/B terms.

    ``positions`` are the letters the judge gave as the answers were shown: one per call,
    the original order first and, with swap, the reversed order second (None = unparseable).
    """

    id: str
    judge: str
    swap: bool
    subject: str
    human: str
    verdict: str | None
    status: str  # one of STATUSES
    positions: tuple[str | None, ...] = ()
    outputs: tuple[str, ...] = ()
    error: str = ""
    seconds: float = 0.0
    input_tokens: int | None = None
    output_tokens: int | None = None
    item: str = ""  # the judged item's fingerprint (EvalItem.fingerprint)

    @property
    def key(self) -> tuple[str, str]:
        """(item id, item fingerprint): what a saved prediction is matched on (see ``item_key``)."""
        return self.id, self.item

    @property
    def agrees(self) -> bool:
        return self.verdict is not None and self.verdict == self.human

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "judge": self.judge, "swap": self.swap, "subject": self.subject,
                "human": self.human, "verdict": self.verdict, "agree": self.agrees, "status": self.status,
                "positions": list(self.positions), "outputs": list(self.outputs), "error": self.error or None,
                "seconds": round(self.seconds, 3), "input_tokens": self.input_tokens,
                "output_tokens": self.output_tokens, "item": self.item}

    @classmethod
    def from_json(cls, record: Mapping[str, Any]) -> "Prediction":
        if record.get("status") not in STATUSES:
            raise ValueError("unknown status")
        return cls(id=str(record["id"]), judge=str(record["judge"]), swap=bool(record["swap"]),
                   subject=str(record.get("subject") or ""), human=str(record["human"]),
                   verdict=record.get("verdict") if record.get("verdict") in ("A", "B") else None,
                   status=record["status"],
                   positions=tuple(p if p in ("A", "B") else None for p in record.get("positions") or ()),
                   outputs=tuple(str(o) for o in record.get("outputs") or ()),
                   error=str(record.get("error") or ""), seconds=float(record.get("seconds") or 0.0),
                   input_tokens=record.get("input_tokens"), output_tokens=record.get("output_tokens"),
                   item=str(record.get("item") or ""))


def judge_item(judge: Judge, item: EvalItem, *, swap: bool = False,
               clock: Callable[[], float] = time.monotonic) -> Prediction:
    """Ask ``judge`` once (or twice with ``swap``) and combine the answers; never raises for a failed call."""
    started = clock()
    replies: list[Reply] = []
    error = ""
    try:
        for swapped in ((False, True) if swap else (False,)):
            replies.append(judge.judge(item, swapped=swapped))
    except SciArenaError as err:
        error = str(err) or type(err).__name__
    except Exception as err:  # a judge bug must cost one item, not the whole paid run
        log.debug("judge %s failed on %s", judge.name, item.id, exc_info=True)  # the trace only at debug level: users see one line
        error = f"unexpected {type(err).__name__}"
    positions = tuple(r.verdict for r in replies)
    # Back in the item's terms: in the swapped call, "A" named the item's answer B.
    unswapped = [p if k == 0 or p is None else _FLIP[p] for k, p in enumerate(positions)]
    if error:
        status, verdict = "error", None
    elif any(v is None for v in unswapped):
        status, verdict = "invalid", None
    elif len(set(unswapped)) > 1:
        status, verdict = "inconsistent", None
    else:
        status, verdict = "ok", unswapped[0]
    tokens_in = [r.usage.input_tokens for r in replies if r.usage.input_tokens is not None]
    tokens_out = [r.usage.output_tokens for r in replies if r.usage.output_tokens is not None]
    return Prediction(id=item.id, judge=judge.name, swap=swap, subject=item.subject, human=item.human,
                      verdict=verdict, status=status, positions=positions,
                      outputs=tuple(r.text[:MAX_OUTPUT_CHARS] for r in replies), error=error,
                      seconds=clock() - started, input_tokens=sum(tokens_in) if tokens_in else None,
                      output_tokens=sum(tokens_out) if tokens_out else None, item=item.fingerprint)


@dataclass(frozen=True)
class RunOutcome:
    predictions: tuple[Prediction, ...]  # new ones, in the order they arrived
    stopped: str = ""  # why the run stopped early, if it did


def run_judge(items: Iterable[EvalItem], judge: Judge, *, swap: bool = False, concurrency: int = 8,
              on_prediction: Callable[[Prediction], None] = lambda p: None,
              max_consecutive_errors: int = 20,
              on_interrupt: Callable[[int], None] = lambda in_flight: None) -> RunOutcome:
    """Judge ``items`` with at most ``concurrency`` calls in flight; ``on_prediction`` sees each result at once.

    After ``max_consecutive_errors`` failed items in a row (a revoked key, an outage) no new
    item is started: the remaining ones are left for a later run. On Ctrl-C no new item is
    started, ``on_interrupt`` is told how many calls are in flight, and their (paid) results
    still reach ``on_prediction`` before KeyboardInterrupt is raised again; a second Ctrl-C
    abandons them.
    """
    results: list[Prediction] = []

    def record(item: EvalItem, prediction: Prediction | None, error: str) -> None:
        assert prediction is not None  # judge_item turns every failure into an "error" prediction
        results.append(prediction)
        on_prediction(prediction)

    stopped = run_calls(items, lambda item: judge_item(judge, item, swap=swap), record,
                        concurrency=concurrency, max_consecutive_errors=max_consecutive_errors,
                        failure=lambda p: (p.error or "error") if p.status == "error" else "",
                        on_interrupt=on_interrupt, name="sciarena-judge", unit="items")
    return RunOutcome(predictions=tuple(results), stopped=stopped)


class PredictionLog(ResumeLog[Prediction]):
    """The predictions file: one prediction per line, read back to resume a run."""

    def __init__(self, path: str | Path) -> None:
        super().__init__(path, Prediction.from_json, noun="prediction", error=EvaluationInputError)

    def latest(self, judge: str, swap: bool) -> dict[tuple[str, str], Prediction]:
        """The last prediction per item (id and content, see ``item_key``) made by ``judge`` in this swap mode."""
        return {p.key: p for p in self.read() if p.judge == judge and p.swap == swap}


def item_key(item: EvalItem) -> tuple[str, str]:
    """How saved predictions are matched to items: ids alone repeat across benchmarks, so the
    content's fingerprint is part of the key."""
    return item.id, item.fingerprint


def pending_items(items: Sequence[EvalItem], done: Mapping[tuple[str, str], Prediction]) -> list[EvalItem]:
    """Items without a usable prediction yet (none saved for this item, or a failed call: tried again)."""
    return [item for item in items
            if (saved := done.get(item_key(item))) is None or saved.status == "error"]

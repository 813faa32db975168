"""Running a judge: Ctrl-C keeps the results of calls already sent (they are paid for)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import pytest

from sciarena.science.evaluation.benchmark import EvalItem
from sciarena.science.evaluation.judge import Reply
from sciarena.science.evaluation.runner import run_judge


@dataclass
class GatedJudge:
    """Answers "A". No call returns before ``in_flight`` calls have started (so what is in flight
    does not depend on how fast the pool's threads get going); then the first item returns, and
    every other one waits until ``release`` is set."""

    in_flight: int
    name: str = "gated"
    kind: str = "baseline"
    release: threading.Event = field(default_factory=threading.Event)
    started: threading.Barrier = field(init=False)

    def __post_init__(self) -> None:
        self.started = threading.Barrier(self.in_flight, timeout=10)

    def judge(self, item: EvalItem, *, swapped: bool = False) -> Reply:
        self.started.wait()
        if item.id != "i0":
            self.release.wait(10)
        return Reply(text="A", verdict="A")


def items(n: int) -> list[EvalItem]:
    return [EvalItem(id=f"i{k}", question="Q?", response_a="a", response_b="b", human="A",
                     subject="Healthcare") for k in range(n)]


def test_ctrl_c_stops_new_items_but_saves_the_calls_in_flight():
    judge = GatedJudge(in_flight=4)
    seen: list[str] = []
    told: list[int] = []

    def on_prediction(prediction) -> None:
        seen.append(prediction.id)
        if prediction.id == "i0":
            raise KeyboardInterrupt  # the user presses Ctrl-C while i1..i3 are being judged

    def on_interrupt(in_flight: int) -> None:
        told.append(in_flight)
        judge.release.set()

    with pytest.raises(KeyboardInterrupt):
        run_judge(items(10), judge, concurrency=4, on_prediction=on_prediction, on_interrupt=on_interrupt)
    assert told == [3]
    assert sorted(seen) == ["i0", "i1", "i2", "i3"]  # nothing new started, nothing in flight lost

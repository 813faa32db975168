"""What each side of a running battle has shown, used and timed so far (the runner's bookkeeping).

The runner's loop (runner.py) feeds events in; this module keeps each side's text, first-token and total
times, usage, added references and, for a held side (a pipeline, shown only once it has ended), the replay
of its final answer in pieces.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Mapping

from sciarena.arena.events import SIDES, Progress, Side, SideAnswered
from sciarena.arena.pairing import cost_usd
from sciarena.core.errors import SciArenaError
from sciarena.core.types import Battle, Reference, SideResult, Usage

ANSWERING = "Answering"  # the one progress line a running side shows before the vote, plain model or pipeline
# A held side's final answer is shown in pieces at this pace once it has ended, so it arrives like a stream
# rather than all at once (which would tell it from the plain models). 200 characters every 100 ms is about
# 2,000 characters a second: faster than most hosted models stream (so the replay never makes a pipeline look
# slower than it is by more than ~1.5 s for a 3,000-character answer), and ten updates a second, the pace the
# runner sends a plain side's text at (coalesce.py), so both read as text being written, not pasted. Pieces end
# at a word boundary, as a streaming side's text does.
REPLAY_CHARS = 200
REPLAY_STEP_S = 0.1


@dataclass
class _Replay:
    """A held side's final answer being shown piece by piece (mutable: the runner's loop advances it)."""

    text: str  # the answer as shown (redacted)
    began: float  # the runner's clock when its first piece was shown
    released: int = 0  # how many characters are shown
    pieces: int = 0  # how many pieces were shown


class Sides:
    """What each side has shown, used and timed so far, and its result once it has ended."""

    def __init__(self, battle: Battle, start: float) -> None:
        self._battle = battle
        self._start = start
        self.specs = {"a": battle.model_a, "b": battle.model_b}
        self.shown = {"a": "", "b": ""}
        self.results: dict[str, SideResult] = {}
        self._first_token: dict[str, float | None] = {"a": None, "b": None}
        self._usage = {"a": Usage(), "b": Usage()}
        self._extra: dict[str, tuple[Reference, ...]] = {"a": (), "b": ()}
        # A contestant that can start its text over (a pipeline: its spec names one) shows no text until it has
        # ended. Its draft wiped and written again is something no plain model does, so before the vote it
        # would say which side is the pipeline; held back, it shows ANSWERING like any side, then its answer.
        self._held = {side: bool(spec.pipeline) for side, spec in self.specs.items()}
        # A held side that has answered is in ``results`` (it takes no more events) but is not set on the battle
        # until its replay has shown the whole answer: votes open only once every side's text is fully shown.
        self._replays: dict[str, _Replay] = {}

    @property
    def all_ended(self) -> bool:
        return len(self.results) == 2 and not self._replays

    @property
    def ended(self) -> frozenset[str]:
        """The sides set on the battle: ended, and a held side's replay shown in full."""
        return frozenset(side for side in self.results if side not in self._replays)

    @property
    def replaying(self) -> tuple[str, ...]:
        return tuple(self._replays)

    def held_answer(self, side: Side) -> bool:
        """``side`` is held and has just answered: its answer is to be replayed."""
        result = self.results.get(side)
        return self._held[side] and result is not None and result.answer is not None

    def begin_replay(self, side: Side, text: str, now: float) -> None:
        self._replays[side] = _Replay(text, began=now)

    def release(self, now: float) -> dict[str, str]:
        """The next piece of each replay (at most REPLAY_CHARS): as many pieces as the clock says are due since its
        first (so a late loop catches up), and at least one each call (so a clock that does not move ends it).
        A replay that reaches the end sets its side's total time: when its last piece was shown."""
        shown: dict[str, str] = {}
        for side, replay in list(self._replays.items()):
            due = 1 + int((now - replay.began) / REPLAY_STEP_S + 1e-9)  # 1e-9: float sums of the step
            for _ in range(max(1, due - replay.pieces)):
                replay.released = _piece_end(replay.text, replay.released, replay.released + REPLAY_CHARS)
                replay.pieces += 1
            shown[side] = replay.text[: replay.released]
            if replay.released == len(replay.text):
                del self._replays[side]
                self.results[side] = replace(self.results[side], total_s=now - self._start)
        return shown

    def visible(self, side: Side) -> str:
        """What a running ``side`` shows: nothing while it is held back."""
        return "" if self._held[side] else self.shown[side]

    def _shown_at(self, side: Side, now: float) -> None:
        """A held side's first text is shown when it ends: that is its first-token time as a voter saw it."""
        if self._held[side] and self.shown[side] and self._first_token[side] is None:
            self._first_token[side] = now - self._start

    def show(self, side: Side, visible: str, now: float) -> None:
        if side in self.results:
            return
        if visible and self._first_token[side] is None and not self._held[side]:
            self._first_token[side] = now - self._start
        self.shown[side] += visible

    def used(self, side: Side, usage: Usage) -> None:
        if side not in self.results:
            self._usage[side] = usage  # a multi-step contestant reports its running total

    def restart(self, side: Side) -> None:
        if side not in self.results:
            self.shown[side] = ""

    def add_references(self, side: Side, references: tuple[Reference, ...]) -> None:
        if side not in self.results:
            self._extra[side] += references

    def answer(self, side: Side, event: SideAnswered, now: float) -> None:
        if side in self.results:
            return
        spec = self.specs[side]
        self.shown[side] = event.answer.text
        self._shown_at(side, now)
        self.results[side] = SideResult(model=spec, answer=event.answer, first_token_s=self._first_token[side],
                                        total_s=now - self._start, usage=self._usage[side],
                                        cost_usd=cost_usd(spec, self._usage[side]),
                                        extra_references=event.extra_references, report=event.report)

    def progress(self, safe: Mapping[str, str]) -> Progress:
        """A snapshot: the shown (redacted) texts, the same ANSWERING line for each running side, and the
        references each side has added."""
        running = {side: ANSWERING for side in SIDES if side not in self.results or side in self._replays}
        return Progress(safe["a"], safe["b"], self.battle(), status=running, extra_references=dict(self._extra))

    def fail(self, side: Side, error: SciArenaError, now: float) -> None:
        if side not in self.results:
            self._shown_at(side, now)
            self.results[side] = SideResult(model=self.specs[side], answer=None, error=error,
                                            first_token_s=self._first_token[side], total_s=now - self._start,
                                            usage=self._usage[side])

    def battle(self) -> Battle:
        ended = {side: result for side, result in self.results.items() if side not in self._replays}
        return replace(self._battle, side_a=ended.get("a"), side_b=ended.get("b"))


def complete_words(text: str) -> str:
    """``text`` up to its last whitespace (all of it if it ends with one)."""
    if not text or text[-1].isspace():
        return text
    cut = max(text.rfind(" "), text.rfind("\n"))
    return text[: cut + 1] if cut >= 0 else ""


def _piece_end(text: str, released: int, target: int) -> int:
    """Where a replay's next piece ends: after the last whitespace before ``target`` (past ``released``), or,
    for a word longer than a piece, after that word; the whole text once ``target`` reaches its end."""
    if target >= len(text):
        return len(text)
    cut = max(text.rfind(" ", released, target), text.rfind("\n", released, target))
    if cut >= 0:
        return cut + 1
    ahead = [i for i in (text.find(" ", target), text.find("\n", target)) if i >= 0]
    return min(ahead) + 1 if ahead else len(text)

"""Run both generations of a battle concurrently, as a stream of snapshots.

Each side runs in its own thread and reports typed events (a text chunk, token usage, a finished
answer, a failure) into one queue; the caller's generator drains the queue and yields a snapshot
of both texts. So a slow model never stalls the fast one (a FastChat defect: streams read in turn),
and a battle takes as long as its slower side, not the sum of both.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Callable, Iterator, Literal, Mapping, Union

from sciarena.answer.clean import ReasoningFilter, clean_answer
from sciarena.answer.redact import Shield
from sciarena.arena.pairing import cost_usd
from sciarena.core.errors import Cancelled, ProviderError, ProviderTimeout, SciArenaError
from sciarena.core.types import (
    Answer,
    Battle,
    GenerationRequest,
    ModelSpec,
    PipelineReport,
    Provider,
    Reference,
    SideResult,
    Usage,
)

if TYPE_CHECKING:
    from sciarena.answer.editor import LLMPostprocessor
    from sciarena.answer.redact import Shield

log = logging.getLogger(__name__)

Side = Literal["a", "b"]
SIDES: tuple[Side, Side] = ("a", "b")
ANSWERING = "Answering"  # the one progress line a running side shows before the vote, plain model or pipeline
# A held side's final answer is shown in pieces at this pace once it has ended, so it arrives like a stream
# rather than all at once (which would tell it from the plain models). 60 characters every 30 ms is about
# 2,000 characters a second: faster than most hosted models stream (so the replay never makes a pipeline look
# slower than it is by more than ~1.5 s for a 3,000-character answer) yet 33 updates a second, which reads as
# text being written, not pasted. Pieces end at a word boundary, as a streaming side's text does.
REPLAY_CHARS = 60
REPLAY_STEP_S = 0.03


@dataclass(frozen=True)
class TextChunk:
    side: Side
    text: str
    at: float  # the runner's clock when this side's thread received the text (its own time, not the batch's)


@dataclass(frozen=True)
class UsageReport:
    side: Side
    usage: Usage


@dataclass(frozen=True)
class TextRestarted:
    """A multi-step contestant starts its text over (a revision). Neither this nor its step's status line is
    shown: such a side's text is held back until it ends (_Sides), so nothing before the vote tells it apart."""

    side: Side


@dataclass(frozen=True)
class ReferencesAdded:
    side: Side
    references: tuple[Reference, ...]  # numbered after the battle's and any added before


@dataclass(frozen=True)
class SideAnswered:
    side: Side
    answer: Answer  # cleaned; raw_text holds what the model streamed
    at: float  # the runner's clock when this side's answer was ready (cleaned)
    extra_references: tuple[Reference, ...] = ()
    report: PipelineReport | None = None


@dataclass(frozen=True)
class SideFailed:
    side: Side
    error: SciArenaError
    at: float


SideEvent = Union[TextChunk, UsageReport, TextRestarted, ReferencesAdded, SideAnswered, SideFailed]


@dataclass(frozen=True)
class Progress:
    """A snapshot of a running battle: what each side has shown so far."""

    text_a: str
    text_b: str
    battle: Battle  # side_a / side_b are set as soon as that side has ended (a held side: its replay too)
    # ANSWERING for every side still running, whatever the contestant (absent once it has ended), and the
    # references a side has added so far (so its new citations link while it writes). A pipeline's own step
    # lines ("Searching for more papers: ...") are never passed on: before the vote they would tell a voter
    # which side is the pipeline, and so narrow who it is; its steps are in its report, shown after the vote.
    status: Mapping[str, str] = field(default_factory=dict)
    extra_references: Mapping[str, tuple[Reference, ...]] = field(default_factory=dict)

    def references(self, side: Side) -> tuple[Reference, ...]:
        """What ``side`` may cite right now: the battle's references (every turn's), those its pipeline added in
        earlier turns, and any it added in this one."""
        return self.battle.side_references(side) + tuple(self.extra_references.get(side, ()))

    @property
    def finished(self) -> bool:
        return self.battle.finished


class BattleRunner:
    """Runs the two sides of a battle concurrently and postprocesses each answer.

    ``clock`` (monotonic seconds) times first tokens, totals and the timeout; tests inject one. It is read
    on each side's own thread as that side's text and answer arrive, so it must be thread-safe.
    ``tick_s`` is the longest the stream goes without a snapshot while both models are silent.
    ``sleep`` waits between the pieces of a held side's replay (REPLAY_STEP_S); tests pass one that moves their
    clock instead, so the pace is checked against the clock without waiting in real time.
    ``second_reading=False`` applies the precise redactor alone (redact.Shield), for tests that show what the blind
    reading adds."""

    def __init__(self, providers: Mapping[str, Provider], timeout_s: float = 120.0,
                 clock: Callable[[], float] = time.monotonic, editor: "LLMPostprocessor | None" = None,
                 tick_s: float = 0.5, sleep: Callable[[float], None] = time.sleep, second_reading: bool = True) -> None:
        self._providers = providers
        self._timeout_s = timeout_s
        self._clock = clock
        self._sleep = sleep
        self._tick_s = tick_s
        self._editor = editor  # the optional LLM postprocessor
        self._second_reading = second_reading

    def run(self, battle: Battle, request: GenerationRequest,
            requests: Mapping[str, GenerationRequest] | None = None) -> Iterator[Progress]:
        """Yield snapshots until both sides have ended; the last one holds both SideResults.

        ``requests`` gives each side its own request (a follow-up turn: each side's own earlier answers);
        by default both get ``request``. One turn, one run: the timeout and the anonymity policy are per turn,
        the policy's topics being every question asked so far and every reference either side may cite."""

        events: queue.Queue[SideEvent] = queue.Queue()
        per_side = dict(requests or {"a": request, "b": request})
        asked = " ".join([*(e.question for e in request.history), request.question])
        shield = Shield(asked, per_side["a"].references + per_side["b"].references, second_reading=self._second_reading)
        start = self._clock()
        specs = {"a": battle.model_a, "b": battle.model_b}
        stop = threading.Event()  # set when this generator ends: abandoned sides stop generating (and billing)
        for side, spec in specs.items():
            threading.Thread(target=self._pump, args=(side, spec, per_side[side], events, stop),
                             name=f"battle-{battle.battle_id[:8]}-{side}", daemon=True).start()

        try:
            yield from self._follow(battle, events, start, shield)
        finally:
            stop.set()

    def _follow(self, battle: Battle, events: queue.Queue[SideEvent], start: float,
                shield: "Shield") -> Iterator[Progress]:
        """Drain both sides' events into snapshots until both have ended (or time is up) and every held side's
        answer has been replayed in full: only then is the battle finished and the vote open.

        The anonymity policy is applied here and only here (``shielded``): to what each side has streamed
        so far, to each final answer (the stored text and its flags) and to what a failed side showed."""

        sides = _Sides(battle, start)
        safe = {"a": "", "b": ""}  # shown, with identity words redacted
        finals: dict[str, str] = {}  # a finished side's text as shown before the vote

        def shielded(side: Side) -> str:
            """What ``side`` shows now; a finished side's answer is stored with the policy applied."""
            if side in finals:
                return finals[side]
            result = sides.results.get(side)
            if result is None:  # still streaming: the last unfinished word is held back ("Anthrop|ic")
                return shield.show(_complete_words(sides.visible(side)), partial=True).text
            if result.answer is None:  # failed: what it streamed, as a finished text
                finals[side] = shield.show(sides.shown[side]).text
                return finals[side]
            shown = shield.show(result.answer.text)
            sides.results[side] = replace(result, answer=replace(result.answer, text=shown.full,
                                                                 shown=shown.text, redacted=shown.redacted,
                                                                 masked=shown.masked))
            finals[side] = shown.text
            return shown.text

        filters = {"a": ReasoningFilter(), "b": ReasoningFilter()}
        deadline = start + self._timeout_s
        timeout = ProviderTimeout(f"This model did not finish within {self._timeout_s:.0f} seconds.",
                                  timeout_s=self._timeout_s)
        while not sides.all_ended:
            batch: list[SideEvent] = []
            if sides.replaying:
                # A held side is being shown piece by piece: wait one step, then take whatever the other side
                # sent meanwhile. The replay is the arena's doing, so the timeout only fails a side still
                # generating (fail() ignores a side that has ended); the replay goes on after it.
                self._sleep(REPLAY_STEP_S)
                batch = _drain(events, batch)
                if not batch and self._clock() >= deadline:
                    for side in SIDES:
                        sides.fail(side, timeout, self._clock())
            else:
                remaining = deadline - self._clock()
                try:
                    batch = [events.get(timeout=max(0.0, min(remaining, self._tick_s)))]
                except queue.Empty:
                    if remaining > self._tick_s:
                        # Nothing new, but yield anyway: a caller can only stop this generator between
                        # snapshots (New battle cancels it), so it must not sit waiting on a silent model.
                        yield sides.progress(safe)
                        continue
                    for side in SIDES:
                        sides.fail(side, timeout, self._clock())
                    continue  # a held side that ended before the timeout may still be replaying
                # Coalesce whatever else is already waiting into one snapshot, so a fast
                # stream does not turn into one UI update per token.
                batch = _drain(events, batch)
            # Times are each event's own stamp, taken on its side's thread: a batch can hold both sides'
            # events (a fast offline answer arrives whole before this loop wakes), and reading the clock
            # here would give both sides the same first-token and total time.
            for event in batch:
                if isinstance(event, TextChunk):
                    sides.show(event.side, filters[event.side].feed(event.text), event.at)
                elif isinstance(event, UsageReport):
                    sides.used(event.side, event.usage)
                elif isinstance(event, TextRestarted):  # what the filter held back belonged to the old text
                    filters[event.side] = ReasoningFilter()
                    sides.restart(event.side)
                elif isinstance(event, ReferencesAdded):
                    sides.add_references(event.side, event.references)
                elif isinstance(event, SideAnswered):
                    sides.answer(event.side, event, event.at)
                else:  # a failed side keeps what it streamed, including text the filter held back
                    sides.show(event.side, filters[event.side].finish(), event.at)
                    sides.fail(event.side, event.error, event.at)
                if sides.held_answer(event.side) and event.side not in finals:  # shown from now, in pieces
                    sides.begin_replay(event.side, shielded(event.side), event.at)
            if sides.all_ended:
                break
            # Redact while streaming too: a name shown mid-stream would break anonymity
            # even if the final answer is redacted. Only sides that changed are checked again.
            for side in {event.side for event in batch} - set(sides.replaying):
                safe[side] = shielded(side)
            # A replay's pieces are cut from the answer as redacted (shielded), so they need no check.
            safe.update(sides.release(self._clock()))
            if sides.all_ended:
                break
            yield sides.progress(safe)

        texts = {side: shielded(side) for side in SIDES}
        yield Progress(texts["a"], texts["b"], sides.battle())

    def _pump(self, side: Side, spec: ModelSpec, request: GenerationRequest, events: queue.Queue[SideEvent],
              stop: threading.Event) -> None:
        """Stream one side into the queue, then clean its answer here, off the caller's loop,
        so an LLM editor call for one side never holds up the other side's stream."""

        provider = self._providers.get(spec.provider)
        try:
            if provider is None:
                raise ProviderError(f"No provider named {spec.provider!r} is configured.")
            parts: list[str] = []
            extra: list[Reference] = []  # references a multi-step contestant retrieved itself
            report: PipelineReport | None = None
            stream = provider.stream(spec, request, cancel=stop)
            for delta in stream:
                if stop.is_set():  # the battle was abandoned or timed out
                    close = getattr(stream, "close", None)
                    if close is not None:
                        close()
                    return
                if delta.restart:
                    parts.clear()
                if delta.restart:
                    events.put(TextRestarted(side))
                if delta.references:
                    extra.extend(delta.references)
                    events.put(ReferencesAdded(side, delta.references))
                if delta.text:
                    parts.append(delta.text)
                    events.put(TextChunk(side, delta.text, self._clock()))
                if delta.usage is not None:
                    events.put(UsageReport(side, delta.usage))
                report = delta.report or report
            raw = "".join(parts)
            references = request.references + tuple(extra)
            edited = self._editor.rewrite(request.question, references, raw) if self._editor else None
            answer = clean_answer(edited or raw, references, request.question)
            events.put(SideAnswered(side, replace(answer, raw_text=raw), self._clock(), tuple(extra), report))
        except Cancelled:
            return  # the battle was abandoned: nobody is waiting for this side
        except SciArenaError as err:
            log.warning("contestant %s failed: %s", spec.name, err)  # the UI decides what the voter sees
            events.put(SideFailed(side, err, self._clock()))
        except Exception as err:  # a provider bug must not reach the user as a trace
            log.exception("contestant %s failed", spec.name)
            failure = ProviderError("This model failed unexpectedly while answering.", model=spec.name)
            failure.__cause__ = err
            events.put(SideFailed(side, failure, self._clock()))


def _drain(events: queue.Queue[SideEvent], batch: list[SideEvent]) -> list[SideEvent]:
    """``batch`` and every event already waiting."""
    while True:
        try:
            batch.append(events.get_nowait())
        except queue.Empty:
            return batch


@dataclass
class _Replay:
    """A held side's final answer being shown piece by piece (mutable: the runner's loop advances it)."""

    text: str  # the answer as shown (redacted)
    began: float  # the runner's clock when its first piece was shown
    released: int = 0  # how many characters are shown
    pieces: int = 0  # how many pieces were shown


class _Sides:
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


def _complete_words(text: str) -> str:
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

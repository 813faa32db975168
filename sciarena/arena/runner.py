"""Run both generations of a battle concurrently, as a stream of snapshots.

Each side runs in its own thread and reports typed events (a text chunk, token usage, a finished
answer, a failure) into one queue; the caller's generator drains the queue and yields a snapshot
of both texts. So a slow model never stalls the fast one (a FastChat defect: streams read in turn),
and a battle takes as long as its slower side, not the sum of both. Snapshots go out at reading speed, at
most ~10 a second with both sides in each (coalesce.py), the first words and each side's end at once; the
events and snapshots are typed in events.py, each side's bookkeeping is sides.py.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from dataclasses import replace
from typing import TYPE_CHECKING, Callable, Iterator, Mapping

from sciarena.answer.clean import ReasoningFilter, clean_answer
from sciarena.answer.redact import Shield
from sciarena.arena.coalesce import SnapshotGate
from sciarena.arena.events import (
    SIDES,
    Progress,
    ReferencesAdded,
    Side,
    SideAnswered,
    SideEvent,
    SideFailed,
    TextChunk,
    TextRestarted,
    UsageReport,
)
from sciarena.arena.sides import ANSWERING, REPLAY_CHARS, REPLAY_STEP_S, Sides, complete_words
from sciarena.core.errors import Cancelled, ProviderError, ProviderTimeout, SciArenaError
from sciarena.core.types import Battle, GenerationRequest, ModelSpec, PipelineReport, Provider, Reference

if TYPE_CHECKING:
    from sciarena.answer.editor import LLMPostprocessor

__all__ = ["ANSWERING", "REPLAY_CHARS", "REPLAY_STEP_S", "SIDES", "BattleRunner", "Progress"]

log = logging.getLogger(__name__)

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

        sides = Sides(battle, start)
        safe = {"a": "", "b": ""}  # shown, with identity words redacted
        finals: dict[str, str] = {}  # a finished side's text as shown before the vote

        def shielded(side: Side) -> str:
            """What ``side`` shows now; a finished side's answer is stored with the policy applied."""
            if side in finals:
                return finals[side]
            result = sides.results.get(side)
            if result is None:  # still streaming: the last unfinished word is held back ("Anthrop|ic")
                return shield.show(complete_words(sides.visible(side)), partial=True).text
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
        gate = SnapshotGate()  # at most ~10 snapshots a second, first words and endings at once (coalesce.py)
        stale: set[str] = set()  # sides whose text changed since ``safe`` was last shielded

        def snapshot() -> Progress:
            """The snapshot to send now: only the sides that changed are shielded again, and only when one
            is sent (a held-back snapshot's text is never checked twice)."""
            for side in stale:
                safe[side] = shielded(side)
            stale.clear()
            gate.sent(self._clock())
            return sides.progress(safe)

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
                now = self._clock()
                remaining = deadline - now
                wait = min(remaining, self._tick_s, gate.wait_s(now))  # a held-back snapshot is due in wait_s
                try:
                    batch = [events.get(timeout=max(0.0, wait))]
                except queue.Empty:
                    if remaining > wait:
                        # Nothing new, but yield anyway (the held-back snapshot, or the same one again): a
                        # caller can only stop this generator between snapshots (New battle cancels it), so it
                        # must not sit waiting on a silent model.
                        yield snapshot()
                        continue
                    for side in SIDES:
                        sides.fail(side, timeout, self._clock())
                    continue  # a held side that ended before the timeout may still be replaying
                # Take whatever else is already waiting into the same snapshot.
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
            # Redact while streaming too: a name shown mid-stream would break anonymity even if the final
            # answer is redacted. A side not yet in a sent snapshot is shielded at once (its text is short), so
            # the gate sees its first words the moment they can be shown; the others when a snapshot is sent.
            stale.update({event.side for event in batch} - set(sides.replaying))
            for side in stale - gate.speaking:
                safe[side] = shielded(side)
                stale.discard(side)
            # A replay's pieces are cut from the answer as redacted (shielded), so they need no check.
            safe.update(sides.release(self._clock()))
            if sides.all_ended:
                break
            if gate.offer(self._clock(), safe, sides.ended):
                yield snapshot()

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



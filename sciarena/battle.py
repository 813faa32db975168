"""Pick a pair of contestants and run both generations concurrently.

Each side runs in its own thread and pushes its deltas into one queue; the
caller's generator drains the queue and yields a snapshot of both texts. So a
slow model never stalls the fast one (a FastChat defect: streams read in turn),
and a battle takes as long as its slower side, not the sum of both.
"""

from __future__ import annotations

import logging
import math
import queue
import random
import threading
import time
import uuid
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Callable, Iterator, Mapping, Sequence

from sciarena.errors import InvalidQuestion, ProviderError, ProviderTimeout, SciArenaError
from sciarena.types import (
    Answer,
    Battle,
    GenerationRequest,
    ModelSpec,
    Provider,
    Retrieval,
    SideResult,
    Usage,
)


def validate_question(text: str | None, max_chars: int) -> str:
    """The question stripped of surrounding space, or InvalidQuestion with a short reason."""
    question = (text or "").strip()
    if not question:
        raise InvalidQuestion("Please type a question first.")
    if len(question) > max_chars:
        raise InvalidQuestion(
            f"Your question is {len(question):,} characters long; the limit is {max_chars:,}. "
            "Please shorten it."
        )
    return question


def sample_pair(
    pool: Sequence[ModelSpec],
    rng: random.Random,
    battle_counts: Mapping[str, int] | None = None,
    outage: frozenset[str] = frozenset(),
) -> tuple[ModelSpec, ModelSpec]:
    """Two distinct contestants in random A/B order.

    Models with fewer battles are drawn more often (weight 1/sqrt(1+battles)) so a
    new model reaches the leaderboard's listing threshold sooner. Models on the
    outage list are skipped. Fewer than two usable models is a clear error rather
    than a crash on empty weights (another FastChat defect).
    """
    usable = [m for m in pool if m.name not in outage]
    if len(usable) < 2:
        raise SciArenaError("Fewer than two models are available right now; please try again later.")
    counts = battle_counts or {}
    weights = [1.0 / math.sqrt(1.0 + counts.get(m.name, 0)) for m in usable]
    first = rng.choices(range(len(usable)), weights=weights)[0]
    rest = [i for i in range(len(usable)) if i != first]
    second = rng.choices(rest, weights=[weights[i] for i in rest])[0]
    pair = [usable[first], usable[second]]
    rng.shuffle(pair)
    return pair[0], pair[1]


def new_battle(question: str, retrieval: Retrieval, pair: tuple[ModelSpec, ModelSpec],
               subject: str = "", question_type: str = "") -> Battle:
    return Battle(
        battle_id=uuid.uuid4().hex,
        question=question,
        retrieval=retrieval,
        model_a=pair[0],
        model_b=pair[1],
        created_at=time.time(),
        subject=subject,
        question_type=question_type,
    )


@dataclass(frozen=True)
class Progress:
    """A snapshot of a running battle: what each side has shown so far."""

    text_a: str
    text_b: str
    battle: Battle  # side_a / side_b are set once that side has ended

    @property
    def finished(self) -> bool:
        return self.battle.finished


def cost_usd(spec: ModelSpec, usage: Usage) -> float | None:
    """Cost of one call from catalogue prices (USD per million tokens); None when unknown."""
    if spec.offline:
        return 0.0
    if spec.price_input_per_m is None or spec.price_output_per_m is None:
        return None
    if usage.input_tokens is None or usage.output_tokens is None:
        return None
    return (usage.input_tokens * spec.price_input_per_m + usage.output_tokens * spec.price_output_per_m) / 1e6


if TYPE_CHECKING:
    from sciarena.postprocess_llm import LLMPostprocessor

log = logging.getLogger(__name__)

_Event = tuple[str, str, object]  # (side "a"|"b", kind "text"|"usage"|"done"|"error", payload)


class BattleRunner:
    """Runs the two sides of a battle concurrently and postprocesses each answer."""

    def __init__(self, providers: Mapping[str, Provider], timeout_s: float = 120.0,
                 clock: Callable[[], float] = time.monotonic, editor: "LLMPostprocessor | None" = None) -> None:
        self._providers = providers
        self._timeout_s = timeout_s
        self._clock = clock
        self._editor = editor  # the optional LLM postprocessor

    def run(self, battle: Battle, request: GenerationRequest) -> Iterator[Progress]:
        """Yield snapshots until both sides have ended; the last one holds both SideResults."""
        from sciarena.identity import topic_text

        events: queue.Queue[_Event] = queue.Queue()
        exempt = topic_text(request.question, request.references)
        start = self._clock()
        specs = {"a": battle.model_a, "b": battle.model_b}
        stop = threading.Event()  # set when this generator ends: abandoned sides stop generating (and billing)
        for side, spec in specs.items():
            threading.Thread(target=self._pump, args=(side, spec, request, events, stop),
                             name=f"battle-{battle.battle_id[:8]}-{side}", daemon=True).start()

        try:
            yield from self._follow(battle, specs, events, start, exempt)
        finally:
            stop.set()

    def _follow(self, battle: Battle, specs: dict[str, ModelSpec], events: queue.Queue[_Event], start: float,
                exempt: str) -> Iterator[Progress]:
        """Drain both sides' events into snapshots until both have ended or time is up."""
        from sciarena.identity import redact_identity
        from sciarena.postprocess import ReasoningFilter

        results: dict[str, SideResult] = {}
        shown = {"a": "", "b": ""}
        safe = {"a": "", "b": ""}  # shown, with identity words redacted
        filters = {"a": ReasoningFilter(), "b": ReasoningFilter()}
        first_token: dict[str, float | None] = {"a": None, "b": None}
        usage = {"a": Usage(), "b": Usage()}
        deadline = start + self._timeout_s
        while len(results) < 2:
            try:
                batch = [events.get(timeout=max(0.0, deadline - self._clock()))]
            except queue.Empty:
                for side in ("a", "b"):
                    if side not in results:
                        results[side] = SideResult(model=specs[side], answer=None, error=str(ProviderTimeout(
                            f"This model did not finish within {self._timeout_s:.0f} seconds.")),
                            first_token_s=first_token[side], total_s=self._clock() - start, usage=usage[side])
                break
            # Coalesce whatever else is already waiting into one snapshot, so a fast
            # stream does not turn into one UI update per token.
            while True:
                try:
                    batch.append(events.get_nowait())
                except queue.Empty:
                    break
            for side, kind, payload in batch:
                if side in results:
                    continue
                now = self._clock()
                if kind == "text":
                    visible = filters[side].feed(str(payload))
                    if visible and first_token[side] is None:
                        first_token[side] = now - start
                    shown[side] += visible
                elif kind == "usage":
                    usage[side] = payload  # type: ignore[assignment]
                elif kind == "error":
                    results[side] = SideResult(model=specs[side], answer=None, error=str(payload),
                                               first_token_s=first_token[side], total_s=now - start,
                                               usage=usage[side])
                elif kind == "done":
                    answer: Answer = payload  # type: ignore[assignment]
                    results[side] = SideResult(model=specs[side], answer=answer, first_token_s=first_token[side],
                                               total_s=now - start, usage=usage[side],
                                               cost_usd=cost_usd(specs[side], usage[side]))
                    shown[side] = answer.text
            # Redact while streaming too: a name shown mid-stream would break anonymity
            # even if the final answer is redacted. Only sides that changed are checked again.
            for side in {side for side, _, _ in batch}:
                # A name cut across two chunks ("Anthrop|ic") is not caught yet: hold back the last
                # unfinished word until the next chunk completes it.
                text = shown[side] if side in results else _complete_words(shown[side])
                safe[side] = redact_identity(text, exempt)[0]
            yield Progress(safe["a"], safe["b"], battle)

        final = replace(battle, side_a=results["a"], side_b=results["b"])
        # A finished answer was redacted by clean_answer; a failed side shows what it streamed.
        texts = {side: results[side].answer.text if results[side].answer else redact_identity(shown[side], exempt)[0]
                 for side in ("a", "b")}
        yield Progress(texts["a"], texts["b"], final)

    def _pump(self, side: str, spec: ModelSpec, request: GenerationRequest, events: queue.Queue[_Event],
              stop: threading.Event) -> None:
        """Stream one side into the queue, then clean its answer here, off the caller's loop,
        so an LLM editor call for one side never holds up the other side's stream."""
        from sciarena.postprocess import clean_answer

        provider = self._providers.get(spec.provider)
        try:
            if provider is None:
                raise ProviderError(f"No provider named {spec.provider!r} is configured.")
            parts: list[str] = []
            stream = provider.stream(spec, request)
            for delta in stream:
                if stop.is_set():  # the battle was abandoned or timed out
                    close = getattr(stream, "close", None)
                    if close is not None:
                        close()
                    return
                if delta.text:
                    parts.append(delta.text)
                    events.put((side, "text", delta.text))
                if delta.usage is not None:
                    events.put((side, "usage", delta.usage))
            raw = "".join(parts)
            edited = self._editor.rewrite(request.question, request.references, raw) if self._editor else None
            answer = clean_answer(edited or raw, request.references, request.question)
            events.put((side, "done", replace(answer, raw_text=raw)))
        except SciArenaError as err:
            log.warning("contestant %s failed: %s", spec.name, err)  # the voter sees a generic message
            events.put((side, "error", str(err)))
        except Exception:  # a provider bug must not reach the user as a trace
            log.exception("contestant %s failed", spec.name)
            events.put((side, "error", "This model failed unexpectedly while answering."))


def _complete_words(text: str) -> str:
    """``text`` up to its last whitespace (all of it if it ends with one)."""
    if not text or text[-1].isspace():
        return text
    cut = max(text.rfind(" "), text.rfind("\n"))
    return text[: cut + 1] if cut >= 0 else ""

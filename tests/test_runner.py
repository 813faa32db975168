"""The battle runner: concurrency, failures, timeouts and redaction, with scripted providers and an
injected clock (no test here measures wall-clock time)."""

from __future__ import annotations

import threading
from typing import Iterator

import pytest

from sciarena.arena.pairing import new_battle
from sciarena.arena.runner import REPLAY_CHARS, REPLAY_STEP_S, BattleRunner
from sciarena.core.errors import ProviderError, ProviderTimeout
from sciarena.core.types import Delta, GenerationRequest, ModelSpec, Retrieval, Usage


def start(scripted, refs, a, b, clock=None, timeout_s: float = 10.0):
    """The live progress of a battle between scripted models ``a`` and ``b``."""
    battle = new_battle("q", Retrieval("q", refs, "test"), (a, b), created_at=0.0)
    runner = BattleRunner({"scripted": scripted}, timeout_s=timeout_s, **({"clock": clock} if clock else {}))
    return runner.run(battle, GenerationRequest(question="q", references=refs))


def test_both_sides_run_at_the_same_time_and_answers_are_cleaned(scripted, refs):
    # Each side waits at a barrier for the other: read in turn, neither would ever get past it.
    both = threading.Barrier(2)
    words = ("The Transformer ", "uses ", "attention ", "[1, 2].")
    a = scripted.add("a", *words, barrier=both)
    b = scripted.add("b", *words, barrier=both)
    last = list(start(scripted, refs, a, b))[-1]
    battle = last.battle
    assert battle.votable, (battle.side_a.error, battle.side_b.error)
    # [2] is not in the reference list and is dropped; [1] is kept.
    assert battle.side_a.answer.cited == (1,)
    assert "[2]" not in battle.side_a.answer.text
    assert last.text_a == battle.side_a.answer.text


def test_fast_side_streams_while_slow_side_waits(scripted, refs, clock):
    slow_gate = threading.Event()
    fast = scripted.add("fast", "Quick ", "answer [1].")
    slow = scripted.add("slow", "Slow ", "answer [1].", gate=slow_gate)
    progress = start(scripted, refs, fast, slow, clock=clock)
    first = next(p for p in progress if p.text_a)
    assert first.text_b == ""  # the slow side has not started, and the fast one is already shown
    clock.advance(2.0)
    slow_gate.set()
    last = list(progress)[-1].battle
    assert last.side_a.first_token_s == 0.0
    assert last.side_b.first_token_s == 2.0
    assert last.side_b.total_s == 2.0


def test_each_side_is_set_on_the_battle_as_soon_as_it_ends(scripted, refs):
    gate = threading.Event()
    progress = start(scripted, refs, scripted.add("quick", "Done [1]."), scripted.add("late", "Late [1].", gate=gate))
    snapshot = next(p for p in progress if p.battle.side_a is not None)
    assert snapshot.battle.side_a.ok and snapshot.battle.side_b is None and not snapshot.finished
    gate.set()
    assert list(progress)[-1].finished


def test_a_side_that_fails_mid_stream_makes_the_battle_unvotable(scripted, refs):
    ok = scripted.add("ok", "Fine [1].")
    bad = scripted.add("bad", "Partial ", "text", fail_at=1)
    battle = list(start(scripted, refs, ok, bad))[-1].battle
    assert battle.finished and not battle.votable
    assert battle.side_a.ok
    assert isinstance(battle.side_b.error, ProviderError)
    assert str(battle.side_b.error) == "The model service closed the connection."


def test_a_failed_side_keeps_the_text_the_reasoning_filter_was_holding_back(scripted, refs):
    # "<thi" could open a reasoning block, so the filter holds it until it knows; a failure ends the stream.
    ok = scripted.add("ok", "Fine [1].")
    bad = scripted.add("bad", "Partial text <thi", "never sent", fail_at=1)
    final = list(start(scripted, refs, ok, bad))[-1]
    assert final.text_b == "Partial text <thi"


def test_a_provider_bug_becomes_a_provider_error_with_a_short_message(scripted, refs):
    ok = scripted.add("ok", "Fine [1].")
    buggy = scripted.add("buggy", "x", fail_at=0, error=RuntimeError("bug in a provider"))
    error = list(start(scripted, refs, ok, buggy))[-1].battle.side_b.error
    assert isinstance(error, ProviderError) and str(error) == "This model failed unexpectedly while answering."
    assert isinstance(error.__cause__, RuntimeError)  # kept for the log, never shown


def test_a_side_past_the_timeout_fails_without_blocking_the_other(scripted, refs, clock):
    ok = scripted.add("ok", "Fine [1].")
    stuck = scripted.add("stuck", "late", gate=threading.Event())
    progress = start(scripted, refs, ok, stuck, clock=clock, timeout_s=5.0)
    next(p for p in progress if p.battle.side_a is not None)
    clock.advance(5.1)
    battle = list(progress)[-1].battle
    assert battle.side_a.ok
    assert isinstance(battle.side_b.error, ProviderTimeout)
    assert str(battle.side_b.error) == "This model did not finish within 5 seconds."
    assert battle.side_b.total_s == pytest.approx(5.1)


def test_reasoning_text_is_hidden_while_streaming(scripted, refs):
    r = scripted.add("r", "<think>secret plan", "</think>", "Visible [1].", pause_s=0.02)
    o = scripted.add("o", "Other [1].")
    snapshots = list(start(scripted, refs, r, o))
    assert all("secret" not in p.text_a for p in snapshots)
    assert snapshots[-1].battle.side_a.answer.text.startswith("Visible")


def test_usage_and_cost_are_recorded(scripted, refs, specs):
    scripted.add("a", "A [1].", usage=Usage(1000, 500))
    scripted.add("b", "B [1].")
    a = specs("a", price_input_per_m=2.0, price_output_per_m=8.0)
    last = list(start(scripted, refs, a, specs("b")))[-1].battle
    assert last.side_a.usage == Usage(1000, 500)
    assert last.side_a.cost_usd == pytest.approx((1000 * 2.0 + 500 * 8.0) / 1e6)
    assert last.side_b.cost_usd is None  # no prices and no usage: unknown, not zero


def test_a_name_split_across_chunks_never_shows(scripted, refs):
    # The pause makes the chunks arrive as separate snapshots (the case being tested).
    a = scripted.add("a", "As Chat", "GPT-4o, I would ", "say yes [1].", pause_s=0.05)
    b = scripted.add("b", "Fine [1].")
    snapshots = list(start(scripted, refs, a, b))
    assert len(snapshots) >= 3
    assert all("Chat" not in p.text_a for p in snapshots)
    assert "[model name hidden]" in snapshots[-1].text_a


def test_an_abandoned_battle_stops_generating(scripted, refs):
    long = scripted.add("long", *(f"w{i} " for i in range(100)), pause_s=0.01)
    short = scripted.add("short", "Fine [1].")
    progress = start(scripted, refs, long, short)
    next(progress)
    progress.close()  # the visitor left (or pressed New battle)
    assert scripted.closed["long"].wait(timeout=10), "the abandoned stream was never closed"
    assert scripted.yielded["long"] < 100


def test_the_stream_keeps_yielding_while_both_models_are_silent(scripted, refs, clock):
    # A caller (Gradio, on New battle) can only stop the generator between snapshots.
    gate = threading.Event()
    a = scripted.add("a", "A [1].", gate=gate)
    b = scripted.add("b", "B [1].", gate=gate)
    battle = new_battle("q", Retrieval("q", refs, "test"), (a, b), created_at=0.0)
    progress = BattleRunner({"scripted": scripted}, timeout_s=60.0, clock=clock, tick_s=0.01).run(
        battle, GenerationRequest(question="q", references=refs))
    snapshot = next(progress)
    assert (snapshot.text_a, snapshot.text_b) == ("", "")
    assert snapshot.battle.side_a is None and snapshot.battle.side_b is None  # not a failure: nothing ended
    gate.set()
    assert list(progress)[-1].battle.votable


class Reviser:
    """A multi-step contestant's stream: a draft, then (once ``go`` is set) a restart and a different text."""

    def __init__(self) -> None:
        self.drafted, self.go = threading.Event(), threading.Event()

    def unavailable_reason(self, spec: ModelSpec) -> str | None:
        return None

    def stream(self, spec: ModelSpec, request: GenerationRequest, *, timeout_s: float | None = None,
               cancel: threading.Event | None = None) -> Iterator[Delta]:
        yield Delta(text="A first draft about attention [1]. ")
        self.drafted.set()  # the draft is in the runner's queue
        self.go.wait(timeout=10)
        yield Delta(restart=True)
        yield Delta(text="Another text ")
        yield Delta(text="[1].")


def test_a_restarting_side_shows_no_text_until_it_ends_so_its_draft_never_vanishes(scripted, refs, clock):
    """A side whose spec names a pipeline is held back: while it runs its text stays empty (the plain side's
    streams), so a draft replaced by its revision is never seen; its first-token time is when it was shown."""
    reviser = Reviser()
    plain = scripted.add("plain", "Plain ", "answer [1].")
    revising = ModelSpec(name="PIPE", provider="reviser", model_id="pipe", pipeline="openscholar", base=plain)
    battle = new_battle("q", Retrieval("q", refs, "test"), (revising, plain), created_at=0.0)
    runner = BattleRunner({"scripted": scripted, "reviser": reviser}, clock=clock, tick_s=0.01)
    progress = runner.run(battle, GenerationRequest(question="q", references=refs))
    shown = []
    for snapshot in progress:
        shown.append(snapshot.text_a)
        if reviser.drafted.is_set() and not reviser.go.is_set():
            snapshot = next(progress)  # one snapshot after the draft was queued: it would show the draft
            shown.append(snapshot.text_a)
            clock.advance(3.0)
            reviser.go.set()
    assert reviser.go.is_set()
    assert all(text == "" for text in shown[:-1]) and shown[-1] == "Another text [1]."
    side = snapshot.battle.side_a
    assert side.answer.text == "Another text [1]." and side.first_token_s == side.total_s == 3.0
    assert snapshot.battle.side_b.first_token_s == 0.0  # the plain side is shown as it streams


class LongReviser:
    """A multi-step contestant that drafts, starts over and ends with ``final`` (a long answer)."""

    def __init__(self, final: str) -> None:
        self.final = final

    def unavailable_reason(self, spec: ModelSpec) -> str | None:
        return None

    def stream(self, spec: ModelSpec, request: GenerationRequest, *, timeout_s: float | None = None,
               cancel: threading.Event | None = None) -> Iterator[Delta]:
        yield Delta(text="A draft [1]. ")
        yield Delta(restart=True)
        yield Delta(text=self.final)


LONG = " ".join(f"Attention{i % 10} relates positions [1]." for i in range(60))  # 2,039 characters, ends in "."


def replayed(scripted, refs, clock, final: str = LONG, timeout_s: float = 10.0):
    """Every snapshot of a battle between a held pipeline side (a) ending with ``final`` and a short plain side
    (b) that has finished long before, the runner's pauses moving ``clock``, and the clock at each snapshot."""
    plain = scripted.add("plain", "Plain [1].")
    revising = ModelSpec(name="PIPE", provider="reviser", model_id="pipe", pipeline="openscholar", base=plain)
    battle = new_battle("q", Retrieval("q", refs, "test"), (revising, plain), created_at=0.0)
    runner = BattleRunner({"scripted": scripted, "reviser": LongReviser(final)}, clock=clock, tick_s=0.01,
                          timeout_s=timeout_s, sleep=clock.advance)
    snapshots = []
    for snapshot in runner.run(battle, GenerationRequest(question="q", references=refs)):
        snapshots.append((clock(), snapshot))
    return snapshots


def test_a_held_side_is_shown_in_growing_pieces_at_the_replay_pace_and_votes_open_after_the_last(
        scripted, refs, clock):
    start = clock()
    snapshots = replayed(scripted, refs, clock)
    final = snapshots[-1][1].battle.side_a.answer.shown
    assert final == LONG
    shown = [(at, p) for at, p in snapshots if p.text_a]
    texts = [p.text_a for _, p in shown]
    # Several pieces, each a longer prefix of the final text, the last the whole of it.
    assert len(set(texts)) >= len(LONG) // REPLAY_CHARS
    assert all(final.startswith(text) for text in texts) and texts[-1] == final
    assert all(len(a) < len(b) for a, b in zip(texts, texts[1:]))
    # The plain side had ended before: the runner kept yielding only for the replay.
    assert all(p.battle.side_b is not None for _, p in shown)
    # Each piece ends at a word boundary, is at most REPLAY_CHARS long and follows the last by one step.
    for (t0, p0), (t1, p1) in zip(shown, shown[1:]):
        assert t1 - t0 == pytest.approx(REPLAY_STEP_S)
        assert 0 < len(p1.text_a) - len(p0.text_a) <= REPLAY_CHARS
        assert p0.text_a.endswith(" ")
    # Votes open only with the last piece: every snapshot before it shows the side still answering.
    assert [p.finished for _, p in shown] == [False] * (len(shown) - 1) + [True]
    assert all(p.status.get("a") for _, p in shown[:-1]) and "a" not in shown[-1][1].status
    side = snapshots[-1][1].battle.side_a
    assert side.first_token_s == 0.0  # when its first piece was shown
    pieces = len(shown)
    assert side.total_s == pytest.approx((pieces - 1) * REPLAY_STEP_S) == pytest.approx(shown[-1][0] - start)


def test_the_generation_timeout_does_not_cut_a_held_side_short_during_its_replay(scripted, refs, clock):
    snapshots = replayed(scripted, refs, clock, timeout_s=0.2)  # the replay takes about 1 s of the clock
    side = snapshots[-1][1].battle.side_a
    assert side.ok and side.total_s > 0.2
    assert snapshots[-1][1].text_a == LONG


def test_closing_the_stream_stops_the_replay(scripted, refs, clock):
    plain = scripted.add("plain", "Plain [1].")
    revising = ModelSpec(name="PIPE", provider="reviser", model_id="pipe", pipeline="openscholar", base=plain)
    battle = new_battle("q", Retrieval("q", refs, "test"), (revising, plain), created_at=0.0)
    steps: list[float] = []
    runner = BattleRunner({"scripted": scripted, "reviser": LongReviser(LONG)}, clock=clock, tick_s=0.01,
                          sleep=lambda s: (steps.append(s), clock.advance(s)))
    progress = runner.run(battle, GenerationRequest(question="q", references=refs))
    snapshot = next(p for p in progress if p.text_a)
    assert snapshot.text_a != LONG and not snapshot.finished  # mid-replay
    progress.close()  # the visitor closed the tab
    paused = len(steps)
    assert list(progress) == [] and len(steps) == paused


def test_a_short_held_answer_is_shown_in_one_piece(scripted, refs, clock):
    snapshots = replayed(scripted, refs, clock, final="Short [1].")
    assert [p.text_a for _, p in snapshots if p.text_a] == ["Short [1]."]
    side = snapshots[-1][1].battle.side_a
    assert side.first_token_s == side.total_s == 0.0


def test_a_held_3000_character_answer_takes_its_pieces_times_the_step_to_show(scripted, refs, clock):
    final = ("Self-attention relates every position [1]. " * 70)[:2999] + "."  # 3,000 characters
    assert len(final) == 3000
    snapshots = replayed(scripted, refs, clock, final=final)
    side = snapshots[-1][1].battle.side_a
    pieces = len({p.text_a for _, p in snapshots if p.text_a})
    # Pieces end at words, so a few are short of REPLAY_CHARS: at least 3000 / REPLAY_CHARS, not many more.
    assert 3000 // REPLAY_CHARS <= pieces <= 3000 // (REPLAY_CHARS - len("position ")) + 1
    extra = side.total_s - side.first_token_s
    assert extra == pytest.approx((pieces - 1) * REPLAY_STEP_S)
    print(f"held 3,000-character answer: {pieces} pieces, shown over {extra:.2f} s of the runner's clock")

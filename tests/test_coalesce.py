"""Snapshots at reading speed: the gate alone on generated arrival times, and the runner on a virtual clock that
a streaming model moves (no wall time is measured: the clock is the model's)."""

from __future__ import annotations

import threading
from typing import Iterator

from hypothesis import given, settings
from hypothesis import strategies as st

from sciarena.arena.coalesce import MIN_GAP_S, SnapshotGate
from sciarena.arena.pairing import new_battle
from sciarena.arena.runner import BattleRunner
from sciarena.core.types import Delta, GenerationRequest, ModelSpec, Retrieval

# One offered snapshot: seconds after the previous one, whether side a / side b has text, how many sides ended.
offers = st.lists(st.tuples(st.floats(0.0, 0.3), st.booleans(), st.booleans(), st.integers(0, 2)),
                  min_size=1, max_size=200)


@given(offers)
@settings(max_examples=300, deadline=None)
def test_the_gate_sends_at_most_one_ordinary_snapshot_per_gap_and_never_holds_one_longer(steps):
    gate = SnapshotGate()
    now, sent, speaking, ended_before = 0.0, [], set(), 0
    for gap, a_text, b_text, ended in steps:
        # The runner wakes when a held-back snapshot is due, before the next offer: it is then sent as it is.
        if now + gap >= now + gate.wait_s(now):
            due = now + gate.wait_s(now)
            assert due - sent[-1][0] <= MIN_GAP_S + 1e-9  # held back no longer than the gap
            gate.sent(due)
            sent.append((due, False))
        now += gap
        ended = max(ended, ended_before)  # sides only ever end
        texts = {"a": "x" if a_text or "a" in speaking else "", "b": "y" if b_text or "b" in speaking else ""}
        urgent = any(text and side not in speaking for side, text in texts.items()) or ended != ended_before
        went = gate.offer(now, texts, ended)
        if urgent:
            assert went, "first words and endings go out at once"
        if went:
            if not urgent and sent:
                assert now - sent[-1][0] >= MIN_GAP_S - 1e-9
            sent.append((now, urgent))
            speaking |= {side for side, text in texts.items() if text}
            ended_before = ended
        else:
            assert gate.wait_s(now) <= MIN_GAP_S + 1e-9
    ordinary = [at for at, urgent in sent if not urgent]
    # Ordinary snapshots are a gap apart, so any second holds at most 1 / MIN_GAP_S + 1 of them.
    for at in ordinary:
        assert sum(at <= other < at + 1.0 for other in ordinary) <= round(1 / MIN_GAP_S) + 1


class ClockedModel:
    """A model that streams ``chunks`` pieces ``step_s`` apart on a shared virtual clock (it moves the clock
    itself), pausing a little real time between pieces so the runner's loop sees them one by one."""

    key = "clocked"

    def __init__(self, chunks: int, piece: str, step_s: float) -> None:
        self.now = 0.0
        self._lock = threading.Lock()
        self._chunks, self._piece, self._step_s = chunks, piece, step_s

    def __call__(self) -> float:
        with self._lock:
            return self.now

    def unavailable_reason(self, spec: ModelSpec) -> str | None:
        return None

    def stream(self, spec: ModelSpec, request: GenerationRequest, *, timeout_s: float | None = None,
               cancel: threading.Event | None = None) -> Iterator[Delta]:
        if spec.model_id == "short":
            yield Delta(text="Fine [1].")
            return
        for _ in range(self._chunks):
            threading.Event().wait(0.004)
            with self._lock:
                self.now += self._step_s
            yield Delta(text=self._piece)


def test_a_fast_stream_reaches_the_page_at_most_ten_times_a_second_with_first_words_at_once(refs):
    # 25 characters every 50 ms for 2 s of the model's clock: 40 pieces, which uncoalesced would be ~40 snapshots.
    model = ClockedModel(chunks=40, piece="attention weighs tokens. ", step_s=0.05)
    fast, short = (ModelSpec(name=m.upper(), provider=ClockedModel.key, model_id=m) for m in ("fast", "short"))
    battle = new_battle("q", Retrieval("q", refs, "test"), (fast, short), created_at=0.0)
    runner = BattleRunner({ClockedModel.key: model}, timeout_s=60.0, clock=model)
    seen = [(model(), p) for p in runner.run(battle, GenerationRequest(question="q", references=refs))]
    final = seen[-1][1]
    assert final.battle.votable and final.text_a == final.battle.side_a.answer.text
    texts = [p.text_a for _, p in seen]
    assert all(final.text_a.startswith(text) for text in texts)  # the same text, in the same order
    streamed = [(at, p) for at, p in seen if p.text_a and not p.finished]
    assert len({p.text_a for _, p in streamed}) >= 8  # it still streams: many growing pieces, not one paste
    # The first words went out with the first piece (at 50 ms), not a gap later.
    assert streamed[0][0] <= 0.05 + 1e-9
    duration = seen[-1][0]
    assert duration >= 2.0 - 1e-9
    # Ten a second at most, plus the few that go out at once (each side's first words, each side's end).
    assert len(seen) <= 10 * duration + 4, [round(at, 3) for at, _ in seen]
    for second in range(int(duration) + 1):
        assert sum(second <= at < second + 1 for at, _ in seen) <= 10 + 4

"""Each side's first-token and total times are its own: through the runner with paced providers on an injected
clock (exact figures), and through the real Arena against the loopback server with a fast and a slow model over
three turns (what the record stores per turn and what the page says it shows). Only lower bounds set by the
server's own sleeps and orderings are asserted of real time."""

from __future__ import annotations

import threading
from dataclasses import replace
from typing import Iterator

import gradio as gr
import pytest
from fake_openai import FakeOpenAI, loop_settings

from sciarena.arena.pairing import new_battle
from sciarena.arena.rules import ArenaSession, Ballot
from sciarena.arena.runner import BattleRunner
from sciarena.core.types import Delta, GenerationRequest, ModelSpec, Retrieval
from sciarena.ui import battle_view
from sciarena.ui.takeaway import stats_line, summed_figures
from sciarena.votes.read.battles import BattleArchive
from sciarena.votes.voter import Visitor


class ThreadClock:
    """Virtual time per thread: each side's thread advances only its own, as two models running at once do;
    every other thread (the runner's loop) stays at the start."""

    def __init__(self, start: float = 100.0) -> None:
        self._start = start
        self._spent = threading.local()  # not keyed by thread id: an ended side's id is reused by the next

    def __call__(self) -> float:
        return self._start + getattr(self._spent, "seconds", 0.0)

    def wait(self, seconds: float) -> None:
        self._spent.seconds = getattr(self._spent, "seconds", 0.0) + seconds


class PacedProvider:
    """Answers each model from its script of (seconds to wait, text) pieces, waiting on the ThreadClock."""

    key = "paced"

    def __init__(self, clock: ThreadClock, scripts: dict[str, tuple[tuple[float, str], ...]]) -> None:
        self._clock = clock
        self._scripts = scripts

    def unavailable_reason(self, spec: ModelSpec) -> str | None:
        return None if spec.model_id in self._scripts else "not scripted"

    def stream(self, spec: ModelSpec, request: GenerationRequest, *, timeout_s: float | None = None,
               cancel: threading.Event | None = None) -> Iterator[Delta]:
        for seconds, text in self._scripts[spec.model_id]:
            self._clock.wait(seconds)
            yield Delta(text=text)


def paced_battle(refs, scripts):
    clock = ThreadClock()
    a, b = (ModelSpec(name=m.upper(), provider=PacedProvider.key, model_id=m) for m in scripts)
    battle = new_battle("q", Retrieval("q", refs, "test"), (a, b), created_at=0.0)
    runner = BattleRunner({PacedProvider.key: PacedProvider(clock, scripts)}, timeout_s=60.0, clock=clock)
    return list(runner.run(battle, GenerationRequest(question="q", references=refs)))[-1].battle


def test_each_side_is_timed_on_its_own_clock_from_its_first_visible_text(refs):
    battle = paced_battle(refs, {
        "fast": ((0.1, "Attention "), (0.1, "weighs "), (0.1, "tokens [1].")),
        # hidden reasoning first: the first token is the first text the voter sees, at 1.0 s, not 0.5 s
        "slow": ((0.5, "<think>plan</think>"), (0.5, "Attention "), (2.0, "weighs tokens [1].")),
    })
    assert battle.votable
    a, b = battle.side_a, battle.side_b
    assert (a.first_token_s, a.total_s) == pytest.approx((0.1, 0.3))
    assert (b.first_token_s, b.total_s) == pytest.approx((1.0, 3.0))


def test_an_answer_that_arrives_in_one_piece_says_so(refs):
    battle = paced_battle(refs, {"whole": ((0.25, "The whole answer at once [1]."),),
                                 "streamed": ((0.1, "Attention "), (0.4, "weighs tokens [1]."))})
    whole, streamed = battle.side_a, battle.side_b
    assert whole.first_token_s == whole.total_s == pytest.approx(0.25)  # true of this model, and said as such
    assert stats_line({"first_token_s": whole.first_token_s, "total_s": whole.total_s}) == \
        "First token and total both 0.25 s"
    assert stats_line({"first_token_s": streamed.first_token_s, "total_s": streamed.total_s}) == \
        "First token 0.1 s · total 0.5 s"


def test_a_conversations_figures_say_they_are_over_all_turns_and_give_each_turns_times():
    turns = [{"first_token_s": 0.004, "total_s": 0.0167, "input_tokens": 10, "output_tokens": 5, "cost_usd": 0.001},
             {"first_token_s": 0.05, "total_s": 0.07, "input_tokens": 20, "output_tokens": 6, "cost_usd": 0.002},
             {"first_token_s": 0.06, "total_s": 0.06, "input_tokens": 30, "output_tokens": 7, "cost_usd": 0.003}]
    assert stats_line(summed_figures(turns)) == (
        "All 3 turns: total 0.15 s · 60 tokens in, 18 out · cost $0.0060 · "
        "turn 1: first token 0.004 s, total 0.017 s · turn 2: first token 0.05 s, total 0.07 s · "
        "turn 3: first token and total both 0.06 s")
    untimed = [{"total_s": 1.0}, {}]
    assert stats_line(summed_figures(untimed)) == "All 2 turns: turn 1: total 1 s · turn 2: not timed"


FIRST = "How does CRISPR-Cas9 achieve targeted genome editing, and what limits its precision?"
FOLLOW_UPS = ("How are its off-target effects measured?", "What did the first direct detection of gravitational "
              "waves observe?")
ME = Visitor(session_hash="visitor-1")
SLOW_FIRST_S = 1.0  # the server sleeps this long before the slow model's first visible text
CHUNK_S = 0.05


def test_a_fast_and_a_slow_model_are_each_timed_per_turn_and_the_page_labels_the_sums(tmp_path, wire):
    models = [{"name": "Loop Fast", "provider": "loop", "model_id": "fast"},
              {"name": "Loop Slow", "provider": "loop", "model_id": "slow"}]
    with FakeOpenAI() as server:
        server.add_script("fast", ("Editing ", "is ", "targeted [1]."), chunk_delay_s=CHUNK_S)
        # not the fast model's words: two equal answers are not offered for a vote (arena/sameness.py)
        server.add_script("slow", ("Editing ", "is ", "precise [1]."), reasoning=("thinking",),
                          first_token_delay_s=SLOW_FIRST_S, chunk_delay_s=CHUNK_S)
        arena = wire(loop_settings(server, tmp_path, models)).arena
        session = ArenaSession(battle=list(arena.start_battle(FIRST, visitor=ME))[-1].battle)
        for question in FOLLOW_UPS:
            session = replace(session, battle=list(arena.follow_up(session, question, visitor=ME))[-1].battle)
        arena.vote(session, Ballot(choice="A", consent=True, session_hash=ME.session_hash))
    record = list(arena.store.records())[-1]
    slow = "a" if record["modelA"] == "Loop Slow" else "b"
    fast = "b" if slow == "a" else "a"
    assert len(record["turns"]) == 3
    for turn in record["turns"]:
        for side in "ab":  # a streamed answer: its first text came before its end (by how much is the machine's
            # business: on a loaded machine the client may read the server's paused pieces almost at once)
            assert turn[f"first_token_s_{side}"] < turn[f"latency_s_{side}"]
        # the slow model's reasoning and first-token wait are its own, not copied to the fast side
        assert turn[f"first_token_s_{slow}"] >= SLOW_FIRST_S + CHUNK_S > turn[f"first_token_s_{fast}"]
        assert turn[f"latency_s_{slow}"] > turn[f"latency_s_{fast}"]
    # the released top-level fields are the first turn's, as before follow-ups existed
    for name in ("first_token_s", "latency_s"):
        for side in "ab":
            assert record[f"{name}_{side}"] == record["turns"][0][f"{name}_{side}"]
    assert record["turns"][1]["latency_s_a"] != record["turns"][0]["latency_s_a"]

    with gr.Blocks():
        view = battle_view.build_view()
    shown = battle_view.view_updates(view, BattleArchive(arena.store.files), record["id"], [record["voter_id"]])
    slow_stats = shown[view.a.stats if slow == "a" else view.b.stats]
    assert slow_stats.startswith("All 3 turns: total ")
    first_turn = f"turn 1: first token {record['turns'][0][f'first_token_s_{slow}']:.2g} s, " \
                 f"total {record['turns'][0][f'latency_s_{slow}']:.2g} s"
    assert first_turn in slow_stats and "turn 3: first token" in slow_stats

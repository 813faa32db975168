"""The battle runner: pairs, concurrency, failures and timeouts, with scripted providers."""

from __future__ import annotations

import random
import time
from collections import Counter
from typing import Iterator

import pytest

from sciarena.battle import BattleRunner, cost_usd, new_battle, sample_pair, validate_question
from sciarena.errors import InvalidQuestion, ProviderError, SciArenaError
from sciarena.types import Delta, GenerationRequest, ModelSpec, Paper, Passage, Reference, Retrieval, Usage


class ScriptedProvider:
    """A provider whose answers, delays and failures are set per model id."""

    def __init__(self, scripts: dict[str, dict]) -> None:
        self.scripts = scripts

    def unavailable_reason(self, spec: ModelSpec) -> str | None:
        return None

    def stream(self, spec: ModelSpec, request: GenerationRequest) -> Iterator[Delta]:
        script = self.scripts[spec.model_id]
        time.sleep(script.get("first_delay", 0.0))
        for i, chunk in enumerate(script["chunks"]):
            if script.get("fail_at") == i:
                raise ProviderError("The model service closed the connection.")
            if script.get("crash_at") == i:
                raise RuntimeError("bug in a provider")
            yield Delta(text=chunk)
            time.sleep(script.get("delay", 0.0))
        if "usage" in script:
            yield Delta(usage=script["usage"])


def spec(model_id: str, **kw) -> ModelSpec:
    return ModelSpec(name=model_id.upper(), provider="scripted", model_id=model_id, **kw)


def references() -> tuple[Reference, ...]:
    paper = Paper(paper_id="p1", title="Attention Is All You Need", authors=("Ashish Vaswani",), year=2017)
    passage = Passage(passage_id="p1#0", paper=paper, text="The Transformer relies on attention.", score=3.0)
    return (Reference(number=1, paper=paper, passages=(passage,)),)


def run(scripts: dict[str, dict], a: str, b: str, timeout_s: float = 10.0):
    refs = references()
    retrieval = Retrieval(question="q", references=refs, backend="test")
    battle = new_battle("q", retrieval, (spec(a), spec(b)))
    runner = BattleRunner({"scripted": ScriptedProvider(scripts)}, timeout_s=timeout_s)
    request = GenerationRequest(question="q", references=refs)
    stamps = []
    start = time.perf_counter()
    for progress in runner.run(battle, request):
        stamps.append((time.perf_counter() - start, progress))
    return stamps


def test_both_sides_run_concurrently_and_answers_are_cleaned():
    words = ["The Transformer ", "uses ", "attention ", "[1, 2]."]
    scripts = {"a": {"chunks": words, "delay": 0.1}, "b": {"chunks": words, "delay": 0.1}}
    stamps = run(scripts, "a", "b")
    elapsed, last = stamps[-1]
    assert elapsed < 0.6, f"sides ran one after the other ({elapsed:.2f}s for 2 × 0.4s)"
    battle = last.battle
    assert battle.votable
    # [2] is not in the reference list and is dropped; [1] is kept.
    assert battle.side_a.answer.cited == (1,)
    assert "[2]" not in battle.side_a.answer.text
    assert last.text_a == battle.side_a.answer.text


def test_fast_side_streams_while_slow_side_waits():
    scripts = {"fast": {"chunks": ["Quick ", "answer [1]."]},
               "slow": {"chunks": ["Slow ", "answer [1]."], "first_delay": 1.0}}
    stamps = run(scripts, "fast", "slow")
    first_fast = next(t for t, p in stamps if p.text_a)
    first_slow = next(t for t, p in stamps if p.text_b)
    assert first_fast < 0.3
    assert first_slow >= 0.9
    assert stamps[-1][1].battle.side_a.first_token_s < 0.3


def test_a_side_that_fails_mid_stream_makes_the_battle_unvotable():
    scripts = {"ok": {"chunks": ["Fine [1]."]}, "bad": {"chunks": ["Partial ", "text"], "fail_at": 1}}
    battle = run(scripts, "ok", "bad")[-1][1].battle
    assert battle.finished and not battle.votable
    assert battle.side_a.ok
    assert battle.side_b.error == "The model service closed the connection."


def test_a_provider_bug_becomes_a_short_message():
    scripts = {"ok": {"chunks": ["Fine [1]."]}, "buggy": {"chunks": ["x"], "crash_at": 0}}
    side = run(scripts, "ok", "buggy")[-1][1].battle.side_b
    assert side.error == "This model failed unexpectedly while answering."
    assert "Traceback" not in side.error and "RuntimeError" not in side.error


def test_a_side_past_the_timeout_fails_without_blocking_the_other():
    scripts = {"ok": {"chunks": ["Fine [1]."]}, "stuck": {"chunks": ["late"], "first_delay": 3.0}}
    stamps = run(scripts, "ok", "stuck", timeout_s=0.5)
    elapsed, last = stamps[-1]
    assert elapsed < 1.5
    assert last.battle.side_a.ok
    assert "did not finish within" in last.battle.side_b.error


def test_reasoning_text_is_hidden_while_streaming():
    scripts = {"r": {"chunks": ["<think>secret plan", "</think>", "Visible [1]."]}, "o": {"chunks": ["Other [1]."]}}
    stamps = run(scripts, "r", "o")
    assert all("secret" not in p.text_a for _, p in stamps)
    assert stamps[-1][1].battle.side_a.answer.text.startswith("Visible")


def test_usage_and_cost_are_recorded():
    scripts = {"a": {"chunks": ["A [1]."], "usage": Usage(1000, 500)}, "b": {"chunks": ["B [1]."]}}
    refs = references()
    battle = new_battle("q", Retrieval("q", refs, "test"),
                        (spec("a", price_input_per_m=2.0, price_output_per_m=8.0), spec("b")))
    runner = BattleRunner({"scripted": ScriptedProvider(scripts)})
    last = list(runner.run(battle, GenerationRequest("q", refs)))[-1].battle
    assert last.side_a.usage == Usage(1000, 500)
    assert last.side_a.cost_usd == pytest.approx((1000 * 2.0 + 500 * 8.0) / 1e6)
    assert last.side_b.cost_usd is None  # no prices and no usage: unknown, not zero


def test_cost_of_offline_contestants_is_zero():
    assert cost_usd(ModelSpec("x", "offline", "x", offline=True), Usage()) == 0.0


def test_sample_pair_gives_distinct_models_in_both_orders():
    pool = [spec(m) for m in "abcd"]
    rng = random.Random(0)
    pairs = [sample_pair(pool, rng) for _ in range(400)]
    assert all(a.name != b.name for a, b in pairs)
    firsts = Counter(a.name for a, _ in pairs)
    assert set(firsts) == {"A", "B", "C", "D"}


def test_sample_pair_favours_models_with_fewer_battles_and_skips_outages():
    pool = [spec(m) for m in "abc"]
    rng = random.Random(1)
    counts = {"A": 10_000, "B": 0, "C": 0}
    seen = Counter()
    for _ in range(600):
        a, b = sample_pair(pool, rng, counts)
        seen.update([a.name, b.name])
    assert seen["A"] < seen["B"] / 2
    for _ in range(50):
        pair = sample_pair(pool, rng, outage=frozenset({"B"}))
        assert {m.name for m in pair} == {"A", "C"}


def test_sample_pair_with_too_few_models_is_a_clear_error():
    with pytest.raises(SciArenaError, match="Fewer than two models"):
        sample_pair([spec("a")], random.Random(0))
    with pytest.raises(SciArenaError):
        sample_pair([], random.Random(0))


@pytest.mark.parametrize("text", ["", "   \n\t "])
def test_empty_questions_are_refused(text):
    with pytest.raises(InvalidQuestion, match="type a question"):
        validate_question(text, 4000)


def test_overlong_question_is_refused_with_its_length():
    with pytest.raises(InvalidQuestion, match="4,001 characters"):
        validate_question("x" * 4001, 4000)
    assert validate_question("  ok  ", 4000) == "ok"


def test_a_name_split_across_chunks_never_shows():
    scripts = {"a": {"chunks": ["As Chat", "GPT-4o, I would ", "say yes [1]."], "delay": 0.05},
               "b": {"chunks": ["Fine [1]."]}}
    stamps = run(scripts, "a", "b")
    assert all("Chat" not in p.text_a for _, p in stamps)
    assert "[model name hidden]" in stamps[-1][1].text_a


class CountingProvider(ScriptedProvider):
    def __init__(self, scripts):
        super().__init__(scripts)
        self.yielded = 0

    def stream(self, spec, request):
        for delta in super().stream(spec, request):
            self.yielded += 1
            yield delta


def test_an_abandoned_battle_stops_generating():
    provider = CountingProvider({"long": {"chunks": [f"w{i} " for i in range(100)], "delay": 0.02},
                                 "short": {"chunks": ["Fine [1]."]}})
    refs = references()
    battle = new_battle("q", Retrieval("q", refs, "test"), (spec("long"), spec("short")))
    progress = BattleRunner({"scripted": provider}).run(battle, GenerationRequest("q", refs))
    next(progress)
    progress.close()  # the visitor left (or pressed New battle)
    time.sleep(0.3)
    stopped_at = provider.yielded
    time.sleep(0.3)
    assert provider.yielded == stopped_at < 100

"""What a follow-up question costs, against the first turn of the same battle, in the same process.

1. Offline pool (the bundled corpus and the offline contestants): wall time of a follow-up turn (its
   search, both sides, postprocessing) over the first turn's (search, draw, both sides), median of the rounds.
2. Loopback model (an OpenAI-compatible server on 127.0.0.1 that answers at once and counts the words of
   the prompt as its input tokens and each chunk as one output token): input tokens, output tokens and cost of one side's follow-up answer over
   its first answer. The follow-up replays the conversation, so its input grows with every turn.

Run: python benchmarks/bench_followups.py [--rounds 5] [--turns 2]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from fake_openai import FakeOpenAI, loop_settings  # noqa: E402

from sciarena.arena.rules import ArenaSession  # noqa: E402
from sciarena.core.settings import Settings  # noqa: E402
from sciarena.wiring import build_services  # noqa: E402

QUESTION = "How does CRISPR-Cas9 achieve targeted genome editing, and what limits its precision?"
FOLLOW_UPS = ("How are its off-target effects measured?",
              "What did the first direct detection of gravitational waves observe?",
              "Has it been tried for sickle cell disease?")
ANSWER = tuple(f"Sentence {i} of a cited answer draws on the passages given [{1 + i % 3}]. " for i in range(40))
PRICES = {"price_input_per_m": 3.0, "price_output_per_m": 15.0}  # USD per million tokens


def timed(stream) -> tuple[float, object]:
    start = time.perf_counter()
    snapshot = None
    for snapshot in stream:
        pass
    return time.perf_counter() - start, snapshot


def conversation(arena, turns: int) -> tuple[list[float], object]:
    """Seconds of each turn (the first, then ``turns`` follow-ups) and the finished battle."""
    seconds, last = timed(arena.start_battle(QUESTION))
    session = ArenaSession(battle=last.battle)  # type: ignore[attr-defined]
    times = [seconds]
    for question in FOLLOW_UPS[:turns]:
        seconds, last = timed(arena.follow_up(session, question))
        session = replace(session, battle=last.battle)  # type: ignore[attr-defined]
        times.append(seconds)
    return times, session.battle


def offline_latency(rounds: int, turns: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        arena = build_services(Settings(data_dir=Path(tmp), seed=0)).arena
        conversation(arena, turns)  # warm-up: first search, caches
        runs = [conversation(arena, turns)[0] for _ in range(rounds)]
    first = statistics.median(r[0] for r in runs)
    print(f"offline pool, median of {rounds} battles: first turn {first * 1000:.1f} ms")
    for k in range(1, turns + 1):
        follow = statistics.median(r[k] for r in runs)
        print(f"  follow-up {k}: {follow * 1000:.1f} ms = {follow / first:.2f}x the first turn")


def loopback_cost(turns: int) -> None:
    with FakeOpenAI() as server, tempfile.TemporaryDirectory() as tmp:
        for model_id in ("alpha", "beta"):
            server.add_script(model_id, ANSWER)
        models = [{"name": f"Loop {m.title()}", "provider": "loop", "model_id": m, **PRICES} for m in ("alpha", "beta")]
        arena = build_services(loop_settings(server, Path(tmp), models)).arena
        _, battle = conversation(arena, turns)
    print(f"loopback model (side A, prices ${PRICES['price_input_per_m']:g}/${PRICES['price_output_per_m']:g} per M "
          "tokens in/out):")
    first = battle.turns[0].side_a  # type: ignore[attr-defined]
    print(f"  first turn: {first.usage.input_tokens} tokens in, {first.usage.output_tokens} out, "
          f"${first.cost_usd:.6f}")
    total = first.cost_usd
    for k, turn in enumerate(battle.turns[1:], start=1):  # type: ignore[attr-defined]
        side = turn.side_a
        total += side.cost_usd
        print(f"  follow-up {k}: {side.usage.input_tokens} tokens in "
              f"({side.usage.input_tokens / first.usage.input_tokens:.2f}x), {side.usage.output_tokens} out "
              f"({side.usage.output_tokens / first.usage.output_tokens:.2f}x), cost ${side.cost_usd:.6f} "
              f"({side.cost_usd / first.cost_usd:.2f}x the first turn)")
    print(f"  whole conversation: ${total:.6f} = {total / first.cost_usd:.2f}x a one-question battle")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="offline battles timed (default 5)")
    parser.add_argument("--turns", type=int, default=2, choices=(1, 2, 3), help="follow-ups per battle (default 2)")
    args = parser.parse_args()
    offline_latency(args.rounds, args.turns)
    loopback_cost(args.turns)


if __name__ == "__main__":
    main()

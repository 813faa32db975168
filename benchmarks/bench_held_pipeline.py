"""What holding a pipeline's text until it ends costs: its first-token time as a voter sees it.

    python benchmarks/bench_held_pipeline.py [--n 20] [--chunk-delay 0.01]

The runner shows a pipeline contestant's text only once it has ended (a draft wiped and rewritten would
single it out before the vote), then replays it in pieces (runner.REPLAY_CHARS every REPLAY_STEP_S). Over the first ``n`` labelled questions (sciarena/data/eval/question_labels.jsonl)
the offline pool's OpenScholar-style contestant battles its own base through the real BattleRunner, the offline
baseline paced by ``--chunk-delay`` seconds between chunks as the demo paces it. Reference, same process and
same battle: when the pipeline's draft first reached the runner (what was shown as first token before the
hold), timed by a pass-through provider around the pipeline's own. Printed: for each side the median first-token
time as recorded, the pipeline's median draft-arrival time, and their ratio.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Iterator

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sciarena.arena.runner import BattleRunner  # noqa: E402
from sciarena.core.errors import SciArenaError  # noqa: E402
from sciarena.core.settings import Settings  # noqa: E402
from sciarena.core.types import Delta, GenerationRequest, ModelSpec, Provider  # noqa: E402
from sciarena.pipelines.provider import PipelineProvider  # noqa: E402
from sciarena.providers.offline import OfflineProvider  # noqa: E402
from sciarena.wiring import build_services  # noqa: E402

QUESTIONS = ROOT / "sciarena" / "data" / "eval" / "question_labels.jsonl"


class FirstText:
    """A pass-through provider noting when the wrapped stream's first text leaves it (the runner's clock)."""

    def __init__(self, inner: Provider, start: list[float]) -> None:
        self._inner, self._start = inner, start
        self.first: list[float] = []
        self._lock = threading.Lock()

    def unavailable_reason(self, spec: ModelSpec) -> str | None:
        return self._inner.unavailable_reason(spec)

    def stream(self, spec: ModelSpec, request: GenerationRequest, *, timeout_s: float | None = None,
               cancel: threading.Event | None = None) -> Iterator[Delta]:
        noted = False
        for delta in self._inner.stream(spec, request, timeout_s=timeout_s, cancel=cancel):
            if delta.text and not noted:
                with self._lock:
                    self.first.append(time.monotonic() - self._start[0])
                noted = True
            yield delta


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20, help="questions (battles) to run")
    parser.add_argument("--chunk-delay", type=float, default=0.01, help="seconds between the baseline's chunks")
    args = parser.parse_args(argv)
    rows = [json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines() if line.strip()]
    with tempfile.TemporaryDirectory() as tmp:
        services = build_services(Settings(data_dir=Path(tmp) / "data", seed=0))
        [pipeline] = [m for m in services.pool.active if m.base is not None]
        offline = OfflineProvider(delay_s=args.chunk_delay)
        start = [0.0]
        timed = FirstText(PipelineProvider({"offline": offline}, services.arena.retriever), start)
        arena = replace(services.arena, pool=replace(services.arena.pool, active=(pipeline, pipeline.base)),
                        runner=BattleRunner({"offline": offline, "pipeline": timed}))
        shown_pipe, shown_base, totals, drafts = [], [], [], []
        for row in rows[: args.n]:
            try:
                stream = arena.start_battle(row["question"])
            except SciArenaError as err:  # a question the demo corpus has no papers for: skipped, listed
                print(f"  skipped {row['id']}: {type(err).__name__}")
                continue
            start[0] = time.monotonic()  # the runner's start is within microseconds of the first next()
            battle = list(stream)[-1].battle
            pipe, base = (battle.side_a, battle.side_b) if battle.model_a.base else (battle.side_b, battle.side_a)
            shown_pipe.append(pipe.first_token_s)
            shown_base.append(base.first_token_s)
            totals.append(pipe.total_s)
            drafts.append(timed.first[-1])
    med = statistics.median
    print(f"{len(shown_pipe)} battles, pipeline vs its base, offline baseline paced {args.chunk_delay}s per chunk")
    print(f"  base first token (shown), median:            {med(shown_base):.3f} s")
    print(f"  pipeline draft reached the runner, median:   {med(drafts):.3f} s  (first token shown before the hold)")
    print(f"  pipeline first token (shown, held), median:  {med(shown_pipe):.3f} s  (when its replay began)")
    print(f"  pipeline total (its replay's last piece), median: {med(totals):.3f} s; replay, median "
          f"{med(t - p for t, p in zip(totals, shown_pipe)):.3f} s")
    print(f"  ratio held / draft first token, median per battle: "
          f"{med(p / d for p, d in zip(shown_pipe, drafts)):.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

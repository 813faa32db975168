"""Does a hostile answer stall other visitors? (issue 21)

The real app on loopback with two loopback OpenAI-compatible models: one streams a run of a hostile unit
("\\[", "\\(", "[1]", 30 kB by default), the other a normal answer, while a second client loads the page
and the leaderboard over and over. Reference, same process: the same loads while a battle of two normal
answers runs. Prints the slowest and median load in each case.

Run: python benchmarks/bench_hostile_stream.py [--kb 30]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import threading
import time
import urllib.request
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from arena_server import running_arena  # noqa: E402
from fake_openai import FakeOpenAI  # noqa: E402
from gradio_client import Client  # noqa: E402

from sciarena.core.settings import Settings  # noqa: E402
from sciarena.wiring import build_services  # noqa: E402

QUESTION = "How does retrieval-augmented generation reduce hallucination?"
OFFLINE = ("Extractive-MMR (offline)", "Per-Paper Digest (offline)", "Claim Clusters (offline)")


def loads_during(url: str, battle: threading.Thread) -> list[float]:
    times = []
    battle.start()
    while battle.is_alive():
        for path in ("", "gradio_api/info"):
            start = time.perf_counter()
            with urllib.request.urlopen(url + path, timeout=60) as response:
                response.read()
            times.append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kb", type=int, default=30)
    kb = parser.parse_args().kb
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAI() as server:
        catalogue = Path(tmp) / "models.json"
        catalogue.write_text(json.dumps({
            "endpoints": {"loop": {"base_url": server.base_url, "key_env": "LOOP_API_KEY"}},
            "models": [{"name": "Loop Alpha", "provider": "loop", "model_id": "alpha", "organisation": "Test"},
                       {"name": "Loop Beta", "provider": "loop", "model_id": "beta", "organisation": "Test"},
                       *({"name": name, "enabled": False} for name in OFFLINE)]}))
        settings = replace(Settings.from_env({"LOOP_API_KEY": "sk-b", "SCIARENA_MODELS": str(catalogue)}),
                           data_dir=Path(tmp) / "data", seed=0, generation_timeout_s=120)
        server.add_script("beta", tuple(f"word{i} [1] " for i in range(100)), chunk_delay_s=0.02)
        with running_arena(Path(tmp) / "data", services=build_services(settings)) as arena:
            for path in ("", "gradio_api/info"):  # warm up: the first page load builds what later ones reuse
                with urllib.request.urlopen(arena.url + path, timeout=60) as response:
                    response.read()
            for unit in ("normal", "\\[", "\\(", "[1]"):
                if unit == "normal":
                    server.add_script("alpha", tuple(f"word{i} [1] " for i in range(100)), chunk_delay_s=0.02)
                else:
                    chunk = unit * (200 // len(unit))  # 150 chunks of 200 characters for 30 kB, 20 ms apart
                    server.add_script("alpha", (chunk,) * (kb * 1000 // len(chunk)), chunk_delay_s=0.02)
                client = Client(arena.url, verbose=False)
                started = time.perf_counter()
                battle = threading.Thread(target=client.predict, args=(QUESTION,), kwargs={"api_name": "/battle"})
                times = loads_during(arena.url, battle)
                label = "two normal answers (reference)" if unit == "normal" else f"{kb} kB of {unit!r} vs normal"
                print(f"{label:34} battle {time.perf_counter() - started:6.2f} s; other visitor's loads "
                      f"({len(times)}): median {statistics.median(times) * 1000:6.1f} ms, slowest "
                      f"{max(times) * 1000:7.1f} ms")


if __name__ == "__main__":
    main()

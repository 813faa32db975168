"""Memory held by battles that are started and never voted on, and the ceiling SCIARENA_MAX_SESSIONS puts on it.

The real app (`python app.py`, offline: bundled corpus, offline baselines) runs in a child process on loopback;
gradio_client starts N battles through the public /battle endpoint, each in a new Gradio session (a new
visitor), and never votes. The child's resident memory (VmRSS) is read before and after. Two servers run at
once: one with the default cap (2,000 sessions, above N) and one with a small cap, where the growth stops at
the cap. Also: the size of one unvoted battle's record (pickled, as Gradio keeps it in the session state).

Run: python benchmarks/bench_unvoted_memory.py [--battles 1000] [--cap 200] [--threads 4]
"""

from __future__ import annotations

import argparse
import os
import pickle
import socket
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT)]

QUESTIONS = ("How does CRISPR-Cas9 achieve targeted genome editing, and what limits its precision?",
             "What did the first direct detection of gravitational waves observe?",
             "How does retrieval-augmented generation reduce hallucination in language models?")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def serve(data_dir: str, cap: int | None) -> tuple[subprocess.Popen, str]:
    port = free_port()
    env = {**os.environ, "SCIARENA_DATA_DIR": data_dir, "GRADIO_SERVER_PORT": str(port),
           "GRADIO_SERVER_NAME": "127.0.0.1", "GRADIO_ANALYTICS_ENABLED": "False", "SCIARENA_SEED": "0"}
    if cap is not None:
        env["SCIARENA_MAX_SESSIONS"] = str(cap)
    child = subprocess.Popen([sys.executable, "app.py"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/"
    deadline = time.time() + 180
    while time.time() < deadline:  # ready once the page's configuration is served
        try:
            if httpx.get(f"{url}config", timeout=5).status_code == 200:
                return child, url
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    child.kill()
    raise RuntimeError("the app did not start")


def battles(url: str, count: int, threads: int) -> None:
    from gradio_client import Client

    def run(worker: int) -> None:
        # A long timeout: on a loaded machine the queue's join can take longer than httpx's default 5 s.
        client = Client(url, verbose=False, httpx_kwargs={"timeout": 300})
        for i in range(worker, count, threads):
            client.reset_session()  # a new visitor: Gradio keeps one session state each
            client.predict(QUESTIONS[i % len(QUESTIONS)], api_name="/battle")

    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(run, range(threads)))


def measure(count: int, cap: int | None, threads: int) -> tuple[float, float, float]:
    """RSS after start and a warm-up, after ``count`` more unvoted battles, and the time they took."""
    with tempfile.TemporaryDirectory() as data_dir:
        child, url = serve(data_dir, cap)
        try:
            battles(url, 30, 1)  # warm-up, one at a time: imports, caches, the first sessions
            before = rss_mb(child.pid)
            start = time.perf_counter()
            battles(url, count, threads)
            return before, rss_mb(child.pid), time.perf_counter() - start
        finally:
            child.terminate()
            try:
                child.wait(timeout=30)
            except subprocess.TimeoutExpired:  # a stuck shutdown must not lose the measurement
                child.kill()
                child.wait()


def record_size() -> int:
    """Bytes of one finished, unvoted battle's session record, pickled."""
    from sciarena.arena.rules import ArenaSession
    from sciarena.core.settings import Settings
    from sciarena.wiring import build_services

    with tempfile.TemporaryDirectory() as data_dir:
        services = build_services(Settings(data_dir=Path(data_dir), seed=0))
        snapshots = list(services.arena.start_battle(QUESTIONS[0]))
        return len(pickle.dumps(ArenaSession(battle=snapshots[-1].battle)))


def gradio_session_size() -> float:
    """kB that Gradio allocates for one session's state (its copy of the page's configuration), traced."""
    import tracemalloc

    from gradio.state_holder import SessionState

    from sciarena.core.settings import Settings
    from sciarena.ui import build_app
    from sciarena.wiring import build_services

    with tempfile.TemporaryDirectory() as data_dir:
        demo = build_app(build_services(Settings(data_dir=Path(data_dir), seed=0)))
        SessionState(demo)  # the first one builds caches that the others share
        tracemalloc.start()
        before = tracemalloc.take_snapshot()
        kept = [SessionState(demo) for _ in range(100)]
        grown = sum(s.size_diff for s in tracemalloc.take_snapshot().compare_to(before, "filename"))
        tracemalloc.stop()
        del kept
        return grown / 100 / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--battles", type=int, default=1000)
    parser.add_argument("--cap", type=int, default=200)
    parser.add_argument("--threads", type=int, default=4)
    args = parser.parse_args()
    print(f"one unvoted battle's session record, pickled: {record_size() / 1024:.1f} kB")
    print(f"Gradio's own state for one session (traced): {gradio_session_size():.0f} kB")
    caps = (None, args.cap)
    with ThreadPoolExecutor(len(caps)) as pool:  # both servers at once: the same load on each
        results = list(pool.map(lambda cap: measure(args.battles, cap, args.threads), caps))
    for cap, (before, after, took) in zip(caps, results):
        label = "default cap (2,000 sessions)" if cap is None else f"SCIARENA_MAX_SESSIONS={cap}"
        print(f"{label}: {args.battles} unvoted battles in {took:.0f} s; server RSS {before:.0f} → {after:.0f} MB "
              f"(+{after - before:.0f} MB, {(after - before) * 1024 / args.battles:.0f} kB a battle)")


if __name__ == "__main__":
    main()

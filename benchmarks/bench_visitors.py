"""A hundred visitors on one core (issue 35): battle times, votes kept and the app's CPU per battle under load.

Three processes. The app, served as app.py serves it, pinned to core 0 (``taskset -c 0`` at its start, so every
thread it makes is pinned too). On core 1: a fake OpenAI-compatible server (tests/fake_openai.py) whose two
catalogue models answer 600 characters in 25-character pieces 50 ms apart, and this process, the load generator.
The load generator speaks the page's own protocol (Gradio's queue: POST /gradio_api/queue/join, then the
/gradio_api/queue/data event stream of that session), over plain asyncio sockets: one coroutine per visitor,
lighter than gradio_client (a thread and an httpx client per visitor) so the server, not the client, sets the pace.

It measures one visitor alone (battle then vote, ``--lone`` times: the median battle), then ``--visitors`` visitors
at once, each doing ``--battles`` battles in a row with a vote after each: p50/p95 battle time (join to completion),
votes acknowledged by the app vs stored in its vote files (none lost, none doubled), the app's CPU-seconds per
battle (from /proc, over the loaded phase), its memory, and the load generator's own CPU share of its core
(near 100% would mean the client set the pace). The machine's load average is printed: on a shared machine the
figures move with it.

Run: python benchmarks/bench_visitors.py [--visitors 100] [--battles 3] [--lone 5]
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

APP_CORE, CLIENT_CORE = 0, 1
IDLE_S = 5.0  # how long the app's idle CPU is measured, between the warm-up and the lone visitor
ANSWER_CHARS, PIECE_CHARS, PIECE_GAP_S = 600, 25, 0.05
FIRST_WORD = b"Attention"  # how both fake models' answers begin: the update that carries it shows text
QUESTIONS = ("How does retrieval-augmented generation reduce hallucination in large language models?",
             "How does CRISPR-Cas9 achieve targeted genome editing, and what limits its precision?",
             "What are the main challenges of using deep learning for medical image diagnosis?")
# The limits are for abuse, not for a load test from one address: raised so every battle and vote is served.
LOAD_ENV = {"SCIARENA_BATTLES_PER_HOUR": "100000", "SCIARENA_BATTLES_PER_DAY": "100000",
            "SCIARENA_VOTES_PER_DAY": "100000", "SCIARENA_MAX_PAID_BATTLES": "100000",
            "SCIARENA_MAX_PAID_PER_VISITOR": "100"}


# ------------------------------------------------------------------------------ the two servers (subprocesses)

def serve_models() -> None:
    """The fake model server: prints its base URL, serves until stdin closes."""
    from fake_openai import FakeOpenAI

    words = ("Attention weighs every token against the others [1], ", "so a model can use distant context. ")
    text = "".join(words[i % 2] for i in range(20))[:ANSWER_CHARS]
    pieces = tuple(text[i:i + PIECE_CHARS] for i in range(0, len(text), PIECE_CHARS))
    with FakeOpenAI() as server:
        for model in ("alpha", "beta"):
            server.add_script(model, pieces, chunk_delay_s=PIECE_GAP_S)
        print(server.base_url, flush=True)
        sys.stdin.read()


def serve_app(base_url: str, data_dir: str, port: int) -> None:
    """The app as app.py serves it (same queue settings), with the two fake models as its pool."""
    from fake_openai import loop_settings

    from sciarena.core.settings import Settings
    from sciarena.ui import build_app, launch_kwargs
    from sciarena.wiring import build_services

    class Server:  # what loop_settings reads of a FakeOpenAI
        def __init__(self, url: str) -> None:
            self.base_url = url

    models = [{"name": "Loop Alpha", "provider": "loop", "model_id": "alpha", "organisation": "Test"},
              {"name": "Loop Beta", "provider": "loop", "model_id": "beta", "organisation": "Test"}]
    base = loop_settings(Server(base_url), Path(data_dir), models, generation_timeout_s=120.0)
    limits = Settings.from_env({**LOAD_ENV, "LOOP_API_KEY": "sk-test", "SCIARENA_MODELS": str(base.models_file)})
    settings = dataclasses.replace(limits, data_dir=base.data_dir, seed=0, generation_timeout_s=120.0)
    demo = build_app(build_services(settings)).queue(default_concurrency_limit=16)  # as app.py
    demo.launch(server_name="127.0.0.1", server_port=port, quiet=True, **launch_kwargs())


# ------------------------------------------------------------------------------ the page's protocol

@dataclass(frozen=True)
class Endpoints:
    host: str
    port: int
    battle: int  # fn_index of the /battle endpoint
    vote: int


async def _request(endpoints: Endpoints, method: str, path: str, body: bytes = b"") -> tuple[asyncio.StreamReader,
                                                                                              asyncio.StreamWriter,
                                                                                              dict[str, str]]:
    reader, writer = await asyncio.open_connection(endpoints.host, endpoints.port)
    head = (f"{method} {path} HTTP/1.1\r\nHost: {endpoints.host}:{endpoints.port}\r\nConnection: close\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n")
    writer.write(head.encode() + body)
    await writer.drain()
    status = await reader.readline()
    if b" 200 " not in status:
        raise RuntimeError(f"{method} {path}: {status!r}")
    headers = {}
    while (line := await reader.readline()) not in (b"\r\n", b""):
        name, _, value = line.decode().partition(":")
        headers[name.strip().lower()] = value.strip()
    return reader, writer, headers


async def _body_chunks(reader: asyncio.StreamReader, headers: dict[str, str]):
    if headers.get("transfer-encoding") == "chunked":
        while True:
            size = int((await reader.readline()).strip() or b"0", 16)
            if size == 0:
                return
            yield await reader.readexactly(size)
            await reader.readexactly(2)
    else:
        while chunk := await reader.read(65536):
            yield chunk


async def call(endpoints: Endpoints, session_hash: str, fn_index: int, data: list,
               first_text: list[float] | None = None) -> tuple[bool, int]:
    """One event through the queue, as the page sends it: whether it succeeded, and how many updates came;
    ``first_text`` gets the seconds from the join to the first update carrying answer text."""
    started = time.perf_counter()
    join = json.dumps({"data": data, "event_data": None, "fn_index": fn_index, "trigger_id": None,
                       "session_hash": session_hash}).encode()
    reader, writer, headers = await _request(endpoints, "POST", "/gradio_api/queue/join", join)
    event_id = json.loads(b"".join([c async for c in _body_chunks(reader, headers)]))["event_id"]
    writer.close()
    reader, writer, headers = await _request(endpoints, "GET", f"/gradio_api/queue/data?session_hash={session_hash}")
    updates, buffer = 0, b""
    try:
        async for chunk in _body_chunks(reader, headers):
            buffer += chunk
            *messages, buffer = buffer.split(b"\n\n")
            for message in messages:
                if b"process_generating" in message:
                    updates += 1
                    if first_text is not None and FIRST_WORD in message:
                        first_text.append(time.perf_counter() - started)
                        first_text = None
                elif b"process_completed" in message:  # the only message parsed whole
                    done = json.loads(message.removeprefix(b"data: "))
                    if done.get("event_id") == event_id:
                        return bool(done.get("success")), updates
        raise RuntimeError("the event stream ended before the event completed")
    finally:
        writer.close()


@dataclass
class Tally:
    battles: list[float]
    updates: list[int]
    first_text: list[float] = dataclasses.field(default_factory=list)
    acknowledged: int = 0
    failed: int = 0


async def visitor(endpoints: Endpoints, battles: int, tally: Tally, offset: int) -> None:
    session_hash = secrets.token_hex(6)
    for index in range(battles):
        started = time.perf_counter()
        ok, updates = await call(endpoints, session_hash, endpoints.battle, [QUESTIONS[(offset + index) % 3], None,
                                                                             None], tally.first_text)
        tally.battles.append(time.perf_counter() - started)
        tally.updates.append(updates)
        if not ok:
            tally.failed += 1
            continue
        voted, _ = await call(endpoints, session_hash, endpoints.vote, ["A", "", True, None])
        tally.acknowledged += voted
        tally.failed += not voted


# ------------------------------------------------------------------------------ measuring

def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def memory_mb(pid: int) -> tuple[float, float]:
    status = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    return int(status["VmRSS"].split()[0]) / 1024, int(status["VmHWM"].split()[0]) / 1024


def stored_votes(data_dir: Path) -> tuple[int, int]:
    """(vote records, distinct battles among them) in the app's vote files."""
    ids = [json.loads(line)["id"] for path in sorted(data_dir.rglob("votes-*.jsonl"))
           for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return len(ids), len(set(ids))


def endpoints_of(url: str, port: int) -> Endpoints:
    with urllib.request.urlopen(url + "config", timeout=60) as response:
        config = json.load(response)
    by_name = {d.get("api_name"): d["id"] for d in config["dependencies"] if d.get("api_name")}
    return Endpoints("127.0.0.1", port, battle=by_name["battle"], vote=by_name["vote"])


def wait_up(url: str, app: subprocess.Popen, timeout_s: float = 180.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if app.poll() is not None:
            raise RuntimeError("the app exited during start-up")
        try:
            with urllib.request.urlopen(url + "config", timeout=5):
                return
        except OSError:
            time.sleep(0.5)
    raise RuntimeError("the app did not start")


def pct(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] if len(values) > 1 else values[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--visitors", type=int, default=100)
    parser.add_argument("--battles", type=int, default=3)
    parser.add_argument("--lone", type=int, default=5)
    parser.add_argument("--profile", metavar="PATH", help="record the app with py-spy during the load (collapsed "
                        "stacks to PATH; needs py-spy installed)")
    parser.add_argument("--serve-models", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--serve-app", nargs=3, metavar=("BASE_URL", "DATA_DIR", "PORT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_models:
        return serve_models()
    if args.serve_app:
        return serve_app(args.serve_app[0], args.serve_app[1], int(args.serve_app[2]))

    os.sched_setaffinity(0, {CLIENT_CORE})  # before any thread: the load generator stays on its core
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())} "
          f"(a shared machine: other work runs on both cores)")
    me = [sys.executable, str(Path(__file__).resolve())]
    from arena_server import free_port

    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    with tempfile.TemporaryDirectory() as tmp:
        models = subprocess.Popen(["taskset", "-c", str(CLIENT_CORE), *me, "--serve-models"], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True)
        app = None
        try:
            base_url = models.stdout.readline().strip()
            app = subprocess.Popen(["taskset", "-c", str(APP_CORE), *me, "--serve-app", base_url, tmp, str(port)],
                                   stdout=subprocess.DEVNULL)
            wait_up(url, app)
            endpoints = endpoints_of(url, port)
            warm = Tally([], [])
            asyncio.run(visitor(endpoints, 1, warm, 0))  # warm-up: first-use imports and caches

            cpu0 = cpu_seconds(app.pid)
            time.sleep(IDLE_S)
            idle = (cpu_seconds(app.pid) - cpu0) / IDLE_S
            print(f"app idle: {idle * 1000:.0f} ms CPU a second")
            lone = Tally([], [])
            cpu0 = cpu_seconds(app.pid)
            asyncio.run(visitor(endpoints, args.lone, lone, 0))
            alone = statistics.median(lone.battles)
            print(f"one visitor alone: battle median {alone:.2f} s over {args.lone} "
                  f"({statistics.median(lone.updates):.0f} updates per battle, first text at "
                  f"{statistics.median(lone.first_text):.2f} s; app CPU "
                  f"{(cpu_seconds(app.pid) - cpu0) / args.lone * 1000:.0f} ms per battle)")

            load = Tally([], [])

            async def crowd() -> None:
                await asyncio.gather(*(visitor(endpoints, args.battles, load, i) for i in range(args.visitors)))

            spy = None if not args.profile else subprocess.Popen(
                ["py-spy", "record", "--pid", str(app.pid), "--format", "raw", "--output", args.profile,
                 "--nonblocking", "--rate", "50"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            cpu0, wall0, mine0 = cpu_seconds(app.pid), time.perf_counter(), time.process_time()
            asyncio.run(crowd())
            if spy is not None:
                spy.send_signal(2)  # SIGINT: py-spy writes its file and exits
                spy.wait(timeout=60)
            cpu, wall, mine = cpu_seconds(app.pid) - cpu0, time.perf_counter() - wall0, time.process_time() - mine0
            rss, peak = memory_mb(app.pid)
            done = len(load.battles)
            p50, p95 = statistics.median(load.battles), pct(load.battles, 95)
            print(f"{args.visitors} visitors x {args.battles} battles: {done} battles in {wall:.1f} s; battle p50 "
                  f"{p50:.2f} s, p95 {p95:.2f} s ({p95 / alone:.1f}x the lone median; {load.failed} failed); "
                  f"{statistics.median(load.updates):.0f} updates per battle, first text at "
                  f"{statistics.median(load.first_text):.2f} s (medians)")
            print(f"app: {cpu / done * 1000:.0f} ms CPU per battle ({cpu / wall:.0%} of its core); memory "
                  f"{rss:.0f} MB now, {peak:.0f} MB peak; load generator: {mine / wall:.0%} of its core")
        finally:
            if app is not None:
                app.terminate()
                app.wait(timeout=60)
            models.stdin.close()
            models.wait(timeout=60)
        records, distinct = stored_votes(Path(tmp))
        acknowledged = warm.acknowledged + lone.acknowledged + load.acknowledged
        print(f"votes: {acknowledged} acknowledged, {records} stored ({distinct} distinct battles): "
              f"{acknowledged - distinct} lost, {records - distinct} doubled")
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()

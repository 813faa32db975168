"""SIGKILL between the vote and the push loses nothing: the next process pushes what the last one confirmed.

The worker is a real process configured the way the app is (Settings.from_env with HF_TOKEN,
SCIARENA_VOTES_REPO and HF_ENDPOINT pointing at the loopback Hub), writing through
LocalVoteStore and printing "confirmed <id>" only after ``append`` returned.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from fake_hub import FakeHub

pytestmark = pytest.mark.slow  # a server or a subprocess: `pytest -m "not slow"` skips it

REPO = "org/votes"
TESTS = Path(__file__).resolve().parent

WORKER = r"""
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from fake_hub import make_record
from sciarena.core.settings import Settings
from sciarena.core.errors import VoteRejected
from sciarena.votes.store.hub import open_hub_sync
from sciarena.votes.store.local import LocalVoteStore

settings = Settings.from_env()
store_root = Path(settings.data_dir) / "votes"
sync = open_hub_sync(settings, store_root)
store = LocalVoteStore(settings.data_dir, external_lock=sync.lock)
sync.start()
print("ready", flush=True)
for line in sys.stdin:
    cmd, *args = line.split()
    if cmd == "vote":
        prefix, first, count = args[0], int(args[1]), int(args[2])
        for i in range(first, first + count):
            record = make_record(i, prefix=prefix)
            store.append(record)
            print("confirmed", record["id"], flush=True)
    elif cmd == "revote":  # a double click / replay of a battle this process already recorded
        try:
            store.append(make_record(int(args[1]), prefix=args[0]))
            print("stored-twice", flush=True)
        except VoteRejected:
            print("rejected", flush=True)
    elif cmd == "push":
        print("pushed", sync.push_now(), flush=True)
    elif cmd == "status":
        print("status", sync.status(), flush=True)
    elif cmd == "close":
        print("closed", sync.close(), flush=True)
        break
"""


class Worker:
    def __init__(self, script: Path, data_dir: Path, endpoint: str) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "SCIARENA_"))}
        env.update(HF_ENDPOINT=endpoint, HF_TOKEN="hf_test", SCIARENA_VOTES_REPO=REPO,
                   SCIARENA_DATA_DIR=str(data_dir), SCIARENA_PUSH_EVERY_MINUTES="60",
                   PYTHONPATH=str(TESTS.parent))
        self.proc = subprocess.Popen([sys.executable, str(script), str(TESTS)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, env=env, cwd=TESTS.parent)
        assert self.read() == "ready"

    def read(self) -> str:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().strip()
        assert line, f"worker exited early with code {self.proc.poll()}"
        return line

    def send(self, command: str, replies: int = 1) -> list[str]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()
        return [self.read() for _ in range(replies)]

    def kill(self) -> None:
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)
        assert self.proc.returncode == -signal.SIGKILL


def confirmed_ids(lines: list[str]) -> list[str]:
    assert all(line.startswith("confirmed ") for line in lines), lines
    return [line.split()[1] for line in lines]


def wait_for(predicate, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(0.05)


def test_sigkill_after_confirmation_then_restart_delivers_every_vote_exactly_once(tmp_path):
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    data_dir = tmp_path / "data"
    with FakeHub() as hub:
        first = Worker(script, data_dir, hub.endpoint)
        confirmed = confirmed_ids(first.send("vote k 0 5", 5))
        assert first.send("push") == ["pushed True"]
        assert len(hub.records(REPO)) == 5
        confirmed += confirmed_ids(first.send("vote k 5 7", 7))  # confirmed to the voter, never pushed
        assert first.send("revote k 3") == ["rejected"]
        first.kill()
        assert len(hub.records(REPO)) == 5

        # The killed process was also in the middle of writing an unconfirmed vote.
        shard = next(data_dir.glob("votes/*/votes-*.jsonl"))
        with open(shard, "ab") as handle:
            handle.write(b'{"id": "k-unconfirmed", "question": "half a li')

        second = Worker(script, data_dir, hub.endpoint)  # its start push sends what the first left
        wait_for(lambda: len(hub.records(REPO)) >= len(confirmed))
        confirmed += confirmed_ids(second.send("vote r 0 3", 3))
        assert second.send("close") == ["closed True"]
        assert second.proc.wait(10) == 0

        stored = [r["id"] for r in hub.records(REPO)]
        assert len(confirmed) == 15
        assert Counter(stored) == Counter(confirmed), "every confirmed vote on the Hub, exactly once"
        for text in hub.files(REPO).values():
            if text.startswith(b"{"):
                assert all(json.loads(line) for line in text.splitlines())

        third = Worker(script, data_dir, hub.endpoint)  # nothing new: a further restart adds nothing
        commits = hub.commit_count(REPO)
        assert third.send("push") == ["pushed True"]
        assert third.send("close") == ["closed True"]
        third.proc.wait(10)
        assert hub.commit_count(REPO) == commits
        assert Counter(r["id"] for r in hub.records(REPO)) == Counter(confirmed)

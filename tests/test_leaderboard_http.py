"""The README's calls of the `/leaderboard` API endpoint work as written against a loopback app (issue 23,
finding 9): the gradio_client one and the plain HTTP one (Gradio 6: POST /gradio_api/call/leaderboard, then
GET the event stream it names)."""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import subprocess
import textwrap
import urllib.request
from pathlib import Path

import numpy as np
import pytest
from arena_server import running_arena
from gradio_client import Client

from sciarena.board.synthetic import simulate, write_jsonl

pytestmark = [pytest.mark.slow]
README = Path(__file__).resolve().parent.parent / "README.md"
DEFAULT = "http://127.0.0.1:7860/"


def _readme_blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)^ *```", README.read_text(encoding="utf-8"),
                      re.DOTALL | re.MULTILINE)


def _block(language: str, needle: str) -> str:
    found = [b for b in _readme_blocks(language) if needle in b]
    assert len(found) == 1, f"one README {language} block calls {needle}"
    return found[0]


def _events(text: str) -> list[tuple[str, str]]:
    return re.findall(r"^event: (\w+)\ndata: (.*)$", text, re.MULTILINE)


@pytest.fixture(scope="module")
def arena(tmp_path_factory, wire):
    data = tmp_path_factory.mktemp("data")
    shard = data / "votes" / "2025-06-01" / "votes-synthetic.jsonl"
    shard.parent.mkdir(parents=True)
    write_jsonl(dataclasses.replace(simulate(np.linspace(900, 1100, 3), 300, seed=4), models=("x", "y", "z")), shard)
    with running_arena(data, build=wire) as running:
        yield running


def _expected(arena) -> list[dict]:
    return arena.services.board.api(min_battles=0, by="none")["models"]


def test_plain_http_post_then_event_stream(arena):
    body = json.dumps({"data": [0, "bt", "", "bootstrap-mean", "", "none", 100, 0, False]}).encode()
    post = urllib.request.Request(arena.url + "gradio_api/call/leaderboard", data=body, method="POST",
                                  headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(post, timeout=60) as response:
        event = json.load(response)["event_id"]
    with urllib.request.urlopen(f"{arena.url}gradio_api/call/leaderboard/{event}", timeout=120) as response:
        events = _events(response.read().decode())
    assert events[-1][0] == "complete", events
    (board,) = json.loads(events[-1][1])
    assert board["models"] == _expected(arena) and len(board["models"]) == 3


@pytest.mark.skipif(shutil.which("curl") is None, reason="the README's HTTP example uses curl")
def test_the_readme_http_example_runs_as_written(arena):
    script = _block("bash", "/gradio_api/call/leaderboard").replace(DEFAULT, arena.url)
    assert DEFAULT not in script
    out = subprocess.run(["bash", "-euo", "pipefail", "-c", script], capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr
    events = _events(out.stdout)
    assert events and events[-1][0] == "complete", out.stdout[-500:]
    assert json.loads(events[-1][1])[0]["models"] == _expected(arena)


def test_the_readme_gradio_client_example_runs_as_written(arena):
    code = textwrap.dedent(_block("python", 'api_name="/leaderboard"')).replace(DEFAULT, arena.url)
    scope: dict = {"Client": Client}
    exec(compile(code, "README.md", "exec"), scope)  # the README's own lines, against this loopback app
    assert scope["board"]["models"] == _expected(arena)

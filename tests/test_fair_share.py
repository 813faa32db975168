"""Fair share of the paid-battle cap on the running app: one client opening as many slow paid battles as the
arena has slots gets its share, another client's battle still starts, and a client that goes away frees its
slot at once. Loopback app, loopback OpenAI-compatible models, gradio_client as both visitors."""

from __future__ import annotations

import json
import time
from dataclasses import replace

import pytest
from arena_server import running_arena
from fake_openai import FakeOpenAI
from gradio_client import Client

from sciarena.core.settings import Settings

pytestmark = pytest.mark.slow

QUESTION = "How does retrieval-augmented generation reduce hallucination?"
OFFLINE = ("Extractive-MMR (offline)", "Per-Paper Digest (offline)", "Claim Clusters (offline)")
SLOTS = 8


def settings_for(tmp_path, server: FakeOpenAI) -> Settings:
    path = tmp_path / "models.json"
    path.write_text(json.dumps({
        "endpoints": {"loop": {"base_url": server.base_url, "key_env": "LOOP_API_KEY"}},
        "models": [{"name": "Loop Alpha", "provider": "loop", "model_id": "alpha", "organisation": "Test"},
                   {"name": "Loop Beta", "provider": "loop", "model_id": "beta", "organisation": "Test"},
                   *({"name": name, "enabled": False} for name in OFFLINE)]}))
    base = Settings.from_env({"LOOP_API_KEY": "sk-test", "SCIARENA_MODELS": str(path),
                              "SCIARENA_MAX_PAID_BATTLES": str(SLOTS),
                              # both clients are on loopback: a trusted proxy's header tells them apart,
                              # as it does on a Space (the address has a fair share of its own)
                              "SCIARENA_PROXY_HOPS": "1"})
    return replace(base, data_dir=tmp_path / "data", seed=0, generation_timeout_s=60)


def wait_for(condition, what: str, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s  # polled: how long the server takes is not what is tested
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not reached in {timeout_s:g} s: {what}")
        time.sleep(0.05)


def test_one_client_cannot_take_every_paid_slot(tmp_path, wire):
    with FakeOpenAI() as server:
        for model in ("alpha", "beta"):  # slow: about 20 s of streaming each, so every battle is still running
            server.add_script(model, tuple(f"word{i} [1] " for i in range(200)), chunk_delay_s=0.1)
        services = wire(settings_for(tmp_path, server))
        limiter = services.arena.limiter
        assert limiter is not None and limiter.limits.max_paid_per_visitor == 2
        with running_arena(tmp_path / "data", services=services) as arena:
            greedy = Client(arena.url, verbose=False, headers={"X-Forwarded-For": "203.0.113.7"})
            jobs = [greedy.submit(QUESTION, api_name="/battle") for _ in range(SLOTS)]
            wait_for(lambda: sum(job.done() for job in jobs) >= SLOTS - 2 and limiter.running() == 2,
                     "6 refused, 2 running")
            refused = [job for job in jobs if job.done()]
            for job in refused:
                with pytest.raises(Exception, match="You already have 2 battles answering at once"):
                    job.result()
            assert len(refused) == SLOTS - 2 and limiter.running() == 2

            polite = Client(arena.url, verbose=False, headers={"X-Forwarded-For": "198.51.100.9"})
            other = polite.submit(QUESTION, api_name="/battle")
            wait_for(lambda: limiter.running() == 3, "the second client's battle holds a slot")
            assert not other.done()

            running = [job for job in jobs if not job.done()]
            started = time.monotonic()
            running[0].cancel()  # the client goes away (Gradio cancels every run of its session's endpoint)
            wait_for(lambda: limiter.running() == 1, "the greedy client's slots are free", timeout_s=10)
            print(f"greedy client: {len(running)} battles started, {len(refused)} refused; second client's "
                  f"battle started; slots freed {time.monotonic() - started:.2f} s after the cancel")
            assert not other.done()  # the other client's battle keeps its slot
            other.cancel()
            wait_for(lambda: limiter.running() == 0, "every slot is free", timeout_s=10)


@pytest.mark.browser
def test_closing_the_tab_frees_its_paid_slot(tmp_path, wire):
    from browser_support import chromium

    with FakeOpenAI() as server:
        for model in ("alpha", "beta"):
            server.add_script(model, tuple(f"word{i} [1] " for i in range(600)), chunk_delay_s=0.1)
        services = wire(settings_for(tmp_path, server))
        limiter = services.arena.limiter
        assert limiter is not None
        with running_arena(tmp_path / "data", services=services) as arena, chromium() as browser:
            page = browser.new_page()
            page.goto(arena.url, wait_until="domcontentloaded")
            page.locator("#send").wait_for(timeout=30_000)
            page.locator("#question textarea").fill(QUESTION)
            page.locator("#send").click()
            wait_for(lambda: limiter.running() == 1, "the page's battle holds a slot")
            started = time.monotonic()
            page.close()  # the visitor goes away mid-answer (about a minute of streaming left)
            # Well before the stream would end by itself (a loaded CI machine once needed more than 10 s).
            wait_for(lambda: limiter.running() == 0, "the closed tab's slot is free", timeout_s=30)
            print(f"slot freed {time.monotonic() - started:.2f} s after the tab closed")

"""SCIARENA_MAX_SESSIONS in Chromium: with room for two sessions, a visitor who started a battle and then waited
while two other visitors started theirs has been forgotten (the least recently used goes first), and their vote
says the battle expired — it stores nothing and nothing breaks. The memory this bounds is measured by
benchmarks/bench_unvoted_memory.py.
"""

from __future__ import annotations

import pytest
from browser_support import battle, open_page, records

pytestmark = pytest.mark.browser

QUESTIONS_OFFLINE = ("How does CRISPR-Cas9 achieve targeted genome editing, and what limits its precision?",
                     "What did the first direct detection of gravitational waves observe?",
                     "How does retrieval-augmented generation reduce hallucination in language models?")


@pytest.fixture(scope="module")
def arena(tmp_path_factory, wire):
    from arena_server import running_arena

    with running_arena(tmp_path_factory.mktemp("data"), build=wire, max_sessions=2) as running:
        yield running


def test_the_least_recently_used_session_is_forgotten_and_its_vote_says_expired(browser, arena):
    from gradio_client import Client

    page = open_page(browser, arena.url, key=True)
    page.locator("#consent input").check()
    battle(page, QUESTIONS_OFFLINE[0])
    client = Client(arena.url, verbose=False)
    for question in QUESTIONS_OFFLINE[1:3]:  # two newer visitors, each in a session of their own
        client.reset_session()
        client.predict(question, api_name="/battle")
    page.locator("#vote-a").click()
    page.wait_for_function("() => document.querySelector('#vote-error').innerText.includes('expired')",
                           timeout=15_000)
    assert records(arena) == []
    battle(page, QUESTIONS_OFFLINE[1])  # a new battle works at once
    page.locator("#vote-b").click()
    page.wait_for_function("() => document.querySelector('#model-names').innerText.includes('Model A:')",
                           timeout=15_000)
    assert len(records(arena)) == 1

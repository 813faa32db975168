"""In a browser: the offline pipeline against its own base never offers a vote on two equal texts (issue 32).

The pool is only "OpenScholar-style (Extractive-MMR, offline)" and "Extractive-MMR (offline)", so every battle
is that pair, on the three questions where its answers used to be byte-identical. Each battle either shows
two answers that differ (and opens the vote), or says the answers are the same with the vote closed, stores no
vote and counts the battle in the same-answers record.
"""

from __future__ import annotations

from typing import Any, Iterator

import pytest
from browser_support import VOTES_OPEN, ask, open_page, records, screenshot

from sciarena.answer.sameness import SAME_ANSWERS, same_text

pytestmark = pytest.mark.slow

QUESTIONS = (
    "What did the GW170817 neutron star merger reveal about where heavy elements such as gold are made?",
    "How effective were the mRNA vaccines against symptomatic COVID-19 in their phase 3 trials?",
    "What did the Event Horizon Telescope observe in M87?",
)
PAIR = ("OpenScholar-style (Extractive-MMR, offline)", "Extractive-MMR (offline)")
OTHERS = frozenset({"Per-Paper Digest (offline)", "Claim Clusters (offline)"})
ENDED = ("status => { const s = document.querySelector('#status')?.innerText || '';"
         " return s.includes('which one is better?') || s.includes(status); }")


@pytest.fixture(scope="module")
def arena(tmp_path_factory: pytest.TempPathFactory, wire) -> Iterator[Any]:
    from arena_server import running_arena

    with running_arena(tmp_path_factory.mktemp("data"), build=wire, outage=OTHERS) as running:
        assert {m.name for m in running.services.pool.active} - OTHERS == set(PAIR)
        yield running


def settled_answers(page: Any) -> tuple[str, str]:
    """Both panels' text once it has stopped changing (the last snapshot's Markdown can render after the
    status line does)."""
    last: tuple[str, str] | None = None
    for _ in range(30):
        now = (page.locator("#answer-a").inner_text(), page.locator("#answer-b").inner_text())
        if now == last:
            return now
        last = now
        page.wait_for_timeout(1_000)
    raise AssertionError("the answers never stopped changing")


def test_the_pipeline_and_its_base_never_offer_a_vote_on_equal_text(browser, arena):
    page = open_page(browser, arena.url)
    shown = {"different": 0, "same": 0}
    for k, question in enumerate(QUESTIONS):
        if k:  # a blank page first, so the last battle's status is not read as this one's
            page.locator("#new-battle").click()
            page.wait_for_function("() => !(document.querySelector('#status')?.innerText || '').trim()",
                                   timeout=30_000)
        ask(page, question)
        page.wait_for_function(ENDED, arg=SAME_ANSWERS[:40], timeout=120_000)
        a, b = settled_answers(page)
        assert a.strip() and b.strip()
        if same_text(a, b):
            shown["same"] += 1
            page.wait_for_timeout(2_000)  # settle() would open the buttons just after the last snapshot
            assert not page.locator("#vote-a").is_enabled(), f"a vote was offered on equal text for {question!r}"
            assert SAME_ANSWERS[:40] in page.locator("#status").inner_text()
            screenshot(page, f"same-answers-{k}")
        else:
            shown["different"] += 1
            screenshot(page, f"different-answers-{k}")
            page.wait_for_function(VOTES_OPEN, timeout=30_000)
    assert records(arena) == []  # no vote was cast, and none was stored for the equal pairs
    assert len(list(arena.services.arena.same_log.records())) == shown["same"]
    assert sum(shown.values()) == len(QUESTIONS)

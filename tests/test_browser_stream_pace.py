"""The page's answers change at reading speed: two models streaming 100 pieces a second reach the browser as at
most ~10 updates a second per answer, still growing in order into the whole answer (issue 35)."""

from __future__ import annotations

import pytest
from arena_server import running_arena
from browser_support import battle, open_page
from fake_openai import FakeOpenAI, loop_settings

pytestmark = [pytest.mark.browser, pytest.mark.slow]

QUESTION = "How does retrieval-augmented generation reduce hallucination in large language models?"
PIECES, PIECE_GAP_S = 150, 0.01  # 100 pieces a second for 1.5 s
WORDS = {"alpha": "attention ", "beta": "retrieval "}
# Every distinct text each answer box shows, with the page's clock, from before the first update to the vote.
RECORD_JS = """() => {
  window.__shown = {"answer-a": [], "answer-b": []};
  new MutationObserver(() => {
    for (const id of ["answer-a", "answer-b"]) {
      const text = document.getElementById(id)?.innerText ?? "";
      const seen = window.__shown[id];
      if (!seen.length || seen[seen.length - 1][1] !== text) seen.push([performance.now(), text]);
    }
  }).observe(document.body, { childList: true, subtree: true, characterData: true });
}"""


@pytest.fixture(scope="module")
def arena(tmp_path_factory, wire):
    tmp = tmp_path_factory.mktemp("pace")
    with FakeOpenAI() as server:
        for model, word in WORDS.items():
            server.add_script(model, (word,) * PIECES, chunk_delay_s=PIECE_GAP_S)
        settings = loop_settings(server, tmp, [
            {"name": "Loop Alpha", "provider": "loop", "model_id": "alpha", "organisation": "Test"},
            {"name": "Loop Beta", "provider": "loop", "model_id": "beta", "organisation": "Test"}])
        with running_arena(tmp / "data", services=wire(settings)) as running:
            yield running


def test_a_fast_stream_reaches_the_page_at_most_ten_times_a_second_and_in_order(browser, arena):
    page = open_page(browser, arena.url)
    page.evaluate(RECORD_JS)
    battle(page, QUESTION, timeout_ms=30_000)
    shown = page.evaluate("() => window.__shown")
    for box, seen in shown.items():
        counts = [text.count("attention") + text.count("retrieval") for _, text in seen]
        final = counts[-1]
        assert final == PIECES, (box, final)  # the whole answer, every piece in it
        assert counts == sorted(counts), f"{box} shrank while streaming"  # only ever grows
        growing = [(at, n) for (at, _), n in zip(seen, counts) if 0 < n < final]
        assert len(growing) >= 5, f"{box} did not stream: {len(growing)} partial texts"
        times = [at for at, _ in growing]
        busiest = max(sum(start <= t < start + 1000 for t in times) for start in times)
        # Ten updates a second, and a little room for the browser drawing one update in two steps.
        assert busiest <= 13, f"{box}: {busiest} updates in one second ({len(growing)} in all)"
    page.close()

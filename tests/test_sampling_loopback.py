"""On the app served on loopback: the adaptive and order samplers' published pair weights (the ``/leaderboard``
endpoint's ``sampling.pairs``) move toward the one pair left uncertain once stored votes settle the rest."""

from __future__ import annotations

import pytest
from arena_server import running_arena
from gradio_client import Client
from test_sampling_wiring import votes_between

pytestmark = [pytest.mark.slow]


def published_pairs(client: Client) -> dict[frozenset[str], float]:
    board = client.predict(api_name="/leaderboard")
    return {frozenset((p["a"], p["b"])): p["weight"] for p in board["sampling"]["pairs"]}


@pytest.mark.parametrize("sampler", ["adaptive", "order"])
def test_published_weights_move_to_the_uncertain_pair(tmp_path, wire, sampler):
    folder = tmp_path / "votes" / "2026-01-05"
    with running_arena(tmp_path, sampler=sampler, build=wire) as app:
        names = [m.name for m in app.services.pool.active]  # the offline pool: three baselines and a pipeline
        x, y, z, w = range(4)
        votes_between(names, [(i, j, 3) for i in range(4) for j in range(4) if i != j], folder, "votes-early.jsonl")
        # The app refits the sampler's state in the background at most every 30 s; refresh it now instead.
        app.services.sampler_feed.refresh()
        client = Client(app.url, verbose=False)
        before = published_pairs(client)
        assert len(before) == 6 and abs(sum(before.values()) - 1) < 1e-4

        # x beats everyone, y beats z and w, many times over; z and w stay split: only z–w is open.
        votes_between(names, [(x, j, 60) for j in (y, z, w)] + [(j, x, 6) for j in (y, z, w)]
                      + [(y, j, 60) for j in (z, w)] + [(j, y, 6) for j in (z, w)]
                      + [(z, w, 3), (w, z, 3)], folder, "votes-late.jsonl")
        app.services.sampler_feed.refresh()
        after = published_pairs(client)

    open_pair = frozenset((names[z], names[w]))
    assert after[open_pair] > 2 * before[open_pair]
    # A pipeline also meets its own base at a stated share on top of the weights (published in the same
    # list); among the pairs the sampler weighs, the open one now leads.
    meetings = {frozenset(pair) for pair in app.services.pipeline_pairs()}
    assert after[open_pair] == max(p for pair, p in after.items() if pair not in meetings)
    settled = frozenset((names[x], names[y]))  # x-w is the pipeline and its base in the offline pool
    assert after[settled] < before[settled]

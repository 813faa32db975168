"""One owner for "which votes count" (issue 34, item 1): the board service's vouched table. With
SCIARENA_COUNT_ANONYMOUS=0 the board, the adaptive sampler's state, the About tab's 30-day battle shares and
the Data section's statistics count the same votes, and the vouching (campaign detection, then the voter
checks) runs once per snapshot of the vote files, whichever of them asks first."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path

import pytest

from sciarena import wiring
from sciarena.board.service import BoardService
from sciarena.core.settings import Settings
from sciarena.science.quality.synthetic import planted_history, records_from_arrays
from sciarena.science.quality.vouch import vouch_mask
from sciarena.votes.store.local import LocalVoteStore
from sciarena.votes.voter import SIGNED_IN_PREFIX


def _records() -> list[dict]:
    """A planted history (flagged voters to leave out) in which every other voter signed in."""
    planted = planted_history(honest_voters=30, planted_per_kind=2, kinds=("contrarian",), seed=3)
    records = records_from_arrays(planted.votes, start="2026-11-01T00:00:00")
    signed = sorted({r["voter_id"] for r in records})[::2]
    for record in records:
        if record["voter_id"] in signed:
            record["voter_id"] = SIGNED_IN_PREFIX + record["voter_id"]
    return records


def _write(data_dir: Path, records: list[dict], name: str = "votes-1.jsonl") -> float:
    """Write a shard where the app's store keeps them; returns a moment just after its last vote."""
    folder = LocalVoteStore.folder_for(data_dir) / "shard"
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / name).open("a", encoding="utf-8") as handle:
        handle.writelines(json.dumps(r) + "\n" for r in records)
    last = max(r["timestamp"] for r in records).rstrip("Z")
    return datetime.fromisoformat(last).replace(tzinfo=timezone.utc).timestamp() + 1.0


@pytest.fixture
def signed_in_only(tmp_path, wire):
    settings = Settings(data_dir=tmp_path / "data", seed=0, count_anonymous=False, sampler="adaptive")
    now = _write(settings.data_dir, _records())
    return wire(settings), now


def test_the_board_sampler_shares_and_data_count_the_same_votes(signed_in_only):
    services, now = signed_in_only
    board = services.board
    snap = board.snapshot()
    table = board.table(snap)
    usable = len(_records())
    assert table.excluded is not None and table.excluded.anonymous_votes > 0  # the setting bites
    assert table.excluded.flagged_votes > 0  # and so do the voter checks
    counted = table.n_votes
    assert counted == usable - table.excluded.left_out
    assert all(table.voters[v].startswith(SIGNED_IN_PREFIX) for v in set(table.voter.tolist()))

    state = services.sampler_feed.refresh()  # the adaptive sampler's state, as the app computes it
    assert state is not None and state.version == counted and state.battles.sum() == 2 * counted

    report = services.sampling_report(now)  # the About tab's battle shares (each battle counts for both sides)
    assert sum(m["battles_30d"] for m in report["models"]) == 2 * counted

    stats = board.data(snap)  # the Data section's statistics
    assert stats.votes == counted and stats.left_out == table.excluded.left_out
    assert {m.model: m.battles for m in stats.models} == {r["model"]: r["battles"] for r in board.shown(snap).rows}


def test_vouching_runs_once_per_snapshot(signed_in_only, tmp_path):
    services, now = signed_in_only
    calls: list[int] = []

    def counting_vouch(table):  # the vouch the wiring gives the board, counted
        calls.append(table.n_votes)
        return vouch_mask(table, count_anonymous=False)

    board = BoardService(services.votes.files, vouch=counting_vouch, facts=dict, data_stats=wiring.data_stats,
                         data_min_battles=0, warm_style=False)
    services = replace(services, board=board)

    def read_everything() -> None:
        snap = board.snapshot()
        board.shown(snap)
        board.table(snap, texts=True)  # the style views' table
        board.api(bootstrap=1)  # the endpoint
        board.data(snap)
        wiring.board_state(services.votes, board)
        services.sampling_report(now)

    read_everything()
    read_everything()
    assert len(calls) == 1
    new = [{**r, "id": f"later-{k}"} for k, r in enumerate(_records()[:5])]
    later = _write(tmp_path / "data", new, name="votes-2.jsonl")  # new votes: a new snapshot
    read_everything()
    services.sampling_report(later)
    assert len(calls) == 2 and calls[1] > calls[0]

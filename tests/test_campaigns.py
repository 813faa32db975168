"""Campaign detection (science/quality/campaign.py): fresh voter ids that as a group lift a model are
found, named by ``quality``, left out of the default board and counted again with --include-flagged;
an omnipresent campaign (rivals sunk in battles without the target) is found on the rivals and only the
battles it picked are left out; a mixed one (honest except on the target) is found on the target; an
honest history reports none; SCIARENA_COUNT_ANONYMOUS=0 counts only signed-in votes."""

from __future__ import annotations

import dataclasses
import json
from datetime import datetime, timezone

import numpy as np
import pytest

from sciarena.board.table import VoteTable
from sciarena.cli import quality as quality_cli
from sciarena.cli.leaderboard import main as leaderboard_main
from sciarena.science.quality.campaign import detect_campaigns, new_votes
from sciarena.science.quality.rigging import TARGET_RANK, rigged_history
from sciarena.science.quality.synthetic import TABLE2_RATINGS
from sciarena.science.quality.vouch import vouched
from sciarena.votes.schema import OUTCOMES


def detect(table: VoteTable):
    return detect_campaigns(table.models, table.voters, table.voter, table.a, table.b, table.outcome,
                            table.timestamp)


def records(table: VoteTable) -> list[dict]:
    return [{"id": f"v{k:06d}", "modelA": table.models[a], "modelB": table.models[b], "vote": OUTCOMES[o],
             "voter_id": table.voters[v],
             "timestamp": datetime.fromtimestamp(t, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")}
            for k, (a, b, o, v, t) in enumerate(zip(table.a.tolist(), table.b.tolist(), table.outcome.tolist(),
                                                    table.voter.tolist(), table.timestamp.tolist()))]


@pytest.fixture(scope="module")
def rigged():
    return rigged_history("target", 300, 2, seed=0)


def test_six_hundred_target_votes_from_three_hundred_fresh_ids_are_one_campaign(rigged):
    found = detect(rigged.table)
    assert [(c.model, c.direction) for c in found.campaigns] == [(rigged.table.models[rigged.target], "lift")]
    campaign = found.campaigns[0]
    attack = rigged.kind == 2
    assert found.drop[attack].mean() >= 0.95  # nearly every rigged vote is left out
    assert campaign.voter_ids >= 300 and campaign.votes == int(found.drop.sum()) and campaign.p <= 0.05
    assert found.drop[~attack].sum() <= 0.01 * (~attack).sum()  # and few honest ones


@pytest.mark.parametrize("seed", [3, 4, 5, 6, 7, 8])
def test_an_honest_history_has_no_campaign(seed):
    table = rigged_history(None, seed=seed).table
    assert detect(table).campaigns == ()


def test_an_omnipresent_campaign_is_found_on_the_rivals_it_sinks_and_only_its_battles_are_left_out():
    rig = rigged_history("omnipresent", 300, 2, seed=1)
    table = rig.table
    found = detect(table)
    order = np.argsort(-np.asarray(TABLE2_RATINGS), kind="stable")  # as rigged_history ranks them
    above = {table.models[i] for i in order[TARGET_RANK - 6:TARGET_RANK - 1]}
    weakest = {table.models[i] for i in order[-8:]}
    sunk = {c.model for c in found.campaigns if c.direction == "sink"}
    assert sunk == above  # each of the five rivals just above the target
    assert all(c.model in weakest for c in found.campaigns if c.direction == "lift")  # the models it fed
    attack = rig.kind == 2
    assert found.drop[attack].mean() >= 0.95
    # only the battles the campaign picked (rivals against the weakest) go: honest newcomers keep ~all
    newcomers = rig.kind == 1
    assert found.drop[newcomers].mean() <= 0.02
    assert all(c.test == "likelihood" and c.p <= 0.05 and c.since.startswith("2026-02") for c in found.campaigns)


def test_a_mixed_campaign_honest_except_on_the_target_is_found_on_the_target():
    rig = rigged_history("mixed", 1000, 2, seed=0)  # 2,000 votes, ~105 of them on the target
    table = rig.table
    found = detect(table)
    target = table.models[rig.target]
    assert [(c.model, c.direction) for c in found.campaigns] == [(target, "lift")]
    on_target = (rig.kind == 2) & ((table.a == rig.target) | (table.b == rig.target))
    assert found.drop[on_target].mean() >= 0.9  # its votes on the target are left out
    assert found.drop[(rig.kind == 2) & ~on_target].sum() == 0  # its honest-looking votes count


def test_a_slow_campaign_is_taken_wherever_its_keen_ids_voted():
    """100 votes over four weeks from 50 ids that vote on the target only: found in its busiest days,
    then every fresh id as keen on the target loses its votes on it; of ~17,000 honest votes, a
    handful go (newcomers whose two votes both fell on the target)."""
    rig = rigged_history("slow", 50, 2, seed=0)
    found = detect(rig.table)
    assert [c.model for c in found.campaigns] == [rig.table.models[rig.target]]
    assert found.drop[rig.kind == 2].all() and found.drop[rig.kind != 2].sum() <= 5


def test_without_times_the_windows_are_counted_in_votes(rigged):
    table = rigged.table
    found = detect_campaigns(table.models, table.voters, table.voter, table.a, table.b, table.outcome)
    assert [c.model for c in found.campaigns] == [table.models[rigged.target]]
    assert found.drop[rigged.kind == 2].mean() >= 0.95 and found.campaigns[0].since == ""


def test_the_voter_checks_do_not_see_a_campaigns_votes():
    """An omnipresent campaign shifts the consensus honest voters are judged by; with its votes set aside
    the board flags exactly the honest voters the honest history flags."""
    honest = vouched(rigged_history(None, seed=1).table)
    attacked = vouched(rigged_history("omnipresent", 300, 2, seed=1).table)
    assert honest.excluded is not None and attacked.excluded is not None
    assert attacked.excluded.flagged_voters == honest.excluded.flagged_voters
    assert attacked.excluded.flagged_votes == honest.excluded.flagged_votes


def test_the_tiers_need_history_and_a_day_for_anonymous_ids_and_less_for_signed_in_ones():
    day = 86400.0
    voters = ("anon-x", "hf-y")
    voter = np.array([0] * 25 + [1] * 8)
    times = np.r_[np.linspace(0, 2 * day, 25), np.zeros(8)]
    new = new_votes(voters, voter, times)
    assert new[:20].all() and not new[20:25].any()  # 20 earlier votes and a day old
    assert new[25:30].all() and not new[30:].any()  # a signed-in voter: 5 earlier votes
    quick = new_votes(voters, voter, np.zeros(33))  # an anonymous id a script used 25 times in a second
    assert quick[:25].all()


@pytest.mark.slow  # writes and reads back 17,000 records through both CLIs: ~7 s
def test_quality_names_the_campaign_and_the_leaderboard_leaves_it_out_until_included(rigged, tmp_path, capsys):
    path = tmp_path / "votes.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records(rigged.table)))
    target = rigged.table.models[rigged.target]
    assert quality_cli.main(["--votes", str(path), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [c["model"] for c in report["campaigns"]] == [target]
    campaign = report["campaigns"][0]
    assert set(campaign) >= {"model", "direction", "votes", "voter_ids", "since", "until", "test", "p"}
    assert campaign["since"].startswith("2026-02") and campaign["voter_ids"] >= 300
    assert quality_cli.main(["--votes", str(path)]) == 0
    assert f"lift {target}" in capsys.readouterr().out

    def board(*extra: str) -> dict:
        assert leaderboard_main(["--votes", str(path), "--format", "json", "--bootstrap", "0",
                                 "--min-battles", "0", *extra]) == 0
        return json.loads(capsys.readouterr().out)

    default, counted = board(), board("--include-flagged")
    assert default["excluded"]["campaigns"] == 1
    assert default["excluded"]["campaign_votes"] == campaign["votes"]
    assert counted["excluded"]["include_flagged"] and counted["excluded"]["left_out"] == 0

    def elo(payload: dict) -> float:
        return next(r for r in payload["models"] if r["model"] == target)["rating"]

    assert elo(counted) - elo(default) > 80  # counting the campaign again restores its lift


def test_count_anonymous_off_counts_only_signed_in_votes(rigged):
    table = rigged.table
    voters = tuple(("hf-" + v[5:]) if k % 2 == 0 else v for k, v in enumerate(table.voters))
    signed = dataclasses.replace(table, voters=voters)
    board = vouched(signed, count_anonymous=False)
    anonymous = int((table.voter % 2 == 1).sum())
    assert board.excluded is not None and board.excluded.anonymous_votes == anonymous
    assert all(board.voters[v].startswith("hf-") for v in np.unique(board.voter))

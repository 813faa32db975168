"""The client address counts against the abuse limits alongside the voter id (votes/voter.py,
arena/limits/): a client that rotates sessions or browser keys is held to the limits of one that
keeps its key — in both stores, and through the real app on loopback with gradio_client."""

from __future__ import annotations

import pytest
from arena_server import running_arena
from gradio_client import Client
from test_limits import limiter, redis_url  # noqa: F401  (fixtures: both stores, a real redis-server)

from sciarena.arena.rules import ArenaSession, Ballot
from sciarena.core.errors import RateLimitedVisitor
from sciarena.core.settings import Settings
from sciarena.core.types import ModelSpec
from sciarena.votes.voter import Visitor, address_key, client_address, limit_keys

PAID = (ModelSpec("A", "x", "a"), ModelSpec("B", "x", "b"))
QUESTION = "How do transformers use attention to model long-range dependencies?"


def test_the_address_is_the_one_the_trusted_proxy_saw_not_what_the_client_wrote():
    # a client sends "X-Forwarded-For: 6.6.6.6"; the Space's proxy appends the address it saw
    assert client_address("6.6.6.6, 203.0.113.7", "10.0.0.2", hops=1) == "203.0.113.7"
    assert client_address(None, "127.0.0.1", hops=0) == "127.0.0.1"
    assert client_address("6.6.6.6", "127.0.0.1", hops=0) == "127.0.0.1"  # no proxy: the header is ignored
    assert client_address("203.0.113.7", "10.0.0.2", hops=5) == "203.0.113.7"  # fewer hops than set: the first
    assert client_address(None, None, hops=1) is None
    assert Settings.from_env({"SPACE_ID": "o/s", "SCIARENA_ID_SALT": "x"}).proxy_hops == 1
    assert Settings.from_env({}).proxy_hops == 0


def test_the_address_is_only_ever_hashed_with_the_salt():
    me = Visitor(session_hash="s1", address="203.0.113.7")
    key = address_key(me, "pepper")
    assert key and key.startswith("addr-") and "203.0.113.7" not in key
    assert key != address_key(me, "salt") and address_key(Visitor(session_hash="s1"), "pepper") is None
    assert limit_keys(me, "pepper")[1] == key and len(limit_keys(me, "pepper")) == 2


def test_rotating_keys_behind_one_address_meets_the_same_limits(limiter, clock):  # noqa: F811
    limits = limiter(battles_per_hour=2, votes_per_day=2)
    rotating = [limit_keys(Visitor(session_hash=f"s{k}", address="203.0.113.7"), "") for k in range(4)]
    for keys in rotating[:2]:
        limits.reserve_battle(keys, PAID)
    with pytest.raises(RateLimitedVisitor, match="battles in the last hour"):
        limits.reserve_battle(rotating[2], PAID)
    limits.reserve_battle(limit_keys(Visitor(session_hash="s9", address="198.51.100.1"), ""), PAID)  # elsewhere: free
    limits.reserve_vote(rotating[0])
    undo = limits.reserve_vote(rotating[1])
    with pytest.raises(RateLimitedVisitor, match="voted 2 times"):
        limits.reserve_vote(rotating[3])
    undo()  # a vote not stored is given back under every key
    limits.reserve_vote(rotating[3])
    clock.advance(3600.0 + 1)
    limits.reserve_battle(rotating[3], PAID)


def test_the_arena_counts_the_ballots_address(scripted, make_arena):
    scripted.add("a", "Alpha answer [1].")
    scripted.add("b", "Beta answer [1].")
    arena = make_arena(votes_per_day=1)
    sessions = [ArenaSession(battle=list(arena.start_battle(QUESTION))[-1].battle) for _ in range(2)]
    arena.vote(sessions[0], Ballot(choice="A", consent=True, session_hash="s1", address="203.0.113.7"))
    with pytest.raises(RateLimitedVisitor):
        arena.vote(sessions[1], Ballot(choice="A", consent=True, session_hash="s2", address="203.0.113.7"))
    texts = "".join(p.read_text() for p in arena.store.files())
    assert "203.0.113.7" not in texts and "addr-" not in texts  # never stored, not even hashed


def _play(url: str, rotate: bool, rounds: int = 5) -> tuple[int, int]:
    """(battles started, votes stored) of a client that keeps one session or opens a new one per battle."""
    battles = votes = 0
    client = Client(url, verbose=False)
    for k in range(rounds):
        if rotate:
            client = Client(url, verbose=False)  # a new session: a new voter id
        try:
            client.predict(f"{QUESTION} ({k})", api_name="/battle")
        except Exception as err:  # gradio_client raises the gr.Error message
            assert "battles in the last hour" in str(err)
            continue
        battles += 1
        try:
            client.predict("A", "", True, api_name="/vote")
            votes += 1
        except Exception as err:
            assert "voted 2 times" in str(err)
    return battles, votes


@pytest.mark.slow
def test_a_rotating_session_client_is_held_to_the_limits_of_one_that_keeps_its_key(tmp_path, wire):
    limits = {"limit_offline": True, "battles_per_hour": 3, "votes_per_day": 2}
    results = {}
    for rotate in (False, True):
        with running_arena(tmp_path / f"data-{rotate}", **limits, build=wire) as arena:
            results[rotate] = _play(arena.url, rotate)
            stored = list(arena.services.arena.store.records())
            assert len(stored) == results[rotate][1]
            assert len({r["voter_id"] for r in stored}) == (2 if rotate else 1)  # rotation did give new ids
    assert results[True] == results[False] == (3, 2)

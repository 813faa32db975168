"""Abuse limits (limits.py) and how the arena enforces them: over a limit the visitor gets one
sentence, no model is called and nothing is counted. The limiter's contract runs twice: in process
and against a real Redis server on loopback (limits_redis.py), as a second replica would use it."""

from __future__ import annotations

import shutil
import socket
import subprocess
import threading
import time
import uuid

import pytest

from sciarena.arena.limits import DAY, HOUR, Limiter, Limits
from sciarena.arena.limits.redis import UNREACHABLE, RedisLimiter
from sciarena.arena.rules import ArenaSession, Ballot
from sciarena.core.errors import ArenaBusy, RateLimitedVisitor
from sciarena.core.types import ModelSpec
from sciarena.votes.voter import Visitor, voter_id

PAID = (ModelSpec("A", "x", "a"), ModelSpec("B", "x", "b"))
OFFLINE = (ModelSpec("O1", "offline", "o1", offline=True), ModelSpec("O2", "offline", "o2", offline=True))
KEY = "0123456789abcdef0123"


@pytest.fixture(scope="module")
def redis_url():
    """A redis-server on a free loopback port, nothing saved to disk; stopped after the module."""
    pytest.importorskip("redis")
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed (Debian: apt-get install redis-server)")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                               "--appendonly", "no"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    import redis

    client = redis.Redis(port=port)
    for _ in range(200):  # up in a few ms; polled, not timed
        try:
            client.ping()
            break
        except redis.ConnectionError:
            time.sleep(0.02)
    yield f"redis://127.0.0.1:{port}/0"
    server.terminate()
    server.wait(timeout=10)


@pytest.fixture(params=["memory", "redis"])
def limiter(request, clock):
    """``limiter(**limits)``: a fresh limiter of each kind (every Redis one under its own key prefix)."""

    def make(*_: object, **limits: object):
        settings = Limits(**{"battles_per_hour": 0, "battles_per_day": 0, "votes_per_day": 0,
                             "max_paid_battles": 0, **limits})  # type: ignore[arg-type]
        if request.param == "memory":
            return Limiter(settings, clock)
        import redis

        client = redis.Redis.from_url(request.getfixturevalue("redis_url"))
        return RedisLimiter(settings, clock, client, prefix=f"test-{uuid.uuid4().hex}:")

    return make


def test_battles_per_hour_slide_with_the_clock(limiter, clock):
    lim = limiter(battles_per_hour=2)
    lim.reserve_battle("k", PAID).release()
    clock.advance(600)
    lim.reserve_battle("k", PAID).release()
    with pytest.raises(RateLimitedVisitor, match="2 battles in the last hour") as refused:
        lim.check_battle("k")
    assert refused.value.limit == "battles_per_hour" and refused.value.retry_after_s == HOUR - 600
    lim.reserve_battle("other", PAID)  # another key has its own count
    clock.advance(HOUR - 600)  # the first battle leaves the window
    lim.reserve_battle("k", PAID)
    with pytest.raises(RateLimitedVisitor):
        lim.reserve_battle("k", PAID)


def test_battles_and_votes_per_day(limiter, clock):
    lim = limiter(battles_per_day=3, votes_per_day=2)
    for _ in range(3):
        lim.reserve_battle("k", PAID)
        clock.advance(HOUR)
    with pytest.raises(RateLimitedVisitor, match="3 battles in the last 24 hours.*about 21 hours"):
        lim.reserve_battle("k", PAID)
    lim.reserve_vote("k")
    lim.reserve_vote("k")
    with pytest.raises(RateLimitedVisitor, match="voted 2 times") as refused:
        lim.reserve_vote("k")
    assert refused.value.limit == "votes_per_day"
    clock.advance(DAY)
    lim.reserve_vote("k")
    lim.reserve_battle("k", PAID)


def test_an_undone_vote_does_not_count(limiter, clock):
    lim = limiter(votes_per_day=1)
    undo = lim.reserve_vote("k")
    undo()
    lim.reserve_vote("k")
    with pytest.raises(RateLimitedVisitor):
        lim.reserve_vote("k")


def test_offline_battles_are_not_counted_unless_asked(limiter, clock):
    lim = limiter(battles_per_hour=1, max_paid_battles=1)
    for _ in range(3):
        lim.reserve_battle("k", OFFLINE)
    assert lim.running() == 0
    strict = limiter(battles_per_hour=1, limit_offline=True)
    strict.reserve_battle("k", OFFLINE)
    with pytest.raises(RateLimitedVisitor):
        strict.reserve_battle("k", OFFLINE)
    mixed = (PAID[0], OFFLINE[0])  # one paid contestant makes the battle paid
    lim.reserve_battle("k", mixed)
    with pytest.raises(RateLimitedVisitor):
        lim.reserve_battle("k", mixed)


def test_the_paid_battle_cap_is_global_and_freed_when_a_stream_ends(limiter, clock):
    lim = limiter(max_paid_battles=2)
    first = lim.reserve_battle("a", PAID)
    stream = lim.reserve_battle(None, PAID).wrap(iter([1, 2]))
    with pytest.raises(ArenaBusy, match="try again in a minute"):
        lim.reserve_battle("c", PAID)
    assert list(stream) == [1, 2] and lim.running() == 1  # the stream ended: its slot is free
    held = lim.reserve_battle("c", PAID)
    first.release()
    first.release()  # twice is once
    assert lim.running() == 1
    clock.advance(Limits().lease_s + 1)  # a slot nobody releases expires
    assert lim.running() == 0
    held.release()


def test_a_refused_battle_is_not_counted(limiter, clock):
    lim = limiter(battles_per_hour=1, max_paid_battles=1)
    first = lim.reserve_battle("a", PAID)
    with pytest.raises(ArenaBusy):
        lim.reserve_battle("b", PAID)
    first.release()
    lim.reserve_battle("b", PAID)  # "b"'s refused battle did not use its one battle of the hour


def test_limits_come_from_the_environment():
    from sciarena.core.settings import Settings

    settings = Settings.from_env({"SCIARENA_BATTLES_PER_HOUR": "5", "SCIARENA_VOTES_PER_DAY": "0",
                                  "SCIARENA_MAX_PAID_BATTLES": "3", "SCIARENA_LIMIT_OFFLINE": "yes",
                                  "SPACE_ID": "org/arena"})
    limits = Limits.from_settings(settings)
    assert (limits.battles_per_hour, limits.battles_per_day, limits.votes_per_day) == (5, 150, 0)
    assert limits.max_paid_battles == 3 and limits.limit_offline and settings.public
    assert limits.rules("vote") == ()  # 0 = no limit
    for env in ({"SCIARENA_BATTLES_PER_DAY": "-1"}, {"SCIARENA_LIMIT_OFFLINE": "maybe"},
                {"SCIARENA_VOTES_PER_DAY": "lots"}):
        with pytest.raises(ValueError, match=next(iter(env))):
            Settings.from_env(env)


def test_limits_hold_across_threads(limiter, clock):
    lim = limiter(battles_per_day=50, max_paid_battles=0)
    admitted, refused = [], []
    start = threading.Barrier(8)

    def client() -> None:
        start.wait()
        for _ in range(20):
            try:
                lim.reserve_battle("shared", PAID)
                admitted.append(1)
            except RateLimitedVisitor:
                refused.append(1)

    threads = [threading.Thread(target=client) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(admitted) == 50 and len(refused) == 110


def test_memory_follows_active_visitors(clock):
    lim = Limiter(Limits(votes_per_day=5), clock)
    for k in range(100):
        lim.reserve_vote(f"visitor-{k}")
    clock.advance(DAY + HOUR)
    lim.reserve_vote("late")
    assert lim.tracked() == 1


@pytest.mark.slow  # starts a subprocess or a loopback server
def test_two_replicas_sharing_redis_count_together(redis_url, clock):
    one, two = (RedisLimiter.from_url(redis_url, Limits(battles_per_hour=3, max_paid_battles=2), clock)
                for _ in range(2))
    one.reserve_battle("k", PAID).release()
    two.reserve_battle("k", PAID).release()
    held = one.reserve_battle("k", PAID)
    with pytest.raises(RateLimitedVisitor):
        two.reserve_battle("k", PAID)  # the third battle of the hour was started on the other replica
    other = two.reserve_battle("other", PAID)
    with pytest.raises(ArenaBusy):
        one.reserve_battle("third", PAID)  # two slots taken, one on each replica
    held.release()
    assert two.running() == 1
    other.release()


@pytest.mark.slow  # starts a subprocess or a loopback server
def test_two_arenas_configured_with_one_redis_share_the_limits(scripted, make_arena, redis_url, clock):
    first = scripted_arena(scripted, make_arena, redis_url=redis_url, battles_per_hour=1)
    second = make_arena(redis_url=redis_url, battles_per_hour=1)
    assert isinstance(first.limiter, RedisLimiter)
    me = Visitor(browser_key=KEY + "-redis")
    list(first.start_battle("How does attention work?", visitor=me))
    with pytest.raises(RateLimitedVisitor, match="1 battles in the last hour"):
        second.start_battle("How does attention work?", visitor=me)
    assert first.limiter.running() == 0  # the finished battle gave its slot back


@pytest.mark.slow  # starts a subprocess or a loopback server
def test_an_unreachable_redis_refuses_with_a_sentence(clock):
    pytest.importorskip("redis")
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    lim = RedisLimiter.from_url(f"redis://127.0.0.1:{port}/0", Limits(), clock)
    for attempt in (lambda: lim.check_battle("k"), lambda: lim.reserve_battle("k", PAID), lambda: lim.reserve_vote("k")):
        with pytest.raises(ArenaBusy, match=UNREACHABLE):
            attempt()
    assert lim.reserve_battle("k", OFFLINE).wrap(iter([1])) is not None  # offline battles need no count


# --- the arena -----------------------------------------------------------------------------------------
def scripted_arena(scripted, make_arena, **settings):
    scripted.add("a", "Alpha answer [1].")
    scripted.add("b", "Beta answer [1].")
    return make_arena(**settings)


def test_a_scripted_client_over_the_battle_limit_gets_the_message_and_no_battle(scripted, make_arena, clock):
    arena = scripted_arena(scripted, make_arena, battles_per_hour=2)
    me = Visitor(browser_key=KEY, session_hash="s1")
    for _ in range(2):
        list(arena.start_battle("How does attention work?", visitor=me))
        clock.advance(60)
    calls = dict(scripted.yielded)
    arena.retriever.error = AssertionError("retrieval must not run for a refused visitor")
    with pytest.raises(RateLimitedVisitor, match="^You have started 2 battles in the last hour"):
        arena.start_battle("How does attention work?", visitor=me)
    # a new session on the same browser is the same voter
    with pytest.raises(RateLimitedVisitor):
        arena.start_battle("How does attention work?", visitor=Visitor(browser_key=KEY, session_hash="s2"))
    assert scripted.yielded == calls  # no model was asked
    arena.retriever.error = None
    list(arena.start_battle("How does attention work?", visitor=Visitor(session_hash="someone-else")))


def test_the_global_cap_refuses_after_the_draw_before_any_model_runs(scripted, make_arena):
    arena = scripted_arena(scripted, make_arena, max_paid_battles=1)
    running = arena.start_battle("How does attention work?", visitor=Visitor(session_hash="s1"))
    next(running)  # generating
    with pytest.raises(ArenaBusy):
        arena.start_battle("How does attention work?", visitor=Visitor(session_hash="s2"))
    running.close()  # the visitor pressed New battle: the slot is free again
    assert arena.limiter.running() == 0
    list(arena.start_battle("How does attention work?", visitor=Visitor(session_hash="s2")))


def test_a_voter_over_the_vote_limit_is_refused_and_nothing_is_stored(scripted, make_arena):
    arena = scripted_arena(scripted, make_arena, votes_per_day=1)
    ballot = Ballot(choice="A", consent=True, session_hash="s1", browser_key=KEY)
    sessions = [ArenaSession(battle=list(arena.start_battle("How does attention work?"))[-1].battle)
                for _ in range(2)]
    arena.vote(sessions[0], ballot)
    with pytest.raises(RateLimitedVisitor, match="voted 1 times"):
        arena.vote(sessions[1], ballot)
    assert len(list(arena.store.records())) == 1


def test_no_raw_username_key_or_session_is_stored(scripted, make_arena):
    arena = scripted_arena(scripted, make_arena, id_salt="pepper")
    for ballot in (Ballot(choice="A", consent=True, username="ada-lovelace", browser_key=KEY, session_hash="sess-9"),
                   Ballot(choice="B", consent=True, browser_key=KEY, session_hash="sess-9"),
                   Ballot(choice="tie", consent=True, session_hash="sess-9")):
        session = ArenaSession(battle=list(arena.start_battle("How does attention work?"))[-1].battle)
        arena.vote(session, ballot)
    texts = [p.read_text() for p in arena.store.files()]
    assert texts and all(secret not in text for text in texts for secret in ("ada-lovelace", KEY, "sess-9"))
    ids = [r["voter_id"] for r in arena.store.records()]
    assert ids == [voter_id(Visitor(username="ada-lovelace"), "pepper"),
                   voter_id(Visitor(browser_key=KEY), "pepper"), voter_id(Visitor(session_hash="sess-9"), "pepper")]
    assert ids[0].startswith("hf-") and ids[1].startswith("anon-") and len(set(ids)) == 3


def test_a_public_arena_without_a_salt_refuses_to_start(scripted, make_arena):
    with pytest.raises(ValueError, match="SCIARENA_ID_SALT"):
        scripted_arena(scripted, make_arena, public=True)
    scripted_arena(scripted, make_arena, public=True, id_salt="secret")


def test_one_visitor_holds_at_most_a_fair_share_of_the_paid_slots(limiter, clock):
    lim = limiter(max_paid_battles=8, max_paid_per_visitor=2)
    mine = [lim.reserve_battle("greedy", PAID) for _ in range(2)]
    clock.advance(30)
    with pytest.raises(ArenaBusy, match="You already have 2 battles answering at once") as refused:
        lim.reserve_battle("greedy", PAID)
    assert refused.value.retry_after_s == pytest.approx(Limits().lease_s - 30)  # its oldest lease ends
    others = [lim.reserve_battle(f"visitor-{i}", PAID) for i in range(6)]  # everyone else still gets in
    assert lim.running() == 8
    with pytest.raises(ArenaBusy, match="try again in a minute") as full:
        lim.reserve_battle("visitor-9", PAID)
    assert 0 < full.value.retry_after_s <= 60
    mine[0].release()  # a slot freed by its holder: the holder may take one again
    lim.reserve_battle("greedy", PAID)
    for lease in mine[1:] + others:
        lease.release()
    assert lim.running() == 1


def test_the_fair_share_can_be_switched_off_and_never_applies_to_nobody(limiter, clock):
    lim = limiter(max_paid_battles=4, max_paid_per_visitor=0)
    for _ in range(4):
        lim.reserve_battle("one", PAID)
    shared = limiter(max_paid_battles=4, max_paid_per_visitor=1)
    for _ in range(4):
        shared.reserve_battle(None, PAID)  # a caller that knows nobody is held to the cap only
    with pytest.raises(ArenaBusy, match="as many questions as it can afford"):
        shared.reserve_battle(None, PAID)


def test_the_fair_share_comes_from_the_environment():
    from sciarena.core.settings import Settings

    assert Limits.from_settings(Settings.from_env({"SCIARENA_MAX_PAID_PER_VISITOR": "3"})).max_paid_per_visitor == 3
    assert Limits.from_settings(Settings.from_env({})).max_paid_per_visitor == 2

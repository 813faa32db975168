"""Abuse limits (limits.py) and how the arena enforces them: over a limit the visitor gets one
sentence, no model is called and nothing is counted."""

from __future__ import annotations

import threading

import pytest

from sciarena.arena import ArenaSession, Ballot
from sciarena.errors import ArenaBusy, RateLimitedVisitor
from sciarena.limits import DAY, HOUR, Limiter, Limits
from sciarena.types import ModelSpec
from sciarena.votes.voter import Visitor, voter_id

PAID = (ModelSpec("A", "x", "a"), ModelSpec("B", "x", "b"))
OFFLINE = (ModelSpec("O1", "offline", "o1", offline=True), ModelSpec("O2", "offline", "o2", offline=True))
KEY = "0123456789abcdef0123"


def limiter(clock, **limits):
    return Limiter(Limits(**{"battles_per_hour": 0, "battles_per_day": 0, "votes_per_day": 0,
                             "max_paid_battles": 0, **limits}), clock)


def test_battles_per_hour_slide_with_the_clock(clock):
    lim = limiter(clock, battles_per_hour=2)
    lim.start_battle("k", PAID).release()
    clock.advance(600)
    lim.start_battle("k", PAID).release()
    with pytest.raises(RateLimitedVisitor, match="2 battles in the last hour") as refused:
        lim.check_battle("k")
    assert refused.value.limit == "battles_per_hour" and refused.value.retry_after_s == HOUR - 600
    lim.start_battle("other", PAID)  # another key has its own count
    clock.advance(HOUR - 600)  # the first battle leaves the window
    lim.start_battle("k", PAID)
    with pytest.raises(RateLimitedVisitor):
        lim.start_battle("k", PAID)


def test_battles_and_votes_per_day(clock):
    lim = limiter(clock, battles_per_day=3, votes_per_day=2)
    for _ in range(3):
        lim.start_battle("k", PAID)
        clock.advance(HOUR)
    with pytest.raises(RateLimitedVisitor, match="3 battles in the last 24 hours.*about 21 hours"):
        lim.start_battle("k", PAID)
    lim.reserve_vote("k")
    lim.reserve_vote("k")
    with pytest.raises(RateLimitedVisitor, match="voted 2 times") as refused:
        lim.reserve_vote("k")
    assert refused.value.limit == "votes_per_day"
    clock.advance(DAY)
    lim.reserve_vote("k")
    lim.start_battle("k", PAID)


def test_an_undone_vote_does_not_count(clock):
    lim = limiter(clock, votes_per_day=1)
    undo = lim.reserve_vote("k")
    undo()
    lim.reserve_vote("k")
    with pytest.raises(RateLimitedVisitor):
        lim.reserve_vote("k")


def test_offline_battles_are_not_counted_unless_asked(clock):
    lim = limiter(clock, battles_per_hour=1, max_paid_battles=1)
    for _ in range(3):
        lim.start_battle("k", OFFLINE)
    assert lim.running() == 0
    strict = limiter(clock, battles_per_hour=1, limit_offline=True)
    strict.start_battle("k", OFFLINE)
    with pytest.raises(RateLimitedVisitor):
        strict.start_battle("k", OFFLINE)
    mixed = (PAID[0], OFFLINE[0])  # one paid contestant makes the battle paid
    lim.start_battle("k", mixed)
    with pytest.raises(RateLimitedVisitor):
        lim.start_battle("k", mixed)


def test_the_paid_battle_cap_is_global_and_freed_when_a_stream_ends(clock):
    lim = limiter(clock, max_paid_battles=2)
    first = lim.start_battle("a", PAID)
    stream = lim.start_battle(None, PAID).wrap(iter([1, 2]))
    with pytest.raises(ArenaBusy, match="try again in a minute"):
        lim.start_battle("c", PAID)
    assert list(stream) == [1, 2] and lim.running() == 1  # the stream ended: its slot is free
    held = lim.start_battle("c", PAID)
    first.release()
    first.release()  # twice is once
    assert lim.running() == 1
    clock.advance(Limits().lease_s + 1)  # a slot nobody releases expires
    assert lim.running() == 0
    held.release()


def test_a_refused_battle_is_not_counted(clock):
    lim = limiter(clock, battles_per_hour=1, max_paid_battles=1)
    first = lim.start_battle("a", PAID)
    with pytest.raises(ArenaBusy):
        lim.start_battle("b", PAID)
    first.release()
    lim.start_battle("b", PAID)  # "b"'s refused battle did not use its one battle of the hour


def test_limits_come_from_the_environment():
    from sciarena.config import Settings

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


def test_limits_hold_across_threads(clock):
    lim = limiter(clock, battles_per_day=50, max_paid_battles=0)
    admitted, refused = [], []
    start = threading.Barrier(8)

    def client() -> None:
        start.wait()
        for _ in range(20):
            try:
                lim.start_battle("shared", PAID)
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
    lim = limiter(clock, votes_per_day=5)
    for k in range(100):
        lim.reserve_vote(f"visitor-{k}")
    clock.advance(DAY + HOUR)
    lim.reserve_vote("late")
    assert lim.tracked() == 1


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

"""The abuse limits of ``rules.py`` kept in Redis, so that every replica of the app counts together.

Same rules, same messages, same methods as :class:`memory.Limiter`; only the store
differs. Per ``(kind, key)`` (a voter id or an address; all of a visitor's keys are checked in one
script) one sorted set of events scored by time (members unique), trimmed
to the longest window and expiring with it; the paid battles running are one sorted set of lease
ids scored by expiry. Each check-and-count is one Lua script, so two replicas can never both take
the last allowed battle. Times come from the caller's clock (injectable in tests); replicas' clocks
only need to agree to within a second or so.

Redis down or unreachable: battles and votes are refused with a short message (fail closed — the
limits exist to bound a bill), never a traceback. The ``redis`` client is imported only here.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any, Callable, Iterable

from sciarena.arena.limits.rules import BATTLE, VOTE, Keys, Lease, Limits, busy, is_paid, key_list, over_share, refusal
from sciarena.core.errors import ArenaBusy

if TYPE_CHECKING:
    from sciarena.core.types import ModelSpec

UNREACHABLE = "The arena cannot check its usage limits right now; please try again in a minute."

# KEYS[1] running leases or "" (no slot needed); KEYS[2 .. 1+h] the running leases each key holds (its fair
# share); KEYS[2+h ..] events of (kind, key) for each key to count. ARGV: now, record (0/1), event member,
# longest window, n rules, (window, limit) × n, cap, lease expiry, lease member, share, h.
# Every key is checked before anything is counted (all or nothing).
# Returns {"ok"} | {"limit", rule index (1-based), retry seconds} | {"busy", retry} | {"share", retry}.
_ADMIT = """
local now = tonumber(ARGV[1])
local n = tonumber(ARGV[5])
local cap_at = 6 + 2 * n
local share = tonumber(ARGV[cap_at + 3])
local h = tonumber(ARGV[cap_at + 4])
for k = 2 + h, #KEYS do
  redis.call("ZREMRANGEBYSCORE", KEYS[k], "-inf", now - tonumber(ARGV[4]))
  for i = 1, n do
    local window, limit = tonumber(ARGV[4 + 2 * i]), tonumber(ARGV[5 + 2 * i])
    local count = redis.call("ZCOUNT", KEYS[k], "(" .. (now - window), "+inf")
    if count >= limit then
      local oldest = redis.call("ZRANGEBYSCORE", KEYS[k], "(" .. (now - window), "+inf", "WITHSCORES",
                                "LIMIT", count - limit, 1)
      return {"limit", i, tostring(tonumber(oldest[2]) + window - now)}
    end
  end
end
if KEYS[1] ~= "" then
  redis.call("ZREMRANGEBYSCORE", KEYS[1], "-inf", now)
  for k = 2, 1 + h do
    redis.call("ZREMRANGEBYSCORE", KEYS[k], "-inf", now)
    local held = redis.call("ZCARD", KEYS[k])
    if held >= share then
      local oldest = redis.call("ZRANGE", KEYS[k], held - share, held - share, "WITHSCORES")
      return {"share", tostring(tonumber(oldest[2]) - now)}
    end
  end
  if redis.call("ZCARD", KEYS[1]) >= tonumber(ARGV[cap_at]) then
    local first = redis.call("ZRANGE", KEYS[1], 0, 0, "WITHSCORES")
    return {"busy", tostring(tonumber(first[2]) - now)}
  end
  redis.call("ZADD", KEYS[1], tonumber(ARGV[cap_at + 1]), ARGV[cap_at + 2])
  for k = 2, 1 + h do
    redis.call("ZADD", KEYS[k], tonumber(ARGV[cap_at + 1]), ARGV[cap_at + 2])
    redis.call("EXPIRE", KEYS[k], math.ceil(tonumber(ARGV[cap_at + 1]) - now) + 60)  -- the caller's clock
  end
end
if ARGV[2] == "1" then
  for k = 2 + h, #KEYS do
    redis.call("ZADD", KEYS[k], now, ARGV[3])
    redis.call("EXPIRE", KEYS[k], math.ceil(tonumber(ARGV[4])) + 60)
  end
end
return {"ok"}
"""

class RedisLimiter:
    """:class:`memory.Limiter`'s contract over a Redis server shared by every replica."""

    def __init__(self, limits: Limits, clock: Callable[[], float], client: Any, *,
                 prefix: str = "sciarena:limits:") -> None:
        self.limits = limits
        self._clock = clock
        self._redis = client
        self._prefix = prefix
        self._admit = client.register_script(_ADMIT)

    @classmethod
    def from_url(cls, url: str, limits: Limits, clock: Callable[[], float]) -> "RedisLimiter":
        import redis
        from redis.backoff import NoBackoff
        from redis.retry import Retry

        # Short timeouts and one quick retry (the client's default backs off for seconds): a visitor
        # waits on this before anything else happens.
        return cls(limits, clock, redis.Redis.from_url(url, socket_timeout=2.0, socket_connect_timeout=2.0,
                                                       retry=Retry(NoBackoff(), 1)))

    def _events(self, kind: str, key: str) -> str:
        return f"{self._prefix}{kind}:{key}"

    @property
    def _running_key(self) -> str:
        return f"{self._prefix}running"

    def _held_key(self, key: str) -> str:
        """The paid slots one key holds (its fair share of ``_running_key``)."""
        return f"{self._prefix}running:{key}"

    def _run(self, kind: str, keys: tuple[str, ...], *, record: bool, slot: bool,
             holders: tuple[str, ...] = ()) -> tuple[str, str | None]:
        """Check (and with ``record`` count) one event of ``kind`` under every key; take a slot with
        ``slot``, within each of ``holders``' fair share. Returns (the event's member, the slot's member or None)."""
        import redis

        rules = self.limits.rules(kind)
        now = self._clock()
        member, lease = uuid.uuid4().hex, uuid.uuid4().hex if slot else ""
        share = self.limits.max_paid_per_visitor
        held = [self._held_key(k) for k in holders] if slot and share else []
        redis_keys = [self._running_key if slot else ""] + held + [self._events(kind, k) for k in keys]
        args: list[Any] = [now, int(record), member, max((w for _, w, _ in rules), default=0.0), len(rules)]
        for _, window, limit in rules:
            args += [window, limit]
        args += [self.limits.max_paid_battles, now + self.limits.lease_s, lease, share, len(held)]
        try:
            answer = self._admit(keys=redis_keys, args=args)
        except redis.RedisError:
            raise ArenaBusy(UNREACHABLE) from None
        verdict = answer[0].decode() if isinstance(answer[0], bytes) else answer[0]
        if verdict == "limit":
            name, _, limit = rules[int(answer[1]) - 1]
            raise refusal(name, limit, float(answer[2]))
        if verdict == "busy":
            raise busy(float(answer[1]))
        if verdict == "share":
            raise over_share(share, float(answer[1]))
        return member, lease or None

    def check_battle(self, key: Keys) -> None:
        keys = key_list(key)
        if keys:
            self._run(BATTLE, keys, record=False, slot=False)

    def reserve_battle(self, key: Keys, specs: Iterable["ModelSpec"]) -> Lease:
        keys, specs = key_list(key), tuple(specs)
        counted, paid = self.limits.counts_battle(specs), is_paid(specs)
        slot = paid and bool(self.limits.max_paid_battles)
        if not (counted and keys) and not slot:
            return Lease()
        _, lease = self._run(BATTLE, keys if counted else (), record=True, slot=slot, holders=keys)
        return Lease(None if lease is None else lambda: self._free(lease, keys))

    def _free(self, lease: str, holders: tuple[str, ...]) -> None:
        import redis

        try:
            pipe = self._redis.pipeline()
            pipe.zrem(self._running_key, lease)
            for key in holders:
                pipe.zrem(self._held_key(key), lease)
            pipe.execute()
        except redis.RedisError:
            pass  # the slot expires by itself (lease_s)

    def running(self) -> int:
        return int(self._redis.zcount(self._running_key, f"({self._clock()}", "+inf"))

    def reserve_vote(self, key: Keys) -> Callable[[], None]:
        import redis

        keys = key_list(key)
        member, _ = self._run(VOTE, keys, record=True, slot=False)
        events = [self._events(VOTE, k) for k in keys]

        def undo() -> None:
            try:
                for name in events:
                    self._redis.zrem(name, member)
            except redis.RedisError:
                pass  # the vote then counts: the safe side of a limit
        return undo

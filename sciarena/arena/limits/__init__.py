"""Abuse limits per hashed voter id, and the cap on paid battles running at once.

rules.py holds the limits, their messages and the lease of a paid slot; memory.py counts them in this
process, redis.py in a Redis server shared by replicas. ``open_limiter`` picks one from the settings.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from sciarena.arena.limits.memory import Limiter
from sciarena.arena.limits.redis import RedisLimiter
from sciarena.arena.limits.rules import DAY, HOUR, Lease, Limits, VisitorLimits, is_paid, refusal

if TYPE_CHECKING:
    from sciarena.core.settings import Settings

__all__ = ["DAY", "HOUR", "Lease", "Limiter", "Limits", "RedisLimiter", "VisitorLimits", "is_paid",
           "open_limiter", "refusal"]


def open_limiter(settings: "Settings", clock: Callable[[], float]) -> VisitorLimits:
    """The settings' limits, in Redis when SCIARENA_REDIS_URL names a server, else in this process."""
    limits = Limits.from_settings(settings)
    if settings.redis_url:
        return RedisLimiter.from_url(settings.redis_url, limits, clock)
    return Limiter(limits, clock)

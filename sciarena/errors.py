"""The exception tree the UI and CLI know how to show.

Every error a user can meet derives from SciArenaError and carries a short,
human-readable message (``str(err)``) that is safe to display: no stack
trace, no key, no IP address.
"""

from __future__ import annotations


class SciArenaError(Exception):
    """Base class: ``str(err)`` is a message fit for the user."""


class InvalidQuestion(SciArenaError):
    """The question is empty, too long or otherwise unusable."""


class FlaggedQuestion(InvalidQuestion):
    """Moderation flagged the question; nothing was sent to any model."""


class RetrievalError(SciArenaError):
    """Retrieval failed (backend down, rate-limited, malformed answer)."""


class ProviderError(SciArenaError):
    """A model provider failed; ``model`` names the contestant (hidden until the vote)."""

    def __init__(self, message: str, *, model: str = "", retryable: bool = False) -> None:
        super().__init__(message)
        self.model = model
        self.retryable = retryable


class NeedsKey(ProviderError):
    """A provider cannot run because an environment variable is missing."""


class ProviderTimeout(ProviderError):
    """The provider did not answer in time."""


class RateLimited(ProviderError):
    """The provider kept answering 429 after bounded retries."""


class MalformedOutput(ProviderError):
    """The provider's output could not be used (empty after cleaning, bad JSON…)."""


class VoteRejected(SciArenaError):
    """A vote that cannot be accepted; each rule of the arena (arena.py) has its own subclass."""


class InvalidChoice(VoteRejected):
    """The choice is not one of A, B, tie, bad."""


class NoBattle(VoteRejected):
    """There is no battle to vote on (none asked yet, or New battle was pressed)."""


class AlreadyVoted(VoteRejected):
    """This battle already has its one vote."""


class BattleNotFinished(VoteRejected):
    """At least one side is still answering."""


class BattleNotVotable(VoteRejected):
    """A side failed, so the two answers cannot be compared."""


class BattleExpired(VoteRejected):
    """The battle is older than the voting window (Settings.battle_ttl_s)."""


class ConsentMissing(VoteRejected):
    """The voter did not tick the consent box."""


class VoteStoreError(SciArenaError):
    """Votes could not be read or written."""


class LeaderboardInputError(SciArenaError):
    """A votes file the leaderboard cannot use (unreadable, empty, single model…)."""


class EvaluationInputError(SciArenaError):
    """SciArena-Eval: a benchmark or predictions file that cannot be used, or a judge that cannot run."""

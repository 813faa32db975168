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


class FollowUpRefused(InvalidQuestion):
    """A follow-up question cannot be asked now: no finished battle, already voted, or no follow-ups left."""


class FlaggedQuestion(InvalidQuestion):
    """Moderation flagged the question; nothing was sent to any model."""


class RetrievalError(SciArenaError):
    """Retrieval failed (backend down, rate-limited, malformed answer)."""


class ProviderError(SciArenaError):
    """A model call failed. Callers decide by subclass, never by wording.

    ``model`` is the catalogue name of the model called ("" when not known; hidden from voters
    until the vote); ``status`` is the HTTP status the server answered with, when it answered.
    """

    def __init__(self, message: str, *, model: str = "", status: int | None = None) -> None:
        super().__init__(message)
        self.model = model
        self.status = status


class NeedsKey(ProviderError):
    """A provider cannot run because an environment variable is missing; ``key_env`` names it."""

    def __init__(self, message: str, *, model: str = "", key_env: str = "") -> None:
        super().__init__(message, model=model)
        self.key_env = key_env


class ProviderTimeout(ProviderError):
    """The provider did not finish within ``timeout_s`` seconds (None when the budget is not known)."""

    def __init__(self, message: str, *, model: str = "", timeout_s: float | None = None) -> None:
        super().__init__(message, model=model)
        self.timeout_s = timeout_s


class RateLimited(ProviderError):
    """The provider kept answering 429 through all ``attempts``."""

    def __init__(self, message: str, *, model: str = "", attempts: int = 1) -> None:
        super().__init__(message, model=model, status=429)
        self.attempts = attempts


class MalformedOutput(ProviderError):
    """The provider's output could not be used (empty after cleaning, bad JSON…)."""


class Cancelled(ProviderError):
    """The caller stopped the call (a battle abandoned or over) before the model finished."""


class VoteRejected(SciArenaError):
    """A vote that cannot be accepted; each rule of the arena (arena/rules.py) has its own subclass."""


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


class NotYourBattle(VoteRejected):
    """The vote came from another browser (or account) than the one that started the battle."""


class BattleExpired(VoteRejected):
    """The battle is older than the voting window (Settings.battle_ttl_s)."""


class ConsentMissing(VoteRejected):
    """The voter did not tick the consent box."""


class VoteStoreError(SciArenaError):
    """Votes could not be read or written."""


class LeaderboardInputError(SciArenaError):
    """A votes file the leaderboard cannot use (unreadable, empty, single model…)."""


class BoardRequestError(LeaderboardInputError):
    """A caller of the public leaderboard endpoint asked for something out of bounds; the message says
    which parameter and what is accepted, in words an API client can act on."""


class EvaluationInputError(SciArenaError):
    """SciArena-Eval: a benchmark or predictions file that cannot be used, or a judge that cannot run."""


class RateLimitedVisitor(SciArenaError):
    """A visitor went over one of the arena's abuse limits (arena/limits/); nothing was started or charged.

    ``limit`` names the rule ("battles_per_hour", "battles_per_day", "votes_per_day");
    ``retry_after_s`` is when the oldest counted event leaves the window."""

    def __init__(self, message: str, *, limit: str = "", retry_after_s: float | None = None) -> None:
        super().__init__(message)
        self.limit = limit
        self.retry_after_s = retry_after_s


class ArenaBusy(SciArenaError):
    """The global cap on concurrent paid battles is reached, or this visitor holds their fair share of it;
    nothing was started or charged. ``retry_after_s`` is when a slot is expected to be free (None: unknown)."""

    def __init__(self, message: str, *, retry_after_s: float | None = None) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class StatsInputError(SciArenaError):
    """Votes the statistics cannot use (none usable, missing fields)."""


class ReviewRefused(SciArenaError):
    """A review action that cannot go ahead; the message says why."""


class LabellingInputError(SciArenaError):
    """Unusable input for a labelling command (votes, output file, model name); the message says which."""


class CatalogueError(SciArenaError):
    """A catalogue file that cannot be used; the message names the file and the entry."""


class SemanticScholarUnavailable(RetrievalError):
    """Semantic Scholar kept failing (rate limit, server error, timeout) after bounded retries."""


class AttributionInputError(SciArenaError):
    """Unusable input for ``label attribution``; the message says which."""


class CommandRefused(SciArenaError):
    """A command could not read its input or write its output (an OSError, said in the command's words)."""


class StreamCut(Exception):
    """The stream ended without a finish reason: the server or the network dropped it."""

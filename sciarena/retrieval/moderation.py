"""Check a question before anything is sent to Semantic Scholar or to a model.

With an OpenAI key the question goes to a moderation model: the catalogue's
``omni-moderation-latest`` entry (the model the paper uses), called through its provider
(providers.calls.moderate). Without one, a deliberately small local check catches only
input that is obviously abusive. It is conservative on purpose: researchers ask about
"killer T cells", "bomb calorimeters" and "suicide rates", so single alarming words are
never enough. It flags:

- abuse aimed at the reader ("fuck you", "kill yourself", "kys", "I will kill you");
- requests for step-by-step help to make weapons capable of mass harm (explosive devices,
  nerve agents, bioweapons), i.e. a "how to make/build/synthesize" phrase followed by
  such a weapon.

A flagged question raises errors.FlaggedQuestion with a polite message.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any, Protocol

from sciarena.core.errors import FlaggedQuestion, ProviderError
from sciarena.core.types import ModelSpec, Provider, Retrieval
from sciarena.providers.calls import moderate

log = logging.getLogger(__name__)

FLAGGED_MESSAGE = ("Your question was flagged by our content check, so it was not sent to any "
                   "search service or model. Please rephrase it as a research question.")
MODERATION_MODEL = "omni-moderation-latest"  # the catalogue entry "auto" and "openai" moderation use

_ABUSE = re.compile(
    r"\b(?:fuck\s+(?:you|off)|(?:go\s+)?kill\s+your\s*self|kys|"
    r"i(?:'m|\s+am)?\s+(?:will|going\s+to|gonna)\s+(?:kill|murder|hurt)\s+you)\b",
    re.IGNORECASE)
_HOW_TO_MAKE = (r"\b(?:how\s+(?:do\s+i|can\s+i|to|would\s+i)|steps?\s+to|instructions?\s+(?:for|to))\s+"
                r"(?:make|build|assemble|synthesi[sz]e|produce|cook|weaponi[sz]e)\s+")
_MASS_HARM = (r"(?:a\s+|an\s+)?(?:(?:pipe|nail|car|fertili[sz]er|dirty)\s+bomb|bomb|explosive\s+device|ied|"
              r"nerve\s+agents?|sarin|vx|ricin|anthrax|bio-?weapons?|chemical\s+weapons?)\b")
_WEAPON_HOWTO = re.compile(_HOW_TO_MAKE + _MASS_HARM, re.IGNORECASE)
_LOCAL_RULES = (("abuse", _ABUSE), ("weapons", _WEAPON_HOWTO))


@dataclass(frozen=True)
class ModerationResult:
    flagged: bool
    categories: tuple[str, ...] = ()
    source: str = "local"  # "local", or the catalogue name of the moderation model


class Moderator(Protocol):
    def check(self, text: str) -> ModerationResult:
        """The verdict on ``text``; raises nothing for a flagged text (see ``ensure_allowed``)."""


def local_check(text: str) -> ModerationResult:
    """The small built-in check described in the module docstring."""
    categories = tuple(name for name, rule in _LOCAL_RULES if rule.search(text))
    return ModerationResult(flagged=bool(categories), categories=categories, source="local")


class LocalModerator:
    """Moderation without any service: ``local_check``."""

    def check(self, text: str) -> ModerationResult:
        return local_check(text)


class ModelModerator:
    """A catalogue moderation model; the local check when the call fails."""

    def __init__(self, provider: Provider, spec: ModelSpec, *, timeout_s: float = 10.0) -> None:
        self.provider, self.spec, self.timeout_s = provider, spec, timeout_s

    def check(self, text: str) -> ModerationResult:
        try:
            flagged, categories = moderate(self.provider, self.spec, text, timeout_s=self.timeout_s)
        except ProviderError as err:
            # An outage of the moderation service should not close the arena; the local
            # check still stops the obvious cases.
            log.warning("moderation model failed (%s); using the local check", type(err).__name__)
            return local_check(text)
        return ModerationResult(flagged=flagged, categories=categories, source=self.spec.name)


def ensure_allowed(moderator: Moderator, text: str) -> None:
    """Raise FlaggedQuestion (a polite message) when ``moderator`` flags ``text``."""
    result = moderator.check(text)
    if result.flagged:
        log.info("question flagged by %s moderation: %s", result.source, ", ".join(result.categories))
        raise FlaggedQuestion(FLAGGED_MESSAGE)


class ModeratedRetriever:
    """Runs moderation first, so a flagged question reaches no search service and no model."""

    def __init__(self, inner: Any, moderator: Moderator) -> None:
        self.inner, self.moderator = inner, moderator

    def retrieve(self, question: str) -> Retrieval:
        ensure_allowed(self.moderator, question)
        return self.inner.retrieve(question)

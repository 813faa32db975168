"""From a ``--model`` name to a labeller: the offline rules, or a catalogue model behind its provider.

Model calls go through the Provider contract (keys, base URLs, timeouts and retries are the
provider's), so any catalogue model — or a local OpenAI-compatible server added by data — can
label. ``provider_complete`` turns a provider and a model into the plain ``complete(messages)``
callable the LLM labeller takes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from sciarena.errors import SciArenaError
from sciarena.labelling.labellers import OFFLINE_NAME, Complete, Labeller, LLMLabeller, Task, rule_labeller
from sciarena.types import ModelSpec, Provider

if TYPE_CHECKING:
    from sciarena.config import Settings


class LabellingInputError(SciArenaError):
    """Unusable input for a labelling command (votes, output file, model name); the message says which."""


def provider_complete(provider: Provider, spec: ModelSpec) -> Complete:
    """``complete(messages) -> reply text`` through the one model helper (reasoning is left out)."""
    from sciarena.providers.calls import complete

    return lambda messages: complete(provider, spec, messages).text


@dataclass(frozen=True)
class Resolved:
    labeller: Labeller
    spec: ModelSpec | None = None  # the catalogue entry, for prices; None for the offline rules


def resolve_labeller(name: str, task: Task, settings: "Settings | None" = None) -> Resolved:
    """OFFLINE_NAME, or the catalogue model with this display name (case-insensitive).

    Raises LabellingInputError for an unknown name, an offline answer generator (it writes
    answers, it cannot label) or a model that cannot run now (its key is not set).
    """
    name = name.strip()
    if name == OFFLINE_NAME:
        return Resolved(rule_labeller(task))
    if settings is None:
        raise LabellingInputError(f"model {name!r} needs settings (keys, catalogue)")
    from sciarena.providers.catalogue import CatalogueError
    from sciarena.providers.registry import open_models

    try:
        spec, provider = open_models(settings).pick(name, "--model")
    except CatalogueError:
        raise LabellingInputError(f"unknown model {name!r}: use {OFFLINE_NAME} (keyword rules) or a model's "
                                  "display name from the catalogue; add models with a SCIARENA_MODELS file") from None
    if spec.offline:
        raise LabellingInputError(f"{spec.name!r} is an offline answer generator, not a labeller; "
                                  f"use {OFFLINE_NAME} for the keyword rules")
    reason = provider.unavailable_reason(spec)
    if reason:
        raise LabellingInputError(f"model {spec.name!r} cannot run: {reason}")
    return Resolved(LLMLabeller(task=task, complete=provider_complete(provider, spec), name=spec.name), spec)

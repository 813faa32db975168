"""From a ``--model`` name to a labeller: the offline ones the app records, or a catalogue model behind its
provider.

Model calls go through the Provider contract (keys, base URLs, timeouts and retries are the
provider's), so any catalogue model — or a local OpenAI-compatible server added by data — can
label. ``provider_complete`` turns a provider and a model into the plain ``complete(messages)``
callable the LLM labeller takes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from sciarena.answer.label_reply import Complete
from sciarena.arena.labels.discipline_text import TextDisciplineLabeller
from sciarena.arena.labels.labellers import (
    CLASSIFIER_NAME,
    DISCIPLINE,
    OFFLINE_NAME,
    Labeller,
    LLMLabeller,
    Task,
    rule_labeller,
)
from sciarena.core.errors import CatalogueError, LabellingInputError, SciArenaError
from sciarena.core.types import ModelSpec, Provider
from sciarena.providers.calls import complete
from sciarena.providers.registry import open_models

if TYPE_CHECKING:
    from sciarena.core.settings import Settings


def provider_complete(provider: Provider, spec: ModelSpec) -> Complete:
    """``complete(messages) -> reply text`` through the one model helper (reasoning is left out)."""

    return lambda messages: complete(provider, spec, messages).text


def usable_model(name: str, settings: "Settings", *, option: str, role: str, job: str,
                 offline: tuple[str, str, str], error: type[SciArenaError]) -> tuple[ModelSpec, Provider]:
    """The catalogue model ``name`` and its provider, able to run now, for a labelling command.

    ``error`` (in the command's words: its ``option``, the ``role`` and ``job`` of the model, and
    ``offline`` = (the offline choice's name, short and long description)) for an unknown name,
    an offline answer generator (it writes answers, it cannot label) or a missing key."""

    offline_name, short, long = offline
    try:
        spec, provider = open_models(settings).pick(name, option)
    except CatalogueError:
        raise error(f"unknown {role} {name!r}: use {offline_name} ({short}) or a model's display name from the "
                    "catalogue; add models with a SCIARENA_MODELS file") from None
    if spec.offline:
        raise error(f"{spec.name!r} is an offline answer generator, not a {job}; use {offline_name} for {long}")
    reason = provider.unavailable_reason(spec)
    if reason:
        raise error(f"{role} {spec.name!r} cannot run: {reason}")
    return spec, provider


@dataclass(frozen=True)
class Resolved:
    labeller: Labeller
    spec: ModelSpec | None = None  # the catalogue entry, for prices; None for the offline rules


def offline_labeller(name: str, task: Task) -> Labeller | None:
    """The offline labeller ``name`` names for ``task`` — by the names the app records in a vote's
    ``question_type_labeller`` / ``subject_labeller`` too — or None when it names no offline labeller.

    OFFLINE_NAME (or ``offline:rules:<task>``) is the keyword rules; ``offline:classifier:discipline``
    the text classifier the arena labels disciplines with. Raises LabellingInputError for an offline
    name of the other task."""
    rules = rule_labeller(task)
    if name in (OFFLINE_NAME, rules.name):
        return rules
    if name == CLASSIFIER_NAME:
        if task is not DISCIPLINE:
            raise LabellingInputError(f"{CLASSIFIER_NAME} labels disciplines only; use {OFFLINE_NAME} for "
                                      f"{task.name} labels")
        return TextDisciplineLabeller()
    if name.startswith(f"{OFFLINE_NAME}:"):
        raise LabellingInputError(f"{name!r} is not a {task.name} labeller; use {OFFLINE_NAME} or {rules.name}")
    return None


def resolve_labeller(name: str, task: Task, settings: "Settings | None" = None) -> Resolved:
    """An offline labeller (``offline_labeller``), or the catalogue model with this display name
    (case-insensitive).

    Raises LabellingInputError for an unknown name, an offline answer generator (it writes
    answers, it cannot label) or a model that cannot run now (its key is not set).
    """
    name = name.strip()
    offline = offline_labeller(name, task)
    if offline is not None:
        return Resolved(offline)
    if settings is None:
        raise LabellingInputError(f"model {name!r} needs settings (keys, catalogue)")
    spec, provider = usable_model(name, settings, option="--model", role="model", job="labeller",
                                  offline=(OFFLINE_NAME, "keyword rules", "the keyword rules"),
                                  error=LabellingInputError)
    return Resolved(LLMLabeller(task=task, complete=provider_complete(provider, spec), name=spec.name), spec)

"""One reply from a catalogue model: how everything that is not a battle calls a language model.

The query rewriter, the answer editor, moderation and SciArena-Eval's judges
(and any later labeller) name a catalogue model, get its provider from
``registry.Models.pick`` and call it here. So they share the battle's
client, key lookup, deadline, retry policy and typed errors: a helper's call
fails exactly like a contestant's, as an errors.ProviderError subclass.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from sciarena.core.errors import ProviderError
from sciarena.core.types import GenerationRequest, ModelSpec, Provider, Usage


@dataclass(frozen=True)
class Completion:
    """A whole reply: its text (reasoning left out) and the tokens it cost, when reported."""

    text: str
    usage: Usage = field(default_factory=Usage)


def complete(provider: Provider, spec: ModelSpec, messages: Iterable[Mapping[str, str]], *,
             timeout_s: float | None = None, cancel: threading.Event | None = None,
             **params: Any) -> Completion:
    """Send ``messages`` to ``spec`` and wait for the whole reply.

    ``params`` override the catalogue entry's for this call (``temperature=0``,
    ``response_format=…``, ``max_tokens=…``); ``timeout_s`` bounds the call, retries included
    (default: the provider's). Raises errors.ProviderError subclasses.
    """
    if params:
        spec = replace(spec, params={**spec.params, **params})
    request = GenerationRequest(question="", references=(), messages=tuple(dict(m) for m in messages))
    options: dict[str, Any] = {"timeout_s": timeout_s} if timeout_s is not None else {}
    if cancel is not None:
        options["cancel"] = cancel
    pieces: list[str] = []
    usage = Usage()
    for delta in provider.stream(spec, request, **options):  # type: ignore[call-arg]
        pieces.append(delta.text)  # a reasoning model's thoughts arrive as delta.reasoning: not part of the reply
        usage = delta.usage or usage
    return Completion(text="".join(pieces), usage=usage)


def moderate(provider: Provider, spec: ModelSpec, text: str, *,
             timeout_s: float | None = None) -> tuple[bool, tuple[str, ...]]:
    """Whether the moderation model ``spec`` flags ``text``, and the categories it names.

    Moderation is not a chat completion, so only providers with a ``moderate`` method (the
    OpenAI-compatible one) can serve it; any other raises ProviderError.
    """
    method = getattr(provider, "moderate", None)
    if method is None:
        raise ProviderError(f"{spec.name!r} cannot moderate: its provider {spec.provider!r} has no moderation "
                            "endpoint.", model=spec.name)
    options = {"timeout_s": timeout_s} if timeout_s is not None else {}
    return method(spec, text, **options)

"""Providers from the catalogue, the battle pool they make possible, and models looked up by name.

Availability is decided cheaply at start (key present, package importable,
file on disk) and never by calling a server: a model whose provider later
fails is handled by the battle runner like any other failure.

``Models`` (the catalogue plus its providers) is what every helper that calls
a language model receives: the query rewriter, the answer editor, moderation,
SciArena-Eval's judges. Each names a catalogue model and calls it through its
provider (``providers.calls``), so keys, base URLs, timeouts and retries are
configured once, in the catalogue and Settings.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass

from sciarena.core.errors import CatalogueError
from sciarena.core.settings import Settings
from sciarena.core.types import ModelSpec, Provider
from sciarena.providers.catalogue import Catalogue, Endpoint, load_catalogue
from sciarena.providers.local_gguf import LocalGGUFProvider
from sciarena.providers.offline import OfflineProvider
from sciarena.providers.openai_compat import OpenAICompatibleProvider

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Pool:
    """Models that can battle now, and the others with the reason they cannot."""

    active: tuple[ModelSpec, ...]
    inactive: tuple[tuple[ModelSpec, str], ...] = ()
    deprecated: frozenset[str] = frozenset()  # retired contestants (in ``inactive``): hidden from the board


def build_providers(settings: Settings, catalogue: Catalogue) -> dict[str, Provider]:
    """One provider per endpoint, plus "offline" and "gguf"; keys come from ``settings.secret``."""
    providers: dict[str, Provider] = {
        "offline": OfflineProvider(),
        "gguf": LocalGGUFProvider(timeout=settings.generation_timeout_s),
    }
    for key, endpoint in catalogue.endpoints.items():
        providers[key] = endpoint_provider(endpoint, settings)
    return providers


def endpoint_provider(endpoint: Endpoint, settings: Settings) -> Provider:
    """The provider for one catalogue endpoint (its key looked up in the settings' secrets)."""
    api_key = settings.secret(endpoint.key_env) if endpoint.key_env else None
    return OpenAICompatibleProvider(name=endpoint.key, base_url=endpoint.base_url, api_key=api_key,
                                    key_env=endpoint.key_env, client=endpoint.client,
                                    timeout=settings.generation_timeout_s)


@dataclass(frozen=True)
class Models:
    """The catalogue and the providers that run its models."""

    catalogue: Catalogue
    providers: Mapping[str, Provider]

    def pick(self, name: str, purpose: str) -> tuple[ModelSpec, Provider]:
        """The catalogue model ``name`` (see ``Catalogue.find``) and its provider.

        CatalogueError, naming ``purpose`` (e.g. "SCIARENA_REWRITE_MODEL"), when no model has
        that name or no provider serves it; whether it can run now is ``unavailable_reason``'s to say.
        """
        spec = self.catalogue.find(name)
        if spec is None:
            raise CatalogueError(f"{purpose}: no model named {name!r} in the catalogue; use a display name "
                                 "or API model id from it, or add the model with a SCIARENA_MODELS file.")
        provider = self.providers.get(spec.provider)
        if provider is None:
            raise CatalogueError(f"{purpose}: no provider named {spec.provider!r} is configured for {spec.name!r}.")
        return spec, provider


def open_models(settings: Settings) -> Models:
    """The catalogue ``settings`` name and a provider for each of its endpoints."""
    catalogue = load_catalogue(settings)
    return Models(catalogue, build_providers(settings, catalogue))


DEPRECATED_REASON = "deprecated: battles no more; its past battles stay in the ratings"


def battle_pool(catalogue: Catalogue, providers: Mapping[str, Provider]) -> Pool:
    """Split the catalogue into models that can battle now and the rest, with reasons."""
    active: list[ModelSpec] = []
    inactive: list[tuple[ModelSpec, str]] = []
    for spec in catalogue.models:
        provider = providers.get(spec.provider)
        if spec.name in catalogue.deprecated:
            inactive.append((spec, DEPRECATED_REASON))
            continue
        if provider is None:
            reason: str | None = f"no provider named {spec.provider!r} is configured"
        else:
            try:
                reason = provider.unavailable_reason(spec)
            except Exception as err:  # a broken check must not keep the app from starting
                log.warning("availability check failed for %s: %s", spec.name, type(err).__name__)
                reason = f"availability check failed ({type(err).__name__})"
        if reason is None:
            active.append(spec)
        else:
            inactive.append((spec, reason))
    return Pool(active=tuple(active), inactive=tuple(inactive), deprecated=catalogue.deprecated)

"""The model catalogue: which models exist, how to reach them, what they cost.

The catalogue is data (``sciarena/data/models.json``), optionally extended by a
user file (``Settings.models_file``) in the same format. A user file merges
into the shipped one: models by display name (fields of an existing entry are
replaced one by one, ``params`` key by key; ``"enabled": false`` drops a
model), endpoints by key. A local vLLM / Ollama / llama.cpp server is thus one
endpoint plus one model entry, and no code. So is another vendor: an endpoint
names its ``client`` (``openai`` by default, or ``together``).

A *pipeline* contestant wraps another catalogue model: ``{"pipeline": "openscholar", "base": "GPT-4.1"}``
(name optional, default "OpenScholar-style (GPT-4.1)") runs the OpenScholar-style loop
(pipelines/openscholar.py) with every step calling the base model; it needs no provider or model id of
its own, and takes the base's prices, organisation and openness (an offline base makes it offline).

A model with ``"battles": false`` is a helper, never drawn into a battle: the
moderation model, or a model kept only for rewriting queries or judging. Every
model, contestant or helper, is called by name (``Catalogue.find``).

File format::

    {"defaults":  {"params": {"temperature": 1}},           # applied to every non-offline model
     "endpoints": {"mylocal": {"base_url": "http://127.0.0.1:8000/v1", "key_env": null}},
     "models":    [{"name": "My Model", "provider": "mylocal", "model_id": "my-model", ...}]}
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from sciarena.core.errors import CatalogueError
from sciarena.core.settings import DEFAULT_CATALOGUE, Settings
from sciarena.core.types import ModelSpec
from sciarena.providers.clients import CLIENT_KINDS

log = logging.getLogger(__name__)

# Provider keys that exist without an endpoint entry.
BUILTIN_PROVIDERS: tuple[str, ...] = ("offline", "gguf", "pipeline")
PIPELINES: Mapping[str, str] = {"openscholar": "OpenScholar-style"}  # pipeline → its display prefix
# A pipeline entry's params and their smallest allowed values (pipelines/openscholar.py reads them).
PIPELINE_PARAMS: Mapping[str, float] = {"max_calls": 1, "deadline_s": 1.0, "max_feedback": 0, "new_papers_per_item": 0}
CLIENTS: tuple[str, ...] = tuple(CLIENT_KINDS)
REASONING_KINDS: tuple[str, ...] = ("yes", "hybrid", "no")
# Settings only collects environment variables with these endings as secrets.
_SECRET_SUFFIXES = ("_API_KEY", "_TOKEN", "_KEY")
_ENV_NAME = re.compile(r"^[A-Z][A-Z0-9_]*$")

_TOP_KEYS = frozenset({"version", "about", "defaults", "endpoints", "models"})
_ENDPOINT_KEYS = frozenset({"base_url", "key_env", "client", "note"})
_MODEL_KEYS = frozenset({
    "name", "provider", "model_id", "organisation", "open_weights", "reasoning", "params",
    "price_input_per_m", "price_output_per_m", "offline", "enabled", "battles", "release", "licence", "note",
    "pipeline", "base", "deprecated",
})


@dataclass(frozen=True)
class Endpoint:
    """A model server: where it is, which environment variable holds its key, which client talks to it."""

    key: str
    base_url: str
    key_env: str | None = None  # None: the server needs no key (a local server)
    client: str = "openai"  # a key of clients.CLIENT_KINDS


@dataclass(frozen=True)
class Catalogue:
    """All known models and endpoints, after merging the shipped and user files."""

    models: tuple[ModelSpec, ...]  # contestants: what battles draw from
    endpoints: Mapping[str, Endpoint]
    sources: tuple[Path, ...] = ()
    helpers: tuple[ModelSpec, ...] = ()  # "battles": false: called by name, never in a battle
    # "deprecated": true: retired contestants. They battle no more, their votes stay in every fit, and the
    # board hides them unless asked to show them (an arena should not silently drop a model's history).
    deprecated: frozenset[str] = frozenset()

    def get(self, name: str) -> ModelSpec | None:
        """The contestant with this display name, if any."""
        return next((m for m in self.models if m.name == name), None)

    def find(self, name: str) -> ModelSpec | None:
        """Any model (contestant or helper) by display name, else by name ignoring case, else by
        its unique API model id: what a setting or a command line names a model by."""
        wanted = name.strip()
        everything = (*self.models, *self.helpers)
        for matches in (lambda m: m.name == wanted, lambda m: m.name.lower() == wanted.lower(),
                        lambda m: m.model_id == wanted):
            found = [m for m in everything if matches(m)]
            if len(found) == 1:
                return found[0]
        return None


def load_catalogue(settings: Settings) -> Catalogue:
    """The shipped catalogue merged with ``settings.models_file`` (if set)."""
    paths = [DEFAULT_CATALOGUE]
    if settings.models_file is not None:
        paths.append(Path(settings.models_file))
    return load_catalogue_files(paths)


def load_catalogue_files(paths: Iterable[Path]) -> Catalogue:
    """Merge catalogue files in order (later files override earlier ones) and validate the result."""
    sources = tuple(Path(p) for p in paths)
    if not sources:
        raise CatalogueError("No catalogue file given.")
    defaults: dict[str, Any] = {}
    endpoints: dict[str, dict[str, Any]] = {}
    entries: dict[str, dict[str, Any]] = {}
    origin: dict[str, Path] = {}
    for path in sources:
        doc = _read(path)
        default_section = _mapping(doc.get("defaults", {}), path, "defaults")
        defaults.update(_mapping(default_section.get("params", {}), path, "defaults.params"))
        for key, raw in _mapping(doc.get("endpoints", {}), path, "endpoints").items():
            endpoints[key] = {**endpoints.get(key, {}), **_mapping(raw, path, f"endpoint {key!r}")}
            origin[f"endpoint:{key}"] = path
        models = doc.get("models", [])
        if not isinstance(models, list):
            raise CatalogueError(f"{path}: 'models' must be a list.")
        seen: set[str] = set()
        for index, raw in enumerate(models):
            where = f"model #{index + 1}"
            entry = _mapping(raw, path, where)
            name = entry.get("name")
            if name is None and isinstance(entry.get("pipeline"), str) and isinstance(entry.get("base"), str):
                name = entry["name"] = pipeline_name(entry["pipeline"], entry["base"])
            if not isinstance(name, str) or not name.strip():
                raise CatalogueError(f"{path}: {where} needs a non-empty 'name'.")
            if name in seen:
                raise CatalogueError(f"{path}: model {name!r} appears twice in this file.")
            seen.add(name)
            unknown = set(entry) - _MODEL_KEYS
            if unknown:
                raise CatalogueError(f"{path}: model {name!r} has unknown field(s) {sorted(unknown)}; "
                                     f"allowed: {sorted(_MODEL_KEYS)}.")
            base = entries.get(name, {})
            params = {**_mapping(base.get("params", {}), path, f"model {name!r} params"),
                      **_mapping(entry.get("params", {}), path, f"model {name!r} params")}
            entries[name] = {**base, **entry, "params": params}
            origin[name] = path
    for name, entry in entries.items():
        if not isinstance(entry.get("enabled", True), bool):
            raise CatalogueError(f"{origin[name]}: model {name!r}: 'enabled' must be true or false.")
    checked_endpoints = {key: _endpoint(key, raw, origin[f"endpoint:{key}"]) for key, raw in endpoints.items()}
    contestants: list[ModelSpec] = []
    helpers: list[ModelSpec] = []
    built: dict[str, ModelSpec] = {}
    pipelines: list[tuple[str, dict[str, Any]]] = []
    for name, entry in entries.items():
        if entry.get("enabled", True) is False:
            continue
        if "pipeline" in entry:  # resolved once every model it could wrap is known
            pipelines.append((name, entry))
            continue
        built[name] = _model(entry, defaults, checked_endpoints, origin[name])
    disabled = {name for name, entry in entries.items() if entry.get("enabled", True) is False}
    for name, entry in pipelines:
        if entry.get("base") in disabled:  # switching a model off switches off what wraps it
            log.info("catalogue: %r is off because its base %r is disabled", name, entry["base"])
            continue
        built[name] = _pipeline(entry, built, origin[name])
    deprecated: set[str] = set()
    for name, entry in entries.items():
        if name in built:
            battles = _bool(entry, "battles", True, f"{origin[name]}: model {name!r}")
            (contestants if battles else helpers).append(built[name])
            if _bool(entry, "deprecated", False, f"{origin[name]}: model {name!r}"):
                deprecated.add(name)
    return Catalogue(models=tuple(contestants), endpoints=checked_endpoints, sources=sources,
                     helpers=tuple(helpers), deprecated=frozenset(deprecated))


def _read(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CatalogueError(f"Model catalogue file not found: {path}") from None
    except OSError as err:
        raise CatalogueError(f"Cannot read model catalogue file {path}: {err.strerror}") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as err:
        raise CatalogueError(f"{path}: not valid JSON (line {err.lineno}, column {err.colno}: {err.msg}).") from None
    if not isinstance(doc, dict):
        raise CatalogueError(f"{path}: the file must hold a JSON object with 'models' and/or 'endpoints'.")
    unknown = set(doc) - _TOP_KEYS
    if unknown:
        raise CatalogueError(f"{path}: unknown top-level field(s) {sorted(unknown)}; allowed: {sorted(_TOP_KEYS)}.")
    return doc


def _mapping(value: object, path: Path, where: str) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise CatalogueError(f"{path}: {where} must be a JSON object.")
    return dict(value)


def _endpoint(key: str, raw: dict[str, Any], path: Path) -> Endpoint:
    where = f"{path}: endpoint {key!r}"
    if key in BUILTIN_PROVIDERS:
        raise CatalogueError(f"{where}: the name is reserved for a built-in provider.")
    unknown = set(raw) - _ENDPOINT_KEYS
    if unknown:
        raise CatalogueError(f"{where} has unknown field(s) {sorted(unknown)}; allowed: {sorted(_ENDPOINT_KEYS)}.")
    base_url = raw.get("base_url")
    if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
        raise CatalogueError(f"{where} needs a 'base_url' starting with http:// or https://.")
    key_env = raw.get("key_env")
    if key_env is not None:
        if not isinstance(key_env, str) or not _ENV_NAME.match(key_env):
            raise CatalogueError(f"{where}: 'key_env' must be an environment variable name like MY_API_KEY, or null.")
        if not key_env.endswith(_SECRET_SUFFIXES):
            raise CatalogueError(f"{where}: 'key_env' {key_env!r} must end with one of {', '.join(_SECRET_SUFFIXES)} "
                                 "(only such variables are read as secrets).")
    client = raw.get("client", "openai")
    if client not in CLIENTS:
        raise CatalogueError(f"{where}: 'client' must be one of {', '.join(CLIENTS)}.")
    return Endpoint(key=key, base_url=base_url, key_env=key_env, client=client)


def _model(entry: dict[str, Any], defaults: Mapping[str, Any], endpoints: Mapping[str, Endpoint],
           path: Path) -> ModelSpec:
    name = entry["name"]
    where = f"{path}: model {name!r}"
    for field_name in ("provider", "model_id"):
        value = entry.get(field_name)
        if not isinstance(value, str) or not value.strip():
            raise CatalogueError(f"{where} needs a non-empty {field_name!r}.")
    provider = entry["provider"]
    if provider not in endpoints and provider not in BUILTIN_PROVIDERS:
        known = sorted({*endpoints, *BUILTIN_PROVIDERS})
        raise CatalogueError(f"{where} uses provider {provider!r}, which is not defined; "
                             f"add it under 'endpoints' or use one of {known}.")
    if provider == "pipeline":
        raise CatalogueError(f"{where}: a pipeline contestant is written {{\"pipeline\": ..., \"base\": ...}}, "
                             "not with provider 'pipeline'.")
    offline = _bool(entry, "offline", False, where)
    if offline != (provider == "offline"):
        raise CatalogueError(f"{where}: 'offline': true goes with provider 'offline' and only with it.")
    reasoning = entry.get("reasoning", "no")
    if reasoning not in REASONING_KINDS:
        raise CatalogueError(f"{where}: 'reasoning' must be one of {', '.join(REASONING_KINDS)}.")
    organisation = entry.get("organisation", "")
    if not isinstance(organisation, str):
        raise CatalogueError(f"{where}: 'organisation' must be a string.")
    if "extra_body" in entry.get("params", {}) and not isinstance(entry["params"]["extra_body"], dict):
        raise CatalogueError(f"{where}: 'params.extra_body' must be a JSON object.")
    merged = {**(defaults if not offline else {}), **entry.get("params", {})}
    params = {k: v for k, v in merged.items() if v is not None}  # null in a user file removes a default
    return ModelSpec(
        name=name,
        provider=provider,
        model_id=entry["model_id"],
        organisation=organisation,
        open_weights=_bool(entry, "open_weights", False, where),
        reasoning=reasoning,
        params=params,
        price_input_per_m=_price(entry, "price_input_per_m", where),
        price_output_per_m=_price(entry, "price_output_per_m", where),
        offline=offline,
        release=_optional_text(entry, "release", where),
        licence=_optional_text(entry, "licence", where),
    )


def _pipeline(entry: dict[str, Any], models: Mapping[str, ModelSpec], path: Path) -> ModelSpec:
    """A pipeline contestant over the catalogue model its ``base`` names (by display name)."""
    where = f"{path}: model {entry['name']!r}"
    kind = entry.get("pipeline")
    if kind not in PIPELINES:
        raise CatalogueError(f"{where}: 'pipeline' must be one of {', '.join(PIPELINES)}.")
    for own in ("provider", "model_id", "offline", "price_input_per_m", "price_output_per_m"):
        if own in entry:
            raise CatalogueError(f"{where}: a pipeline takes {own!r} from its base model; remove it.")
    base_name = entry.get("base")
    if not isinstance(base_name, str) or not base_name.strip():
        raise CatalogueError(f"{where} needs a 'base': the display name of the model its steps call.")
    base = models.get(base_name)
    if base is None:
        raise CatalogueError(f"{where}: its base {base_name!r} is not an enabled model of the catalogue "
                             "(a pipeline cannot wrap another pipeline).")
    params = entry.get("params", {})
    unknown = set(params) - set(PIPELINE_PARAMS)
    if unknown:
        raise CatalogueError(f"{where}: unknown pipeline param(s) {sorted(unknown)}; allowed: {list(PIPELINE_PARAMS)}.")
    for key, value in params.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < PIPELINE_PARAMS[key]:
            raise CatalogueError(f"{where}: param {key!r} must be a number of at least {PIPELINE_PARAMS[key]}.")
    return replace(
        base,
        name=entry["name"],
        provider="pipeline",
        model_id=f"{kind}:{base.model_id}",  # unique, so the base is still found by its own API id
        pipeline=kind,
        base=base,
        params=dict(params),  # the pipeline's own knobs; each step sends the base model's params
        release=_optional_text(entry, "release", where),
        licence=base.licence,
    )


def pipeline_name(kind: str, base: str) -> str:
    """The default display name of a pipeline entry: "OpenScholar-style (GPT-4.1)", and
    "OpenScholar-style (Extractive-MMR, offline)" for "Extractive-MMR (offline)" (no nested brackets)."""
    inner = re.sub(r"\s*\((offline|local[^()]*)\)$", r", \1", base.strip())
    return f"{PIPELINES.get(kind, kind)} ({inner})"


def _optional_text(entry: Mapping[str, Any], key: str, where: str) -> str | None:
    value = entry.get(key)
    if value is not None and (not isinstance(value, str) or not value.strip()):
        raise CatalogueError(f"{where}: {key!r} must be a non-empty string or null.")
    return value


def _bool(entry: Mapping[str, Any], key: str, default: bool, where: str) -> bool:
    value = entry.get(key, default)
    if not isinstance(value, bool):
        raise CatalogueError(f"{where}: {key!r} must be true or false.")
    return value


def _price(entry: Mapping[str, Any], key: str, where: str) -> float | None:
    value = entry.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise CatalogueError(f"{where}: {key!r} must be a non-negative number (USD per million tokens) or null.")
    return float(value)

"""Build the retriever the settings ask for: local or Semantic Scholar, moderated, with a fallback.

    SCIARENA_RETRIEVER           local | local:DIR | semantic_scholar
    SCIARENA_RETRIEVER_FALLBACK  "" | local | local:DIR  (answers when Semantic Scholar fails)
    SCIARENA_REWRITE_MODEL       a catalogue model that writes the search queries (Semantic Scholar only)
    SCIARENA_MODERATION          auto | openai | local | off
    SCIARENA_PASSAGES_PER_PAPER  at most this many passages of one paper among the top_k (unset: no cap)
    SCIARENA_MIN_CITATIONS       Semantic Scholar searches only papers cited at least this often

The rewriter and the moderation model are catalogue models, called through the same
providers as the contestants (``registry.Models``). Everything slow (loading an index,
the dense reranker's model) happens here, at start.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol

from sciarena.core.errors import RetrievalError
from sciarena.core.settings import Settings
from sciarena.core.types import Retrieval
from sciarena.providers.registry import Models, open_models
from sciarena.retrieval.local import open_local_retriever
from sciarena.retrieval.moderation import (
    MODERATION_MODEL,
    LocalModerator,
    ModelModerator,
    ModeratedRetriever,
    Moderator,
)
from sciarena.retrieval.semantic_scholar import DEFAULT_BASE_URL

log = logging.getLogger(__name__)

FALLBACK_NOTE = "Semantic Scholar was unavailable; answered from the local datastore."
MODERATION_MODES = ("auto", "openai", "local", "off")


class Retriever(Protocol):
    def retrieve(self, question: str) -> Retrieval: ...


@dataclass(frozen=True)
class RetrievalOptions:
    """What retrieval needs from Settings (see ``from_settings`` for where each comes from)."""

    retriever: str = "local"
    fallback: str = ""
    top_k: int = 30
    per_paper: int | None = None  # at most this many passages of one paper among the top_k; None = no cap
    min_citations: int = 0  # minCitationCount for Semantic Scholar; the local datastore has no counts
    index_cache_dir: Path | None = None
    s2_base_url: str = DEFAULT_BASE_URL
    s2_api_key: str | None = field(default=None, repr=False)
    s2_timeout_s: float = 10.0
    s2_max_attempts: int = 3
    s2_max_rps: float | None = None  # None: 1 request/s with a key (the usual key limit), unlimited without
    rewrite_model: str = ""  # a catalogue model name; empty: no rewriting, the raw question is searched
    rewrite_timeout_s: float = 20.0
    reranker: str = "auto"  # bm25 | dense | auto (dense when its optional extra is installed)
    moderation: str = "auto"  # auto (the moderation model when its key is set, else local) | openai | local | off
    moderation_model: str = MODERATION_MODEL  # the catalogue entry "auto" and "openai" use

    @classmethod
    def from_settings(cls, settings: Settings) -> RetrievalOptions:
        """Options from Settings (the S2 key from ``settings.secret``; model keys are the providers')."""
        return cls(
            retriever=settings.retriever, fallback=settings.retriever_fallback,
            top_k=settings.top_k, per_paper=settings.passages_per_paper,
            min_citations=settings.min_citations, index_cache_dir=settings.index_cache_dir,
            s2_base_url=settings.s2_base_url, s2_api_key=settings.secret("S2_API_KEY"),
            s2_timeout_s=settings.s2_timeout_s, s2_max_rps=settings.s2_max_rps,
            rewrite_model=settings.rewrite_model, reranker=settings.reranker, moderation=settings.moderation,
        )


class FallbackRetriever:
    """Semantic Scholar first; the local datastore when it fails, with a note saying so."""

    def __init__(self, primary: Retriever, fallback: Retriever) -> None:
        self.primary, self.fallback = primary, fallback

    def retrieve(self, question: str) -> Retrieval:
        try:
            return self.primary.retrieve(question)
        except RetrievalError as err:
            log.warning("Semantic Scholar failed, using the local datastore: %s", err)
        result = self.fallback.retrieve(question)
        return replace(result, note=f"{FALLBACK_NOTE} {result.note}".strip())


def open_retriever(settings: Settings, models: Models | None = None, *,
                   options: RetrievalOptions | None = None) -> Retriever:
    """The retriever SCIARENA_RETRIEVER names, behind moderation and an optional fallback.

    ``models`` (the app's catalogue and providers) serve the rewriter and moderation; when
    not given they are built from ``settings``."""
    opts = options or RetrievalOptions.from_settings(settings)
    models = models or open_models(settings)
    spec = opts.retriever.strip()
    if spec == "semantic_scholar":
        retriever: Retriever = _semantic_scholar(opts, models)
        if opts.fallback.strip():
            retriever = FallbackRetriever(retriever, _local(opts.fallback, opts))
    elif spec == "local" or spec.startswith("local:"):
        retriever = _local(spec, opts)
    else:
        raise RetrievalError(f"Unknown SCIARENA_RETRIEVER {opts.retriever!r}; "
                             "use semantic_scholar, local or local:DIR.")
    moderator = open_moderator(opts, models)
    return ModeratedRetriever(retriever, moderator) if moderator is not None else retriever


def open_moderator(opts: RetrievalOptions, models: Models) -> Moderator | None:
    """The moderator the options ask for; None when moderation is off."""
    mode = (opts.moderation or "auto").strip().lower()
    if mode not in MODERATION_MODES:
        raise RetrievalError(f"Unknown moderation mode {opts.moderation!r}; use {', '.join(MODERATION_MODES)}.")
    if mode == "off":
        return None
    if mode == "local" or (mode == "auto" and models.catalogue.find(opts.moderation_model) is None):
        return LocalModerator()
    spec, provider = models.pick(opts.moderation_model, "SCIARENA_MODERATION")
    reason = provider.unavailable_reason(spec)
    if reason is None:
        return ModelModerator(provider, spec)
    if mode == "openai":
        raise RetrievalError(f"Moderation with {spec.name!r} cannot run ({reason}); "
                             "fix that or use SCIARENA_MODERATION=local.")
    return LocalModerator()


def _local(spec: str, opts: RetrievalOptions) -> Retriever:

    if opts.min_citations:
        # The bundled corpus and `index` files carry no citation counts: say so rather than
        # pretend the floor holds for these answers.
        log.warning("SCIARENA_MIN_CITATIONS=%d applies to Semantic Scholar only; the local datastore "
                    "(%s) has no citation counts, so its answers are not filtered by it",
                    opts.min_citations, spec.strip())
    return open_local_retriever(spec.strip(), cache_dir=opts.index_cache_dir, top_k=opts.top_k,
                                reranker=opts.reranker, per_paper=opts.per_paper)


def _semantic_scholar(opts: RetrievalOptions, models: Models) -> Retriever:
    # start-up time: the Semantic Scholar stack loads only when configured
    from sciarena.retrieval.pipeline import PipelineLimits, SemanticScholarRetriever
    from sciarena.retrieval.rerank import open_reranker
    from sciarena.retrieval.rewrite import QueryRewriter
    from sciarena.retrieval.semantic_scholar import SemanticScholarClient

    rate = opts.s2_max_rps if opts.s2_max_rps is not None else (1.0 if opts.s2_api_key else 0.0)
    client = SemanticScholarClient(opts.s2_base_url, opts.s2_api_key, timeout_s=opts.s2_timeout_s,
                                   max_attempts=opts.s2_max_attempts, max_rps=rate)
    rewriter = None
    if opts.rewrite_model:
        spec, provider = models.pick(opts.rewrite_model, "SCIARENA_REWRITE_MODEL")
        reason = provider.unavailable_reason(spec)
        if reason is None:
            rewriter = QueryRewriter(provider, spec, timeout_s=opts.rewrite_timeout_s)
        else:
            log.warning("SCIARENA_REWRITE_MODEL %r cannot run (%s); searching the raw question", spec.name, reason)
    return SemanticScholarRetriever(client, rewriter=rewriter, reranker=open_reranker(opts.reranker),
                                    limits=PipelineLimits(top_k=opts.top_k, per_paper=opts.per_paper,
                                                          min_citations=opts.min_citations))

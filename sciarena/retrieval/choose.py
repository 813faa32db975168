"""Build the retriever the settings ask for: local or Semantic Scholar, moderated, with a fallback.

    SCIARENA_RETRIEVER           local | local:DIR | semantic_scholar
    SCIARENA_RETRIEVER_FALLBACK  "" | local | local:DIR  (answers when Semantic Scholar fails)

Everything slow (loading an index, the dense reranker's model) happens here, at start.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from sciarena.config import Settings
from sciarena.errors import RetrievalError
from sciarena.retrieval.moderation import (
    OPENAI_MODERATION_MODEL,
    LocalModerator,
    ModeratedRetriever,
    Moderator,
    OpenAIModerator,
)
from sciarena.retrieval.semantic_scholar import DEFAULT_BASE_URL
from sciarena.types import Retrieval

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
    index_cache_dir: Path | None = None
    s2_base_url: str = DEFAULT_BASE_URL
    s2_api_key: str | None = field(default=None, repr=False)
    s2_timeout_s: float = 10.0
    s2_max_attempts: int = 3
    s2_max_rps: float | None = None  # None: 1 request/s with a key (the usual key limit), unlimited without
    rewrite_model: str = ""  # empty: no rewriting, the raw question is searched
    rewrite_base_url: str | None = None  # None: OpenAI's API
    rewrite_api_key: str | None = field(default=None, repr=False)
    rewrite_timeout_s: float = 20.0
    reranker: str = "bm25"  # bm25 | dense
    moderation: str = "auto"  # auto (OpenAI when a key is set, else local) | openai | local | off
    moderation_base_url: str | None = None
    moderation_api_key: str | None = field(default=None, repr=False)
    moderation_model: str = OPENAI_MODERATION_MODEL

    @classmethod
    def from_settings(cls, settings: Settings) -> RetrievalOptions:
        """Options from Settings; keys come from ``settings.secret`` (S2_API_KEY, the rewrite
        key named by rewrite_key_env, OPENAI_API_KEY for moderation)."""
        return cls(
            retriever=settings.retriever, fallback=settings.retriever_fallback,
            top_k=settings.top_k, index_cache_dir=settings.index_cache_dir,
            s2_base_url=settings.s2_base_url, s2_api_key=settings.secret("S2_API_KEY"),
            s2_timeout_s=settings.s2_timeout_s, s2_max_rps=settings.s2_max_rps,
            rewrite_model=settings.rewrite_model, rewrite_base_url=settings.rewrite_base_url,
            rewrite_api_key=settings.secret(settings.rewrite_key_env), reranker=settings.reranker,
            moderation=settings.moderation, moderation_base_url=settings.moderation_base_url,
            moderation_api_key=settings.secret("OPENAI_API_KEY"),
        )


@dataclass(frozen=True)
class LLMClients:
    """Ready-made ``openai.OpenAI``-like clients (tests, or a host sharing its own)."""

    rewrite: Any | None = None  # has .chat.completions.create
    moderation: Any | None = None  # has .moderations.create


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


def open_retriever(settings: Settings, services_for_llm: LLMClients | None = None, *,
                   options: RetrievalOptions | None = None) -> Retriever:
    """The retriever SCIARENA_RETRIEVER names, behind moderation and an optional fallback."""
    opts = options or RetrievalOptions.from_settings(settings)
    clients = services_for_llm or LLMClients()
    spec = opts.retriever.strip()
    if spec == "semantic_scholar":
        retriever: Retriever = _semantic_scholar(opts, clients)
        if opts.fallback.strip():
            retriever = FallbackRetriever(retriever, _local(opts.fallback, opts))
    elif spec == "local" or spec.startswith("local:"):
        retriever = _local(spec, opts)
    else:
        raise RetrievalError(f"Unknown SCIARENA_RETRIEVER {opts.retriever!r}; "
                             "use semantic_scholar, local or local:DIR.")
    moderator = open_moderator(opts, clients)
    return ModeratedRetriever(retriever, moderator) if moderator is not None else retriever


def open_moderator(opts: RetrievalOptions, clients: LLMClients = LLMClients()) -> Moderator | None:
    """The moderator the options ask for; None when moderation is off."""
    mode = (opts.moderation or "auto").strip().lower()
    if mode not in MODERATION_MODES:
        raise RetrievalError(f"Unknown moderation mode {opts.moderation!r}; use {', '.join(MODERATION_MODES)}.")
    if mode == "off":
        return None
    if mode == "local":
        return LocalModerator()
    if clients.moderation is not None:
        return OpenAIModerator(clients.moderation, opts.moderation_model)
    if opts.moderation_api_key:
        return OpenAIModerator.connect(api_key=opts.moderation_api_key, base_url=opts.moderation_base_url,
                                       model=opts.moderation_model)
    if mode == "openai":
        raise RetrievalError("OpenAI moderation needs OPENAI_API_KEY; set it or use SCIARENA_MODERATION=local.")
    return LocalModerator()


def _local(spec: str, opts: RetrievalOptions) -> Retriever:
    from sciarena.retrieval.local import open_local_retriever

    return open_local_retriever(spec.strip(), cache_dir=opts.index_cache_dir, top_k=opts.top_k)


def _semantic_scholar(opts: RetrievalOptions, clients: LLMClients) -> Retriever:
    from sciarena.retrieval.pipeline import PipelineLimits, SemanticScholarRetriever
    from sciarena.retrieval.rerank import open_reranker
    from sciarena.retrieval.rewrite import QueryRewriter
    from sciarena.retrieval.semantic_scholar import SemanticScholarClient

    rate = opts.s2_max_rps if opts.s2_max_rps is not None else (1.0 if opts.s2_api_key else 0.0)
    client = SemanticScholarClient(opts.s2_base_url, opts.s2_api_key, timeout_s=opts.s2_timeout_s,
                                   max_attempts=opts.s2_max_attempts, max_rps=rate)
    rewriter = None
    if opts.rewrite_model:
        if clients.rewrite is not None:
            rewriter = QueryRewriter(clients.rewrite, opts.rewrite_model)
        elif opts.rewrite_api_key or opts.rewrite_base_url:
            # A local OpenAI-compatible server may need no key; the client still wants one.
            rewriter = QueryRewriter.connect(opts.rewrite_model, base_url=opts.rewrite_base_url,
                                             api_key=opts.rewrite_api_key or "not-needed",
                                             timeout_s=opts.rewrite_timeout_s)
        else:
            log.warning("SCIARENA_REWRITE_MODEL is set but no key is; searching the raw question")
    return SemanticScholarRetriever(client, rewriter=rewriter, reranker=open_reranker(opts.reranker),
                                    limits=PipelineLimits(top_k=opts.top_k))

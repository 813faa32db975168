"""Wire the stages together once, at start: settings → services.

``build_services`` does all the slow work (index load/build, catalogue read)
so that no question pays for it; the UI receives the result and holds no
other state than each visitor's session.
"""

from __future__ import annotations

import logging
import random
import time
from dataclasses import dataclass, field
from typing import Iterator, Protocol

from sciarena.battle import BattleRunner, Progress, new_battle, sample_pair, validate_question
from sciarena.classify import classify_question, infer_subject
from sciarena.config import Settings
from sciarena.errors import RetrievalError, SciArenaError
from sciarena.types import GenerationRequest, ModelSpec, Retrieval
from sciarena.votes.store import LocalVoteStore

log = logging.getLogger(__name__)


class Retriever(Protocol):
    def retrieve(self, question: str) -> Retrieval: ...


@dataclass(frozen=True)
class PoolView:
    """Which models can battle now, and why the others cannot (shown in the About tab)."""

    active: tuple[ModelSpec, ...]
    inactive: tuple[tuple[ModelSpec, str], ...] = ()


@dataclass(frozen=True)
class Services:
    settings: Settings
    retriever: Retriever
    pool: PoolView
    runner: BattleRunner
    store: LocalVoteStore
    rng: random.Random = field(default_factory=random.Random, compare=False)
    started_in_s: float = 0.0

    def start_battle(self, question_text: str) -> tuple[GenerationRequest, Iterator[Progress]]:
        """Validate, retrieve once, draw a pair; return the request and the live battle stream."""
        from sciarena.prompting import build_messages

        question = validate_question(question_text, self.settings.max_question_chars)
        try:
            retrieval = self.retriever.retrieve(question)
        except SciArenaError:
            raise
        except Exception as err:  # a backend bug becomes a message, not a trace
            log.exception("retrieval failed")
            raise RetrievalError("Retrieval failed unexpectedly; please try again.") from err
        pair = sample_pair(self.pool.active, self.rng)
        battle = new_battle(question, retrieval, pair, subject=infer_subject(retrieval),
                            question_type=classify_question(question))
        request = GenerationRequest(question=question, references=retrieval.references,
                                    messages=build_messages(question, retrieval.references))
        return request, self.runner.run(battle, request)


def open_retriever(settings: Settings) -> Retriever:
    """The retriever named by SCIARENA_RETRIEVER."""
    from sciarena.retrieval.local import open_local_retriever

    if settings.retriever == "local" or settings.retriever.startswith("local:"):
        return open_local_retriever(settings.retriever, cache_dir=settings.index_cache_dir, top_k=settings.top_k)
    raise RetrievalError(f"Unknown SCIARENA_RETRIEVER {settings.retriever!r}; use local or local:DIR.")


def build_services(settings: Settings) -> Services:
    """Everything the app needs, built once."""
    from sciarena.providers.catalogue import load_catalogue
    from sciarena.providers.registry import battle_pool, build_providers

    start = time.perf_counter()
    retriever = open_retriever(settings)
    catalogue = load_catalogue(settings)
    providers = build_providers(settings, catalogue)
    pool = battle_pool(catalogue, providers)
    view = PoolView(active=tuple(pool.active), inactive=tuple(pool.inactive))
    rng = random.Random(settings.seed)
    return Services(
        settings=settings,
        retriever=retriever,
        pool=view,
        runner=BattleRunner(providers, timeout_s=settings.generation_timeout_s),
        store=LocalVoteStore(settings.data_dir),
        rng=rng,
        started_in_s=time.perf_counter() - start,
    )

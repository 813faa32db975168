"""Wire the stages together once, at start: settings → services.

``build_services`` does all the slow work (index load/build, catalogue read) so that no question
pays for it. The result holds the ``Arena`` (the battle and vote rules, arena.py), what the
leaderboard reads, and the background upkeep app.py starts; the UI holds no other state than each
visitor's session.
"""

from __future__ import annotations

import logging
import random
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from sciarena.arena.rules import Arena
from sciarena.arena.sampler_feed import SamplerFeed
from sciarena.arena.sampling import SamplerState
from sciarena.board import compute_leaderboard, load_votes
from sciarena.board.sampler_state import sampler_state
from sciarena.core.errors import LeaderboardInputError
from sciarena.core.settings import Settings
from sciarena.votes.read.warmer import CacheWarmer
from sciarena.providers.registry import Pool
from sciarena.arena.runner import BattleRunner
from sciarena.votes.store.counts import BattleCounts
from sciarena.votes.store.hub import HubSync
from sciarena.votes.read.records import VoteSource
from sciarena.votes.store.local import LocalVoteStore

if TYPE_CHECKING:
    from sciarena.answer.editor import LLMPostprocessor
    from sciarena.providers.registry import Models

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Services:
    arena: Arena  # start_battle / vote
    votes: VoteSource  # what the leaderboard reads: Hub copies + local shards, each shard once
    warmer: CacheWarmer  # keeps each shard's columnar copy current (local and Hub); started by app.py
    hub_sync: HubSync | None = None  # pushes local shards to the votes dataset; started by app.py
    review_sync: HubSync | None = None  # pushes <data_dir>/reviews to the dataset's reviews/ (Review tab on)
    sampler_feed: SamplerFeed | None = None  # the board state the pair sampler reads (None: it reads none)
    started_in_s: float = 0.0

    @property
    def settings(self) -> Settings:
        return self.arena.settings

    @property
    def pool(self) -> Pool:
        return self.arena.pool

    def start_background(self) -> None:
        """Start the background work a long-running app wants (not tests or the CLI)."""
        hub_refresh = self.votes.refresh_in_background()
        # Warm after the Hub copies are in, so the first round covers them too.
        self.warmer.start(after=hub_refresh)
        if self.hub_sync is not None:
            # Started last so its exit hook runs first (atexit is last-in, first-out): the final push
            # must not wait behind the cache's final refresh when the platform is stopping us.
            self.hub_sync.start()
        if self.review_sync is not None:
            self.review_sync.start()


def open_editor(settings: Settings, models: "Models") -> "LLMPostprocessor | None":
    """The optional LLM postprocessor: the catalogue model SCIARENA_POSTPROCESS_MODEL names, when it can
    run (else a warning); None means rule-based cleaning only."""
    if not settings.postprocess_model:
        return None
    from sciarena.answer.editor import LLMPostprocessor

    spec, provider = models.pick(settings.postprocess_model, "SCIARENA_POSTPROCESS_MODEL")
    reason = provider.unavailable_reason(spec)
    if reason is not None:
        log.warning("SCIARENA_POSTPROCESS_MODEL %r cannot run (%s); rule-based cleaning only", spec.name, reason)
        return None
    return LLMPostprocessor(provider, spec)


def board_state(votes: VoteSource, clock: Callable[[], float] = time.time) -> SamplerState | None:
    """The sampler's state from the votes that count: the plain board's point ratings (the sampler's
    uncertainty comes from the Fisher information at them, so no bootstrap is needed), pair counts."""
    files = votes.files(refresh=False)  # never waits on the Hub
    if not files:
        return None
    try:
        table = load_votes(files, strict=False)
        board = compute_leaderboard(table, bootstrap=0, by=(), rating="point")
    except LeaderboardInputError as err:
        log.info("no board for the sampler yet: %s", err)
        return None
    return sampler_state(table, board, clock())


def build_services(settings: Settings) -> Services:
    """Everything the app needs, built once."""
    from sciarena.arena.labels.at_vote import open_arena_labeller
    from sciarena.pipelines.provider import PipelineProvider
    from sciarena.providers.catalogue import load_catalogue
    from sciarena.providers.registry import Models, battle_pool, build_providers
    from sciarena.retrieval.choose import open_retriever
    from sciarena.votes.store.hub import open_hub_sync
    from sciarena.votes.store.reviews import open_review_sync
    from sciarena.votes.read.records import open_vote_source

    start = time.perf_counter()
    catalogue = load_catalogue(settings)
    providers = build_providers(settings, catalogue)
    models = Models(catalogue, providers)  # one provider set for contestants and helper models alike
    retriever = open_retriever(settings, models)
    # Pipeline contestants call their base models' providers and the arena's retriever, so theirs comes last.
    providers = {**providers, "pipeline": PipelineProvider(providers, retriever,
                                                           battle_timeout_s=settings.generation_timeout_s)}
    models = Models(catalogue, providers)
    pool = battle_pool(catalogue, providers)
    for key in sorted({(spec.base or spec).provider for spec in pool.active}):
        warm_up = getattr(providers[key], "warm_up", None)  # optional hook of the Provider contract
        if warm_up is not None:
            warm_up()
    votes_folder = LocalVoteStore.folder_for(settings.data_dir)
    # Created here but started by app.py: building services must not start threads or touch the network.
    hub_sync = open_hub_sync(settings, votes_folder)
    store = LocalVoteStore(settings.data_dir, external_lock=hub_sync.lock if hub_sync else None)
    votes = open_vote_source(settings, votes_folder)
    counts = BattleCounts(votes.files)
    # The adaptive sampler reads the board; the others need no state, so they get no feed (and no fits).
    feed = SamplerFeed(lambda: board_state(votes), lambda: sum(counts.snapshot().values())) \
        if settings.sampler == "adaptive" else None
    arena = Arena(
        settings=settings,
        retriever=retriever,
        pool=pool,
        runner=BattleRunner(providers, timeout_s=settings.generation_timeout_s,
                            editor=open_editor(settings, models)),
        store=store,
        counts=counts,
        rng=random.Random(settings.seed),
        labeller=open_arena_labeller(settings.label_model, models),
        sampler_state=feed.current if feed is not None else (lambda: None),
    )
    return Services(
        arena=arena,
        votes=votes,
        warmer=CacheWarmer(lambda: votes.files(refresh=False)),  # upkeep never waits on the Hub
        hub_sync=hub_sync,
        review_sync=open_review_sync(settings) if settings.reviewers else None,
        sampler_feed=feed,
        started_in_s=time.perf_counter() - start,
    )

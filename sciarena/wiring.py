"""Wire the stages together once, at start: settings → services.

``build_services`` does all the slow work (index load/build, catalogue read) so that no question
pays for it. The result holds the ``Arena`` (the battle and vote rules, arena/rules.py), what the
leaderboard reads, and the background upkeep app.py starts; the UI holds no other state than each
visitor's session.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

from sciarena.answer.editor import LLMPostprocessor
from sciarena.arena.labels.at_vote import open_arena_labeller
from sciarena.arena.rules import EXPIRED, Arena, ArenaSession, Ballot
from sciarena.arena.runner import BattleRunner
from sciarena.arena.sampler_feed import SamplerFeed
from sciarena.arena.sampling import BOARD_SAMPLERS, SamplerState
from sciarena.board import compute_leaderboard
from sciarena.board.board import ModelFacts
from sciarena.board.sampler_state import SHARE_WINDOW_DAYS, battle_shares, sampler_state
from sciarena.board.service import BoardService, Vouching
from sciarena.core.errors import LeaderboardInputError, SciArenaError
from sciarena.core.settings import Settings
from sciarena.core.types import ASKER_FIELDS, ModelSpec
from sciarena.pipelines.provider import PipelineProvider
from sciarena.providers.catalogue import load_catalogue
from sciarena.providers.registry import Models, Pool, battle_pool, build_providers
from sciarena.retrieval.bibliography import bibtex, papers_of, ris
from sciarena.retrieval.choose import open_retriever
from sciarena.science.quality.vouch import vouch_mask
from sciarena.science.review import AUDIT_LABELS, ReviewDesk, ReviewSession
from sciarena.science.stats.stats import (
    BOTH_BAD,
    DEFAULT_MIN_BATTLES,
    TOP_MODEL_LOST,
    DataStats,
    Tally,
    stats_from_columns,
)
from sciarena.votes.read import VoteSource, open_vote_source, read_columns, read_records
from sciarena.votes.read.battles import BattleArchive
from sciarena.votes.read.warmer import CacheWarmer
from sciarena.votes.schema import OUTCOME_NAMES
from sciarena.votes.store.counts import BattleCounts
from sciarena.votes.store.hub import HubSync, local_only_status, open_hub_sync
from sciarena.votes.store.local import LocalVoteStore
from sciarena.votes.store.reviews import LocalReviewStore, open_review_sync
from sciarena.votes.voter import CONSENT_LABEL, Visitor, client_address, voter_id

if TYPE_CHECKING:
    from sciarena.answer.editor import LLMPostprocessor
    from sciarena.providers.registry import Models

# What the UI uses of the stages below, named here so that ui/ imports this module, the board service and
# its presentation, answer helpers and core only (the import contracts in pyproject.toml check it).
__all__ = ["ASKER_FIELDS", "BattleArchive", "bibtex", "papers_of", "ris", "voter_id", "AUDIT_LABELS", "BOTH_BAD", "CONSENT_LABEL", "OUTCOME_NAMES", "TOP_MODEL_LOST", "DataStats", "Tally", "Arena", "ArenaSession", "Ballot", "EXPIRED", "ReviewDesk",
           "ReviewSession", "Services", "Visitor", "build_services", "client_address", "open_board"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Services:
    arena: Arena  # start_battle / vote
    votes: VoteSource  # what the leaderboard reads: Hub copies + local shards, each shard once
    board: BoardService  # the leaderboard over those votes: memo, warm-up, downloads, the endpoint
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

    def pipeline_pairs(self) -> list[tuple[str, str]]:
        """(pipeline, base) display names of the catalogue's pipeline contestants, active or not."""
        return [(s.name, s.base.name) for s in _every_spec(self.pool) if s.base is not None]

    def sampling_report(self, now: float) -> dict[str, Any]:
        """JSON-ready: the sampler, its floor, and per model the last 30 days' battles, share and current
        weight (About tab, ``/leaderboard`` JSON). Unequal, undisclosed sampling rates skew an arena
        (Singh et al. 2025), so the rates are published beside the ratings."""
        settings = self.settings
        shares: dict[str, tuple[int, float]] = {}
        snap = self.board.snapshot(self.votes.files(refresh=False))
        if snap is not None:
            try:
                table = self.board.table(snap)  # the board's votes: the shares count what it counts
                shares = {s.model: (s.battles, s.share) for s in battle_shares(table, now)}
            except SciArenaError as err:  # unreadable votes: the weights are still worth showing
                log.info("no battle shares: %s", err)
        pair_weights = self.arena.pair_weights()
        weights = {} if pair_weights is None else pair_weights.per_model()
        deprecated = self.pool.deprecated
        names = list(dict.fromkeys([*weights, *shares]))
        models = [{"model": name, "battles_30d": shares.get(name, (0, 0.0))[0],
                   "battle_share_30d": round(shares.get(name, (0, 0.0))[1], 4),
                   "sampling_weight": round(weights.get(name, 0.0), 4), "deprecated": name in deprecated}
                  for name in names]
        models.sort(key=lambda m: (-m["sampling_weight"], -m["battles_30d"], m["model"]))
        return {"sampler": settings.sampler,
                "floor": self.arena.pair_sampler.floor if settings.sampler in BOARD_SAMPLERS else None,
                "window_days": SHARE_WINDOW_DAYS, "models": models, "deprecated_models": sorted(deprecated),
                "pairs": [{"a": a, "b": b, "weight": round(p, 6)}
                          for a, b, p in (pair_weights.pairs() if pair_weights is not None else [])],
                "note": ("battle_share_30d and sampling_weight count each battle for both its models (they sum "
                         "to 2); pairs[].weight is each pair's chance of being the next battle (they sum to 1); both "
                         "include a drawn pipeline meeting its own base model half the time")}

    @staticmethod
    def local_only_status() -> str:
        """What the About tab says of vote storage when no votes dataset is configured."""
        return local_only_status()

    def review_desk(self) -> ReviewDesk:
        """The Review tab's desk: reviews stored beside the votes, battles from the app's vote files."""
        settings = self.settings
        sync = self.review_sync  # None when reviews stay local (no votes dataset configured)
        store = LocalReviewStore(settings.data_dir, external_lock=sync.lock if sync else None)
        return ReviewDesk(reviewers=settings.reviewers, salt=settings.id_salt, store=store,
                          votes=lambda: read_records(self.votes.files(refresh=False)),
                          repeat_days=settings.review_repeat_days, seed=settings.seed)

    def start_background(self) -> None:
        """Start the background work a long-running app wants (not tests or the CLI)."""
        # The offline discipline classifier fits in ~1.5 s (2.8 s CPU); fitted here, the first finished
        # battle's field proposal does not wait for it.
        threading.Thread(target=self.arena.labeller.warm_up, name="labeller-warm-up", daemon=True).start()
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

    spec, provider = models.pick(settings.postprocess_model, "SCIARENA_POSTPROCESS_MODEL")
    reason = provider.unavailable_reason(spec)
    if reason is not None:
        log.warning("SCIARENA_POSTPROCESS_MODEL %r cannot run (%s); rule-based cleaning only", spec.name, reason)
        return None
    return LLMPostprocessor(provider, spec)


def board_state(votes: VoteSource, board_service: BoardService,
                clock: Callable[[], float] = time.time) -> SamplerState | None:
    """The sampler's state from the votes that count (the board service's table): the plain board's point
    ratings (the sampler's uncertainty comes from the Fisher information at them, so no bootstrap is
    needed), pair counts."""
    snap = board_service.snapshot(votes.files(refresh=False))  # never waits on the Hub
    if snap is None:
        return None
    try:
        table = board_service.table(snap)
        board = compute_leaderboard(table, bootstrap=0, by=(), rating="point")
    except LeaderboardInputError as err:
        log.info("no board for the sampler yet: %s", err)
        return None
    return sampler_state(table, board, clock())


def _every_spec(pool: Pool) -> list[ModelSpec]:
    return list(pool.active) + [spec for spec, _ in pool.inactive]


def model_facts(pool: Pool) -> dict[str, ModelFacts]:
    """What the board shows of each catalogue model besides its rating."""
    return {s.name: ModelFacts(organisation=s.organisation, open_weights=None if s.offline else s.open_weights,
                               release=getattr(s, "release", None), licence=getattr(s, "licence", None),
                               price_input_per_m=s.price_input_per_m, price_output_per_m=s.price_output_per_m)
            for s in _every_spec(pool)}


def data_stats(files: Sequence[Path], ranked: Sequence[str], vouching: Vouching,
               board_models: int | None = None) -> DataStats:
    """The Leaderboard tab's Data section: the columnar copy with texts gives the `stats` command's
    numbers from its records, 0.03 s warm on 100,000 votes instead of 7.5 s for the records. It counts
    the board's votes: ``vouching`` is the board service's mask over them."""
    raw = read_columns(list(files), copy=True, strict=False, texts=True).columns
    return stats_from_columns(raw, ranked=list(ranked), board_vouching=vouching, board_models=board_models)


def open_board(votes: VoteSource, pool: Pool, *, clock: Callable[[], float] | None = None,
               warm_style: bool = True, count_anonymous: bool = True) -> BoardService:
    """The board service over ``votes``, vouched by the voter checks (the board never imports them);
    ``count_anonymous`` False (SCIARENA_COUNT_ANONYMOUS=0) counts signed-in voters' votes only."""
    return BoardService(votes.files, vouch=partial(vouch_mask, count_anonymous=count_anonymous),
                        facts=lambda: model_facts(pool), data_stats=data_stats,
                        data_min_battles=DEFAULT_MIN_BATTLES, clock=clock, warm_style=warm_style)


def build_services(settings: Settings) -> Services:
    """Everything the app needs, built once."""

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
    # The adaptive and order samplers read the board; the others need no state, so no feed (and no fits).
    board = open_board(votes, pool, count_anonymous=settings.count_anonymous)
    feed = SamplerFeed(lambda: board_state(votes, board), lambda: sum(counts.snapshot().values())) \
        if settings.sampler in BOARD_SAMPLERS else None
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
        board=board,
        warmer=CacheWarmer(lambda: votes.files(refresh=False)),  # upkeep never waits on the Hub
        hub_sync=hub_sync,
        review_sync=open_review_sync(settings) if settings.reviewers else None,
        sampler_feed=feed,
        started_in_s=time.perf_counter() - start,
    )

"""The app's live source of vote files: the Hub copies of the votes dataset's shards plus this machine's.

A shard has the same name locally and on the Hub, and the Hub copy is always a prefix of the local
file, so each shard is handed over once — the longer copy. The Hub is mirrored by
``sources.mirror_hub_votes`` (only new or changed files are downloaded).
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from sciarena.votes.read.sources import DATA_DIR_IN_REPO, first_line, mirror_hub_votes
from sciarena.votes.schema import VOTE_GLOB

if TYPE_CHECKING:
    from huggingface_hub import HfApi

    from sciarena.core.settings import Settings

log = logging.getLogger(__name__)


class VoteSource:
    """The vote files for the leaderboard: Hub shards (refreshed at most every ``refresh_s``) + local shards.

    The first ``files()`` call reads the Hub (after a restart on an ephemeral disk the Hub holds
    every vote); later calls start a refresh in the background when one is due and answer at
    once from the copies already downloaded, so a slow or failing Hub never delays a page load.
    A failed refresh is logged and kept in ``last_error``.
    """

    def __init__(self, local_root: Path, *, repo_id: str | None = None, api: "HfApi | None" = None,
                 cache_dir: Path | None = None, refresh_s: float = 300.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if repo_id and (api is None or cache_dir is None):
            raise ValueError("a Hub-backed VoteSource needs an api and a cache_dir")
        self.local_root = Path(local_root)
        self.repo_id = repo_id
        self.api = api
        self.cache_dir = cache_dir
        self.refresh_s = refresh_s
        self.last_error = ""
        self._clock = clock
        self._lock = threading.Lock()
        self._hub_files: dict[str, Path] = {}
        self._refreshed_at: float | None = None
        self._background: threading.Thread | None = None

    def refresh(self) -> bool:
        """Fetch new/changed Hub shards now; False (and ``last_error`` set) when the Hub could not be read."""
        if not self.repo_id or self.api is None or self.cache_dir is None:
            return True
        with self._lock:
            self._refreshed_at = self._clock()
            try:
                paths = mirror_hub_votes(self.repo_id, self.cache_dir, api=self.api)
            except Exception as err:  # an outage must not break the leaderboard: use what we have
                self.last_error = first_line(err)
                log.warning("could not refresh votes from %s: %s", self.repo_id, self.last_error)
                return False
            data = self.cache_dir / DATA_DIR_IN_REPO
            self._hub_files = {p.relative_to(data).as_posix(): p for p in paths if p.is_relative_to(data)}
            self.last_error = ""
            return True

    def refresh_in_background(self) -> threading.Thread:
        """Start a refresh unless one is running; returns its thread (join it to wait)."""
        with self._lock:
            if self._background is None or not self._background.is_alive():
                self._refreshed_at = self._clock()  # due again only refresh_s from now, whatever happens
                self._background = threading.Thread(target=self.refresh, name="vote-source", daemon=True)
                self._background.start()
            return self._background

    def files(self, *, refresh: bool = True) -> list[Path]:
        """Every shard once — the local copy when it is at least as long as the Hub's — in name order.

        ``refresh=False`` lists what is here without reading the Hub (background upkeep, exit)."""
        if self.repo_id and refresh:
            if self._refreshed_at is None:
                self.refresh()
            elif self._clock() - self._refreshed_at >= self.refresh_s:
                self.refresh_in_background()
        chosen = dict(self._hub_files)
        if self.local_root.is_dir():
            for path in self.local_root.glob(VOTE_GLOB):
                shard = path.relative_to(self.local_root).as_posix()
                hub_copy = chosen.get(shard)
                if hub_copy is None or not hub_copy.is_file() or path.stat().st_size >= hub_copy.stat().st_size:
                    chosen[shard] = path
        return [chosen[shard] for shard in sorted(chosen)]


def open_vote_source(settings: "Settings", local_root: Path, *, endpoint: str | None = None) -> VoteSource:
    """The app's VoteSource: local only, or local + the votes repo when SCIARENA_VOTES_REPO is set.

    A public repo is read even without HF_TOKEN. The Hub copies go to ``<data_dir>/.hub-votes/``:
    outside the pushed folder (never pushed back) and hidden, so a folder scan of ``<data_dir>``
    (``sciarena leaderboard --votes data``) does not read the same votes twice.
    """
    repo_id = settings.votes_repo
    if not repo_id:
        return VoteSource(local_root)
    from huggingface_hub import HfApi  # start-up time: the Hub client only for a Hub-backed arena

    cache = Path(settings.data_dir) / ".hub-votes" / repo_id.replace("/", "--")
    return VoteSource(local_root, repo_id=repo_id, api=HfApi(endpoint=endpoint, token=settings.secret("HF_TOKEN")),
                      cache_dir=cache, refresh_s=settings.push_every_minutes * 60.0)

"""Publish the local vote files to a Hugging Face dataset repo: on a schedule, at start and at shutdown.

The local folder ``<data_dir>/votes/<YYYY-MM-DD>/votes-<uuid>.jsonl`` is mirrored to
``data/<YYYY-MM-DD>/votes-<uuid>.jsonl`` in the dataset repo. Shard names carry a
per-process uuid, so processes and replicas never write the same path.

Why our own loop rather than ``huggingface_hub.CommitScheduler`` (2.4; its source read):
* its constructor calls ``create_repo`` and raises when the Hub is unreachable — a
  network blip at start would stop the app; here every Hub call happens in a push,
  and a failed push is only retried;
* failures are only logged and retried at the next tick (5 min); here they are
  retried with backoff and reported by :meth:`HubSync.status` for the About tab;
* it detects changes by mtime alone and forgets everything on restart (so each
  restart re-sends every file); here the Hub's own file sizes are read once at start
  and a file is pushed when its complete lines outgrow what the Hub holds;
* it uploads up to the size seen at scan time, which may end mid-line; here only
  whole lines are uploaded (cut at the last newline), with or without the lock;
* its thread sleeps uninterruptibly, so stopping waits for the next tick.

A Hub that accepts the connection and never answers must not hold anything: huggingface_hub's shared
HTTP client has no timeout by default (2.4: ``default_client_factory`` builds it with ``timeout=None``),
so ``use_hub_timeouts`` installs a client factory with connect/read timeouts; a push still running after
``stall_after_s`` is reported as failing in the About tab; ``close`` gives the final push a bounded time
(the platform kills a container a few seconds after SIGTERM) and leaves what it could not send on disk.

Exactly once: the Hub copy of a shard is always a prefix (in whole lines) of the
local file, and a re-push overwrites the same path, so a retried or repeated push
never adds a second copy of a line. The dataset card is written once, never over one already there; a card
there that does not declare the current schema's features (votes/features.py) is reported in the status line,
since ``load_dataset`` then fails on new files, or on old and new ones together. Restart safety: the first push of a new process
compares every local shard with the Hub and sends what an earlier process left.
"""

from __future__ import annotations

import atexit
import logging
import tempfile
import threading
import time
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from importlib import resources
from pathlib import Path
from string import Template
from typing import TYPE_CHECKING, Callable

from sciarena.votes.features import card_declares_current_features, card_metadata_yaml
from sciarena.votes.schema import SCHEMA_VERSION, VOTE_FIELDS, VOTE_GLOB

if TYPE_CHECKING:
    from huggingface_hub import HfApi

    from sciarena.core.settings import Settings

log = logging.getLogger(__name__)

HUB_CONNECT_TIMEOUT_S = 10.0
HUB_READ_TIMEOUT_S = 30.0  # a commit of a few vote files answers in well under this
CLOSE_TIMEOUT_S = 6.0  # the whole exit push, well under the 10 s a platform allows after SIGTERM
CARD_NAME = "README.md"


@dataclass(frozen=True)
class PushState:
    """What the last pushes did; ``status()`` renders it."""

    last_push: datetime | None = None  # last time the Hub was confirmed up to date
    failing_since: datetime | None = None
    failures: int = 0  # consecutive failed attempts
    last_error: str = ""
    pushing_since: datetime | None = None  # a push is running since then


class HubSync:
    """Keeps a dataset repo in step with the local vote folder. Never raises from the background.

    Give ``lock`` to the store (``LocalVoteStore(data_dir, external_lock=sync.lock)``) so a
    push never reads a line being written; ``start()`` begins the schedule, ``close()``
    makes a last push.
    """

    def __init__(self, folder: Path, repo_id: str, *, api: "HfApi", every_minutes: float = 5.0,
                 path_in_repo: str = "data", card: str | None = None, private: bool | None = None,
                 retry_base_s: float = 30.0, clock: Callable[[], datetime] | None = None,
                 stall_after_s: float = 45.0, glob: str = VOTE_GLOB) -> None:
        if every_minutes <= 0:
            raise ValueError("push interval must be positive")
        self.folder = Path(folder)
        self.glob = glob  # which files under ``folder`` are shards (review records use their own name)
        self.repo_id = repo_id
        self.api = api
        self.every_s = every_minutes * 60.0
        self.path_in_repo = path_in_repo.strip("/")
        self.retry_base_s = retry_base_s
        self.stall_after_s = stall_after_s
        self.lock = threading.Lock()
        self._card = card
        self._private = private
        self._clock = clock or (lambda: datetime.now(timezone.utc))
        self._push_lock = threading.Lock()  # one push at a time (thread, close, callers)
        self._state_lock = threading.Lock()
        self._state = PushState()
        self._pushed: dict[str, int] | None = None  # shard → bytes on the Hub; None until read from the Hub
        self._repo_ready = False
        self._card_needed: bool | None = None if card else False
        # The Hub's card exists but does not declare the current schema's features (checked when a card is given)
        self._card_stale = False
        self._wake = threading.Event()
        self._stopping = False
        self._thread: threading.Thread | None = None

    # --- lifecycle -------------------------------------------------------------------------------
    def start(self) -> "HubSync":
        """Push now (files left by earlier processes), then every ``every_minutes``; push again at exit."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="hub-sync", daemon=True)
            self._thread.start()
            atexit.register(self.close)
        return self

    def close(self, timeout_s: float = CLOSE_TIMEOUT_S) -> bool:
        """Stop the schedule and make a last push, all within ``timeout_s``; True when the Hub holds
        every complete vote. A push that does not finish in time is left behind (a daemon thread): the
        votes stay on disk and the next start sends them."""
        deadline = time.monotonic() + max(timeout_s, 0.0)
        self._stopping = True
        self._wake.set()
        if self._thread is not None:
            self._thread.join(max(deadline - time.monotonic(), 0.0))
            atexit.unregister(self.close)
        outcome: list[bool] = []
        last = threading.Thread(target=lambda: outcome.append(self.push_now(wait_s=deadline - time.monotonic())),
                                name="hub-sync-final", daemon=True)
        last.start()
        last.join(max(deadline - time.monotonic(), 0.0))
        ok = bool(outcome and outcome[0])
        if not ok:
            log.warning("%d vote(s) not yet on the Hub stay in %s; the next start pushes them",
                        self.pending_votes(), self.folder)
        return ok

    def request_push(self) -> None:
        """Ask the background thread to push soon (it is otherwise idle until the next tick)."""
        self._wake.set()

    def _run(self) -> None:
        delay = 0.0  # the first push at start picks up what an earlier process left
        while True:
            self._wake.wait(delay)
            self._wake.clear()
            if self._stopping:
                return
            ok = self.push_now()
            failures = self.state().failures
            delay = self.every_s if ok else min(self.every_s, self.retry_base_s * 2 ** (failures - 1))

    # --- pushing ---------------------------------------------------------------------------------
    def push_now(self, wait_s: float | None = None) -> bool:
        """Push every shard that grew since the last push; record the outcome; never raises.

        ``wait_s`` bounds the wait for a push already running (at exit, a stalled
        connection must not hold the process forever); None waits as long as it takes.
        """
        if not self._push_lock.acquire(timeout=-1 if wait_s is None else max(wait_s, 0.0)):
            log.warning("a push to %s is still running; not starting another", self.repo_id)
            return False
        with self._state_lock:
            self._state = replace(self._state, pushing_since=self._clock())
        try:
            count = self._push()
        except Exception as err:  # any client or network error: the votes stay on disk, retried later
            reason = _short_reason(err)
            with self._state_lock:
                s = self._state
                self._state = PushState(s.last_push, s.failing_since or self._clock(), s.failures + 1, reason)
            log.warning("push of votes to %s failed (attempt %d): %s", self.repo_id, self._state.failures, reason)
            return False
        finally:
            with self._state_lock:
                self._state = replace(self._state, pushing_since=None)
            self._push_lock.release()
        with self._state_lock:
            self._state = PushState(last_push=self._clock())
        if count:
            log.info("pushed %d vote file(s) to %s", count, self.repo_id)
        return True

    def _push(self) -> int:
        from huggingface_hub import CommitOperationAdd

        # Called with _push_lock held.
        self._prepare_repo()
        pushed = self._pushed if self._pushed is not None else self._hub_sizes()
        self._pushed = pushed
        operations, grown = [], {}
        for shard, size in self._local_sizes().items():
            if size <= pushed.get(shard, 0):
                continue
            data = _whole_lines(self.folder / shard, size)
            if len(data) > pushed.get(shard, 0):
                operations.append(CommitOperationAdd(path_in_repo=self._repo_path(shard), path_or_fileobj=data))
                grown[shard] = len(data)
        if self._card_needed and self._card:
            operations.append(CommitOperationAdd(path_in_repo=CARD_NAME, path_or_fileobj=self._card.encode()))
        if not operations:
            return 0
        message = f"Add votes ({len(grown)} file(s))" if grown else "Add dataset card"
        self.api.create_commit(repo_id=self.repo_id, repo_type="dataset", operations=operations,
                               commit_message=message)
        pushed.update(grown)
        self._card_needed = False
        return len(operations)

    def _prepare_repo(self) -> None:
        if not self._repo_ready:
            self.api.create_repo(self.repo_id, repo_type="dataset", private=self._private, exist_ok=True)
            self._repo_ready = True
        if self._card_needed is None:  # the card is written once, and never over the owner's own
            exists = self.api.file_exists(self.repo_id, CARD_NAME, repo_type="dataset")
            # read before deciding, so a failed read leaves the whole check to the next push
            self._card_stale = exists and not card_declares_current_features(self._hub_card())
            self._card_needed = not exists
            if self._card_stale:
                log.warning("the dataset card of %s does not declare the features of vote schema %d, so "
                            "load_dataset fails on its files (new ones, or old and new together); replace its header with "
                            "the one `python -m sciarena card` writes", self.repo_id, SCHEMA_VERSION)

    def _hub_card(self) -> str:
        with tempfile.TemporaryDirectory() as folder:  # read once per process; not kept in any cache
            path = self.api.hf_hub_download(self.repo_id, CARD_NAME, repo_type="dataset", local_dir=folder)
            return Path(path).read_text(encoding="utf-8", errors="replace")

    def _hub_sizes(self) -> dict[str, int]:
        from huggingface_hub.errors import EntryNotFoundError, RemoteEntryNotFoundError

        try:
            entries = self.api.list_repo_tree(self.repo_id, path_in_repo=self.path_in_repo or None,
                                              recursive=True, repo_type="dataset")
            prefix = f"{self.path_in_repo}/" if self.path_in_repo else ""
            return {e.path[len(prefix):]: int(e.size) for e in entries
                    if hasattr(e, "size") and e.path.startswith(prefix)}
        except (EntryNotFoundError, RemoteEntryNotFoundError):  # no data folder yet
            return {}

    def _local_sizes(self) -> dict[str, int]:
        # Under the store's lock: the sizes seen end at a line boundary when the store uses it.
        with self.lock:
            if not self.folder.is_dir():
                return {}
            return {p.relative_to(self.folder).as_posix(): p.stat().st_size for p in sorted(self.folder.glob(self.glob))}

    def _repo_path(self, shard: str) -> str:
        return f"{self.path_in_repo}/{shard}" if self.path_in_repo else shard

    # --- reporting -------------------------------------------------------------------------------
    def state(self) -> PushState:
        with self._state_lock:
            return self._state

    def pending_votes(self) -> int:
        """Complete vote lines on this machine that the Hub does not hold yet (as far as known)."""
        pushed = dict(self._pushed or {})
        total = 0
        for shard, size in self._local_sizes().items():
            done = pushed.get(shard, 0)
            if size > done:
                with open(self.folder / shard, "rb") as handle:
                    handle.seek(done)
                    total += handle.read(size - done).count(b"\n")
        return total

    def status(self) -> str:
        """One line for the About tab, e.g. "last push 12:03 UTC, 0 votes pending"."""
        s, pending = self.state(), self.pending_votes()
        where = f"Votes dataset {self.repo_id}"
        if s.pushing_since is not None and (self._clock() - s.pushing_since).total_seconds() > self.stall_after_s:
            waited = (self._clock() - s.pushing_since).total_seconds()
            return (f"{where}: push failing — stalled since {_hhmm(s.pushing_since)}, no answer from the Hub "
                    f"for {waited:.0f} s; {pending} vote(s) pending, kept on disk and retried.")
        if s.failing_since is not None:
            return (f"{where}: push failing since {_hhmm(s.failing_since)} ({s.failures} attempt(s)): "
                    f"{s.last_error}; {pending} vote(s) pending, kept on disk and retried.")
        card = (" The dataset card on the Hub does not declare the current vote schema's features, so "
                "`load_dataset` fails on its files (new ones, or old and new together): replace its header with "
                "the one `python -m sciarena card` writes.") if self._card_stale else ""
        if s.last_push is None:
            return f"{where}: first push pending; {pending} vote(s) waiting.{card}"
        return f"{where}: last push {_hhmm(s.last_push)}, {pending} vote(s) pending.{card}"


def _whole_lines(path: Path, size: int) -> bytes:
    """The file's first ``size`` bytes, cut after the last newline (never half a record)."""
    with open(path, "rb") as handle:
        data = handle.read(size)
    return data[: data.rfind(b"\n") + 1]


def _hhmm(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).strftime("%H:%M UTC")


def _short_reason(err: BaseException) -> str:
    """A short, URL-free reason for the status line: "HTTP 429: <server message>" or the error's first line."""
    code = getattr(getattr(err, "response", None), "status_code", None)
    if code:
        message = (getattr(err, "server_message", None) or "").strip().splitlines()
        return (f"HTTP {code}" + (f": {message[0]}" if message else ""))[:160]
    text = str(err).strip()
    return f"{type(err).__name__}: {text.splitlines()[0]}"[:160] if text else type(err).__name__


def dataset_card(repo_id: str) -> str:
    """The dataset README (``dataset_card.md``) filled in for ``repo_id``, its header declaring the features of
    the current schema (votes/features.py), so ``load_dataset`` reads files of every schema version together."""
    template = resources.files("sciarena.votes").joinpath("dataset_card.md").read_text(encoding="utf-8")
    return Template(template).safe_substitute(repo_id=repo_id, schema_version=SCHEMA_VERSION,
                                              field_count=len(VOTE_FIELDS), dataset_info=card_metadata_yaml())


def local_only_status() -> str:
    """What the About tab says when no dataset repo is configured."""
    return "Votes are kept on this machine only (set HF_TOKEN and SCIARENA_VOTES_REPO to publish them)."


def open_hub_sync(settings: "Settings", folder: Path, *, endpoint: str | None = None) -> HubSync | None:
    """A started-ready HubSync when HF_TOKEN and SCIARENA_VOTES_REPO are set, else None.

    ``folder`` is the store's root (``LocalVoteStore.root``); ``endpoint`` overrides the
    Hub URL (tests; otherwise huggingface_hub's own default / HF_ENDPOINT applies).
    """
    token, repo_id = settings.secret("HF_TOKEN"), settings.votes_repo
    if not token or not repo_id:
        if repo_id:
            log.warning("SCIARENA_VOTES_REPO is set but HF_TOKEN is not: votes stay local")
        return None
    from huggingface_hub import HfApi

    use_hub_timeouts()
    api = HfApi(endpoint=endpoint, token=token)
    return HubSync(folder, repo_id, api=api, every_minutes=settings.push_every_minutes,
                   card=dataset_card(repo_id))


def use_hub_timeouts(connect_s: float = HUB_CONNECT_TIMEOUT_S, read_s: float = HUB_READ_TIMEOUT_S) -> None:
    """Give huggingface_hub's shared HTTP client connect and read timeouts (process-wide).

    The library's own client waits forever (``timeout=None``), so a Hub that accepts a connection and
    never answers would hold a push, and with it the exit, indefinitely. huggingface_hub 2.4 documents
    ``set_client_factory`` for configuring that client; we keep its default client (event hooks,
    redirects) and only set the timeouts. Called when the app starts syncing votes, never at import.
    """
    from huggingface_hub import set_client_factory
    from huggingface_hub.utils._http import default_client_factory

    def factory():  # type: ignore[no-untyped-def]
        client = default_client_factory()
        client.timeout = type(client.timeout)(read_s, connect=connect_s)  # the client's own Timeout class
        return client

    set_client_factory(factory)

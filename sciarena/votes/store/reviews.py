"""The local append-only store of expert reviews (the Review tab, science/review.py).

Layout: ``<data_dir>/reviews/<YYYY-MM-DD>/reviews-<uuid>.jsonl`` — beside the votes folder, never in
it, so the leaderboard never reads a review as a vote; one file per process and day, like the vote
store, and each line is written, flushed and fsync'ed before the reviewer is told it is saved.

A review record is readable as a vote set by ``python -m sciarena agreement``: ``id`` is the reviewed
vote's id, ``vote`` the reviewer's own blind vote (A, B, tie, bad; null when they could not judge),
``subject`` the battle's discipline. Every record carries every field of REVIEW_FIELDS.

The Hub copy: a second ``HubSync`` over this folder pushes it to ``reviews/`` in the votes dataset
(:func:`open_review_sync`), outside the ``data/`` tree that the leaderboard mirrors.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sciarena.core.errors import VoteStoreError
from sciarena.votes.store.hub import HubSync, use_hub_timeouts
from sciarena.votes.store.local import ShardStore

if TYPE_CHECKING:
    from sciarena.core.settings import Settings
    from sciarena.votes.store.hub import HubSync

REVIEWS_SUBDIR = "reviews"
REVIEW_GLOB = "*/reviews-*.jsonl"
REVIEWS_IN_REPO = "reviews"
REVIEW_SCHEMA_VERSION = 1

REVIEW_FIELDS: tuple[str, ...] = (
    "id",  # the reviewed vote's id (= its battle id): what agreement matches on
    "vote",  # the reviewer's blind vote: A | B | tie | bad; null when they could not judge
    "audit",  # the paper's label of the original vote: reasonable | vague | wrong | cant_judge
    "subject",  # the battle's discipline (agreement's per-discipline rows)
    "question_type",
    "original_vote",  # the vote under review, copied so an audit tally needs no second file
    "review_id",  # this record's own random id
    "reviewer_id",  # hf- + salted hash of the reviewer's username (votes/voter.py)
    "round",  # 1 the first time this reviewer saw the battle, 2 the repeat (self-consistency)
    "shown_at",  # when the battle was shown (UTC ISO), so time spent can be read off
    "timestamp",  # when the review was saved (UTC ISO)
    "schema_version",
    "app_version",
)


class LocalReviewStore(ShardStore):
    """The review shards: like the vote store's, beside it, and every review needs its timestamp."""

    def __init__(self, data_dir: Path, external_lock: AbstractContextManager[Any] | None = None) -> None:
        # external_lock: the review HubSync's lock, when syncing
        super().__init__(self.folder_for(data_dir), "reviews", REVIEW_FIELDS, "review", external_lock)

    @staticmethod
    def folder_for(data_dir: Path) -> Path:
        return Path(data_dir) / REVIEWS_SUBDIR

    def _day(self, record: dict[str, Any]) -> str:
        timestamp = record["timestamp"]
        if not (isinstance(timestamp, str) and len(timestamp) >= 10):
            raise VoteStoreError("review record has no timestamp")
        return timestamp[:10]


def open_review_sync(settings: "Settings", *, endpoint: str | None = None) -> "HubSync | None":
    """A HubSync pushing the review folder to ``reviews/`` of the votes dataset, when votes are synced."""
    token, repo_id = settings.secret("HF_TOKEN"), settings.votes_repo
    if not token or not repo_id:
        return None
    from huggingface_hub import HfApi


    use_hub_timeouts()
    return HubSync(LocalReviewStore.folder_for(settings.data_dir), repo_id, api=HfApi(endpoint=endpoint, token=token),
                   every_minutes=settings.push_every_minutes, path_in_repo=REVIEWS_IN_REPO, glob=REVIEW_GLOB)

"""The count of battles withheld from the vote because both answers said the same (answer/sameness.py).

Layout: ``<data_dir>/same-answers/<YYYY-MM-DD>/same-answers-<uuid>.jsonl`` — beside the votes folder, never
in it, so nothing here is read as a vote. A record says only that such a battle happened, between which
models and in how many turns: no question, no answer and no voter id, since no one consented to a vote.
``sciarena stats`` counts these records (cli/stats.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sciarena import __version__
from sciarena.votes.store.local import ShardStore, utc_now_iso

SAME_ANSWERS_SUBDIR = "same-answers"
SAME_ANSWERS_SCHEMA_VERSION = 1
SAME_ANSWER_FIELDS: tuple[str, ...] = ("battle_id", "model_a", "model_b", "turns", "timestamp",
                                       "schema_version", "app_version")


class SameAnswerLog(ShardStore):
    """Append-only shards of withheld battles, one file per process and day like the vote store's."""

    def __init__(self, data_dir: Path) -> None:
        super().__init__(self.folder_for(data_dir), SAME_ANSWERS_SUBDIR, SAME_ANSWER_FIELDS, "same-answer record")

    @staticmethod
    def folder_for(data_dir: Path) -> Path:
        return Path(data_dir) / SAME_ANSWERS_SUBDIR

    def note(self, battle_id: str, model_a: str, model_b: str, turns: int) -> Path:
        """Record one withheld battle (durably, as a vote is)."""
        record: dict[str, Any] = {"battle_id": battle_id, "model_a": model_a, "model_b": model_b, "turns": turns,
                                  "timestamp": utc_now_iso(), "schema_version": SAME_ANSWERS_SCHEMA_VERSION,
                                  "app_version": __version__}
        return self.append(record)


def count_same_answers(folder: Path) -> int:
    """How many withheld battles the shards under ``folder`` (a same-answers folder) record."""
    if not folder.is_dir():
        return 0
    return sum(1 for _ in ShardStore(folder, SAME_ANSWERS_SUBDIR, SAME_ANSWER_FIELDS, "same-answer record").records())

"""Export votes in other layouts: the released SciArena schema, or our full schema as JSON lines.

``sciarena-release`` writes one JSON array of records with exactly the fields of the
released yale-nlp/SciArena data (id, question, responseA, responseB, modelA, modelB,
vote, citations_a, citations_b, question_type, subject), so analysis code written for
that release runs on our votes unchanged. Citation objects keep all their keys: they
already hold the released ones (``concise_authors``, ``content``, ``title``,
``authors``, ``id``) and extra keys do not disturb readers of those.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable, Sequence

from sciarena.core.errors import VoteStoreError
from sciarena.core.files import atomic_output
from sciarena.votes.schema import RELEASED_FIELDS

FORMATS: tuple[str, ...] = ("sciarena-release", "jsonl")


def to_release(record: dict[str, Any]) -> dict[str, Any]:
    """One record in the released SciArena layout (absent fields → None, citations → [])."""
    out = {name: record.get(name) for name in RELEASED_FIELDS}
    for side in ("citations_a", "citations_b"):
        out[side] = list(out[side] or [])
    return out


def render(records: Sequence[dict[str, Any]], fmt: str) -> str:
    """The text of ``records`` in format ``fmt`` (one of FORMATS)."""
    if fmt == "sciarena-release":
        return json.dumps([to_release(r) for r in records], ensure_ascii=False, indent=1) + "\n"
    if fmt == "jsonl":
        return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    raise VoteStoreError(f"unknown export format {fmt!r}; choose one of: {', '.join(FORMATS)}")


def write_export(records: Iterable[dict[str, Any]], out: Path, fmt: str = "sciarena-release") -> int:
    """Write ``records`` to ``out`` atomically (a reader never sees half a file); returns the count."""
    rows = list(records)
    text = render(rows, fmt)
    out = Path(out)
    if out.parent and not out.parent.exists():
        raise VoteStoreError(f"{out.parent}: no such folder")
    try:
        with atomic_output(out) as stream:
            stream.write(text)
    except OSError as err:
        raise VoteStoreError(f"{out}: cannot write ({err.strerror or err})") from None
    return len(rows)

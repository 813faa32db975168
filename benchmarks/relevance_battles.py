"""The issue-32 measurement: the app's own retrieval, as a battle sees it, on a split written after the method
was frozen (sciarena/data/eval/issue32_fresh.jsonl; ``bench_relevance.py --battles FILE --frozen COMMIT``).

Each record has ``kind`` (on_topic, notation, near_miss, off_topic, follow_up), ``question``, for a follow-up
its ``first`` question, ``relevant`` corpus ids (labelled after the questions were written) and ``answerable``.
The retriever is the offline app's (``open_local_retriever("local")``, BM25 and its shipped floor); a
follow-up is judged as ``Arena.follow_up`` judges it (``followups.search_text`` and ``followups.answerable``).

Reported: recall (an answerable question's references include a relevant paper), precision (of the papers an
answerable question returns, the share labelled relevant: a lower bound, labels list the papers that answer),
refusals of near misses and off-topic questions (no references), follow-ups (an answerable one not refused
and with a relevant paper listed or added; an unanswerable one refused), and the median passages a battle on
an on-topic question is given, with how many relevant papers the corpus holds for those questions.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

from sciarena.arena import followups
from sciarena.arena.pairing import new_battle
from sciarena.core.types import ModelSpec
from sciarena.retrieval.local import open_local_retriever

_SIDES = (ModelSpec(name="A", provider="offline", model_id="a"), ModelSpec(name="B", provider="offline", model_id="b"))


def _share(hits: int, total: int) -> str:
    return f"{hits}/{total} = {hits / total:.2f}" if total else "-"


def report_battles(path: Path, frozen: str) -> str:
    records: list[dict[str, Any]] = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
                                     if line.strip()]
    retriever = open_local_retriever("local", reranker="bm25")
    lines = [f"split {path} ({len(records)} questions), method frozen at {frozen}; retriever {retriever.backend_name}"]
    found: dict[str, list[bool]] = {}
    refused: dict[str, list[bool]] = {}
    returned = relevant_returned = 0
    passages: list[int] = []
    held: list[int] = []
    follow_ok: list[bool] = []
    for record in records:
        kind, wanted = record["kind"], set(record["relevant"])
        if kind == "follow_up":
            first = retriever.retrieve(record["first"])
            if not first.references:
                follow_ok.append(not record["answerable"])  # nothing to follow up: counted as a refusal
                continue
            battle = new_battle(record["first"], first, _SIDES, created_at=0.0)
            retrieval = retriever.retrieve(followups.search_text(battle, record["question"]))
            answered = followups.answerable(battle, record["question"], retrieval)
            listed = {r.paper.paper_id for r in (*battle.references, *followups.new_references(battle, retrieval))}
            follow_ok.append(answered and bool(listed & wanted) if record["answerable"] else not answered)
            continue
        references = retriever.retrieve(record["question"]).references
        ids = [r.paper.paper_id for r in references]
        if record["answerable"]:
            found.setdefault(kind, []).append(bool(set(ids) & wanted))
            returned += len(ids)
            relevant_returned += len(set(ids) & wanted)
            if kind == "on_topic":
                passages.append(sum(len(r.passages) for r in references))
                held.append(len(wanted))
        else:
            refused.setdefault(kind, []).append(not ids)
    for kind in ("on_topic", "notation"):
        hits = found.get(kind, [])
        lines.append(f"recall, {kind}: {_share(sum(hits), len(hits))}")
    lines.append(f"precision of returned papers (answerable, first questions): "
                 f"{_share(relevant_returned, returned)}")
    for kind in ("near_miss", "off_topic"):
        hits = refused.get(kind, [])
        lines.append(f"refused, {kind}: {_share(sum(hits), len(hits))}")
    lines.append(f"follow-ups judged right: {_share(sum(follow_ok), len(follow_ok))}")
    if passages:
        lines.append(f"passages per on-topic battle: median {statistics.median(passages):g} "
                     f"(min {min(passages)}, max {max(passages)}); relevant papers the corpus holds per on-topic "
                     f"question: median {statistics.median(held):g}, {sum(h >= 3 for h in held)} of {len(held)} "
                     "questions have 3 or more")
    return "\n".join(lines)

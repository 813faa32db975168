"""The About tab: how the arena works, what a vote records, the consent it implies, the model pool."""

from __future__ import annotations

from sciarena.services import Services
from sciarena.ui.render import escape

HOW_IT_WORKS = """
## How it works
1. **Retrieval, once.** Your question is matched against a literature index (by default a bundled demo corpus
   of well-known papers; optionally Semantic Scholar or your own datastore). The best passages are grouped per
   paper into a numbered reference list.
2. **Two anonymous models.** Two contestants are drawn at random from the available pool and shown as
   *Model A* and *Model B*. Both receive exactly the same references and question and answer at the same time.
3. **Cited answers.** Each answer cites references as `[n]`; citation styles are normalised, citations to papers
   that were not in the list are removed, and the papers each answer cited are listed under it.
4. **Your vote.** When both answers are complete, vote *A is better*, *B is better*, *Tie* or *Both are bad*.
   The model names are revealed only after your vote is saved; each battle takes one vote.
5. **Leaderboard.** Ratings come from a Bradley–Terry model on the Elo scale (1000 = average) with 95% bootstrap
   confidence intervals, recomputed from all votes whenever the page loads.

Contestants marked **(offline)** are simple algorithms that assemble an answer from the retrieved passages
without a language model; they let the arena run with no keys and no network, and give a baseline.
"""

WHAT_IS_RECORDED = """
## What a vote records
Your question, both answers and the papers they cited, the two model names, your vote and optional reason, the
retrieval details (backend, queries, filters, passage ids), per-answer timing, token counts and cost, a time
stamp, and a pseudonymous voter id: a salted hash of your browser session (or your Hugging Face username if you
log in). **Your IP address is never stored.** Nothing is recorded for a battle you do not vote on.

## Your consent
By voting you agree that your question, reason and vote are published openly (CC BY 4.0) as part of the
SciArena votes dataset and used to rank models and to study how researchers judge literature answers.
Please do not enter personal or confidential information.

## Getting the votes
Votes are appended to JSON-lines files under the data folder (`SCIARENA_DATA_DIR`, default `./data/votes/`),
one file per process and day, and — when the arena is configured with a votes dataset — pushed to the
Hugging Face Hub every few minutes. Load them with `sciarena.votes.load("<folder or dataset repo>")` or
`datasets.load_dataset("<repo>", data_files="data/**/*.jsonl")`; rank models with
`python -m sciarena leaderboard --votes data/votes --format table`; write the released SciArena schema with
`python -m sciarena export --votes data/votes --to sciarena-release --out votes.json`.
To measure how often an LLM judge picks the answer researchers picked (SciArena-Eval), build a balanced
benchmark from the votes with `python -m sciarena eval build --votes data/votes --out bench.jsonl` and score a
judge with `python -m sciarena eval run --bench bench.jsonl --judge <model>`.
"""


def pool_markdown(services: Services) -> str:
    lines = ["## Models in the pool", "", "| Model | Status |", "|---|---|"]
    outage = services.settings.outage
    for spec in services.pool.active:
        status = "paused (SCIARENA_OUTAGE)" if spec.name in outage else "**active**"
        lines.append(f"| {escape(spec.name)} | {status} |")
    for spec, why in services.pool.inactive:
        lines.append(f"| {escape(spec.name)} | inactive — {escape(why)} |")
    return "\n".join(lines)


def storage_status(services: Services) -> str:
    """Where votes go now, and how the last push to the Hub went (refreshed on page load)."""
    from sciarena.votes.hub import local_only_status

    if services.hub_sync is None:
        return f"**Vote storage:** {escape(local_only_status())}"
    repo = escape(services.settings.votes_repo or "")
    return f"**Vote storage:** dataset `{repo}` — {escape(services.hub_sync.status())}"


def about_markdown(services: Services) -> str:
    return "\n".join([HOW_IT_WORKS, WHAT_IS_RECORDED, pool_markdown(services)])

"""The About tab: how the arena works, what a vote records, the consent it implies, the model pool.

The consent text and the Arena tab's banner are built from the running services, so they say where votes
really go (this machine only, or a Hub dataset) and who the contestants really are."""

from __future__ import annotations

from sciarena.ui.render import escape
from sciarena.wiring import Services

HOW_IT_WORKS = """
## How it works
1. **Retrieval, once.** Your question is matched against a literature index (by default a bundled demo corpus
   of well-known papers; optionally Semantic Scholar or your own datastore). The best passages are grouped per
   paper into a numbered reference list.
2. **Two anonymous models.** Two contestants are drawn at random from the available pool and shown as
   *Model A* and *Model B*. Both start from exactly the same references and question, and answer at the same
   time; a contestant may search for more papers of its own (an OpenScholar-style one does, see below).
3. **Cited answers.** Each answer cites references as `[n]`; citation styles are normalised, citations to papers
   that were not in the list are removed, and the papers each answer cited are listed under it.
4. **Your vote.** When both answers are complete, vote *A is better*, *B is better*, *Tie* or *Both are bad*.
   The model names are revealed only after your vote is saved; each battle takes one vote. Until then a
   sentence in which an answer names a model, or names its maker while speaking of itself, is shown as
   *[hidden until the vote: it named a model]*, however the name is spelled; a battle in which a name got
   through anyway, or in which you asked a model who it is, is kept but not counted on the leaderboard.
   Math is drawn when it uses the usual commands of science writing — fractions, roots, Greek letters,
   operators, sub- and superscripts, accents, fonts such as `\\mathrm` and `\\text`, delimiters and
   environments like `aligned` or `cases` — and is short (200 characters inline, 400 displayed); anything else
   (macro definitions, colour, spacing and kerning, boxes, `\\char`) is shown as written, as code.
5. **Leaderboard.** Ratings come from a Bradley–Terry model on the Elo scale (1000 = average) with 95%
   intervals (from the fit's own uncertainty under a weak prior; they held the true rating about 95% of the
   time in simulations), fitted on all the votes that count. The fit is kept until the votes change: a page
   load after a new vote refits it, one with no new vote reuses it (the summary says when it was computed).

Contestants marked **(offline)** are simple algorithms that assemble an answer from the retrieved passages
without a language model; they let the arena run with no keys and no network, and give a baseline.

An **OpenScholar-style** contestant wraps another model in a loop: the model drafts a cited answer, reviews it
(at most three points to improve), searches for more papers where a point names missing information (those
papers are numbered after the shared ones and marked under its answer), revises the answer point by point, and
finally checks each statement against the passages it cites, adding a citation where a given passage supports
an uncited statement. Each side shows an *Answering…* line above its text until that side's answer is complete
(the same line for every contestant, so a plain model's line goes as soon as it has finished, while the other
side may still show it); a pipeline shows no text until its final answer is ready (so no draft you read
disappears), then writes that answer out at a steady pace like a streaming model (about 2,000 characters a second), and the
papers it found are listed like any reference. After your vote its steps are listed with its name and those
papers are marked as found by it. When its
base model is in the pool too, it meets that model in at least half of its battles (half of those the sampler
pairs with someone else, plus those it pairs with the base anyway): does the loop beat the bare model? The
offline pipeline meets its offline base only on questions where its loop changes the answer: otherwise both
would show the same words.

Two answers that say exactly the same thing (differing at most in spacing or in the order of citation marks)
are not offered for a vote: the page says so and you can start a new battle.
"""

WHAT_IS_RECORDED = """
## What a vote records
Your question, both answers and the papers they cited (with the passages the models were given), the two model
names, your vote and optional reason, the retrieval details (backend, queries, filters, passage ids), per-answer
timing, token counts and cost (for a pipeline: the sum of its calls, and what each step did), a time stamp, and a pseudonymous voter id. The voter id is a salted hash of a
random key your browser keeps in its local storage (or of your Hugging Face username if you sign in, so all your
signed-in votes are linked to one pseudonym): the votes of one browser can be grouped, but not traced to a person. The key itself, your username and **your IP address
are never stored**; clearing this site's data in your browser gives you a new key. Nothing is recorded for a
battle you do not vote on, except that a battle whose two answers were the same is counted (the two model
names and a time stamp; no question, answer or voter id). Your address is used only to apply the usage limits (as a salted hash, kept in
memory for at most a day), so that opening new sessions does not reset them.

## Who is counting
Every vote that passes the checks counts the same on the default leaderboard. What the arena knows about a
voter decides how its votes are checked: votes are *established* after 5 earlier votes when you are signed in
with Hugging Face, or after 20 earlier votes over at least a day from the same browser; until then they are
*new*. New votes count from the first one. When the votes of one group (new ids, or established ones) lift or
sink one model far beyond what the established votes from *other* days say, within some stretch of days (a
rigging campaign), that group's votes on that model in that stretch are left out — only the battles the
campaign picked, when it picked its opponents — and the leaderboard says how many. If leaving them out would
move a model further than counting them, they are counted again and the leaderboard says that too. the leaderboard says how many. An arena's operator can also count signed-in votes only.
"""

# The votes dataset's licence, as its card (sciarena/votes/dataset_card.md, ``license: cc-by-4.0``) states it.
DATASET_LICENCE = "CC BY 4.0"

TERMS_FOOTER = (
    "Please do not enter personal or confidential information. Your consent is remembered in this browser tab "
    "until you close it; untick the box to withdraw it for the next vote."
)

GETTING_THE_VOTES = """
## Getting the votes
Votes are appended to JSON-lines files under the data folder (`SCIARENA_DATA_DIR`, default `./data/votes/`),
one file per process and day, and — when the arena is configured with a votes dataset — pushed to the
Hugging Face Hub every few minutes. Load them with `sciarena.votes.read.records("<folder or dataset repo>")` or
`datasets.load_dataset("<repo>", split="train")` (the dataset card declares the files and their features);
rank models with `python -m sciarena leaderboard --votes data/votes --format table`; write the released SciArena schema with
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
    if services.hub_sync is None:
        return f"**Vote storage:** {escape(services.local_only_status())}"
    repo = escape(services.settings.votes_repo or "")
    return f"**Vote storage:** dataset `{repo}` — {escape(services.hub_sync.status())}"


def terms_markdown(services: Services) -> str:
    """What a voter agrees to, true to this deployment's storage; shown in the About tab and by the vote buttons."""
    record = ("Your vote record — your question, vote and reason, both answers, the model names and a pseudonymous "
              "voter id (the About tab lists every field) —")
    if services.hub_sync is None:
        where = (f"{record} is written only to this machine's disk; nothing is uploaded. Whoever runs this arena "
                 f"may publish those files as a votes dataset under {DATASET_LICENCE}, so treat what you write as "
                 "public.")
    else:
        repo = escape(services.settings.votes_repo or "")
        where = (f"{record} is published openly within minutes in the Hugging Face dataset `{repo}` under "
                 f"{DATASET_LICENCE}: anyone may copy, share and adapt it, with attribution.")
    return (f"{where} Votes are used to rank the models and to study how researchers judge answers about the "
            f"literature. Ticking the box and voting means you agree to this. {TERMS_FOOTER}")


def mode_banner(services: Services) -> str:
    """The Arena tab's banner: said when every contestant is an offline baseline and when votes stay
    on this machine ("" when neither holds, e.g. a deployment with real models and a votes dataset)."""
    parts = []
    active = services.pool.active
    if active and all(spec.offline for spec in active):
        parts.append("**Offline mode.** Both contestants are offline baseline algorithms that assemble answers "
                     "from the retrieved passages — they are not language models.")
    if services.hub_sync is None:
        parts.append("Votes stay on this machine; nothing is uploaded.")
    return " ".join(parts)


def about_markdown(services: Services) -> str:
    consent = f"## Your consent\n{terms_markdown(services)}\n"
    return "\n".join([HOW_IT_WORKS, WHAT_IS_RECORDED, consent, GETTING_THE_VOTES, pool_markdown(services)])

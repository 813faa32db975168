"""Typed records passed between the stages of a battle.

question ─► Retrieval(references) ─► GenerationRequest ─► Delta stream ─► Answer
        ─► SideResult ×2 ─► Battle ─► Vote ─► vote record (votes/schema.py)

All records are frozen: a stage returns a new record rather than mutating one
it was given, so a battle held in a user's session cannot change under them.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field, replace
from typing import Iterator, Literal, Mapping, Protocol

from sciarena.core.errors import SciArenaError

DISCIPLINES: tuple[str, ...] = (
    "Natural Science",
    "Healthcare",
    "Humanities & Social Sciences",
    "Engineering",
)

# The paper's question categories (appendix B.3), in its order.
QUESTION_TYPES: tuple[str, ...] = (
    "Conceptual Explanation",
    "Methodology Inquiry",
    "State-of-the-Art Assessment",
    "Challenges & Limitations",
    "Paper Finding",
    "Others",
)

Choice = Literal["A", "B", "tie", "bad"]
CHOICES: tuple[str, ...] = ("A", "B", "tie", "bad")


@dataclass(frozen=True)
class Paper:
    """Bibliographic record of one paper."""

    paper_id: str
    title: str
    authors: tuple[str, ...] = ()
    et_al: bool = False
    year: int | None = None
    venue: str = ""
    doi: str | None = None
    url: str | None = None
    discipline: str = ""
    field: str = ""

    @property
    def link(self) -> str | None:
        """Where a reader can find the paper: its URL, else its DOI resolver link."""
        if self.url:
            return self.url
        if self.doi:
            return f"https://doi.org/{self.doi}"
        return None

    @property
    def concise_authors(self) -> str:
        """'Vaswani et al. 2017' — the form the released SciArena data uses."""
        if not self.authors:
            surname = "Anonymous"
        else:
            surname = _surname(self.authors[0])
        many = self.et_al or len(self.authors) > 2
        if len(self.authors) == 2 and not self.et_al:
            names = f"{surname} and {_surname(self.authors[1])}"
        else:
            names = f"{surname} et al." if many else surname
        return f"{names} {self.year}" if self.year else names

    @property
    def author_line(self) -> str:
        """Authors as one display line, with 'et al.' when the list is cut."""
        line = ", ".join(self.authors) if self.authors else "Unknown authors"
        return f"{line}, et al." if self.et_al else line


def _surname(name: str) -> str:
    parts = re.split(r"\s+", name.strip())
    return parts[-1] if parts else name


@dataclass(frozen=True)
class Passage:
    """A block of text (~250 words) from one paper, with its retrieval score."""

    passage_id: str
    paper: Paper
    text: str
    position: int = 0  # order of the block inside its paper
    score: float = 0.0
    kind: str = "body"  # "title" | "abstract" | "body", as Semantic Scholar labels snippets


@dataclass(frozen=True)
class Reference:
    """One numbered entry of the reference list a model sees and cites as [number]."""

    number: int
    paper: Paper
    passages: tuple[Passage, ...]

    @property
    def context(self) -> str:
        """The paper's retrieved passages, in document order."""
        return " … ".join(p.text for p in sorted(self.passages, key=lambda p: p.position))

    @property
    def score(self) -> float:
        return max((p.score for p in self.passages), default=0.0)


@dataclass(frozen=True)
class Retrieval:
    """What retrieval did for one question: the numbered references and how they were found."""

    question: str
    references: tuple[Reference, ...]
    backend: str  # e.g. "local:demo", "local:/path/to/index", "semantic_scholar"
    queries: tuple[str, ...] = ()  # the queries actually sent (after any rewriting)
    filters: Mapping[str, object] = field(default_factory=dict)
    seconds: float = 0.0
    note: str = ""  # shown to the user, e.g. "Semantic Scholar unavailable; used the local datastore"

    @property
    def context_ids(self) -> tuple[str, ...]:
        return tuple(p.passage_id for r in self.references for p in r.passages)


@dataclass(frozen=True)
class ModelSpec:
    """One catalogue entry: how to reach a model and what it costs."""

    name: str  # display name, revealed after the vote
    provider: str  # key of a Provider in the registry ("offline", "openai", "together", ...)
    model_id: str  # the provider's id for the model
    organisation: str = ""
    open_weights: bool = False
    reasoning: str = "no"  # "yes" | "hybrid" | "no"
    params: Mapping[str, object] = field(default_factory=dict)  # extra request parameters
    price_input_per_m: float | None = None  # USD per million input tokens
    price_output_per_m: float | None = None
    offline: bool = False  # a local algorithm, not a language model: labelled as such
    release: str | None = None  # "YYYY-MM" (or YYYY-MM-DD) when the catalogue knows it
    licence: str | None = None  # e.g. "Apache-2.0", "Proprietary"; None when not known for certain
    # A multi-step contestant (provider "pipeline"): the pipeline's name ("openscholar") and the
    # catalogue model every step calls. Prices, organisation and openness are the base model's.
    pipeline: str = ""
    base: "ModelSpec | None" = None


@dataclass(frozen=True)
class Revision:
    """What a pipeline step asks of its base model besides an answer (pipelines/openscholar.py).

    A language model reads the step from the request's messages; an offline baseline, which reads
    no prompt, acts on this record instead, so the same pipeline runs over both."""

    kind: Literal["feedback", "refine"]
    answer: str  # the current answer, with its [n] citations
    feedback: str = ""  # refine: the feedback item to incorporate
    search: str = ""  # refine: the query that fetched the references added for it ("" = none)
    added: tuple[int, ...] = ()  # numbers of the references the pipeline retrieved itself so far


@dataclass(frozen=True)
class Exchange:
    """One earlier turn of a battle as one side saw it: the visitor's question and that side's own answer."""

    question: str
    answer: str
    references: tuple[Reference, ...] = ()  # the references listed with this question (the first turn: all)


@dataclass(frozen=True)
class GenerationRequest:
    """Everything a contestant receives. On the first turn both sides get the same request; on a follow-up
    each gets its own, since its ``history`` holds its own earlier answers (answer.prompt.answer_request)."""

    question: str  # this turn's question
    references: tuple[Reference, ...]  # every reference this side may cite now
    messages: tuple[Mapping[str, str], ...] = ()  # chat messages built by answer/prompt.py
    revision: Revision | None = None  # set only on a pipeline's feedback and refinement calls
    history: tuple[Exchange, ...] = ()  # earlier turns, oldest first (empty on the first turn)


@dataclass(frozen=True)
class Usage:
    input_tokens: int | None = None
    output_tokens: int | None = None


@dataclass(frozen=True)
class PipelineReport:
    """What a multi-step contestant did for one answer; recorded with the vote (``pipeline_a/b``)."""

    pipeline: str  # e.g. "openscholar"
    base: str  # the display name of the model every step called
    steps: tuple[str, ...]  # the steps run, in order: "draft", "feedback", "retrieve", "refine", "verify"
    calls: int  # model calls made (their tokens and cost are the side's)
    feedback_items: int = 0  # items the feedback step returned (at most three are used)
    extra_passages: int = 0  # passages of the references the pipeline added
    extra_context_ids: tuple[str, ...] = ()
    revisions_kept: int = 0  # revisions that changed the answer's words and were kept
    revisions_rejected: int = 0  # revisions refused as over-edited (much shorter, or citations lost)
    statements_checked: int = 0  # citation-worthy statements the verification step examined
    citations_added: int = 0  # citations the verification step attached from the given passages
    unsupported: int = 0  # statements it found no supporting passage for (left without a new citation)
    stopped: str = ""  # why the loop ended early: "deadline", "call budget", "feedback unparseable", ...

    def to_dict(self) -> dict[str, object]:
        from dataclasses import asdict

        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}


@dataclass(frozen=True)
class Delta:
    """One piece of a streamed answer. ``reasoning`` is never shown to voters.

    A multi-step contestant also says which step runs (``status``: for logs and tests; the arena never shows
    it before the vote, where it would single the pipeline out), starts its shown text over
    (``restart``: the next text replaces what was streamed, e.g. a revision replacing the draft),
    numbers the references it retrieved itself (``references``, appended to the battle's) and
    reports what it did at the end (``report``). A plain model sends none of these."""

    text: str = ""
    reasoning: str = ""
    usage: Usage | None = None
    status: str = ""
    restart: bool = False
    references: tuple[Reference, ...] = ()
    report: PipelineReport | None = None


class Provider(Protocol):
    """The one contract every model backend implements.

    A provider may also offer ``warm_up() -> None``, called once at start for providers
    with active models (e.g. to import a client library before the first battle).
    """

    def unavailable_reason(self, spec: ModelSpec) -> str | None:
        """None when ``spec`` can be battled now; otherwise why not ("set OPENAI_API_KEY")."""

    def stream(self, spec: ModelSpec, request: GenerationRequest, *, timeout_s: float | None = None,
               cancel: threading.Event | None = None) -> Iterator[Delta]:
        """Yield the answer as it is produced; raise errors.ProviderError on failure.

        The call ends within ``timeout_s`` (default: the provider's own) and soon after ``cancel``
        is set, wherever it is (errors.ProviderTimeout / errors.Cancelled), closing its connection."""


@dataclass(frozen=True)
class Answer:
    """A postprocessed answer: display text with [n] citations and what it cited."""

    text: str
    raw_text: str
    cited: tuple[int, ...]  # reference numbers, in order of first citation
    redacted: bool = False  # an identity word was removed (anonymity policy)
    masked: bool = False  # a model name the question shares with the catalogue was hidden until the vote
    # What the page shows until the vote ("" = ``text``): with ``masked`` names hidden. Kept so that a
    # follow-up turn shows the earlier answers as they were shown, not unmasked.
    shown: str = ""

    @property
    def before_vote(self) -> str:
        return self.shown or self.text


@dataclass(frozen=True)
class SideResult:
    """One side of a battle once its generation has ended (well or not)."""

    model: ModelSpec
    answer: Answer | None
    # Why the generation failed, as raised (ProviderTimeout, RateLimited, …): the UI decides by type what
    # the voter sees, since a provider's message can name its vendor.
    error: SciArenaError | None = None
    first_token_s: float | None = None
    total_s: float | None = None
    usage: Usage = field(default_factory=Usage)
    cost_usd: float | None = None
    # References this side retrieved itself (a pipeline's extra retrieval), numbered after the battle's.
    extra_references: tuple[Reference, ...] = ()
    report: PipelineReport | None = None  # a multi-step contestant's account of its steps

    @property
    def ok(self) -> bool:
        return self.answer is not None and self.error is None

    def references(self, retrieval: Retrieval) -> tuple[Reference, ...]:
        """Every reference this side could cite: the battle's, then its own."""
        return retrieval.references + self.extra_references

    def cited_references(self, retrieval: Retrieval) -> list[Reference]:
        """The references this answer cited, in order of their numbers (its own extra ones included)."""
        by_number = {r.number: r for r in self.references(retrieval)}
        cited = self.answer.cited if self.answer else ()
        return [by_number[n] for n in sorted(set(cited)) if n in by_number]


@dataclass(frozen=True)
class Battle:
    """A question, its retrieval and the two anonymous sides. Lives in server-side session state."""

    battle_id: str
    question: str
    retrieval: Retrieval
    model_a: ModelSpec
    model_b: ModelSpec
    created_at: float
    side_a: SideResult | None = None
    side_b: SideResult | None = None
    subject: str = ""
    question_type: str = ""
    # Hashed voter ids (votes.voter.voter_id) of whoever started it: as signed in, and as their browser
    # alone. A vote must come from one of them (empty: anyone, a battle a caller that knows nobody started).
    owners: tuple[str, ...] = ()
    # The follow-up turns after the first (question/retrieval/side_a/side_b above), oldest first; the last
    # one's sides are None while it runs. The vote is on the whole conversation (arena.followups).
    followups: tuple["Turn", ...] = ()

    @property
    def finished(self) -> bool:
        """Every turn's two sides have ended."""
        return all(t.side_a is not None and t.side_b is not None for t in self.turns)

    @property
    def votable(self) -> bool:
        """Finished, and every answer of every turn is there: a failed follow-up closes the vote as a failed
        first answer does (the voter would be judging a conversation one side could not finish)."""
        return self.finished and all(t.side_a.ok and t.side_b.ok for t in self.turns)  # type: ignore[union-attr]

    @property
    def turns(self) -> tuple["Turn", ...]:
        """Every turn, the first included, as Turn records."""
        first = Turn(question=self.question, retrieval=self.retrieval, side_a=self.side_a, side_b=self.side_b,
                     added=self.retrieval.references)
        return (first, *self.followups)

    @property
    def references(self) -> tuple[Reference, ...]:
        """The references both sides share now: the first retrieval's, then each follow-up's, by number."""
        return tuple(r for t in self.turns for r in t.added)

    def last_number(self) -> int:
        """The highest reference number any side has seen (a pipeline's own ones included), so that a
        follow-up's new references never take a number already cited."""
        own = (r for t in self.turns for s in (t.side_a, t.side_b) if s is not None for r in s.extra_references)
        return max((r.number for r in (*self.references, *own)), default=0)

    def side_references(self, letter: str, upto: int | None = None) -> tuple[Reference, ...]:
        """What side ``letter`` could cite in turn ``upto`` (0 = the first; None = the last): the shared
        references of that turn and before, and the ones its own pipeline added, in number order."""
        turns = self.turns if upto is None else self.turns[: upto + 1]
        own = [r for t in turns if t.side(letter) is not None for r in t.side(letter).extra_references]  # type: ignore[union-attr]
        return tuple(sorted((*(r for t in turns for r in t.added), *own), key=lambda r: r.number))

    def cited_in(self, letter: str, upto: int) -> list[Reference]:
        """The references side ``letter``'s answer in turn ``upto`` cited, in number order."""
        side = self.turns[upto].side(letter)
        cited = set(side.answer.cited) if side is not None and side.answer is not None else set()
        return [r for r in self.side_references(letter, upto) if r.number in cited]


@dataclass(frozen=True)
class Turn:
    """One question of a battle and its two answers. The first turn is the Battle's own fields; a follow-up's
    ``retrieval`` is the search run for its question and ``added`` the references it added (numbered after every
    reference before it, shared by both sides)."""

    question: str
    retrieval: Retrieval
    side_a: SideResult | None = None
    side_b: SideResult | None = None
    added: tuple[Reference, ...] = ()
    started_at: float = 0.0  # epoch seconds (0 for the first turn: the battle's created_at)

    def side(self, letter: str) -> SideResult | None:
        return self.side_a if letter.lower() == "a" else self.side_b


@dataclass(frozen=True)
class Vote:
    """A voter's judgement on one finished battle."""

    battle: Battle
    choice: Choice
    reason: str = ""
    voter_id: str = ""  # a username (OAuth) or a salted hash; never a raw IP
    consent: bool = True
    timestamp: str = ""  # ISO 8601, UTC
    shared: bool = False  # the voter gave the battle a public read-only link (ui/battle_view.py)
    shared_reason: bool = False  # ... and let that view show their reason
    # After the stream, checked again (arena/identity.py): a name reached the voter, or the voter asked a contestant
    # who it is. Such a vote is stored with the reason and left out of the board like a redacted one.
    identity_revealed: bool = False
    identity_reason: str = ""


# The asker's choice of field at vote time, and who decided a vote's recorded subject.
OTHER_FIELD = "Other"  # the asker's fifth choice: a question outside the four disciplines
ASKER_FIELDS: tuple[str, ...] = DISCIPLINES + (OTHER_FIELD,)
# subject_source values: who decided the recorded subject.
SOURCE_ASKER, SOURCE_LABELLER, SOURCE_MODEL = "asker", "labeller", "model"
SUBJECT_SOURCES = (SOURCE_ASKER, SOURCE_LABELLER, SOURCE_MODEL)


@dataclass(frozen=True)
class QuestionLabels:
    """A voted question's category and discipline, and who gave each (the asker may change the field)."""

    question_type: str
    question_type_labeller: str
    subject: str  # the recorded field: the asker's when they changed it, else the labeller's ("" = none)
    subject_labeller: str  # who gave subject_labelled
    subject_source: str = SOURCE_LABELLER  # one of SUBJECT_SOURCES: who decided ``subject``
    subject_labelled: str = ""  # the labeller's field, kept when the asker chose another ("" = subject)

    def __post_init__(self) -> None:
        if not self.subject_labelled:
            object.__setattr__(self, "subject_labelled", self.subject)

    def with_asker_subject(self, chosen: str | None, shown: str | None) -> QuestionLabels:
        """These labels with the asker's field when they changed the one shown (``chosen`` != ``shown``);
        an empty or unknown choice, or the shown field left as it was, keeps the labeller's."""
        chosen = (chosen or "").strip()
        if chosen not in ASKER_FIELDS or chosen == (shown or "").strip():
            return self
        return replace(self, subject=chosen, subject_source=SOURCE_ASKER)


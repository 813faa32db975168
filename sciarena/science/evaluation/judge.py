"""Pairwise judges for SciArena-Eval: the prompt, the verdict parser, model and baseline judges.

A judge sees a question and two answers (with the references each cited, when the
benchmark has them) and names the better one with a single letter. A model judge
is a catalogue model called through its provider (providers.calls.complete), like
every other helper, so it is named by its catalogue name and uses the same keys,
base URLs, timeouts and retries as a battle. Two offline
baselines — not models — give the offline demo and the tests something real to
score.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from sciarena.answer.clean import strip_reasoning
from sciarena.core.errors import EvaluationInputError
from sciarena.core.types import ModelSpec, Provider, Usage
from sciarena.providers.calls import complete
from sciarena.providers.registry import open_models
from sciarena.science.evaluation.benchmark import EvalItem

if TYPE_CHECKING:
    from sciarena.core.settings import Settings

MAX_REFERENCE_CHARS = 1200  # per cited reference: enough to check a claim, bounded prompt size

_SYSTEM = (
    "You review answers to research questions. Each answer was written from retrieved papers and cites "
    "them with bracketed numbers or author-year mentions. You compare two answers and say which one a "
    "careful researcher in the field would find more useful."
)
_INSTRUCTIONS = (
    "Decide which answer is better overall. Weigh, in this order: whether it actually answers the question; "
    "whether its claims are correct and backed by the references it cites; how complete and specific it is; "
    "and how clearly it is organised. Length alone is not a merit, and the order in which the answers are "
    "shown says nothing about their quality.\n\n"
    "Reply with one letter only: A if Answer A is better, B if Answer B is better. No other text."
)


# ---------------------------------------------------------------- prompt

def build_judge_messages(item: EvalItem, *, swapped: bool = False) -> list[dict[str, str]]:
    """Chat messages asking for a verdict; ``swapped`` shows the second answer first."""
    first, second = (item.response_b, item.response_a) if swapped else (item.response_a, item.response_b)
    refs_first, refs_second = ((item.citations_b, item.citations_a) if swapped
                               else (item.citations_a, item.citations_b))
    parts = [f"Question:\n{item.question.strip()}"]
    for label, text, refs in (("A", first, refs_first), ("B", second, refs_second)):
        parts.append(f"=== Answer {label} ===\n{text.strip()}")
        if refs:
            parts.append(f"--- References cited by Answer {label} ---\n{_format_references(refs)}")
    parts.append(_INSTRUCTIONS)
    return [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": "\n\n".join(parts)}]


def _format_references(refs: Sequence[Mapping[str, Any]]) -> str:
    lines = []
    for k, ref in enumerate(refs, start=1):
        number = ref.get("number")
        label = f"[{number}]" if isinstance(number, int) else str(ref.get("concise_authors") or f"({k})")
        title = str(ref.get("title") or "").strip()
        content = " ".join(str(ref.get("content") or "").split())
        if len(content) > MAX_REFERENCE_CHARS:
            content = content[: MAX_REFERENCE_CHARS - 1] + "…"
        head = f"{label} {title}".strip()
        lines.append(f"{head}\n{content}" if content else head)
    return "\n".join(lines)


# ---------------------------------------------------------------- verdict parser

_MARKUP = re.compile(r"[*_`#>~]")
_BARE = re.compile(r"^[\s\"'“”‘’(\[{<]*([AB])[\s\"'“”‘’)\]}>.!:;,]*$")
_NAMED = re.compile(r"^(?i:answer|response|option)\s+([AB])[\s.!]*$")
_DOUBLE_BRACKET = re.compile(r"\[\[\s*([AB])\s*\]\]")
_LABELLED = re.compile(
    r"(?i:\b(?:final\s+(?:answer|verdict|choice|decision)|verdict|decision|winner|choice|preference|judgement|"
    r"judgment|better\s+(?:answer|response)|answer|output)\b)\s*(?:[:=]|\bis\b|-)\s*[\[(\"'“]*"
    r"(?:(?i:answer|response)\s+)?([AB])\b(?![-'’]\w)(?!\s+(?i:and|or|nor|vs\.?|versus)\b)")
_PRAISE = re.compile(
    r"\b(?:(?i:answer|response)\s+)?([AB])\s+(?i:is\s+(?:clearly\s+|slightly\s+|much\s+)?"
    r"(?:better|stronger|superior|preferable|preferred|more\s+useful|the\s+better))")
_NEGATED = re.compile(r"(?i:\b(?:neither|nor|not|no)\b)")
_NEGATED_PAIR = re.compile(r"(?i:\bneither\s+(?:answer\s+|response\s+)?)[AB]\s+(?i:nor)\s+(?:(?i:answer|response)\s+)?[AB]\b")
_PREFER = re.compile(r"(?i:\bI\s+(?:would\s+)?(?:prefer|choose|pick|select))\s+(?:(?i:answer|response)\s+)?([AB])\b")


def parse_verdict(text: str) -> str | None:
    """"A" or "B" from a judge's reply, or None when there is no single clear verdict.

    Reasoning blocks are removed first. Then, strongest signal first: the whole reply is one
    letter; "[[X]]" markers; labelled verdicts ("Verdict: B", "Answer: A"); a first or last line
    that is a bare letter; "X is better" / "I prefer X". A level whose matches disagree makes the
    reply ambiguous (None) rather than being guessed.
    """
    if not isinstance(text, str):
        return None
    visible = _MARKUP.sub("", strip_reasoning(text)).strip()
    if not visible:
        return None
    whole = _BARE.match(visible.upper()) if len(visible) <= 8 else None
    if whole:
        return whole.group(1)
    lines = [line.strip() for line in visible.splitlines() if line.strip()]
    ends = {m.group(1) for line in {lines[0], lines[-1]} for m in (_BARE.match(line), _NAMED.match(line)) if m}
    stated = {m.group(1) for m in _PRAISE.finditer(visible) if not _NEGATED.search(visible, max(0, m.start() - 24), m.start())}
    stated |= {m.group(1) for m in _PREFER.finditer(visible)}
    if _NEGATED_PAIR.search(visible):
        stated.add("?")  # "neither A nor B is better": no preference, whatever else matched
    if ends and stated and ends != stated:
        ends = set()  # a heading "Answer A" or an opening "A" that the text then contradicts
        stated.add("?")
    for letters in ({m.group(1) for m in _DOUBLE_BRACKET.finditer(visible)},
                    {m.group(1) for m in _LABELLED.finditer(visible)},
                    ends,
                    stated):
        if len(letters) == 1:
            return next(iter(letters)) if letters != {"?"} else None
        if len(letters) > 1:
            return None
    return None


# ---------------------------------------------------------------- judges

@dataclass(frozen=True)
class Reply:
    """One judge call: its raw text and the parsed verdict (None = invalid), by position."""

    text: str
    verdict: str | None
    usage: Usage = field(default_factory=Usage)


class Judge(Protocol):
    name: str
    kind: str  # "model" or "baseline"

    def judge(self, item: EvalItem, *, swapped: bool = False) -> Reply:
        """The verdict as shown (position letter); raises errors.ProviderError when a call fails."""


_CITATION_GROUP = re.compile(r"\[\s*(\d{1,4}(?:\s*[-–,;]\s*\d{1,4})*)\s*\]")


def count_citations(text: str, listed: Sequence[Mapping[str, Any]] | None = None) -> int:
    """Distinct references cited as [n] (also [1, 2] and [1-3]); when the text has none, the cited list's length.

    The released SciArena answers cite "(Author et al. 2023a)", with the cited papers listed
    beside them, so the list stands in for the marks there.
    """
    numbers: set[int] = set()
    for group in _CITATION_GROUP.finditer(text):
        for part in re.split(r"\s*[,;]\s*", group.group(1)):
            ends = [int(n) for n in re.split(r"\s*[-–]\s*", part) if n]
            if len(ends) == 2 and 0 < ends[1] - ends[0] < 50:
                numbers.update(range(ends[0], ends[1] + 1))
            else:
                numbers.update(ends)
    if numbers:
        return len(numbers)
    return len(listed) if listed else 0


@dataclass(frozen=True)
class BaselineJudge:
    """A fixed rule, not a model: the answer with the larger score wins; equal scores give no verdict."""

    name: str
    score: Callable[[str, Sequence[Mapping[str, Any]] | None], float]
    kind: str = "baseline"

    def judge(self, item: EvalItem, *, swapped: bool = False) -> Reply:
        a = self.score(item.response_a, item.citations_a)
        b = self.score(item.response_b, item.citations_b)
        if a == b:
            return Reply(text=f"tie ({a:g} vs {b:g})", verdict=None)
        better = "A" if a > b else "B"
        shown = {"A": "B", "B": "A"}[better] if swapped else better
        return Reply(text=f"{shown} ({a:g} vs {b:g})", verdict=shown)


BASELINES: Mapping[str, str] = {
    "baseline:longer": "the longer answer (characters) wins",
    "baseline:more-citations": "the answer citing more distinct references wins",
}


def baseline_judge(name: str) -> BaselineJudge:
    """One of BASELINES by name."""
    if name == "baseline:longer":
        return BaselineJudge(name, lambda text, refs: len(text))
    if name == "baseline:more-citations":
        return BaselineJudge(name, count_citations)
    raise EvaluationInputError(f"unknown baseline {name!r}; choose from {', '.join(BASELINES)}")


@dataclass(frozen=True)
class ModelJudge:
    """A catalogue model asked through its provider (timeouts and 429/5xx retries are the provider's)."""

    spec: ModelSpec
    provider: Provider
    kind: str = "model"

    @property
    def name(self) -> str:
        return self.spec.name

    def judge(self, item: EvalItem, *, swapped: bool = False) -> Reply:
        reply = complete(self.provider, self.spec, build_judge_messages(item, swapped=swapped))
        return Reply(text=reply.text, verdict=parse_verdict(reply.text), usage=reply.usage)


def resolve_judge(name: str, settings: "Settings | None" = None) -> Judge:
    """A baseline by name, else the catalogue model with this display name (case-insensitive).

    Raises EvaluationInputError for an unknown name, an offline answer generator, or a model
    that cannot run now (e.g. its API key is not set).
    """
    name = name.strip()
    if name.startswith("baseline:"):
        return baseline_judge(name)
    if settings is None:
        raise EvaluationInputError(f"judge {name!r} needs settings (keys, catalogue)")

    models = open_models(settings)
    spec = models.catalogue.find(name)
    if spec is None:
        raise EvaluationInputError(
            f"unknown judge {name!r}: use {' or '.join(BASELINES)}, or a model's display name from the "
            "catalogue (e.g. 'o3'); add models with a SCIARENA_MODELS file")
    if spec.offline:
        raise EvaluationInputError(f"{spec.name!r} is an offline answer generator, not a judge; "
                                   f"try {' or '.join(BASELINES)}")
    provider = models.providers.get(spec.provider)
    if provider is None:
        raise EvaluationInputError(f"judge {spec.name!r}: no provider named {spec.provider!r}")
    reason = provider.unavailable_reason(spec)
    if reason:
        raise EvaluationInputError(f"judge {spec.name!r} cannot run: {reason}")
    return ModelJudge(spec=spec, provider=provider)

"""The OpenScholar-style contestant: draft → feedback → extra retrieval → refinement → verification.

After OpenScholar's inference loop (§2.2 of its paper): the base model drafts a cited answer and then
gives up to three feedback items on it; an item that names missing information carries a search
query, answered by the arena's own retriever, whose new papers join the reference list under the
next numbers; the items are incorporated one at a time (in turn, not by regenerating per item,
which the paper found as good and cheaper); finally every citation-worthy statement is checked
against the cited passages (verify.py).

It streams like any contestant: the draft, then each revision, replaces the text shown (a
``restart`` delta), and a ``status`` delta names the step. A budget bounds it: at most
``max_calls`` model calls, and no new step after ``deadline_s``; past either it keeps the best answer
so far. The draft failing fails the side, as a bare model's failure would; a later step failing
(timeout, bad feedback, an error) ends the loop with the answer it had.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, replace
from typing import Any, Callable, Generator, Iterator, Mapping, Protocol

from sciarena.answer.citations import cited_numbers
from sciarena.answer.clean import clean_answer, strip_reasoning
from sciarena.answer.sameness import same_text
from sciarena.core.errors import Cancelled, MalformedOutput, ProviderError, SciArenaError
from sciarena.core.types import (
    Delta,
    GenerationRequest,
    ModelSpec,
    PipelineReport,
    Provider,
    Reference,
    Retrieval,
    Revision,
    Usage,
)
from sciarena.pipelines.prompts import FeedbackItem, feedback_messages, parse_feedback, refine_messages
from sciarena.pipelines.verify import CitationVerifier

log = logging.getLogger(__name__)

# An over-edited revision (the paper's filtering found the first answer preferred ~20% of the time,
# often for over-editing) is refused when it is this much shorter than the answer it revises.
MIN_REVISION_RATIO = 0.5


class RetrieverLike(Protocol):
    """What the loop needs of the arena's retriever (retrieval.choose.Retriever)."""

    def retrieve(self, question: str) -> Retrieval: ...


@dataclass(frozen=True)
class LoopBudget:
    max_calls: int = 6  # draft + feedback + three revisions + one spare
    deadline_s: float = 90.0  # no step starts after this; below the battle's own timeout
    max_feedback: int = 3
    new_papers_per_item: int = 5  # papers one feedback query may add

    @classmethod
    def from_params(cls, params: Mapping[str, object], deadline_s: float) -> "LoopBudget":
        """The catalogue entry's knobs (validated there) over the defaults; the deadline defaults to
        ``deadline_s`` and never exceeds it (past it the battle's own timeout would fail the side first)."""
        known = {k: params[k] for k in ("max_calls", "deadline_s", "max_feedback", "new_papers_per_item")
                 if k in params}
        budget = cls(deadline_s=deadline_s)
        budget = replace(budget, **{k: type(getattr(budget, k))(v) for k, v in known.items()})  # type: ignore[arg-type]
        return replace(budget, deadline_s=min(budget.deadline_s, deadline_s))


class _Stop(Exception):
    """Ends the loop early with the answer so far; the reason is recorded."""


@dataclass
class _Tally:
    calls: int = 0
    input_tokens: int | None = 0
    output_tokens: int | None = 0

    def add(self, usage: Usage | None) -> None:
        self.calls += 1
        got = usage or Usage()
        # A call that reports no tokens makes the total unknown rather than too small.
        self.input_tokens = None if self.input_tokens is None or got.input_tokens is None \
            else self.input_tokens + got.input_tokens
        self.output_tokens = None if self.output_tokens is None or got.output_tokens is None \
            else self.output_tokens + got.output_tokens

    @property
    def usage(self) -> Usage:
        return Usage(self.input_tokens, self.output_tokens)


class OpenScholarLoop:
    """One answer's run of the loop; ``run`` is the side's delta stream."""

    def __init__(self, spec: ModelSpec, base_provider: Provider, retriever: RetrieverLike | None,
                 request: GenerationRequest, budget: LoopBudget, *, timeout_s: float | None,
                 cancel: threading.Event | None, clock: Callable[[], float] = time.monotonic) -> None:
        assert spec.base is not None
        self.spec, self.base, self.provider = spec, spec.base, base_provider
        self.retriever, self.request, self.budget = retriever, request, budget
        self.timeout_s, self.cancel, self.clock = timeout_s, cancel, clock
        self.deadline = clock() + budget.deadline_s
        self.references: list[Reference] = list(request.references)
        self.extra: list[Reference] = []
        self.tally = _Tally()
        self.steps: list[str] = []
        self.counts: dict[str, int] = {"feedback_items": 0, "revisions_kept": 0, "revisions_rejected": 0}

    def run(self) -> Iterator[Delta]:
        yield Delta(status="Writing a first draft")
        answer = yield from self._call("draft", self.request, show=True, timeout_s=self.timeout_s)
        stopped = ""
        try:
            # max_feedback 0 is the paper's "no feedback" ablation: the draft, then the citation check.
            items = (yield from self._feedback(answer)) if self.budget.max_feedback else ()
            for number, item in enumerate(items, start=1):
                answer = yield from self._incorporate(answer, item, number, len(items))
        except _Stop as why:
            stopped = str(why)
        yield Delta(status="Checking every statement against its cited passages")
        verified, checks = self._verify(answer)
        if verified != answer:
            yield Delta(restart=True)
            yield Delta(text=verified)
        yield Delta(usage=self.tally.usage, report=self._report(stopped, checks))

    # ---------------------------------------------------------------- steps

    def _feedback(self, answer: str) -> Generator[Delta, None, tuple[FeedbackItem, ...]]:
        self._check_budget()
        yield Delta(status="Reviewing the draft for gaps")
        request = replace(self.request, messages=feedback_messages(self.request.question, self.references, answer,
                                                                     self.request.history),
                          revision=Revision("feedback", answer))
        reply = yield from self._call("feedback", request, show=False, timeout_s=self._remaining())
        try:
            feedback = parse_feedback(reply)
        except MalformedOutput:
            log.info("%s: unparseable feedback ends the loop", self.spec.name)
            raise _Stop("feedback unparseable") from None
        self.counts["feedback_items"] = feedback.returned
        return feedback.items[: self.budget.max_feedback]

    def _incorporate(self, answer: str, item: FeedbackItem, number: int,
                     total: int) -> Generator[Delta, None, str]:
        self._check_budget()
        if item.search and self.budget.new_papers_per_item:
            yield Delta(status=f"Searching for more papers: {item.search}")
            added = self._retrieve(item.search)
            if added:
                yield Delta(references=added)
        self._check_budget()
        yield Delta(status=f"Revising the answer for feedback {number} of {total}", restart=True)
        request = GenerationRequest(
            question=self.request.question, references=tuple(self.references),
            messages=refine_messages(self.request.question, self.references, answer, item, self.request.history),
            history=self.request.history,
            revision=Revision("refine", answer, feedback=item.issue, search=item.search,
                              added=tuple(r.number for r in self.extra)))
        try:
            revised = yield from self._call("refine", request, show=True, timeout_s=self._remaining())
        except _Stop:
            yield from self._show_again(answer)
            raise
        if same_text(answer, revised):
            return answer  # a revision that changed no word is no revision: not counted as kept
        if not self._acceptable(answer, revised):
            self.counts["revisions_rejected"] += 1
            yield from self._show_again(answer)
            return answer
        self.counts["revisions_kept"] += 1
        return revised

    def _retrieve(self, query: str) -> tuple[Reference, ...]:
        """New papers for ``query``, numbered after every reference so far; none when retrieval fails."""
        self.steps.append("retrieve")
        if self.retriever is None:
            return ()
        try:
            found = self.retriever.retrieve(query).references
        except SciArenaError as err:  # a search that fails leaves the answer as it is
            log.info("%s: extra retrieval failed: %s", self.spec.name, type(err).__name__)
            return ()
        known = {r.paper.paper_id for r in self.references}
        fresh = [r for r in found if r.paper.paper_id not in known][: self.budget.new_papers_per_item]
        start = max((r.number for r in self.references), default=0) + 1
        added = tuple(replace(r, number=start + k) for k, r in enumerate(fresh))
        self.references.extend(added)
        self.extra.extend(added)
        return added

    def _verify(self, answer: str) -> tuple[str, dict[str, int]]:
        self.steps.append("verify")
        try:
            cleaned = clean_answer(answer, self.references, self.request.question).text
        except MalformedOutput:
            return answer, {}
        result = CitationVerifier(self.references).verify(cleaned)
        checks = {"statements_checked": result.checked, "citations_added": result.added,
                  "unsupported": result.unsupported}
        return (result.text if result.added else answer), checks

    # ---------------------------------------------------------------- calls and budget

    def _call(self, step: str, request: GenerationRequest, *, show: bool,
              timeout_s: float | None) -> Generator[Delta, None, str]:
        """One base-model call; its text is streamed when ``show``. Returns the text, reasoning left out.

        The draft's failure is the side's (raised as it came); a later step's ends the loop (_Stop)."""
        if self.cancel is not None and self.cancel.is_set():
            raise Cancelled("The call was cancelled.", model=self.spec.name)
        self.steps.append(step)
        parts: list[str] = []
        usage: Usage | None = None
        options: dict[str, Any] = {"cancel": self.cancel}
        if timeout_s is not None:
            options["timeout_s"] = timeout_s
        try:
            for delta in self.provider.stream(self.base, request, **options):
                if delta.text:
                    parts.append(delta.text)
                    if show:
                        yield Delta(text=delta.text)
                usage = delta.usage or usage
        except Cancelled:
            raise
        except ProviderError as err:
            self.tally.add(usage)
            if step == "draft":
                raise
            log.info("%s: %s step failed: %s", self.spec.name, step, type(err).__name__)
            raise _Stop(f"{step} failed ({type(err).__name__})") from None
        self.tally.add(usage)
        yield Delta(usage=self.tally.usage)
        text = strip_reasoning("".join(parts)).strip()
        if not text:
            if step == "draft":
                raise MalformedOutput("The model returned no answer text.", model=self.spec.name)
            raise _Stop(f"{step} returned nothing")
        return text

    def _remaining(self) -> float:
        left = self.deadline - self.clock()
        if self.timeout_s is not None:
            left = min(left, self.timeout_s)
        return max(left, 0.001)

    def _check_budget(self) -> None:
        if self.cancel is not None and self.cancel.is_set():
            raise Cancelled("The call was cancelled.", model=self.spec.name)
        if self.tally.calls >= self.budget.max_calls:
            raise _Stop("call budget")
        if self.clock() >= self.deadline:
            raise _Stop("deadline")

    def _acceptable(self, before: str, after: str) -> bool:
        """Refuse a revision that throws away most of the answer or every citation it had."""
        if len(after) < MIN_REVISION_RATIO * len(before):
            return False
        return not (cited_numbers(before) and not cited_numbers(after))

    def _show_again(self, answer: str) -> Iterator[Delta]:
        yield Delta(restart=True)
        yield Delta(text=answer)

    def _report(self, stopped: str, checks: Mapping[str, int]) -> PipelineReport:
        passages = tuple(p.passage_id for r in self.extra for p in r.passages)
        return PipelineReport(
            pipeline=self.spec.pipeline, base=self.base.name, steps=tuple(self.steps), calls=self.tally.calls,
            extra_passages=len(passages), extra_context_ids=passages, stopped=stopped,
            **self.counts, **checks)  # type: ignore[arg-type]

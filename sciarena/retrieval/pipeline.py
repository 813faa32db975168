"""The Semantic Scholar retrieval pipeline SciArena runs (after ScholarQA).

question ─► QueryPlan (rewriting model, or the raw question)
         ─► snippet/search (≤40 passages) ‖ paper/search (≤20 abstracts)   — concurrently
         ─► candidates: drop passages of ≤20 words, duplicates, and abstracts of papers
            the snippet search already found
         ─► snippets scored by Semantic Scholar below ``min_snippet_score`` dropped
         ─► rerank against the question (BM25 by default)
         ─► relevance floor in the reranker's units (``relevance.py``): weak passages
            dropped, and every one when even the best is weak (no references, no battle)
         ─► group per paper (score = best passage; passages in document order), top 30,
            at most ``per_paper`` passages of one paper when that cap is set
         ─► paper/batch for the metadata snippet results lack (year, venue, authors)
         ─► Retrieval(backend="semantic_scholar", queries, filters, seconds)

``Retrieval.filters`` holds the filters sent (named as the API names them: year, venue,
authors, fieldsOfStudy, minCitationCount), ``rewriting`` ("model" or "fallback: <why>")
and, when the filters read from the question matched nothing and the search was repeated
without them, ``filters_dropped``. The operator's citation floor (``min_citations``) is
not read from the question, so it is kept on that repeat.
"""

from __future__ import annotations

import logging
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Protocol

from sciarena.core.errors import RetrievalError
from sciarena.core.types import Paper, Passage, Reference, Retrieval
from sciarena.retrieval.grouping import group_passages
from sciarena.retrieval.relevance import DENSE_FLOOR, MATCH_FLOOR, NOTHING_RELEVANT, RelevanceFloor
from sciarena.retrieval.rerank import BM25Reranker, Reranker, rerank
from sciarena.retrieval.rewrite import QueryPlan
from sciarena.retrieval.semantic_scholar import (
    S2Paper,
    S2Snippet,
    SearchFilters,
    SemanticScholarClient,
    unique,
)

log = logging.getLogger(__name__)

BACKEND = "semantic_scholar"
NO_REWRITER = "no rewriting model configured"
# Title, abstract and body snippets carry offsets into different texts; ranking the kind
# first keeps a paper's passages in reading order.
_KIND_RANK = {"title": 0, "abstract": 1, "body": 2}
_KIND_STRIDE = 1_000_000_000
# BM25 over the candidates alone: a candidate that shares no content word with the
# question scores 0 and goes, and when none shares one there are no references. No
# relative cut: the local one was calibrated on BM25 over a whole index, not on these
# candidate-set scores, and no Semantic Scholar traffic could be measured offline.
CANDIDATE_BM25_FLOOR = MATCH_FLOOR


def floor_for(reranker: Reranker) -> RelevanceFloor:
    """The relevance floor in ``reranker``'s score units."""
    return DENSE_FLOOR if reranker.name == "dense" else CANDIDATE_BM25_FLOOR


class Rewriter(Protocol):
    def rewrite(self, question: str) -> QueryPlan:
        """A plan for ``question``; never raises (falls back to the raw question)."""


@dataclass(frozen=True)
class PipelineLimits:
    snippets: int = 40  # asked of snippet/search
    abstracts: int = 20  # asked of paper/search
    top_k: int = 30  # passages passed to the models
    min_words: int = 21  # a passage of 20 words or fewer is dropped
    # Semantic Scholar's own snippet score below which a snippet is dropped before reranking.
    # Off (0) by default: its scale is undocumented and no real traffic was measured offline.
    min_snippet_score: float = 0.0
    per_paper: int | None = None  # at most this many passages of one paper in the top_k; None = no cap
    min_citations: int = 0  # sent as minCitationCount on both searches; 0 = no floor

    def __post_init__(self) -> None:
        if min(self.snippets, self.abstracts, self.top_k) < 1:
            raise ValueError("retrieval limits must be at least 1")
        if self.min_snippet_score < 0:
            raise ValueError("min_snippet_score must not be negative")
        if self.per_paper is not None and self.per_paper < 1:
            raise ValueError("per_paper must be at least 1 (or None for no cap)")
        if self.min_citations < 0:
            raise ValueError("min_citations must not be negative")


def with_citation_floor(filters: SearchFilters, min_citations: int) -> SearchFilters:
    """``filters`` with a citation floor of at least ``min_citations`` (the stricter one wins)."""
    if min_citations <= 0:
        return filters
    current = filters.min_citation_count or 0
    return replace(filters, min_citation_count=max(current, min_citations))


@dataclass(frozen=True)
class Candidates:
    """The passages to rerank, and the papers whose metadata is still incomplete."""

    passages: tuple[Passage, ...]
    incomplete: frozenset[str]


def document_position(kind: str, start: int) -> int:
    """Sort key of a snippet inside its paper: title, then abstract, then body by offset."""
    return _KIND_RANK.get(kind, 2) * _KIND_STRIDE + max(0, start)


def build_candidates(snippets: tuple[S2Snippet, ...], papers: tuple[S2Paper, ...],
                     min_words: int, min_score: float = 0.0) -> Candidates:
    """Snippets in API order, then abstracts of papers no kept snippet came from.

    Drops texts shorter than ``min_words`` words, snippets Semantic Scholar scored below
    ``min_score``, and repeats (same passage, or the same text under another paper id, as
    preprint and published versions often are). A snippet's paper takes its metadata
    from the abstract results when they hold it.
    """
    full = {p.corpus_id: p for p in papers}
    seen_ids: set[str] = set()
    seen_texts: set[str] = set()
    passages: list[Passage] = []
    incomplete: set[str] = set()

    def keep(passage_id: str, text: str) -> bool:
        key = " ".join(text.lower().split())
        if len(key.split()) < min_words or passage_id in seen_ids or key in seen_texts:
            return False
        seen_ids.add(passage_id)
        seen_texts.add(key)
        return True

    for hit in snippets:
        if hit.score < min_score:
            continue
        cid = hit.paper.corpus_id
        passage_id = f"{cid}#{hit.kind}@{hit.start}"
        if not keep(passage_id, hit.text):
            continue
        record = _merge(hit.paper, full[cid]) if cid in full else hit.paper
        if not record.metadata_complete and cid not in full:
            incomplete.add(cid)
        passages.append(Passage(passage_id=passage_id, paper=record.to_paper(), text=hit.text,
                                position=document_position(hit.kind, hit.start),
                                score=hit.score, kind=hit.kind))
    from_snippets = {p.paper.paper_id for p in passages}
    for paper in unique_papers(papers):
        if paper.corpus_id in from_snippets or paper.abstract is None:
            continue
        passage_id = f"{paper.corpus_id}#abstract"
        if keep(passage_id, paper.abstract):
            passages.append(Passage(passage_id=passage_id, paper=paper.to_paper(), text=paper.abstract,
                                    position=document_position("abstract", 0), kind="abstract"))
    return Candidates(tuple(passages), frozenset(incomplete))


def unique_papers(papers: tuple[S2Paper, ...]) -> list[S2Paper]:
    seen: dict[str, S2Paper] = {}
    for paper in papers:
        seen.setdefault(paper.corpus_id, paper)
    return list(seen.values())


def _merge(partial: S2Paper, full: S2Paper) -> S2Paper:
    """``full``'s metadata, keeping what only ``partial`` knows."""
    return replace(full, title=full.title if full.title != "Untitled" else partial.title,
                   authors=full.authors or partial.authors,
                   author_count=full.author_count or partial.author_count)


def _complete(paper: Paper, found: S2Paper) -> Paper:
    """``paper`` with the fields it lacks taken from a paper/batch record."""
    new = found.to_paper()
    return replace(
        paper, year=paper.year if paper.year is not None else new.year,
        venue=paper.venue or new.venue,
        authors=paper.authors or new.authors, et_al=paper.et_al if paper.authors else new.et_al,
        doi=paper.doi or new.doi, url=new.url if found.url else paper.url,
        discipline=paper.discipline or new.discipline, field=paper.field or new.field,
        title=paper.title if paper.title != "Untitled" else new.title,
    )


class SemanticScholarRetriever:
    """Answers a question with references found through the Semantic Scholar API."""

    backend_name = BACKEND

    def __init__(self, client: SemanticScholarClient, *, rewriter: Rewriter | None = None,
                 reranker: Reranker | None = None, limits: PipelineLimits = PipelineLimits(),
                 floor: RelevanceFloor | None = None) -> None:
        self.client, self.rewriter = client, rewriter
        self.reranker = reranker or BM25Reranker()
        self.limits = limits
        self.floor = floor or floor_for(self.reranker)

    def retrieve(self, question: str) -> Retrieval:
        """Run the pipeline; RetrievalError when neither search endpoint answers."""
        started = time.perf_counter()
        plan = self.rewriter.rewrite(question) if self.rewriter else QueryPlan.raw(question, NO_REWRITER)
        limits = self.limits
        floor_only = with_citation_floor(SearchFilters(), limits.min_citations)
        plan = replace(plan, filters=with_citation_floor(plan.filters, limits.min_citations))
        snippets, papers, note = self._search(plan)
        filters: dict[str, object] = {**plan.filters.params(), "rewriting": plan.label}
        candidates = build_candidates(snippets, papers, limits.min_words, limits.min_snippet_score)
        if not candidates.passages and plan.filters != floor_only:
            # Filters a model read into the question can be stricter than the user meant;
            # the citation floor is the operator's, so the repeat keeps it.
            snippets, papers, note = self._search(replace(plan, filters=floor_only))
            candidates = build_candidates(snippets, papers, limits.min_words, limits.min_snippet_score)
            filters["filters_dropped"] = True
            note = _join(note, "Nothing matched the filters read from your question; searched without them.")
        ranked = self.floor.apply(rerank(self.reranker, question, candidates.passages))
        references = group_passages(ranked, limits.top_k, limits.per_paper) if ranked else ()
        references = self._fill_metadata(references, candidates.incomplete)
        if not references:
            floor = f" among papers cited at least {limits.min_citations} times" if limits.min_citations else ""
            note = _join(note, NOTHING_RELEVANT if candidates.passages
                         else f"Semantic Scholar found no passage for this question{floor}.")
        return Retrieval(question=question, references=references, backend=BACKEND,
                         queries=unique((plan.snippet_query, plan.keyword_query)), filters=filters,
                         seconds=time.perf_counter() - started, note=note)

    def _search(self, plan: QueryPlan) -> tuple[tuple[S2Snippet, ...], tuple[S2Paper, ...], str]:
        """Both searches at once: the pipeline waits for the slower one, not for their sum."""
        limits = self.limits
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="s2-paper-search") as pool:
            papers_job = pool.submit(self.client.paper_search, plan.keyword_query, limits.abstracts,
                                     plan.filters)
            snippet_error: RetrievalError | None = None
            try:
                snippets = self.client.snippet_search(plan.snippet_query, limits.snippets, plan.filters)
            except RetrievalError as err:
                snippets, snippet_error = (), err
            try:
                papers = papers_job.result()
            except RetrievalError as err:
                if snippet_error is not None:
                    raise snippet_error from None
                log.warning("paper/search failed; using snippets only: %s", err)
                papers = ()
        if snippet_error is not None:
            log.warning("snippet/search failed; using abstracts only: %s", snippet_error)
            return snippets, papers, "Full-text search was unavailable; the references come from abstracts only."
        return snippets, papers, ""

    def _fill_metadata(self, references: tuple[Reference, ...],
                       incomplete: frozenset[str]) -> tuple[Reference, ...]:
        missing = [r.paper.paper_id for r in references if r.paper.paper_id in incomplete]
        if not missing:
            return references
        try:
            found = self.client.paper_batch(missing)
        except RetrievalError as err:  # references without a year still serve the models
            log.warning("paper/batch failed; some references lack metadata: %s", err)
            return references
        by_id = {cid: paper for cid, paper in zip(missing, found, strict=True) if paper is not None}
        return tuple(_with_paper(r, _complete(r.paper, by_id[r.paper.paper_id]))
                     if r.paper.paper_id in by_id else r for r in references)


def _with_paper(reference: Reference, paper: Paper) -> Reference:
    return replace(reference, paper=paper,
                   passages=tuple(replace(p, paper=paper) for p in reference.passages))


def _join(first: str, second: str) -> str:
    return f"{first} {second}".strip()

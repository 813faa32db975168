"""Relevance floors in the Semantic Scholar pipeline, against the loopback fake."""

from __future__ import annotations

import pytest
from fake_semantic_scholar import FakeSemanticScholar

from sciarena.retrieval.pipeline import CANDIDATE_BM25_FLOOR, PipelineLimits, SemanticScholarRetriever, floor_for
from sciarena.retrieval.relevance import DENSE_FLOOR, NOTHING_RELEVANT
from sciarena.retrieval.rerank import BM25Reranker
from sciarena.retrieval.semantic_scholar import SemanticScholarClient

QUESTION = "How accurate are citations of retrieval-augmented language models?"


class FixedScores:
    """A reranker that gives every candidate the same score, under a chosen name."""

    def __init__(self, name: str, score: float) -> None:
        self.name, self.score = name, score

    def scores(self, query, texts):
        return [self.score] * len(texts)


@pytest.fixture()
def s2():
    with FakeSemanticScholar() as server:
        yield server


def retriever_for(server, **kwargs) -> SemanticScholarRetriever:
    client = SemanticScholarClient(server.base_url, max_attempts=1, sleep=lambda s: None)
    return SemanticScholarRetriever(client, **kwargs)


def test_each_reranker_gets_the_floor_in_its_own_units():
    assert floor_for(BM25Reranker()) == CANDIDATE_BM25_FLOOR
    assert floor_for(FixedScores("dense", 0.9)) == DENSE_FLOOR


def test_candidates_sharing_no_word_with_the_question_give_no_references(s2):
    # The fake matches "their" and "will" (the abstract of paper 1002 has "their"); BM25 drops
    # them as stopwords, so every candidate scores 0 and none is relevant.
    result = retriever_for(s2).retrieve("will their")
    assert s2.calls("paper/search") and result.references == ()
    assert result.note == NOTHING_RELEVANT


def test_weak_dense_scores_give_no_references_and_strong_ones_pass(s2):
    weak = retriever_for(s2, reranker=FixedScores("dense", DENSE_FLOOR.min_best - 0.01)).retrieve(QUESTION)
    assert weak.references == () and weak.note == NOTHING_RELEVANT
    strong = retriever_for(s2, reranker=FixedScores("dense", DENSE_FLOOR.min_best + 0.01)).retrieve(QUESTION)
    assert strong.references and strong.note == ""


def test_snippets_below_the_semantic_scholar_score_floor_are_dropped(s2):
    client = SemanticScholarClient(s2.base_url, max_attempts=1)
    by_score = {f"{h.paper.corpus_id}#{h.kind}@{h.start}": h.score for h in client.snippet_search(QUESTION)}

    def snippet_ids(limits: PipelineLimits) -> set[str]:
        result = retriever_for(s2, limits=limits).retrieve(QUESTION)
        return {p.passage_id for r in result.references for p in r.passages if p.passage_id in by_score}

    everything, strict = snippet_ids(PipelineLimits()), snippet_ids(PipelineLimits(min_snippet_score=0.5))
    assert strict and strict < everything
    assert all(by_score[i] >= 0.5 for i in strict) and all(by_score[i] < 0.5 for i in everything - strict)
    assert snippet_ids(PipelineLimits(min_snippet_score=1.01)) == set()


def test_a_negative_score_floor_is_refused():
    with pytest.raises(ValueError, match="min_snippet_score"):
        PipelineLimits(min_snippet_score=-1.0)

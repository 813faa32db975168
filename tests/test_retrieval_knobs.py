"""The retrieval knobs: a per-paper passage cap and Semantic Scholar's minimum-citation filter."""

from __future__ import annotations

import logging
import random
from pathlib import Path

import pytest
from fake_semantic_scholar import FakeSemanticScholar

from sciarena.core.settings import Settings
from sciarena.core.types import Paper, Passage
from sciarena.retrieval.choose import RetrievalOptions, open_retriever
from sciarena.retrieval.grouping import group_passages
from sciarena.retrieval.local import LocalIndex, LocalRetriever, open_local_retriever
from sciarena.retrieval.pipeline import PipelineLimits, SemanticScholarRetriever, with_citation_floor
from sciarena.retrieval.rewrite import QueryPlan
from sciarena.retrieval.semantic_scholar import SearchFilters, SemanticScholarClient

QUESTION = ("How accurate are citations of retrieval-augmented language models, and do dense "
            "retrievers beat BM25 lexical matching for scientific search?")


def passage(paper_id: str, position: int, score: float) -> Passage:
    return Passage(passage_id=f"{paper_id}#{position}", paper=Paper(paper_id, f"T {paper_id}"),
                   text=f"text {paper_id} {position}", position=position, score=score)


def layout(references) -> list[tuple[str, list[int]]]:
    return [(r.paper.paper_id, [p.position for p in r.passages]) for r in references]


# --- group_passages(per_paper=...) -----------------------------------------------------

# Paper "a" has the four best passages; without a cap it takes every slot of a top 3.
DOMINANT = [passage("a", 2, 9.0), passage("a", 0, 8.0), passage("a", 3, 7.0), passage("a", 1, 6.0),
            passage("b", 5, 5.0), passage("c", 1, 4.0), passage("d", 0, 3.0)]


def test_without_a_cap_one_paper_can_take_every_slot():
    assert layout(group_passages(DOMINANT, top_k=3)) == [("a", [0, 2, 3])]
    assert group_passages(DOMINANT, 3, None) == group_passages(DOMINANT, 3)


@pytest.mark.parametrize("cap, expected", [
    (1, [("a", [2]), ("b", [5]), ("c", [1])]),
    (2, [("a", [0, 2]), ("b", [5])]),
    (3, [("a", [0, 2, 3])]),
])
def test_the_cap_frees_slots_for_the_next_papers(cap, expected):
    refs = group_passages(DOMINANT, top_k=3, per_paper=cap)
    assert layout(refs) == expected  # each paper keeps its best-scored passages
    assert sum(len(r.passages) for r in refs) == 3
    assert [r.number for r in refs] == list(range(1, len(refs) + 1))


def test_order_rules_are_unchanged_under_a_cap():
    hits = [passage("x", 4, 2.0), passage("y", 1, 2.0), passage("x", 1, 3.0), passage("y", 0, 1.0),
            passage("z", 0, 2.0)]
    refs = group_passages(hits, top_k=10, per_paper=2)
    # x's best passage (3.0) ranks it first; y and z tie at 2.0 and keep their input order.
    assert layout(refs) == [("x", [1, 4]), ("y", [0, 1]), ("z", [0])]
    assert [r.score for r in refs] == [3.0, 2.0, 2.0]


def test_a_repeated_passage_counts_once_towards_the_cap():
    hits = [passage("a", 0, 9.0), passage("a", 0, 1.0), passage("a", 1, 8.0), passage("b", 0, 5.0)]
    refs = group_passages(hits, top_k=3, per_paper=2)
    assert layout(refs) == [("a", [0, 1]), ("b", [0])]
    assert refs[0].passages[0].score == 9.0


def test_a_cap_at_least_the_longest_paper_changes_nothing():
    rng = random.Random(3)
    for _ in range(50):
        hits = [passage(rng.choice("abcde"), rng.randint(0, 9), float(rng.randint(0, 6))) for _ in range(30)]
        top_k = rng.randint(1, 20)
        capped = group_passages(hits, top_k, per_paper=10)  # 10 positions: no paper has more
        assert capped == group_passages(hits, top_k)
        small = group_passages(hits, top_k, per_paper=2)
        assert all(len(r.passages) <= 2 for r in small)
        distinct = {(p.paper.paper_id, p.position) for p in hits}
        room = sum(min(2, sum(1 for pid, _ in distinct if pid == paper)) for paper in "abcde")
        assert sum(len(r.passages) for r in small) == min(top_k, room)


def test_a_cap_below_one_is_refused():
    with pytest.raises(ValueError, match="per_paper"):
        group_passages(DOMINANT, top_k=3, per_paper=0)


# --- Settings and options -------------------------------------------------------------

def test_settings_default_to_no_cap_and_no_citation_floor():
    settings = Settings.from_env({})
    assert (settings.passages_per_paper, settings.min_citations) == (None, 0)
    opts = RetrievalOptions.from_settings(settings)
    assert (opts.per_paper, opts.min_citations) == (None, 0)


def test_settings_read_both_knobs_and_pass_them_to_retrieval():
    settings = Settings.from_env({"SCIARENA_PASSAGES_PER_PAPER": "3", "SCIARENA_MIN_CITATIONS": "25"})
    assert (settings.passages_per_paper, settings.min_citations) == (3, 25)
    opts = RetrievalOptions.from_settings(settings)
    assert (opts.per_paper, opts.min_citations) == (3, 25)
    assert Settings.from_env({"SCIARENA_PASSAGES_PER_PAPER": "0"}).passages_per_paper is None


@pytest.mark.parametrize("name", ["SCIARENA_PASSAGES_PER_PAPER", "SCIARENA_MIN_CITATIONS"])
@pytest.mark.parametrize("raw", ["-1", "two", "1.5"])
def test_bad_values_name_the_variable(name, raw):
    with pytest.raises(ValueError, match=name):
        Settings.from_env({name: raw})


def test_limits_refuse_bad_values():
    with pytest.raises(ValueError, match="per_paper"):
        PipelineLimits(per_paper=0)
    with pytest.raises(ValueError, match="min_citations"):
        PipelineLimits(min_citations=-1)


def test_the_stricter_citation_floor_wins():
    read = SearchFilters(year_start=2020, venues=("ACL",))
    assert with_citation_floor(read, 0) is read
    assert with_citation_floor(read, 7) == SearchFilters(year_start=2020, venues=("ACL",), min_citation_count=7)
    assert with_citation_floor(SearchFilters(min_citation_count=50), 7).min_citation_count == 50


# --- Semantic Scholar -----------------------------------------------------------------

class FixedPlan:
    def __init__(self, plan: QueryPlan) -> None:
        self.plan = plan

    def rewrite(self, question):
        return self.plan


class PhraseScores:
    """Scores a candidate by the first listed phrase its text contains (0 otherwise)."""

    name = "phrases"

    def __init__(self, table: dict[str, float]) -> None:
        self.table = table

    def scores(self, query, texts):
        return [next((s for phrase, s in self.table.items() if phrase in t), 0.0) for t in texts]


@pytest.fixture()
def s2():
    with FakeSemanticScholar() as server:
        yield server


def retriever_for(server, limits: PipelineLimits, **kwargs) -> SemanticScholarRetriever:
    client = SemanticScholarClient(server.base_url, max_attempts=2, sleep=lambda s: None)
    return SemanticScholarRetriever(client, limits=limits, **kwargs)


def searches(server):
    return [c for c in server.requests if c.endpoint in ("snippet/search", "paper/search")]


def test_the_citation_floor_is_sent_on_both_searches_and_recorded(s2):
    result = retriever_for(s2, PipelineLimits(min_citations=5)).retrieve(QUESTION)
    assert {c.endpoint for c in searches(s2)} == {"snippet/search", "paper/search"}
    assert all(c.params.get("minCitationCount") == "5" for c in searches(s2))
    assert result.filters == {"minCitationCount": "5", "rewriting": "fallback: no rewriting model configured"}
    assert result.references  # every fake paper has 10 citations


def test_no_floor_sends_no_parameter(s2):
    result = retriever_for(s2, PipelineLimits()).retrieve(QUESTION)
    assert searches(s2) and not any("minCitationCount" in c.params for c in searches(s2))
    assert "minCitationCount" not in result.filters


def test_the_rewriters_filters_survive_the_floor(s2):
    plan = QueryPlan("citation accuracy retrieval-augmented models", "citation accuracy",
                     SearchFilters(year_start=2022, venues=("ACL",)), rewritten=True)
    result = retriever_for(s2, PipelineLimits(min_citations=3), rewriter=FixedPlan(plan)).retrieve(QUESTION)
    for call in searches(s2):
        assert (call.params["year"], call.params["venue"], call.params["minCitationCount"]) == ("2022-", "ACL", "3")
    assert result.filters == {"year": "2022-", "venue": "ACL", "minCitationCount": "3", "rewriting": "model"}
    assert {r.paper.paper_id for r in result.references} == {"1002"}


def test_the_floor_is_kept_when_the_question_filters_are_dropped(s2):
    plan = QueryPlan(QUESTION, "dense retrievers", SearchFilters(venues=("Nowhere Journal",)), rewritten=True)
    result = retriever_for(s2, PipelineLimits(min_citations=4), rewriter=FixedPlan(plan)).retrieve(QUESTION)
    assert result.references and result.filters["filters_dropped"] is True
    sent = [(c.params.get("venue"), c.params.get("minCitationCount")) for c in s2.calls("snippet/search")]
    assert sent == [("Nowhere Journal", "4"), (None, "4")]
    assert result.filters["minCitationCount"] == "4"


def test_a_floor_alone_that_finds_nothing_is_not_searched_again(s2):
    result = retriever_for(s2, PipelineLimits(min_citations=4)).retrieve("zzzz qqqq")
    assert len(s2.calls("snippet/search")) == 1 and "filters_dropped" not in result.filters
    assert result.references == () and "cited at least 4 times" in result.note


def test_the_pipeline_caps_passages_per_paper(s2):
    # 1001 holds the two best passages; a top 2 without a cap is that one paper.
    scores = PhraseScores({"Hard negatives": 5.0, "Dense retrievers encode": 4.0, "We measure how": 3.0})
    plain = retriever_for(s2, PipelineLimits(top_k=2), reranker=scores).retrieve(QUESTION)
    assert [(r.paper.paper_id, len(r.passages)) for r in plain.references] == [("1001", 2)]
    capped = retriever_for(s2, PipelineLimits(top_k=2, per_paper=1), reranker=scores).retrieve(QUESTION)
    assert [(r.paper.paper_id, r.passages[0].text.split()[0]) for r in capped.references] == [
        ("1001", "Hard"), ("1002", "We")]


def test_open_retriever_passes_both_knobs_to_semantic_scholar(s2):
    opts = RetrievalOptions(retriever="semantic_scholar", s2_base_url=s2.base_url, s2_max_attempts=2,
                            moderation="off", reranker="bm25", per_paper=1, min_citations=2)
    result = open_retriever(Settings(), options=opts).retrieve(QUESTION)
    assert all(c.params.get("minCitationCount") == "2" for c in searches(s2))
    assert result.references and all(len(r.passages) == 1 for r in result.references)


# --- the local retriever --------------------------------------------------------------

def long_paper_corpus() -> list[tuple[Paper, str]]:
    """One paper of eight strongly matching blocks, six papers with one weaker match each."""
    long_text = " ".join(f"Graphene transistors graphene transistors switch in trial {i}." for i in range(8))
    pairs = [(Paper("long", "Switching study"), long_text)]
    for i in range(6):
        pairs.append((Paper(f"s{i}", f"Short note {i}"),
                      f"Laboratory {i} measured graphene transistors among many materials."))
    return pairs


@pytest.fixture()
def long_index(tmp_path: Path) -> Path:
    LocalIndex.build(long_paper_corpus(), max_words=10).save(tmp_path / "idx")
    return tmp_path / "idx"


def test_the_local_retriever_fills_freed_slots_with_other_papers(long_index):
    index = LocalIndex.load(long_index)
    assert index.num_passages == 14
    plain = LocalRetriever(index, "t", top_k=3).retrieve("graphene transistors")
    assert [(r.paper.paper_id, len(r.passages)) for r in plain.references] == [("long", 3)]
    # The long paper has more passages than top_k: the search must look past them.
    capped = LocalRetriever(index, "t", top_k=3, per_paper=1).retrieve("graphene transistors")
    ids = [r.paper.paper_id for r in capped.references]
    assert ids[0] == "long" and len(ids) == 3 and all(i.startswith("s") for i in ids[1:])
    two = LocalRetriever(index, "t", top_k=3, per_paper=2).retrieve("graphene transistors")
    assert [len(r.passages) for r in two.references] == [2, 1]
    with pytest.raises(ValueError, match="per_paper"):
        LocalRetriever(index, "t", per_paper=0)


def test_open_local_retriever_and_open_retriever_honour_the_cap(long_index):
    direct = open_local_retriever(f"local:{long_index}", top_k=3, per_paper=1)
    assert len(direct.retrieve("graphene transistors").references) == 3
    opts = RetrievalOptions(retriever=f"local:{long_index}", moderation="off", reranker="bm25",
                            top_k=3, per_paper=1)
    result = open_retriever(Settings(), options=opts).retrieve("graphene transistors")
    assert [len(r.passages) for r in result.references] == [1, 1, 1]


def test_a_citation_floor_on_the_local_datastore_is_logged_not_pretended(long_index, caplog):
    caplog.set_level(logging.INFO, logger="sciarena.retrieval.choose")
    opts = RetrievalOptions(retriever=f"local:{long_index}", moderation="off", reranker="bm25", min_citations=10)
    retriever = open_retriever(Settings(), options=opts)
    for _ in range(2):
        result = retriever.retrieve("graphene transistors")
        assert result.references and "minCitationCount" not in result.filters
    notes = [r for r in caplog.records if "SCIARENA_MIN_CITATIONS" in r.getMessage()]
    assert len(notes) == 1 and "Semantic Scholar only" in notes[0].getMessage()
    caplog.clear()
    open_retriever(Settings(), options=RetrievalOptions(retriever=f"local:{long_index}", moderation="off",
                                                        reranker="bm25"))
    assert not any("SCIARENA_MIN_CITATIONS" in r.getMessage() for r in caplog.records)

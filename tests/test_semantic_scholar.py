"""The Semantic Scholar client against a loopback imitation of the API: shapes, retries, errors."""

from __future__ import annotations

import logging
import random
import socket
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime

import pytest
from fake_semantic_scholar import FakeSemanticScholar, Fault

from sciarena.core.errors import RetrievalError, SemanticScholarUnavailable
from sciarena.retrieval.semantic_scholar import (
    BATCH_FIELDS,
    PAPER_FIELDS,
    SNIPPET_FIELDS,
    RequestSpacing,
    S2Paper,
    SearchFilters,
    SemanticScholarClient,
    parse_retry_after,
)

KEY = "s2-test-key-7f3a9c"


class Sleeps:
    """Records the delays the client asks for instead of waiting."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


@pytest.fixture()
def s2():
    with FakeSemanticScholar() as server:
        yield server


def client_for(server: FakeSemanticScholar, **kwargs) -> SemanticScholarClient:
    kwargs.setdefault("sleep", Sleeps())
    return SemanticScholarClient(server.base_url, **kwargs)


# --- shapes ----------------------------------------------------------------------------

def test_snippet_search_returns_typed_hits_and_sends_documented_params(s2):
    hits = client_for(s2).snippet_search("dense retrievers question answering", limit=3)
    assert 0 < len(hits) <= 3
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    body = next(h for h in hits if h.kind == "body")
    assert body.paper.corpus_id == "1001" and body.paper.authors == ("Ana Ruiz", "Bo Chen")
    assert body.end - body.start == len(body.text) and body.section
    assert body.paper.year is None  # snippet results carry no year: the pipeline fills it
    (call,) = s2.calls("snippet/search")
    assert call.params == {"query": "dense retrievers question answering", "limit": "3",
                           "fields": SNIPPET_FIELDS}
    assert "x-api-key" not in {k.lower() for k in call.headers}


def test_paper_search_maps_records_to_papers(s2):
    papers = client_for(s2, api_key=KEY).paper_search("dense retrievers", limit=5)
    dense = next(p for p in papers if p.corpus_id == "1001")
    assert dense.doi == "10.1000/dense" and dense.year == 2020 and dense.venue == "EMNLP"
    paper = dense.to_paper()
    assert paper.paper_id == "1001" and paper.link == dense.url
    assert paper.discipline == "Engineering" and paper.field == "Computer Science"
    call = s2.calls("paper/search")[0]
    assert call.params["fields"] == PAPER_FIELDS and call.params["limit"] == "5"
    assert {k.lower(): v for k, v in call.headers.items()}["x-api-key"] == KEY


def test_long_author_lists_are_cut_with_et_al(s2):
    (paper,) = client_for(s2).paper_batch(["1002"])
    assert paper is not None and paper.author_count == 12
    converted = paper.to_paper()
    assert len(converted.authors) == 10 and converted.et_al
    assert converted.concise_authors == "Adams et al. 2023"


def test_link_falls_back_to_the_corpus_id_page():
    paper = S2Paper(corpus_id="42", title="T").to_paper()
    assert paper.link == "https://www.semanticscholar.org/p/42"


def test_filters_become_api_params(s2):
    filters = SearchFilters(year_start=2021, year_end=2024, venues=("ACL", "Findings, ACL"),
                            fields_of_study=("Computer Science",), authors=("Ana Ruiz",),
                            min_citation_count=5)
    assert filters.params() == {"year": "2021-2024", "venue": "ACL,Findings  ACL",
                                "authors": "Ana Ruiz", "fieldsOfStudy": "Computer Science",
                                "minCitationCount": "5"}
    assert SearchFilters(year_start=2020).params() == {"year": "2020-"}
    assert SearchFilters(year_end=2019).params() == {"year": "-2019"}
    assert SearchFilters(year_start=2020, year_end=2020).params() == {"year": "2020"}
    assert SearchFilters().empty
    hits = client_for(s2).paper_search("citations retrieval", filters=SearchFilters(year_start=2023))
    assert hits and all(p.year >= 2023 for p in hits)
    assert s2.calls("paper/search")[0].params["year"] == "2023-"


def test_batch_keeps_order_marks_misses_and_chunks_at_500(s2):
    client = client_for(s2)
    found = client.paper_batch(["1003", "999999", "1001"])
    assert [p.corpus_id if p else None for p in found] == ["1003", None, "1001"]
    call = s2.calls("paper/batch")[0]
    assert call.method == "POST" and call.params == {"fields": BATCH_FIELDS}
    assert call.body == {"ids": ["CorpusId:1003", "CorpusId:999999", "CorpusId:1001"]}
    ids = [str(2_000_000 + i) for i in range(1001)] + ["1005"]
    many = client.paper_batch(ids)  # the fake answers 400 to a batch of more than 500 ids
    assert len(many) == 1002 and many[-1].corpus_id == "1005" and many[0] is None
    assert [len(c.body["ids"]) for c in s2.calls("paper/batch")[1:]] == [500, 500, 2]


def test_empty_results_are_empty(s2):
    client = client_for(s2)
    assert client.snippet_search("zzzz qqqq") == ()
    assert client.paper_search("zzzz qqqq") == ()
    assert client.paper_batch([]) == () and not s2.calls("paper/batch")


# --- retries, timeouts, errors ---------------------------------------------------------

def test_429_twice_then_success_retries_with_multiplicative_jittered_backoff(s2):
    s2.fail("snippet/search", Fault(status=429), times=2)
    sleeps = Sleeps()
    client = client_for(s2, sleep=sleeps, backoff_s=0.4, backoff_factor=3.0, rng=random.Random(5))
    assert client.snippet_search("dense retrievers")
    assert [c.status for c in s2.calls("snippet/search")] == [429, 429, 200]
    first, second = sleeps.delays
    assert 0.2 <= first <= 0.4 and 0.6 <= second <= 1.2  # base × factor^n, jitter in [½, 1]
    assert second > first


def test_retry_after_is_respected_and_capped(s2):
    s2.fail("paper/search", Fault(status=429, headers=(("Retry-After", "0.05"),)))
    s2.fail("paper/search", Fault(status=503, headers=(("Retry-After", "120"),)))
    sleeps = Sleeps()
    client_for(s2, sleep=sleeps, max_backoff_s=2.5).paper_search("dense")
    assert sleeps.delays == [0.05, 2.5]


def test_parse_retry_after():
    assert parse_retry_after("3") == 3.0 and parse_retry_after(" 0.5 ") == 0.5
    assert parse_retry_after(None) is None and parse_retry_after("soon") is None
    later = format_datetime(datetime.now(timezone.utc) + timedelta(seconds=30), usegmt=True)
    assert 25 <= parse_retry_after(later) <= 31
    earlier = format_datetime(datetime.now(timezone.utc) - timedelta(seconds=30), usegmt=True)
    assert parse_retry_after(earlier) == 0.0


def test_persistent_500_gives_up_after_max_attempts(s2):
    s2.fail("snippet/search", Fault(status=500), times=10)
    sleeps = Sleeps()
    with pytest.raises(SemanticScholarUnavailable, match=r"HTTP 500 after 4 attempts"):
        client_for(s2, sleep=sleeps, max_attempts=4).snippet_search("dense")
    assert len(s2.calls("snippet/search")) == 4 and len(sleeps.delays) == 3


def test_retries_stop_at_the_deadline(s2):
    s2.fail("snippet/search", Fault(status=502), times=10)
    sleeps = Sleeps()
    with pytest.raises(SemanticScholarUnavailable, match="after 2 attempts"):
        client_for(s2, sleep=sleeps, max_attempts=5, backoff_s=1.0, backoff_factor=4.0,
                   deadline_s=2.0).snippet_search("dense")
    assert sum(sleeps.delays) <= 2.0


def test_client_errors_are_not_retried_and_say_why(s2):
    s2.fail("paper/search", Fault(status=400, body=b'{"error": "Unrecognized field: foo"}'))
    with pytest.raises(RetrievalError, match=r"HTTP 400: Unrecognized field: foo") as caught:
        client_for(s2).paper_search("dense")
    assert not isinstance(caught.value, SemanticScholarUnavailable)
    assert len(s2.calls("paper/search")) == 1


def test_slow_response_times_out_then_retry_succeeds(s2):
    # The slow answer finds nothing, so papers can only come from the retry: the client did not wait for it.
    s2.fail("paper/search", Fault(delay_s=1.5, body=b'{"total": 0, "offset": 0, "data": []}'))
    papers = client_for(s2, timeout_s=0.2).paper_search("dense")
    assert papers


def test_slow_responses_every_time_raise_unavailable(s2):
    s2.fail("paper/search", Fault(delay_s=1.5), times=2)
    with pytest.raises(SemanticScholarUnavailable, match="timed out after 2 attempts"):
        client_for(s2, timeout_s=0.2, max_attempts=2).paper_search("dense")  # waited for, they would answer


def test_a_connection_dropped_mid_answer_is_retried(s2):
    s2.fail("paper/search", Fault(truncate=True))
    sleeps = Sleeps()
    assert client_for(s2, sleep=sleeps).paper_search("dense")
    assert len(s2.calls("paper/search")) == 2 and len(sleeps.delays) == 1


def test_connection_refused_is_unavailable():
    with socket.socket() as sock:  # a port nobody listens on once closed
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    client = SemanticScholarClient(f"http://127.0.0.1:{port}/graph/v1", max_attempts=2, sleep=Sleeps())
    with pytest.raises(SemanticScholarUnavailable, match="could not connect after 2 attempts"):
        client.snippet_search("dense")


@pytest.mark.parametrize(("endpoint", "body", "message"), [
    ("snippet/search", b'{"data": [', "malformed JSON for snippet/search"),
    ("snippet/search", b'{"data": {"score": 1}}', "unexpected shape"),
    ("snippet/search", b'{"data": [{"score": 1, "snippet": {"text": "x"}, "paper": {"title": "t"}}]}',
     "without a corpusId"),
    ("snippet/search", b'{"data": [{"score": "high", "snippet": {"text": "x"}, "paper": {"corpusId": "1"}}]}',
     "unexpected shape"),
    ("paper/search", b'[1, 2]', "unexpected shape"),
    ("paper/batch", b'[null]', "paper/batch answer has an unexpected shape"),
    ("paper/batch", b'<html>busy</html>', "malformed JSON for paper/batch"),
])
def test_malformed_answers_are_retrieval_errors(s2, endpoint, body, message):
    s2.fail(endpoint, Fault(body=body))
    client = client_for(s2)
    call = {"snippet/search": lambda: client.snippet_search("dense"),
            "paper/search": lambda: client.paper_search("dense"),
            "paper/batch": lambda: client.paper_batch(["1001", "1002"])}[endpoint]
    with pytest.raises(RetrievalError, match=message) as caught:
        call()
    assert len(str(caught.value)) < 120 and len(s2.calls(endpoint)) == 1


def test_the_api_key_is_never_logged_or_shown(s2, caplog):
    caplog.set_level(logging.DEBUG)
    s2.fail("snippet/search", Fault(status=429), times=5)
    client = client_for(s2, api_key=KEY, max_attempts=3)
    with pytest.raises(SemanticScholarUnavailable) as caught:
        client.snippet_search("dense")
    assert len(s2.calls("snippet/search")) == 3 and "retry" in caplog.text
    assert KEY not in caplog.text and KEY not in str(caught.value) and KEY not in repr(client)


def test_one_session_keeps_its_connection_alive(s2):
    client = client_for(s2)
    for _ in range(3):
        client.paper_search("dense")
    assert len({c.client_port for c in s2.calls("paper/search")}) == 1


# --- request spacing (keys are limited to about one request per second) -----------------

def test_requests_from_many_threads_are_given_distinct_start_times_max_rps_apart():
    # A frozen clock: every thread asks at the same instant, and each must get its own turn.
    from concurrent.futures import ThreadPoolExecutor

    spacing = RequestSpacing(10, clock=lambda: 100.0)
    with ThreadPoolExecutor(8) as pool:
        waits = sorted(pool.map(lambda _: spacing.reserve(latest=1e9), range(8)))
    assert waits == pytest.approx([k * 0.105 for k in range(8)])  # 10 per second, 5% margin


def test_the_client_waits_its_turn_before_each_request(s2):
    sleeps = Sleeps()
    client = SemanticScholarClient(s2.base_url, KEY, max_rps=10, sleep=sleeps)
    for query in ("dense", "sparse", "graph"):
        client.paper_search(query, limit=2)
    assert len(s2.calls("paper/search")) == 3
    # The first goes at once; the sleeps are recorded, not slept, so each later slot is one spacing after
    # the last (less the time the calls themselves took).
    assert len(sleeps.delays) == 2 and 0 < sleeps.delays[0] <= 0.105 < sleeps.delays[1] <= 0.21


def test_without_spacing_the_client_never_waits(s2):
    sleeps = Sleeps()
    client = SemanticScholarClient(s2.base_url, max_rps=0, sleep=sleeps)
    for query in ("dense", "sparse", "graph", "ocean"):
        client.paper_search(query, limit=2)
    assert len(s2.calls("paper/search")) == 4 and not [d for d in sleeps.delays if d > 0]


def test_a_queue_longer_than_the_timeout_fails_fast_as_busy(s2):
    client = SemanticScholarClient(s2.base_url, KEY, max_rps=0.5, timeout_s=1.0, sleep=Sleeps())
    client.paper_search("dense", limit=1)  # takes the first slot; the next is 2 s away
    with pytest.raises(SemanticScholarUnavailable, match="busy"):
        client.paper_search("sparse", limit=1)
    assert len(s2.calls("paper/search")) == 1  # nothing was sent for the refused call

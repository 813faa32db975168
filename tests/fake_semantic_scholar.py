"""A loopback imitation of the three Semantic Scholar Graph API endpoints retrieval uses.

``FakeSemanticScholar`` serves ``GET snippet/search``, ``GET paper/search`` and
``POST paper/batch`` on 127.0.0.1 from fixture papers, in the documented response
shapes (corpusId a string in snippet results, an integer elsewhere). Matching is a
plain word overlap with the query; ``year``, ``venue`` and ``fieldsOfStudy`` filters
are applied. Tests script faults per endpoint (status codes, Retry-After, malformed
bodies, delays past the client's timeout), set a latency per endpoint and read the
request log (with start and end times, to check that calls overlap).

    with FakeSemanticScholar() as s2:
        s2.fail("snippet/search", Fault(status=429), times=2)
        client = SemanticScholarClient(s2.base_url)
"""

from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

from loopback import LoopbackServer

ENDPOINTS = ("snippet/search", "paper/search", "paper/batch")
_WORD = re.compile(r"[a-z0-9]{3,}").findall
_IGNORED = frozenset("the and for with what how are does which from that this into".split())


@dataclass(frozen=True)
class FakeSnippet:
    text: str
    kind: str = "body"  # title | abstract | body
    section: str = ""


@dataclass(frozen=True)
class FakePaper:
    corpus_id: int
    title: str
    authors: tuple[str, ...]
    year: int | None
    venue: str
    abstract: str | None
    fields: tuple[str, ...] = ()
    snippets: tuple[FakeSnippet, ...] = ()
    doi: str | None = None

    def record(self) -> dict[str, Any]:
        """The paper as paper/search and paper/batch return it."""
        return {
            "paperId": f"{self.corpus_id:040x}", "corpusId": self.corpus_id, "title": self.title,
            "abstract": self.abstract, "venue": self.venue, "year": self.year,
            "authors": [{"authorId": str(1000 + i), "name": n} for i, n in enumerate(self.authors)],
            "citationCount": 10, "externalIds": {"CorpusId": self.corpus_id, **({"DOI": self.doi} if self.doi else {})},
            "url": f"https://www.semanticscholar.org/paper/{self.corpus_id:040x}",
            "s2FieldsOfStudy": [{"category": f, "source": "s2-fos-model"} for f in self.fields],
            "isOpenAccess": False, "openAccessPdf": None,
        }


@dataclass(frozen=True)
class Fault:
    """One scripted answer that replaces the normal one."""

    status: int = 200
    body: bytes | None = None  # raw bytes to send instead of the normal JSON
    delay_s: float = 0.0
    headers: tuple[tuple[str, str], ...] = ()
    truncate: bool = False  # announce the whole body, send half of it, close the connection


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    endpoint: str
    params: dict[str, str]
    body: Any
    headers: dict[str, str]
    started: float
    finished: float = 0.0
    status: int = 0
    client_port: int = 0  # the same port for two calls means one kept-alive connection


def _words(text: str) -> set[str]:
    return {w for w in _WORD(text.lower()) if w not in _IGNORED}


_BODY_1 = ("Dense retrievers encode questions and passages into a shared vector space and find evidence "
           "by nearest neighbour search, which outperforms lexical matching on open-domain question "
           "answering benchmarks when enough training pairs exist.")
_BODY_1B = ("Hard negatives mined with a lexical retriever make the dense retriever's training signal "
            "much stronger, and in-batch negatives keep the cost of each update low on a single machine.")
_BODY_2 = ("We measure how often retrieval-augmented language models cite a source that actually "
           "supports the sentence it is attached to, and find that citation accuracy drops sharply for "
           "long answers that combine many retrieved passages.")
_BODY_2B = ("Annotators judged each citation as supporting, partially supporting or irrelevant; "
            "agreement between annotators was high for supporting citations and lower for partial support.")
_BODY_3 = ("Sparse lexical matching with BM25 remains a strong baseline for scientific literature search: "
           "on queries written by researchers it rivals dense retrievers while needing no training data and "
           "little memory.")
_BODY_5 = ("Drought reduced microbial respiration in grassland soils by a third, and the bacterial "
           "community shifted toward drought-tolerant taxa that recovered slowly once rainfall returned "
           "to normal levels.")

DEFAULT_PAPERS: tuple[FakePaper, ...] = (
    FakePaper(1001, "Learned Dense Retrievers for Open-Domain Question Answering", ("Ana Ruiz", "Bo Chen"),
              2020, "EMNLP", "Dense retrievers trained on question-passage pairs beat sparse retrieval for "
              "open-domain question answering across five benchmarks and reduce the number of passages a "
              "reader must process.", ("Computer Science",),
              (FakeSnippet("Learned Dense Retrievers for Open-Domain Question Answering", "title"),
               FakeSnippet(_BODY_1B, "body", "Training"), FakeSnippet(_BODY_1, "body", "Introduction"),
               FakeSnippet("Dense retrieval works well for question answering.", "body", "Conclusion")),
              doi="10.1000/dense"),
    FakePaper(1002, "How Accurate Are Citations of Retrieval-Augmented Language Models?",
              ("Zoe Adams", "Yuri Baker", "Xia Cole", "Will Dunn", "Vera Eng", "Uma Ford", "Tom Gray",
               "Sara Hale", "Raj Iyer", "Quinn Jones", "Pia Kent", "Omar Lund"), 2023, "ACL",
              "We study citation accuracy of retrieval-augmented language models and release an annotated "
              "benchmark of long-form answers with their citations judged by experts in four fields.",
              ("Computer Science", "Linguistics"),
              (FakeSnippet(_BODY_2, "body", "Results"), FakeSnippet(_BODY_2B, "body", "Annotation"))),
    FakePaper(1003, "Sparse Lexical Matching Remains Strong for Scientific Search", ("Carla Diaz",), 2021,
              "SIGIR", "BM25 rivals dense retrievers on researcher-written scientific queries while needing "
              "no training data, little memory, and no specialised hardware for indexing large corpora.",
              ("Computer Science",), (FakeSnippet(_BODY_3, "body", "Discussion"),)),
    # A preprint of 1003: the same passage under another corpus id.
    FakePaper(1004, "Sparse Lexical Matching Remains Strong for Scientific Search (preprint)",
              ("Carla Diaz",), 2020, "arXiv.org", None, ("Computer Science",),
              (FakeSnippet(_BODY_3, "body", "Discussion"),)),
    FakePaper(1005, "Soil Microbiome Responses to Drought in Grasslands", ("Dana Smith", "Eli Park", "Fay Wu"),
              2019, "Nature Ecology", "Drought shifts soil bacterial communities and slows respiration in "
              "grassland soils; recovery after rainfall takes several growing seasons to complete.",
              ("Biology", "Environmental Science"), (FakeSnippet(_BODY_5, "body", "Results"),)),
    # Found only by keyword (paper) search.
    FakePaper(1006, "Evaluating Attribution in Long-Form Question Answering", ("Gus Lee", "Hana Ito"), 2024,
              "NAACL", "We propose an evaluation of attribution for long-form question answering in which "
              "each citation of a retrieval-augmented model is checked against the passage it points to.",
              ("Computer Science",)),
    # A short abstract (≤ 20 words): never a candidate.
    FakePaper(1007, "A Note on Retrieval Citation Accuracy", ("Ivo Berg",), 2022, "", "Citation accuracy "
              "of retrieval models is briefly discussed.", ("Computer Science",)),
)


class FakeSemanticScholar(LoopbackServer):
    """The server; start with ``with`` (or start()/stop()); read ``requests`` afterwards."""

    def __init__(self, papers: tuple[FakePaper, ...] = DEFAULT_PAPERS,
                 latency_s: dict[str, float] | None = None) -> None:
        self.papers = {p.corpus_id: p for p in papers}
        self.latency_s = dict.fromkeys(ENDPOINTS, 0.0) | (latency_s or {})
        self.requests: list[RecordedRequest] = []
        self._faults: dict[str, list[Fault]] = {e: [] for e in ENDPOINTS}
        self._lock = threading.Lock()

    # --- control -------------------------------------------------------------------------
    def fail(self, endpoint: str, fault: Fault, times: int = 1) -> None:
        """Answer the next ``times`` calls to ``endpoint`` with ``fault``."""
        with self._lock:
            self._faults[endpoint].extend([fault] * times)

    def set_latency(self, endpoint: str, seconds: float) -> None:
        with self._lock:
            self.latency_s[endpoint] = seconds

    def calls(self, endpoint: str) -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self.requests if r.endpoint == endpoint]

    @property
    def base_url(self) -> str:
        return f"{self.root_url}/graph/v1/"

    def handler_class(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as the real API
            disable_nagle_algorithm = True  # headers and body go out in two writes

            def do_GET(self) -> None:  # noqa: N802
                fake._handle(self, "GET")

            def do_POST(self) -> None:  # noqa: N802
                fake._handle(self, "POST")

            def log_message(self, *args: Any) -> None:
                pass

        return Handler

    # --- serving -------------------------------------------------------------------------
    def _handle(self, request: BaseHTTPRequestHandler, method: str) -> None:
        started = time.perf_counter()
        parts = urlsplit(request.path)
        endpoint = parts.path.removeprefix("/graph/v1/")
        params = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        length = int(request.headers.get("Content-Length") or 0)
        raw = request.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        with self._lock:
            fault = self._faults.get(endpoint, []).pop(0) if self._faults.get(endpoint) else None
            latency = self.latency_s.get(endpoint, 0.0)
        status, payload, headers, truncate = 200, b"", (), False
        if endpoint not in ENDPOINTS or (method == "POST") != (endpoint == "paper/batch"):
            status, payload = 404, b'{"error":"Not found"}'
        elif fault is not None and fault.truncate:
            status, payload = self._answer(endpoint, params, body)
            truncate = True
        elif fault is not None:
            status, headers = fault.status, fault.headers
            payload = fault.body if fault.body is not None else json.dumps({"error": "scripted fault"}).encode()
            latency += fault.delay_s
        else:
            status, payload = self._answer(endpoint, params, body)
        time.sleep(latency)
        # Logged before answering, so a client that has its answer also finds it in the log.
        record = RecordedRequest(method, endpoint, params, body, dict(request.headers.items()),
                                 started, time.perf_counter(), status, request.client_address[1])
        with self._lock:
            self.requests.append(record)
        try:
            request.send_response(status)
            request.send_header("Content-Type", "application/json")
            request.send_header("Content-Length", str(len(payload)))
            for name, value in headers:
                request.send_header(name, value)
            request.end_headers()
            request.wfile.write(payload[: len(payload) // 2] if truncate else payload)
            if truncate:
                request.close_connection = True
        except OSError:
            pass  # the client gave up (timeout test); nothing to answer

    def _answer(self, endpoint: str, params: dict[str, str], body: Any) -> tuple[int, bytes]:
        if endpoint == "paper/batch":
            ids = body.get("ids") if isinstance(body, dict) else None
            if not isinstance(ids, list) or len(ids) > 500:
                return 400, b'{"error":"ids must be a list of at most 500 ids"}'
            found = [self._by_id(i) for i in ids]
            return 200, json.dumps([p.record() if p else None for p in found]).encode()
        if "query" not in params:
            return 400, b'{"error":"query is required"}'
        limit = int(params.get("limit", "10"))
        query = _words(params["query"])
        papers = [p for p in self.papers.values() if self._passes(p, params)]
        if endpoint == "paper/search":
            scored = [(len(query & _words(f"{p.title} {p.abstract or ''}")), p) for p in papers]
            hits = [p.record() for s, p in sorted(scored, key=lambda sp: -sp[0]) if s > 0][:limit]
            return 200, json.dumps({"total": len(hits), "offset": 0, "data": hits}).encode()
        data = []
        for paper in papers:
            offset = 0
            for snippet in paper.snippets:
                overlap = len(query & _words(snippet.text)) / max(1, len(query))
                if overlap > 0:
                    data.append({
                        "score": round(overlap, 4),
                        "snippet": {"text": snippet.text, "snippetKind": snippet.kind,
                                    "section": snippet.section,
                                    "snippetOffset": {"start": offset, "end": offset + len(snippet.text)},
                                    "annotations": {"sentences": [], "refMentions": []}},
                        "paper": {"corpusId": str(paper.corpus_id), "title": paper.title,
                                  "authors": list(paper.authors),
                                  "openAccessInfo": {"license": None, "status": "CLOSED", "disclaimer": ""}},
                    })
                offset += len(snippet.text) + 1
        data.sort(key=lambda item: -item["score"])
        return 200, json.dumps({"data": data[:limit], "retrievalVersion": "fake-1"}).encode()

    def _by_id(self, raw: Any) -> FakePaper | None:
        if isinstance(raw, str) and raw.startswith("CorpusId:") and raw[9:].isdigit():
            return self.papers.get(int(raw[9:]))
        return None

    @staticmethod
    def _passes(paper: FakePaper, params: dict[str, str]) -> bool:
        year = params.get("year")
        if year:
            start, _, end = year.partition("-") if "-" in year else (year, "", year)
            if paper.year is None or (start and paper.year < int(start)) or (end and paper.year > int(end)):
                return False
        venues = [v.strip().lower() for v in params.get("venue", "").split(",") if v.strip()]
        if venues and paper.venue.lower() not in venues:
            return False
        fields = [f.strip() for f in params.get("fieldsOfStudy", "").split(",") if f.strip()]
        return not fields or bool(set(fields) & set(paper.fields))

"""A small typed client for the three Semantic Scholar Graph API endpoints retrieval uses.

``snippet/search`` (full-text passages), ``paper/search`` (abstracts) and ``paper/batch``
(metadata by id). One ``requests.Session`` is shared by every call (and every thread);
each call has a timeout and bounded retries with multiplicative backoff plus jitter on
429, 5xx, timeouts and connection errors, honouring ``Retry-After`` up to a cap. Anything
the API answers that does not have the documented shape is a RetrievalError with a short
message. The API key travels only in the ``x-api-key`` header and is never logged.

Keys are usually limited to one request per second across endpoints, and a retrieval makes
three (snippets and abstracts at once, then metadata). Sent as they come, the second one is
refused with 429 and retried after a back-off of a second or more; so the client spaces its
requests itself (``max_rps``), every thread sharing one schedule. A request that could only
start after the call's deadline fails at once as "busy", so the fallback can answer.
"""

from __future__ import annotations

import email.utils
import logging
import random
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

import requests
from requests.adapters import HTTPAdapter

from sciarena.core.errors import RetrievalError, SemanticScholarUnavailable
from sciarena.core.text import scrub_value
from sciarena.core.types import Paper

log = logging.getLogger(__name__)

DEFAULT_BASE_URL = "https://api.semanticscholar.org/graph/v1/"
SNIPPET_FIELDS = ("snippet.text,snippet.snippetKind,snippet.section,snippet.snippetOffset,"
                  "snippet.annotations.sentences,snippet.annotations.refMentions")
PAPER_FIELDS = ("title,abstract,corpusId,authors,venue,year,citationCount,externalIds,url,"
                "s2FieldsOfStudy,isOpenAccess,openAccessPdf")
BATCH_FIELDS = "corpusId,title,authors,venue,year,externalIds,url,s2FieldsOfStudy"
MAX_BATCH_IDS = 500
MAX_AUTHORS = 10  # longer author lists are cut and shown with "et al."
_RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})

# Semantic Scholar's fields of study, by the SciArena discipline they belong to (our
# mapping: it lets the arena infer a question's subject from what was retrieved).
_DISCIPLINE_OF_FIELD: Mapping[str, str] = {
    **dict.fromkeys(("Biology", "Chemistry", "Physics", "Mathematics", "Geology",
                     "Environmental Science", "Agricultural and Food Sciences"), "Natural Science"),
    "Medicine": "Healthcare",
    **dict.fromkeys(("Computer Science", "Engineering", "Materials Science"), "Engineering"),
    **dict.fromkeys(("Psychology", "Sociology", "Economics", "Political Science", "Business",
                     "History", "Philosophy", "Art", "Education", "Law", "Linguistics",
                     "Geography"), "Humanities & Social Sciences"),
}
FIELDS_OF_STUDY: tuple[str, ...] = tuple(_DISCIPLINE_OF_FIELD)


@dataclass(frozen=True)
class SearchFilters:
    """Restrictions both search endpoints accept; empty means none."""

    year_start: int | None = None
    year_end: int | None = None
    venues: tuple[str, ...] = ()
    authors: tuple[str, ...] = ()
    fields_of_study: tuple[str, ...] = ()
    min_citation_count: int | None = None

    @property
    def empty(self) -> bool:
        return not self.params()

    def params(self) -> dict[str, str]:
        """The query parameters, named as the API names them."""
        params: dict[str, str] = {}
        if self.year_start is not None or self.year_end is not None:
            start = "" if self.year_start is None else str(self.year_start)
            end = "" if self.year_end is None else str(self.year_end)
            params["year"] = start if start == end else f"{start}-{end}"
        # Values are comma-separated lists in the API, so a comma inside a name would split it.
        for key, values in (("venue", self.venues), ("authors", self.authors),
                            ("fieldsOfStudy", self.fields_of_study)):
            if values:
                params[key] = ",".join(v.replace(",", " ") for v in values)
        if self.min_citation_count is not None:
            params["minCitationCount"] = str(self.min_citation_count)
        return params


@dataclass(frozen=True)
class S2Paper:
    """One paper as the API describes it (whatever fields the endpoint returned)."""

    corpus_id: str
    title: str
    authors: tuple[str, ...] = ()
    year: int | None = None
    venue: str = ""
    url: str | None = None
    doi: str | None = None
    abstract: str | None = None
    citation_count: int | None = None
    fields_of_study: tuple[str, ...] = ()
    author_count: int = 0

    @property
    def metadata_complete(self) -> bool:
        """Whether the fields a reference shows (year, venue, authors) are known."""
        return self.year is not None and bool(self.venue) and bool(self.authors)

    def to_paper(self) -> Paper:
        """Our Paper record; the link is the paper's S2 page (by URL, else by corpus id)."""
        field = next((f for f in self.fields_of_study if f in _DISCIPLINE_OF_FIELD), "")
        return Paper(
            paper_id=self.corpus_id, title=self.title, authors=self.authors[:MAX_AUTHORS],
            et_al=max(self.author_count, len(self.authors)) > MAX_AUTHORS, year=self.year,
            venue=self.venue, doi=self.doi,
            url=self.url or f"https://www.semanticscholar.org/p/{self.corpus_id}",
            discipline=_DISCIPLINE_OF_FIELD.get(field, ""), field=field,
        )


@dataclass(frozen=True)
class S2Snippet:
    """One snippet-search hit: a passage of a paper with its relevance score."""

    paper: S2Paper
    text: str
    kind: str  # "title" | "abstract" | "body"
    section: str
    start: int
    end: int
    score: float


class RequestSpacing:
    """At most ``per_second`` request starts per second, shared by every thread of a client.

    Each caller reserves the next free start time under a lock, then sleeps outside it,
    so concurrent callers queue in arrival order without holding each other up longer
    than the spacing requires. ``per_second`` <= 0 means no limit."""

    def __init__(self, per_second: float, clock: Callable[[], float] = time.monotonic) -> None:
        # 5% over the nominal spacing: requests leave here, but the limit is counted where they arrive.
        self.interval = 1.05 / per_second if per_second > 0 else 0.0
        self._clock = clock
        self._lock = threading.Lock()
        self._next_start = 0.0

    def reserve(self, latest: float) -> float | None:
        """Seconds to wait before starting a request, or None when the turn comes after ``latest``."""
        if not self.interval:
            return 0.0
        with self._lock:
            now = self._clock()
            start = max(now, self._next_start)
            if start > latest:
                return None
            self._next_start = start + self.interval
            return start - now


class SemanticScholarClient:
    """Calls the Graph API; safe to share between threads (one pooled Session, one request spacing)."""

    def __init__(self, base_url: str = DEFAULT_BASE_URL, api_key: str | None = None, *,
                 timeout_s: float = 10.0, connect_timeout_s: float = 3.05, max_attempts: int = 3,
                 backoff_s: float = 1.0, backoff_factor: float = 2.0, max_backoff_s: float = 8.0,
                 deadline_s: float = 30.0, max_rps: float = 0.0, session: requests.Session | None = None,
                 sleep: Callable[[float], None] = time.sleep, rng: random.Random | None = None) -> None:
        if max_attempts < 1:
            raise ValueError(f"max_attempts must be at least 1, got {max_attempts}")
        self.base_url = base_url if base_url.endswith("/") else base_url + "/"
        self._api_key = api_key or None
        self.timeout = (connect_timeout_s, timeout_s)
        self.max_attempts, self.deadline_s = max_attempts, deadline_s
        self.backoff_s, self.backoff_factor, self.max_backoff_s = backoff_s, backoff_factor, max_backoff_s
        self._session = session or _pooled_session()
        self._spacing = RequestSpacing(max_rps)
        self._sleep = sleep
        self._rng = rng or random.Random()

    def __repr__(self) -> str:  # never show the key
        return f"SemanticScholarClient({self.base_url!r}, key={'set' if self._api_key else 'none'})"

    def close(self) -> None:
        self._session.close()

    def snippet_search(self, query: str, limit: int = 40,
                       filters: SearchFilters | None = None) -> tuple[S2Snippet, ...]:
        """Full-text passages for ``query``, best first."""
        params = {"query": query, "limit": str(limit), "fields": SNIPPET_FIELDS,
                  **(filters.params() if filters else {})}
        body = self._request("GET", "snippet/search", params=params)
        return tuple(_snippet(item) for item in _list_field(body, "data", "snippet/search"))

    def paper_search(self, query: str, limit: int = 20,
                     filters: SearchFilters | None = None) -> tuple[S2Paper, ...]:
        """Papers (with abstracts) matching ``query`` by keyword relevance."""
        params = {"query": query, "limit": str(limit), "fields": PAPER_FIELDS,
                  **(filters.params() if filters else {})}
        body = self._request("GET", "paper/search", params=params)
        return tuple(_paper(item, "paper/search") for item in _list_field(body, "data", "paper/search"))

    def paper_batch(self, corpus_ids: Sequence[str],
                    fields: str = BATCH_FIELDS) -> tuple[S2Paper | None, ...]:
        """Metadata of each corpus id, in order; None where the API knows no such paper."""
        found: list[S2Paper | None] = []
        for start in range(0, len(corpus_ids), MAX_BATCH_IDS):
            chunk = corpus_ids[start:start + MAX_BATCH_IDS]
            body = self._request("POST", "paper/batch", params={"fields": fields},
                                 json_body={"ids": [f"CorpusId:{c}" for c in chunk]})
            if not isinstance(body, list) or len(body) != len(chunk):
                raise RetrievalError("Semantic Scholar's paper/batch answer has an unexpected shape.")
            found.extend(None if item is None else _paper(item, "paper/batch") for item in body)
        return tuple(found)

    def _request(self, method: str, path: str, *, params: Mapping[str, str],
                 json_body: object = None) -> Any:
        headers = {"x-api-key": self._api_key} if self._api_key else {}
        deadline = time.monotonic() + self.deadline_s
        failure = "no attempt"
        for attempt in range(1, self.max_attempts + 1):
            retry_after: float | None = None
            # Waiting in the queue longer than one request may take is worse than falling back.
            wait = self._spacing.reserve(latest=min(deadline, time.monotonic() + self.timeout[1]))
            if wait is None:
                if attempt == 1:
                    raise SemanticScholarUnavailable(
                        f"Semantic Scholar is busy right now ({path}: too many requests queued).")
                attempt -= 1  # report the failure of the attempts actually made
                break
            if wait:
                self._sleep(wait)
            try:
                response = self._session.request(method, self.base_url + path, params=params,
                                                 json=json_body, headers=headers, timeout=self.timeout)
            except requests.Timeout:
                failure = "timed out"
            except (requests.ConnectionError, requests.exceptions.ChunkedEncodingError):
                failure = "could not connect"
            except requests.RequestException as err:
                raise RetrievalError(f"Semantic Scholar request failed ({type(err).__name__}).") from None
            else:
                if response.status_code == 200:
                    return _decode(response, path)
                response.close()
                if response.status_code not in _RETRY_STATUSES:
                    raise RetrievalError(f"Semantic Scholar rejected the {path} request "
                                         f"(HTTP {response.status_code}{_reason(response)}).")
                failure = f"HTTP {response.status_code}"
                retry_after = parse_retry_after(response.headers.get("Retry-After"))
            if attempt == self.max_attempts:
                break
            delay = self._delay(attempt, retry_after)
            if time.monotonic() + delay > deadline:
                break
            log.info("Semantic Scholar %s: %s; retry %d in %.2f s", path, failure, attempt, delay)
            self._sleep(delay)
        raise SemanticScholarUnavailable(
            f"Semantic Scholar is unavailable right now ({path}: {failure} after {attempt} "
            f"attempt{'s' if attempt > 1 else ''}).")

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(retry_after, self.max_backoff_s)
        base = min(self.backoff_s * self.backoff_factor ** (attempt - 1), self.max_backoff_s)
        # Jitter spreads out clients that were throttled at the same moment.
        return base * (0.5 + 0.5 * self._rng.random())


def _pooled_session() -> requests.Session:
    session = requests.Session()
    # Every arena visitor's retrieval shares this session: keep more idle connections than
    # requests' default of 10 so concurrent questions do not reopen them.
    adapter = HTTPAdapter(pool_connections=4, pool_maxsize=32)
    session.mount("https://", adapter)
    session.mount("http://", adapter)
    return session


def parse_retry_after(value: str | None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or HTTP date); None if absent/bad."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - time.time())


def _decode(response: requests.Response, path: str) -> Any:
    """The JSON body, with lone surrogates (legal in JSON escapes, unencodable in UTF-8) replaced."""
    try:
        return scrub_value(response.json())
    except ValueError:
        raise RetrievalError(f"Semantic Scholar returned malformed JSON for {path}.") from None


def _reason(response: requests.Response) -> str:
    """A short reason from an error body ({"error"|"message": ...}), if there is one."""
    try:
        body = response.json()
    except ValueError:
        return ""
    message = body.get("error") or body.get("message") if isinstance(body, dict) else None
    return f": {str(message)[:160]}" if message else ""


def _list_field(body: Any, key: str, path: str) -> list[Any]:
    if not isinstance(body, dict):
        raise RetrievalError(f"Semantic Scholar's {path} answer has an unexpected shape.")
    value = body.get(key, [])
    if value is None:
        return []
    if not isinstance(value, list):
        raise RetrievalError(f"Semantic Scholar's {path} answer has an unexpected shape.")
    return value


def _snippet(item: Any) -> S2Snippet:
    if not isinstance(item, dict) or not isinstance(item.get("snippet"), dict):
        raise RetrievalError("Semantic Scholar's snippet/search answer has an unexpected shape.")
    snippet = item["snippet"]
    text = snippet.get("text")
    score = item.get("score", 0.0)
    offset = snippet.get("snippetOffset") or {}
    if not isinstance(text, str) or not isinstance(score, (int, float)) or not isinstance(offset, dict):
        raise RetrievalError("Semantic Scholar's snippet/search answer has an unexpected shape.")
    return S2Snippet(
        paper=_paper(item.get("paper"), "snippet/search"), text=text,
        kind=snippet.get("snippetKind") if snippet.get("snippetKind") in ("title", "abstract") else "body",
        section=str(snippet.get("section") or ""), start=_int(offset.get("start"), 0),
        end=_int(offset.get("end"), 0), score=float(score),
    )


def _paper(item: Any, path: str) -> S2Paper:
    if not isinstance(item, dict):
        raise RetrievalError(f"Semantic Scholar's {path} answer has an unexpected shape.")
    corpus_id = item.get("corpusId")
    # corpusId is a string in snippet results and an integer elsewhere.
    if isinstance(corpus_id, bool) or not isinstance(corpus_id, (str, int)) or not str(corpus_id).strip():
        raise RetrievalError(f"Semantic Scholar's {path} answer has a paper without a corpusId.")
    external = item.get("externalIds")
    if not isinstance(external, dict):
        external = {}
    year = item.get("year")
    abstract = item.get("abstract")
    authors = _names(item.get("authors"))
    return S2Paper(
        corpus_id=str(corpus_id).strip(), title=str(item.get("title") or "Untitled"),
        authors=authors[:MAX_AUTHORS], author_count=len(authors),
        year=year if isinstance(year, int) and not isinstance(year, bool) else None,
        venue=str(item.get("venue") or ""),
        url=item["url"] if isinstance(item.get("url"), str) and item["url"] else None,
        doi=str(external["DOI"]) if external.get("DOI") else None,
        abstract=abstract if isinstance(abstract, str) and abstract.strip() else None,
        citation_count=_int(item.get("citationCount"), None),
        fields_of_study=_fields(item.get("s2FieldsOfStudy")),
    )


def _names(authors: Any) -> tuple[str, ...]:
    """Author names from a list of strings or of {"name": ...} objects."""
    if not isinstance(authors, list):
        return ()
    names = (a.get("name") if isinstance(a, dict) else a for a in authors)
    return tuple(n.strip() for n in names if isinstance(n, str) and n.strip())


def _fields(entries: Any) -> tuple[str, ...]:
    if not isinstance(entries, list):
        return ()
    categories = (e.get("category") for e in entries if isinstance(e, dict))
    return tuple(dict.fromkeys(c for c in categories if isinstance(c, str) and c))


def _int(value: Any, default: int | None) -> Any:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def unique(values: Iterable[str]) -> tuple[str, ...]:
    """``values`` without repeats, in first-seen order."""
    return tuple(dict.fromkeys(values))

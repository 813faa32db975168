"""Turn a question into search queries and filters with a language model, or fall back.

As in ScholarQA, a model writes one query for passage (snippet) search, one short
keyword query for paper search, and the restrictions the user stated (years, venues,
authors, fields of study), as structured JSON. The model is a catalogue entry
(SCIARENA_REWRITE_MODEL) called through its provider (providers.calls.complete). No
model, a failed call or output that is not the expected JSON all give the raw question
with no filters, and the plan says why, so the vote record shows what retrieval really
searched.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from typing import Any

from sciarena.core.errors import ProviderError
from sciarena.core.types import ModelSpec, Provider
from sciarena.providers.calls import complete
from sciarena.retrieval.semantic_scholar import FIELDS_OF_STUDY, SearchFilters

log = logging.getLogger(__name__)

MAX_QUERY_CHARS = 500
MAX_FILTER_VALUES = 5
_YEARS = range(1800, 2101)
_CANONICAL_FIELDS = {f.lower(): f for f in FIELDS_OF_STUDY}
_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$")

INSTRUCTIONS = """\
You prepare searches of the Semantic Scholar literature database for a researcher's question.
Return a JSON object with these keys:
- "snippet_query": a natural-language query that will be matched against passages of full-text papers;
  keep the question's technical terms, drop conversational words.
- "keyword_query": a few keywords (at most about eight) for a title-and-abstract keyword search.
- "year_start", "year_end": integers only when the question itself limits publication years
  (e.g. "since 2020" gives year_start 2020), otherwise null.
- "venues": journal or conference names the question explicitly asks for, otherwise [].
- "authors": author names the question explicitly asks for, otherwise [].
- "fields_of_study": only when the question names a discipline to restrict to, chosen from: {fields}; otherwise [].
Never invent restrictions the question does not state."""

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "snippet_query": {"type": "string"},
        "keyword_query": {"type": "string"},
        "year_start": {"type": ["integer", "null"]},
        "year_end": {"type": ["integer", "null"]},
        "venues": {"type": "array", "items": {"type": "string"}},
        "authors": {"type": "array", "items": {"type": "string"}},
        "fields_of_study": {"type": "array", "items": {"type": "string", "enum": list(FIELDS_OF_STUDY)}},
    },
    "required": ["snippet_query", "keyword_query", "year_start", "year_end", "venues", "authors",
                 "fields_of_study"],
    "additionalProperties": False,
}


@dataclass(frozen=True)
class QueryPlan:
    """What to send to each endpoint, and whether a model wrote it."""

    snippet_query: str
    keyword_query: str
    filters: SearchFilters = field(default_factory=SearchFilters)
    rewritten: bool = False
    fallback_reason: str = ""  # why the raw question was used; "" when rewritten

    @classmethod
    def raw(cls, question: str, reason: str) -> QueryPlan:
        """The unrewritten question for both endpoints, no filters."""
        return cls(snippet_query=question, keyword_query=question, fallback_reason=reason)

    @property
    def label(self) -> str:
        """How the queries were made, for the retrieval record."""
        return "model" if self.rewritten else f"fallback: {self.fallback_reason}"


def parse_plan(content: str) -> QueryPlan:
    """The plan in a model's JSON answer; ValueError when it is not the expected object."""
    data = json.loads(_FENCE.sub("", content.strip()))
    if not isinstance(data, dict):
        raise ValueError("the answer is not a JSON object")
    snippet_query = _text(data.get("snippet_query"), "snippet_query")
    if not snippet_query:
        raise ValueError("snippet_query is empty")
    keyword_query = _text(data.get("keyword_query", ""), "keyword_query") or snippet_query
    start, end = _year(data.get("year_start")), _year(data.get("year_end"))
    if start is not None and end is not None and start > end:
        start, end = end, start
    fields = tuple(dict.fromkeys(
        _CANONICAL_FIELDS[f.lower()] for f in _strings(data.get("fields_of_study"), "fields_of_study")
        if f.lower() in _CANONICAL_FIELDS))
    filters = SearchFilters(year_start=start, year_end=end,
                            venues=_strings(data.get("venues"), "venues"),
                            authors=_strings(data.get("authors"), "authors"),
                            fields_of_study=fields[:MAX_FILTER_VALUES])
    return QueryPlan(snippet_query=snippet_query, keyword_query=keyword_query, filters=filters,
                     rewritten=True)


def _text(value: Any, name: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{name} is not a string")
    text = " ".join(value.split())
    if len(text) > MAX_QUERY_CHARS:
        raise ValueError(f"{name} is longer than {MAX_QUERY_CHARS} characters")
    return text


def _strings(value: Any, name: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{name} is not a list of strings")
    cleaned = (" ".join(v.split()) for v in value)
    return tuple(dict.fromkeys(v for v in cleaned if v))[:MAX_FILTER_VALUES]


def _year(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError("a year is not an integer")
    return value if value in _YEARS else None  # an absurd year is dropped, not trusted


class QueryRewriter:
    """Asks a catalogue chat model for a QueryPlan."""

    def __init__(self, provider: Provider, spec: ModelSpec, *, json_schema: bool = True,
                 max_tokens: int = 400, timeout_s: float = 20.0) -> None:
        self.provider, self.spec = provider, spec
        self.json_schema, self.max_tokens, self.timeout_s = json_schema, max_tokens, timeout_s

    def rewrite(self, question: str) -> QueryPlan:
        """The model's plan for ``question``; the raw question when anything goes wrong."""
        try:
            content = self._ask(question, schema=self.json_schema)
        except ProviderError as err:
            if not (self.json_schema and err.status == 400):
                return self._failed(question, err)
            # Some OpenAI-compatible servers accept only json_object; ask once more that way.
            try:
                content = self._ask(question, schema=False)
            except ProviderError as retry_err:
                return self._failed(question, retry_err)
        try:
            return parse_plan(content)
        except ValueError as err:  # json.JSONDecodeError is a ValueError
            log.warning("query rewriting gave unusable output: %s", str(err)[:200])
            return QueryPlan.raw(question, "the rewriting model's output was not valid")

    def _ask(self, question: str, *, schema: bool) -> str:
        response_format: dict[str, Any] = (
            {"type": "json_schema",
             "json_schema": {"name": "search_plan", "strict": True, "schema": SCHEMA}}
            if schema else {"type": "json_object"})
        messages = [{"role": "system", "content": INSTRUCTIONS.format(fields=", ".join(FIELDS_OF_STUDY))},
                    {"role": "user", "content": question}]
        return complete(self.provider, self.spec, messages, timeout_s=self.timeout_s, temperature=0,
                        max_tokens=self.max_tokens, response_format=response_format).text

    @staticmethod
    def _failed(question: str, err: ProviderError) -> QueryPlan:
        log.warning("query rewriting failed: %s", err)
        return QueryPlan.raw(question, f"the rewriting model failed ({_failure_kind(err)})")


def _failure_kind(err: ProviderError) -> str:
    """A short label for a failed call, for records: "HTTP 500", "ProviderTimeout"…"""
    return f"HTTP {err.status}" if err.status else type(err).__name__

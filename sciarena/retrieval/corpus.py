"""Read paper records into (Paper, text) pairs from JSON lines, JSON arrays and BibTeX.

Accepted JSON keys: ``title`` (required), ``id``, ``authors`` (list of names, list of
{"name": ...} objects, or one string), ``et_al``, ``year``, ``venue`` (or ``journal`` /
``booktitle``), ``doi``, ``url``, ``discipline``, ``field``, and the text from ``abstract``
/ ``summary`` and ``text``. Our bundled demo corpus uses the same keys. Malformed input
raises RetrievalError naming the file and line.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

import bibtexparser
from bibtexparser.library import Library
from bibtexparser.middlewares import (
    LibraryMiddleware,
    NormalizeFieldKeys,
    RemoveEnclosingMiddleware,
    ResolveStringReferencesMiddleware,
)
from bibtexparser.model import DuplicateBlockKeyBlock, DuplicateFieldKeyBlock, Entry, ParsingFailedBlock

from sciarena.core.errors import RetrievalError
from sciarena.core.settings import DEMO_CORPUS_DIR
from sciarena.core.text import scrub_value
from sciarena.core.types import Paper
from sciarena.retrieval.bibliography import TextOnlyLatexDecoding

log = logging.getLogger(__name__)

PaperText = tuple[Paper, str]
CORPUS_SUFFIXES = (".jsonl", ".json", ".bib")


class _BadRecord(ValueError):
    """A record-level problem; the caller adds the file and line."""


def demo_corpus_files(directory: Path = DEMO_CORPUS_DIR) -> list[Path]:
    """The bundled demo corpus files, in a stable order (may be empty)."""
    return sorted(directory.glob("*.jsonl")) if directory.is_dir() else []


def read_corpus(paths: Iterable[Path], *, skip_malformed: bool = False) -> list[PaperText]:
    """Read every file; paper ids must be unique across them.

    With ``skip_malformed`` bad records and repeated ids are logged and skipped instead
    of raising (used for the bundled corpus, which must never stop the app).
    """
    seen: dict[str, Path] = {}
    out: list[PaperText] = []
    for path in paths:
        for paper, text in read_corpus_file(Path(path), skip_malformed=skip_malformed):
            if paper.paper_id in seen:
                problem = f"{path}: paper id {paper.paper_id!r} already used in {seen[paper.paper_id]}"
                if not skip_malformed:
                    raise RetrievalError(problem)
                log.warning("skipped duplicate: %s", problem)
                continue
            seen[paper.paper_id] = Path(path)
            out.append((paper, text))
    return out


def read_corpus_file(path: Path, *, skip_malformed: bool = False) -> list[PaperText]:
    """Read one .jsonl, .json or .bib file into (Paper, text) pairs."""
    suffix = path.suffix.lower()
    if suffix not in CORPUS_SUFFIXES:
        raise RetrievalError(
            f"{path}: unsupported corpus file type {suffix or '(none)'!r}; use .jsonl, .json or .bib"
        )
    try:
        content = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise RetrievalError(f"{path}: no such file") from None
    except UnicodeDecodeError:
        raise RetrievalError(f"{path}: not UTF-8 text") from None
    except OSError as err:
        raise RetrievalError(f"{path}: cannot read ({err.strerror or err})") from None
    if suffix == ".bib":
        items = _bibtex_items(content)
    elif suffix == ".json" and content.lstrip().startswith("["):
        items = _json_array_items(content, path)
    else:
        items = _json_lines_items(content)
    pairs: list[PaperText] = []
    for where, record in items:
        try:
            if isinstance(record, Exception):
                raise record
            pairs.append(record_to_pair(record))
        except _BadRecord as err:
            problem = f"{path}:{where}: {err}"
            if not skip_malformed:
                raise RetrievalError(problem) from None
            log.warning("skipped malformed record: %s", problem)
    return pairs


def record_to_pair(record: Mapping[str, Any]) -> PaperText:
    """Convert one JSON-like record into (Paper, text); raises ValueError on bad fields."""
    if not isinstance(record, Mapping):
        raise _BadRecord(f"expected a JSON object, got {type(record).__name__}")
    record = scrub_value(dict(record))  # JSON can carry lone surrogates ("\ud800"); UTF-8 cannot
    title = _text_field(record, "title")
    if not title:
        raise _BadRecord("missing 'title'")
    authors, et_al = _authors(record.get("authors", record.get("author")))
    paper_id = _identifier(record) or _stable_id(title, record.get("year"))
    body = "\n\n".join(
        t for t in (_text_field(record, "abstract") or _text_field(record, "summary"),
                    _text_field(record, "text")) if t
    )
    venue = (_text_field(record, "venue") or _text_field(record, "journal")
             or _text_field(record, "booktitle"))
    paper = Paper(
        paper_id=paper_id, title=title, authors=authors, venue=venue,
        et_al=et_al or bool(record.get("et_al", False)), year=_year(record.get("year")),
        doi=_text_field(record, "doi") or None, url=_text_field(record, "url") or None,
        discipline=_text_field(record, "discipline"), field=_text_field(record, "field"),
    )
    return paper, body


def _json_lines_items(content: str) -> list[tuple[int, Any]]:
    items: list[tuple[int, Any]] = []
    for number, line in enumerate(content.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            items.append((number, json.loads(line)))
        except json.JSONDecodeError as err:
            items.append((number, _BadRecord(f"invalid JSON ({err.msg} at column {err.colno})")))
    return items


def _json_array_items(content: str, path: Path) -> list[tuple[int, Any]]:
    try:
        data = json.loads(content)
    except json.JSONDecodeError as err:
        raise RetrievalError(f"{path}:{err.lineno}: invalid JSON ({err.msg})") from None
    # Array items have no line of their own; number them from 1 instead.
    return [(number, item) for number, item in enumerate(data, start=1)]


def _bibtex_items(content: str) -> list[tuple[int, Any]]:
    items: list[tuple[int, Any]] = []
    for entry in parse_bibtex(content):
        if entry.error:
            items.append((entry.line, _BadRecord(entry.error)))
            continue
        record: dict[str, Any] = dict(entry.fields)
        record["id"] = entry.key
        if entry.fields.get("archiveprefix", "").lower() == "arxiv" and entry.fields.get("eprint"):
            # The arXiv id has no field of its own in a Paper: its abstract page is the paper's link.
            record.setdefault("url", f"https://arxiv.org/abs/{entry.fields['eprint']}")
        items.append((entry.line, record))
    return items


def _text_field(record: Mapping[str, Any], key: str) -> str:
    value = record.get(key)
    if value is None:
        return ""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str):
        raise _BadRecord(f"'{key}' must be a string, got {type(value).__name__}")
    return " ".join(value.split())


def _identifier(record: Mapping[str, Any]) -> str:
    for key in ("id", "paper_id", "corpusId", "corpus_id"):
        value = record.get(key)
        if value is not None and str(value).strip():
            return str(value).strip()
    return ""


def _stable_id(title: str, year: Any) -> str:
    # Same record, same id across rebuilds, so saved vote contexts stay meaningful.
    return "paper-" + hashlib.sha1(f"{title.lower()}|{year}".encode()).hexdigest()[:12]


def _authors(value: Any) -> tuple[tuple[str, ...], bool]:
    """Names from a list, a list of {"name"} objects, or one string; 'others' means et al."""
    if value is None or value == "":
        return (), False
    if isinstance(value, str):
        if " and " in value:
            names = [_bibtex_name(n) for n in re.split(r"\s+and\s+", value)]
        else:
            names = re.split(r"\s*;\s*" if ";" in value else r"\s*,\s*", value)
    elif isinstance(value, list):
        names = []
        for item in value:
            if isinstance(item, Mapping):
                item = item.get("name", "")
            if not isinstance(item, str):
                raise _BadRecord("'authors' must hold names (strings)")
            names.append(item)
    else:
        raise _BadRecord(f"'authors' must be a list or a string, got {type(value).__name__}")
    cleaned = [" ".join(n.split()) for n in names]
    et_al = any(n.lower() in ("others", "et al.", "et al") for n in cleaned)
    kept = tuple(n for n in cleaned if n and n.lower() not in ("others", "et al.", "et al"))
    return kept, et_al


def _bibtex_name(name: str) -> str:
    """'Curie, Marie' -> 'Marie Curie'; 'Last, Jr, First' -> 'First Last Jr'."""
    parts = [p.strip() for p in name.split(",")]
    if len(parts) == 2:
        return f"{parts[1]} {parts[0]}".strip()
    if len(parts) == 3:
        return f"{parts[2]} {parts[0]} {parts[1]}".strip()
    return name.strip()


def _year(value: Any) -> int | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise _BadRecord("'year' must be a year number")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        match = re.fullmatch(r"\s*\{?\s*(\d{3,4})\s*\}?\s*", value)
        if match:
            return int(match.group(1))
    raise _BadRecord(f"'year' must be a year number, got {value!r}")


# --- BibTeX -----------------------------------------------------------------------------
# Parsed by bibtexparser (v2): its splitter finds the blocks, @string macros and failed blocks
# (with their lines); its middlewares resolve macros, strip enclosing braces/quotes, lower-case
# field names and decode LaTeX (accents, escapes, dashes) via pylatexenc, except in the verbatim
# fields (url, doi, eprint). One thing it leaves
# out is BibTeX's ``#`` concatenation (``journal = nat # " Biotechnology"``): _Concatenate below.

@dataclass(frozen=True)
class BibEntry:
    """One parsed BibTeX entry; ``error`` is set (and fields empty) when it is malformed."""

    line: int
    kind: str
    key: str
    fields: Mapping[str, str]
    error: str = ""


_BLOCK_KIND = re.compile(r"@\s*([A-Za-z]+)")
_CONCAT_PART = re.compile(r'\s*(\{(?:[^{}]|\{(?:[^{}]|\{[^{}]*\})*\})*\}|"[^"]*"|[^\s#]+)\s*(?:#|$)')
# bibtexparser's reasons for a failed block, in our words (the rest are passed on as they are).
_REASONS = (
    ("Unexpectedly reached end of file", "unterminated entry or value (missing '}')"),
    ("Was still looking for field-value closing", "unterminated entry or value (missing '}')"),
    ("Expected a `=`", "expected '=' after a field name"),
    ("Expected comma after entry key", "entry has no citation key"),
)


class _Concatenate(LibraryMiddleware):
    """Join ``a # "b" # {c}`` values, resolving bare macro names, before the default stack runs."""

    def __init__(self) -> None:
        super().__init__(allow_inplace_modification=True)

    @classmethod
    def metadata_key(cls) -> str:
        return "sciarena_concatenate"

    def transform(self, library: Library) -> Library:
        macros = {key.lower(): _unenclosed(s.value) for key, s in library.strings_dict.items()}
        for entry in library.entries:
            for item in entry.fields:
                if isinstance(item.value, str) and "#" in item.value:
                    parts = _concat_parts(item.value)
                    if parts is not None:
                        item.value = "{" + "".join(macros.get(p.lower(), p) if bare else p
                                                   for p, bare in parts) + "}"
        return library


def _unenclosed(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and (value[0], value[-1]) in (("{", "}"), ('"', '"')):
        return value[1:-1]
    return value


def _concat_parts(value: str) -> list[tuple[str, bool]] | None:
    """The parts of a ``#``-joined value as (text, is a bare word); None when it is one value
    (a ``#`` inside braces or quotes)."""
    parts, pos = [], 0
    while pos < len(value):
        match = _CONCAT_PART.match(value, pos)
        if match is None or match.end() == pos:
            return None
        token = match.group(1)
        parts.append((_unenclosed(token), token[0] not in '{"'))
        pos = match.end()
    return parts if len(parts) > 1 else None


def parse_bibtex(content: str) -> list[BibEntry]:
    """Parse ``@type{key, field = value, ...}`` entries in file order (bibtexparser).

    Values may be braced, quoted, numbers or @string macros joined with ``#``; text
    outside entries is ignored, as BibTeX does. @comment, @preamble and @string are not entries.
    """
    library = bibtexparser.parse_string(content, parse_stack=[
        _Concatenate(), ResolveStringReferencesMiddleware(), RemoveEnclosingMiddleware(),
        NormalizeFieldKeys(), TextOnlyLatexDecoding()])
    entries: list[BibEntry] = []
    for block in library.blocks:
        line = (block.start_line or 0) + 1  # bibtexparser counts lines from 0
        if isinstance(block, Entry):
            fields = {item.key: _plain(item.value) for item in block.fields if isinstance(item.value, str)}
            entries.append(BibEntry(line, block.entry_type.lower(), block.key, fields))
        elif isinstance(block, ParsingFailedBlock):
            kind_match = _BLOCK_KIND.match((block.raw or "").lstrip())
            kind = kind_match.group(1).lower() if kind_match else "entry"
            entries.append(BibEntry(line, kind, "", {}, _failure(block, kind)))
    return entries


def _failure(block: ParsingFailedBlock, kind: str) -> str:
    if isinstance(block, DuplicateBlockKeyBlock):
        return f"citation key {block.key!r} is used twice"
    if isinstance(block, DuplicateFieldKeyBlock):
        return f"@{kind} entry repeats the field(s) {', '.join(sorted(block.duplicate_keys))}"
    reason = getattr(block.error, "abort_reason", "") or str(block.error or "") or "malformed entry"
    for theirs, ours in _REASONS:
        if theirs in reason:
            return f"@{kind} {ours}" if ours.startswith("entry") else ours
    return f"@{kind} entry: {reason.strip()}"


def _plain(value: str) -> str:
    """One line of composed Unicode: LaTeX decoding leaves non-breaking spaces (~) and newlines."""
    return unicodedata.normalize("NFC", " ".join(value.split()))

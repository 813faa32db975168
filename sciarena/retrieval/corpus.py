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

from sciarena.core.errors import RetrievalError
from sciarena.core.settings import DEMO_CORPUS_DIR
from sciarena.core.text import scrub_value
from sciarena.core.types import Paper

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

@dataclass(frozen=True)
class BibEntry:
    """One parsed BibTeX entry; ``error`` is set (and fields empty) when it is malformed."""

    line: int
    kind: str
    key: str
    fields: Mapping[str, str]
    error: str = ""


_ENTRY_START = re.compile(r"@\s*([A-Za-z]+)\s*([{(])")
_FIELD_NAME = re.compile(r"[A-Za-z][\w\-:.]*")
_BARE_VALUE = re.compile(r"[^\s,#{}\"()]+")
_ACCENTS = {"'": "\u0301", "`": "\u0300", "^": "\u0302", '"': "\u0308", "~": "\u0303",
            "=": "\u0304", ".": "\u0307", "u": "\u0306", "v": "\u030c", "H": "\u030b",
            "c": "\u0327", "k": "\u0328"}
_LETTERS = {"ss": "ß", "aa": "å", "AA": "Å", "ae": "æ", "AE": "Æ", "oe": "œ", "OE": "Œ",
            "o": "ø", "O": "Ø", "l": "ł", "L": "Ł", "i": "i"}


def parse_bibtex(content: str) -> list[BibEntry]:
    """Parse ``@type{key, field = value, ...}`` entries in file order.

    Values may be braced, quoted, numbers or @string macros joined with ``#``; text
    outside entries is ignored, as BibTeX does. @comment and @preamble are skipped.
    """
    entries: list[BibEntry] = []
    macros: dict[str, str] = {}
    pos = 0
    while (at := content.find("@", pos)) >= 0:
        start = _ENTRY_START.match(content, at)
        if start is None:  # a stray '@' between entries (an e-mail address, say)
            pos = at + 1
            continue
        line = content.count("\n", 0, at) + 1
        kind = start.group(1).lower()
        try:
            end = _closing(content, start.end() - 1, "}" if start.group(2) == "{" else ")")
        except _BadRecord as err:
            entries.append(BibEntry(line, kind, "", {}, str(err)))
            # Where the entry ends is unknown: resume at the next line opening an entry.
            resume = content.find("\n@", start.end())
            pos = len(content) if resume < 0 else resume + 1
            continue
        body, pos = content[start.end():end], end + 1
        if kind in ("comment", "preamble"):
            continue
        try:
            if kind == "string":
                macros.update((k, v) for k, v in _bib_fields(body, macros).items())
                continue
            key, comma, rest = body.partition(",")
            if not comma or not key.strip() or "=" in key:
                raise _BadRecord(f"@{kind} entry has no citation key")
            entries.append(BibEntry(line, kind, key.strip(), _bib_fields(rest, macros)))
        except _BadRecord as err:
            entries.append(BibEntry(line, kind, "", {}, str(err)))
    return entries


def _closing(text: str, open_at: int, close: str) -> int:
    """Index of the ``close`` that ends the group opened at ``open_at`` (braces nest)."""
    depth, i = 0, open_at + 1
    while i < len(text):
        char = text[i]
        if char == "\\":  # an escaped character (\{, \") never opens or closes
            i += 2
            continue
        if char == "{":
            depth += 1
        elif char == "}" and depth > 0:
            depth -= 1
        elif char == close and depth == 0:
            return i
        i += 1
    raise _BadRecord(f"unterminated entry or value (missing {close!r})")


def _bib_fields(text: str, macros: Mapping[str, str]) -> dict[str, str]:
    fields: dict[str, str] = {}
    i, n = 0, len(text)
    while True:
        while i < n and (text[i].isspace() or text[i] == ","):
            i += 1
        if i >= n:
            return fields
        name = _FIELD_NAME.match(text, i)
        if name is None:
            raise _BadRecord(f"expected a field name near {text[i:i + 20]!r}")
        i = name.end()
        while i < n and text[i].isspace():
            i += 1
        if i >= n or text[i] != "=":
            raise _BadRecord(f"expected '=' after field {name.group()!r}")
        parts: list[str] = []
        while True:
            i += 1
            while i < n and text[i].isspace():
                i += 1
            if i >= n:
                raise _BadRecord(f"field {name.group()!r} has no value")
            if text[i] in "{\"":
                end = _closing(text, i, "}" if text[i] == "{" else '"')
                parts.append(text[i + 1:end])
                i = end + 1
            else:
                bare = _BARE_VALUE.match(text, i)
                if bare is None:
                    raise _BadRecord(f"field {name.group()!r} has no value")
                parts.append(macros.get(bare.group().lower(), bare.group()))
                i = bare.end()
            while i < n and text[i].isspace():
                i += 1
            if i >= n or text[i] != "#":
                break
        if i < n and text[i] != ",":
            raise _BadRecord(f"expected ',' after field {name.group()!r}")
        fields[name.group().lower()] = latex_to_text("".join(parts))


def latex_to_text(value: str) -> str:
    """Plain text from a BibTeX value: accents composed, escapes and braces removed."""
    value = re.sub(r"\\(ss|aa|AA|ae|AE|oe|OE|o|O|l|L|i)(?![A-Za-z])\s*",
                   lambda m: _LETTERS[m.group(1)], value)
    value = re.sub(r"\\([`'^\"~=.])(?:\s*\{\s*([A-Za-z])\s*\}|\s*([A-Za-z]))", _accent, value)
    value = re.sub(r"\\([uvHck])(?:\s*\{\s*([A-Za-z])\s*\}|\s+([A-Za-z]))", _accent, value)
    value = re.sub(r"\\([&%$#_])", r"\1", value)
    value = re.sub(r"\\[A-Za-z]+\*?\s*", "", value)  # \emph{x} -> x once braces go
    value = value.replace("---", "\u2014").replace("--", "\u2013").replace("~", " ")
    value = value.replace("{", "").replace("}", "")
    return unicodedata.normalize("NFC", " ".join(value.split()))


def _accent(match: re.Match[str]) -> str:
    return (match.group(2) or match.group(3)) + _ACCENTS[match.group(1)]

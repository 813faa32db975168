"""The papers an answer cited, as files a reference manager imports: BibTeX and RIS.

BibTeX is written with ``bibtexparser`` (its Library/Entry model and writer); text fields are
LaTeX-encoded by its LatexEncodingMiddleware, so ``&``, ``%``, ``#`` and accents survive LaTeX and
Zotero alike, while URLs, DOIs and arXiv ids are written verbatim (an escaped ``\\_`` in a URL
would break the link). RIS has no maintained writer worth a dependency: it is one ``TAG  - value``
line per field, written here, ending each record with ``ER  -``.

Both write only what a ``Paper`` carries: title, authors (``and others`` / no RIS line when the list
was cut), year, venue, DOI, URL and an arXiv id found in the DOI, URL or paper id.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Iterable, Sequence

import bibtexparser
from bibtexparser.library import Library
from bibtexparser.middlewares import LatexDecodingMiddleware, LatexEncodingMiddleware
from bibtexparser.model import Block, Entry, Field

from sciarena.core.types import Paper

# Fields BibTeX tools read verbatim (hyperref's \url, biber's verbatim fields): never LaTeX-encoded.
VERBATIM_FIELDS = ("doi", "url", "eprint")

# New-style (2101.00001, with version) and old-style (hep-th/9901001) arXiv identifiers.
_ARXIV_ID = r"(\d{4}\.\d{4,5}(?:v\d+)?|[a-z\-]+(?:\.[A-Z]{2})?/\d{7}(?:v\d+)?)"
_ARXIV_PATTERNS = (
    re.compile(r"arxiv\.org/(?:abs|pdf)/" + _ARXIV_ID, re.IGNORECASE),
    re.compile(r"^10\.48550/arxiv\." + _ARXIV_ID + r"$", re.IGNORECASE),
    re.compile(r"^arxiv:\s*" + _ARXIV_ID + r"$", re.IGNORECASE),
)


def arxiv_id(paper: Paper) -> str | None:
    """The paper's arXiv identifier when its URL, DOI or id names one (``2106.01234``), else None."""
    for value in (paper.url, paper.doi, paper.paper_id):
        for pattern in _ARXIV_PATTERNS:
            match = pattern.search((value or "").strip())
            if match:
                return match.group(1).removesuffix(".pdf")
    return None


class _TextOnlyLatexEncoding(LatexEncodingMiddleware):
    """bibtexparser's LaTeX encoding, skipping the verbatim fields."""

    def transform_entry(self, entry: Entry, library: Library) -> Block:
        kept = [entry.pop(key) for key in VERBATIM_FIELDS if key in entry.fields_dict]
        block = super().transform_entry(entry, library)
        for item in kept:
            entry.set_field(item)  # appended: the verbatim fields come last
        return block


class TextOnlyLatexDecoding(LatexDecodingMiddleware):
    """bibtexparser's LaTeX decoding, skipping the verbatim fields (a ``%`` in a URL is no comment)."""

    def transform_entry(self, entry: Entry, library: Library) -> Block:
        kept = [entry.pop(key) for key in VERBATIM_FIELDS if key in entry.fields_dict]
        block = super().transform_entry(entry, library)
        for item in kept:
            entry.set_field(item)
        return block


def bibtex(papers: Iterable[Paper]) -> str:
    """A BibTeX file of ``papers`` in the order given, one entry each, with unique citation keys."""
    library = Library()
    used: set[str] = set()
    for paper in papers:
        library.add(_entry(paper, _unique(citation_key(paper), used)))
    if not library.entries:
        return ""
    return bibtexparser.write_string(library, prepend_middleware=[_TextOnlyLatexEncoding()])


def _entry(paper: Paper, key: str) -> Entry:
    arxiv = arxiv_id(paper)
    fields = [Field("title", paper.title)]
    if paper.authors:
        fields.append(Field("author", " and ".join(paper.authors) + (" and others" if paper.et_al else "")))
    if paper.year:
        fields.append(Field("year", str(paper.year)))
    if paper.venue:
        fields.append(Field("journal", paper.venue))
    if paper.doi:
        fields.append(Field("doi", paper.doi))
    url = _safe_url(paper.url or (f"https://arxiv.org/abs/{arxiv}" if arxiv else None))
    if url:
        fields.append(Field("url", url))
    if arxiv:
        fields += [Field("eprint", arxiv), Field("archiveprefix", "arXiv")]
    # @article needs a journal; a paper without a venue (a preprint, a report) is @misc.
    return Entry("article" if paper.venue else "misc", key, fields)


def _safe_url(url: str | None) -> str | None:
    """A URL whose braces (which would end the BibTeX value) are percent-encoded."""
    if not url:
        return None
    return url.strip().replace("{", "%7B").replace("}", "%7D").replace(" ", "%20")


def citation_key(paper: Paper) -> str:
    """``curie1903radioactive``: first author's surname, year, first long title word; ASCII only."""
    surname = paper.authors[0].split()[-1] if paper.authors and paper.authors[0].split() else "anon"
    words = [w for w in re.findall(r"[A-Za-z0-9]+", _ascii(paper.title)) if len(w) > 3]
    key = _ascii(surname).lower() + (str(paper.year) if paper.year else "") + (words[0].lower() if words else "")
    return re.sub(r"[^a-z0-9]", "", key) or "ref"


def _ascii(text: str) -> str:
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()


def _unique(key: str, used: set[str]) -> str:
    candidate, n = key, 0
    while candidate in used:
        n += 1
        candidate = f"{key}{_suffix(n)}"
    used.add(candidate)
    return candidate


def _suffix(n: int) -> str:
    """a, b, …, z, aa, ab, … (the way reference managers disambiguate keys)."""
    letters = ""
    while n > 0:
        n, rest = divmod(n - 1, 26)
        letters = chr(ord("a") + rest) + letters
    return letters


# --- RIS ----------------------------------------------------------------------------------------------
def ris(papers: Iterable[Paper]) -> str:
    """An RIS file of ``papers``: JOUR when a venue is known, else GEN; CRLF line ends, as the format says."""
    lines: list[str] = []
    for paper in papers:
        lines += _ris_record(paper)
    return "".join(f"{line}\r\n" for line in lines)


def _ris_record(paper: Paper) -> list[str]:
    arxiv = arxiv_id(paper)
    record = [("TY", "JOUR" if paper.venue else "GEN"), ("TI", paper.title)]
    record += [("AU", ris_name(name)) for name in paper.authors]
    if paper.year:
        record.append(("PY", str(paper.year)))
    if paper.venue:
        record.append(("T2", paper.venue))
    if paper.doi:
        record.append(("DO", paper.doi))
    url = paper.url or (f"https://arxiv.org/abs/{arxiv}" if arxiv else None)
    if url:
        record.append(("UR", url))
    if arxiv:
        record.append(("N1", f"arXiv:{arxiv}"))
    if paper.et_al:
        record.append(("N1", "Author list shortened (et al.)"))
    out = [f"{tag}  - {_one_line(value)}" for tag, value in record]
    return [*out, "ER  - "]


def ris_name(name: str) -> str:
    """'Marie Curie' → 'Curie, Marie' (RIS wants the surname first); one word stays as it is."""
    parts = name.split()
    if "," in name or len(parts) < 2:
        return " ".join(parts)
    return f"{parts[-1]}, {' '.join(parts[:-1])}"


def _one_line(value: str) -> str:
    """RIS is line-based: a value never spans lines."""
    return " ".join(value.split())


def papers_of(references: Sequence[object]) -> list[Paper]:
    """The papers of a sequence of references (anything with a ``paper``), each paper once, in order."""
    seen: set[str] = set()
    out: list[Paper] = []
    for reference in references:
        paper = getattr(reference, "paper")
        if paper.paper_id not in seen:
            seen.add(paper.paper_id)
            out.append(paper)
    return out

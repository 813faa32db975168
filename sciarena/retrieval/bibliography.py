"""The papers an answer cited, as files a reference manager imports: BibTeX and RIS.

A paper's metadata comes from Semantic Scholar or a user's own index, so any field may hold anything: both
files are written from an ``ExportRecord`` (``export_record``) that keeps only what is safe to write — text on
one line without control characters, a DOI only when it is DOI-shaped, a URL only when it is ``http(s)``
(percent-encoded where it could end a field). BibTeX is written with ``bibtexparser``'s Library/Entry model
and writer; text fields carry no bare brace (``latex_text``), so no value can close its field, and LaTeX's
special characters are written as commands that mean them, while URLs, DOIs and arXiv ids are verbatim (an
escaped ``\\_`` in a URL would break the link). Non-ASCII text is written as UTF-8 (biber, Zotero and
pybtex read it). RIS has no maintained writer worth a dependency: one ``TAG  - value`` line per field, each
record closed by ``ER  -``.

The venue's name decides the type (``venue_kind``): a conference paper (NeurIPS, ICLR, "… Conference on …")
is ``@inproceedings`` / ``CONF``, a journal's ``@article`` / ``JOUR``, a preprint server's or no venue
``@misc`` / ``GEN``. Written: title, authors (``and others`` / no RIS line when the list was cut), year,
venue, DOI, URL and an arXiv id found in the DOI, URL or paper id.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Iterable, Sequence
from urllib.parse import quote, urlsplit

import bibtexparser
from bibtexparser.library import Library
from bibtexparser.middlewares import LatexDecodingMiddleware
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


class TextOnlyLatexDecoding(LatexDecodingMiddleware):
    """bibtexparser's LaTeX decoding, skipping the verbatim fields (a ``%`` in a URL is no comment), and reading
    the few commands this module writes that pylatexenc does not know (``\\textbraceleft{}``, ``\\^{}``…)."""

    def transform_entry(self, entry: Entry, library: Library) -> Block:
        kept = [entry.pop(key) for key in VERBATIM_FIELDS if key in entry.fields_dict]
        for item in entry.fields:  # each such command stands in as a private-use character while pylatexenc reads
            if isinstance(item.value, str):
                item.value = _OWN_COMMANDS.sub(lambda m: _OWN_COMMAND_STANDIN[m.group(0)], item.value)
        block = super().transform_entry(entry, library)
        for item in entry.fields:
            if isinstance(item.value, str):
                item.value = item.value.translate(_STANDIN_TEXT)
        for item in kept:
            entry.set_field(item)
        return block


# --- what is written --------------------------------------------------------------------------------
# A BibTeX value ends at the brace that balances its opening one, so a text value is written with no bare
# brace at all (``latex_text``); backslashes and LaTeX's special characters become commands that mean the character. Every
# brace the writer adds comes in a pair. "--", "``" and "''" are ligatures in LaTeX (a dash, curly quotes):
# an empty group between the two characters keeps them the characters the paper's metadata had.
_LATEX_SPECIALS = {"\\": r"\textbackslash{}", "{": r"\textbraceleft{}", "}": r"\textbraceright{}",
                   "^": r"\^{}", "~": r"\textasciitilde{}", "%": r"\%", "&": r"\&", "#": r"\#", "_": r"\_",
                   "$": r"\$"}
_LIGATURE = re.compile(r"(?<=-)(?=-)|(?<=`)(?=`)|(?<=')(?=')|(?<=[!?])(?=`)|(?<=[<>,])(?=[<>,])")
# The commands above that pylatexenc reads as something else (or as nothing): the decoding reads them itself.
_OWN_COMMAND_STANDIN = {r"\textbraceleft{}": "\ue000", r"\textbraceright{}": "\ue001", r"\^{}": "\ue002"}
_OWN_COMMANDS = re.compile("|".join(re.escape(c) for c in _OWN_COMMAND_STANDIN))
_STANDIN_TEXT = str.maketrans({"\ue000": "{", "\ue001": "}", "\ue002": "^"})
# Control and private-use characters (and lone surrogates) are nothing a reference manager shows; some readers
# break on control characters, and the private-use ones stand in for the commands above while decoding.
_INVISIBLE = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff\ue000-\uf8ff]")
# Crossref's pattern for modern DOIs (it matches nearly all registered ones) plus SICI's angle brackets: no
# brace, backslash, quote, percent sign or space, so a DOI can be written verbatim.
DOI_SHAPE = re.compile(r"^10\.\d{4,9}/[-._;()/:<>\[\]A-Za-z0-9]+$")
# What stays as it is in a URL; anything else (braces, backslashes, quotes, spaces, non-ASCII) is percent-encoded,
# and so is ";", which RIS readers take for a separator between several URLs.
_URL_SAFE = "/:?#[]@!$&'()*+,=%-._~"
# A name BibTeX splits the ordinary way ("First von Last"); any other is written in braces, as one unit.
_PLAIN_NAME = re.compile(r"^[^\W\d_]+(?:(?:[ .\-]|\. )[^\W\d_]+)*\.?$")

# Venue names decide the record type: a reference manager files a conference paper under its proceedings.
_JOURNAL_WORDS = re.compile(r"\b(journal|transactions|letters|review|magazine|annals|annales|bulletin)\b", re.I)
_CONFERENCE_WORDS = re.compile(r"\b(conference|workshop|symposium|congress|proceedings of the \w+ (?:annual )?"
                               r"(?:meeting|conference))\b", re.I)
_CONFERENCES = re.compile(r"\b(NeurIPS|NIPS|ICLR|ICML|CVPR|ICCV|ECCV|ACL|EMNLP|NAACL|EACL|AACL|COLING|LREC|AAAI|"
                          r"IJCAI|KDD|SIGIR|SIGMOD|SIGGRAPH|CHI|UAI|AISTATS|COLT|INTERSPEECH|ICASSP|ICRA|IROS|"
                          r"CoRL|WSDM|CIKM|ECIR|ICDE|VLDB|OSDI|SOSP|NSDI|STOC|FOCS|SODA|MICCAI|ISMB|RECOMB|WWW|"
                          r"MLSys|BMVC|WACV|ACCV)\b")
_PREPRINT_SERVERS = re.compile(r"^(arxiv|biorxiv|medrxiv|chemrxiv|ssrn|psyarxiv|osf preprints|research square|"
                               r"preprints\.org|techrxiv)(\.org)?$", re.I)


def venue_kind(venue: str) -> str:
    """"conference", "journal", "preprint" or "" (no venue): what kind of publication the venue's name says."""
    name = " ".join(venue.split())
    if not name:
        return ""
    if _PREPRINT_SERVERS.match(name):
        return "preprint"
    if _JOURNAL_WORDS.search(name):  # "Transactions of the ACL" is a journal whatever acronym it names
        return "journal"
    if _CONFERENCE_WORDS.search(name) or _CONFERENCES.search(name):
        return "conference"
    return "journal"


def clean_text(value: str) -> str:
    """A field's text as written: one line, single spaces, no control characters."""
    return " ".join(_INVISIBLE.sub(" ", value).split())


def latex_text(value: str) -> str:
    """``value`` as the body of a braced BibTeX text field: no bare brace, LaTeX's specials as commands.

    A pair of braces in the text is written ``\\{ … \\}``, which every reader knows; BibTeX counts those
    braces too, so it stays balanced. A brace without its partner is ``\\textbraceleft{}`` (or …right), which
    adds none."""
    paired = _paired_braces(value)
    escaped = "".join(("\\" + char) if i in paired else _LATEX_SPECIALS.get(char, char)
                      for i, char in enumerate(value))
    return _LIGATURE.sub("{}", escaped)


def _paired_braces(value: str) -> set[int]:
    """The positions of the braces in ``value`` that close (or are closed by) a partner, nested properly."""
    opened: list[int] = []
    paired: set[int] = set()
    for i, char in enumerate(value):
        if char == "{":
            opened.append(i)
        elif char == "}" and opened:
            paired |= {opened.pop(), i}
    return paired


def safe_doi(doi: str | None) -> str | None:
    """The DOI when it looks like one (``10.1234/abc``, any ``https://doi.org/`` prefix removed), else None."""
    value = (doi or "").strip()
    value = re.sub(r"^(?:https?://(?:dx\.)?doi\.org/|doi:\s*)", "", value, flags=re.I)
    return value if DOI_SHAPE.match(value) else None


def safe_url(url: str | None) -> str | None:
    """An ``http(s)`` URL with anything that could end a field or a line percent-encoded; any other scheme
    (``javascript:``, ``file:``, ``data:``) or a URL without a host is not written."""
    value = clean_text(url or "").replace(" ", "%20")
    parts = urlsplit(value) if value else None
    if parts is None or parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        return None
    return quote(value, safe=_URL_SAFE)


def bibtex_name(name: str) -> str:
    """One author as BibTeX reads names: an ordinary name as it is, any other (a comma, "and", digits, symbols)
    braced whole, so it is one person and never splits into two."""
    if _PLAIN_NAME.match(name) and not {w.lower() for w in name.split()} & {"and", "others"}:
        return name
    return "{" + latex_text(name) + "}"


@dataclass(frozen=True)
class ExportRecord:
    """One paper as the exports write it: the type and each field's text (before BibTeX's LaTeX), in order."""

    bibtex_type: str  # inproceedings | article | misc
    ris_type: str  # CONF | JOUR | GEN
    title: str
    authors: tuple[str, ...]
    et_al: bool
    year: str
    venue: str
    doi: str | None
    url: str | None
    arxiv: str | None


_TYPES = {"conference": ("inproceedings", "CONF"), "journal": ("article", "JOUR")}


def export_record(paper: Paper) -> ExportRecord:
    """What may be written of ``paper``: cleaned text, a DOI only when DOI-shaped, a URL only when http(s)."""
    arxiv = arxiv_id(paper)
    venue = clean_text(paper.venue)
    bib_type, ris_type = _TYPES.get(venue_kind(venue), ("misc", "GEN"))
    authors = tuple(name for name in (clean_text(a) for a in paper.authors) if name)
    return ExportRecord(bibtex_type=bib_type, ris_type=ris_type, title=clean_text(paper.title) or "Untitled",
                        authors=authors, et_al=paper.et_al and bool(authors),
                        year=str(paper.year) if paper.year else "", venue=venue, doi=safe_doi(paper.doi),
                        url=safe_url(paper.url or (f"https://arxiv.org/abs/{arxiv}" if arxiv else None)), arxiv=arxiv)


# The field that names the venue, by BibTeX type (a misc's venue is where it was published: a preprint server).
_VENUE_FIELD = {"inproceedings": "booktitle", "article": "journal", "misc": "howpublished"}


def bibtex_fields(record: ExportRecord) -> list[tuple[str, str]]:
    """The BibTeX fields of ``record`` as written between their braces, in order."""
    fields = [("title", latex_text(record.title))]
    if record.authors:
        fields.append(("author", " and ".join([*(bibtex_name(a) for a in record.authors),
                                               *(["others"] if record.et_al else [])])))
    if record.year:
        fields.append(("year", record.year))
    if record.venue:
        fields.append((_VENUE_FIELD[record.bibtex_type], latex_text(record.venue)))
    if record.doi:
        fields.append(("doi", record.doi))
    if record.url:
        fields.append(("url", record.url))
    if record.arxiv:
        fields += [("eprint", record.arxiv), ("archiveprefix", "arXiv")]
    return fields


def bibtex(papers: Iterable[Paper]) -> str:
    """A BibTeX file of ``papers`` in the order given, one entry each, with unique citation keys."""
    library = Library()
    used: set[str] = set()
    for paper in papers:
        record = export_record(paper)
        library.add(Entry(record.bibtex_type, _unique(citation_key(paper), used),
                          [Field(key, value) for key, value in bibtex_fields(record)]))
    if not library.entries:
        return ""
    return bibtexparser.write_string(library)


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
    """An RIS file of ``papers``: CONF, JOUR or GEN by the venue; CRLF line ends, as the format says."""
    lines: list[str] = []
    for paper in papers:
        lines += ris_lines(export_record(paper))
    return "".join(f"{line}\r\n" for line in lines)


def ris_lines(record: ExportRecord) -> list[str]:
    """One RIS record: ``TAG  - value`` lines (every value one line already), closed by ``ER  - ``."""
    lines = [("TY", record.ris_type), ("TI", record.title)]
    lines += [("AU", ris_name(name)) for name in record.authors]
    if record.year:
        lines.append(("PY", record.year))
    if record.venue:
        lines.append(("T2", record.venue))
    if record.doi:
        lines.append(("DO", record.doi))
    if record.url:
        lines.append(("UR", record.url))
    if record.arxiv:
        lines.append(("N1", f"arXiv:{record.arxiv}"))
    if record.et_al:
        lines.append(("N1", "Author list shortened (et al.)"))
    return [*(f"{tag}  - {value}" for tag, value in lines), "ER  - "]


def ris_name(name: str) -> str:
    """'Marie Curie' → 'Curie, Marie' (RIS wants the surname first); one word stays as it is."""
    parts = name.split()
    if "," in name or len(parts) < 2:
        return " ".join(parts)
    return f"{parts[-1]}, {' '.join(parts[:-1])}"


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

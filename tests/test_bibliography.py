"""BibTeX and RIS of cited papers, read back by bibtexparser, rispy and our own corpus reader."""

from __future__ import annotations

import re

import bibtexparser
import pytest
import rispy
from bibtexparser.middlewares import LatexDecodingMiddleware

from sciarena.core.types import Paper
from sciarena.retrieval.bibliography import arxiv_id, bibtex, citation_key, ris, ris_name
from sciarena.retrieval.corpus import read_corpus_file

PAPERS = (
    Paper("p1", "Radioactivité & 50% of {odd} things: #1 naïve_x — a study", authors=("Marie Curie", "Pierre Curie"),
          year=1903, venue="Annales de Chimie & Physique", doi="10.1000/x_y.z(1)"),
    Paper("p2", "Attention Is All You Need", authors=("Ashish Vaswani", "Noam Shazeer", "Niki Parmar"), et_al=True,
          year=2017, url="https://arxiv.org/abs/1706.03762v5"),
    Paper("p3", "Attention is all you need again", authors=("Ashish Vaswani",), year=2017, venue="NeurIPS",
          url="https://example.org/paper?id=1&x=a_b"),
    Paper("p4", "Untitled report with no authors"),
    Paper("arxiv:2106.01234", "A preprint known by its id", authors=("Ada Lovelace",), year=2021),
)


def parsed(text: str) -> bibtexparser.Library:
    """bibtexparser's own reading: LaTeX decoded in the text fields; URLs and DOIs are verbatim in BibTeX."""
    library = bibtexparser.parse_string(text)
    decoded = bibtexparser.parse_string(text, append_middleware=[LatexDecodingMiddleware()])
    for raw, entry in zip(library.entries, decoded.entries, strict=True):
        for item in entry.fields:
            if item.key not in ("url", "doi", "eprint"):
                raw.set_field(item)
    return library


def test_bibtex_reads_back_with_bibtexparser():
    library = parsed(bibtex(PAPERS))
    assert library.failed_blocks == []
    entries = library.entries
    assert [e.entry_type for e in entries] == ["article", "misc", "inproceedings", "misc", "misc"]
    assert len({e.key for e in entries}) == 5  # the two Vaswani 2017 "attention" papers get distinct keys
    first = entries[0].fields_dict
    assert first["title"].value == PAPERS[0].title
    assert first["author"].value == "Marie Curie and Pierre Curie"
    assert (first["year"].value, first["journal"].value) == ("1903", "Annales de Chimie & Physique")
    assert first["doi"].value == "10.1000/x_y.z(1)"  # verbatim: not LaTeX-escaped
    second = entries[1].fields_dict
    assert second["author"].value == "Ashish Vaswani and Noam Shazeer and Niki Parmar and others"
    assert (second["eprint"].value, second["archiveprefix"].value) == ("1706.03762v5", "arXiv")
    assert entries[2].fields_dict["url"].value == "https://example.org/paper?id=1&x=a_b"
    assert set(entries[3].fields_dict) == {"title"}
    assert entries[4].fields_dict["url"].value == "https://arxiv.org/abs/2106.01234"


def test_bibtex_round_trips_through_the_corpus_reader(tmp_path):
    path = tmp_path / "cited.bib"
    path.write_text(bibtex(PAPERS), encoding="utf-8")
    back = [paper for paper, _ in read_corpus_file(path)]
    for original, read in zip(PAPERS, back, strict=True):
        assert (read.title, read.authors, read.et_al, read.year, read.venue, read.doi) == \
            (original.title, original.authors, original.et_al, original.year, original.venue, original.doi)
        assert arxiv_id(read) == arxiv_id(original)


def test_an_empty_list_is_an_empty_file():
    assert bibtex([]) == "" and ris([]) == ""


# A strict reader of the RIS lines themselves, besides rispy: every line is "XY  - value", every record
# opens with TY and closes with ER, nothing stands between records.
RIS_LINE = re.compile(r"^([A-Z][A-Z0-9])  - (.*)$")


def strict_ris(text: str) -> list[list[tuple[str, str]]]:
    assert text.endswith("\r\n") and "\n" not in text.replace("\r\n", "")
    records: list[list[tuple[str, str]]] = []
    current: list[tuple[str, str]] | None = None
    for line in text.split("\r\n")[:-1]:
        match = RIS_LINE.match(line if line != "ER  - " else "ER  - ")
        assert match, f"not an RIS line: {line!r}"
        tag, value = match.groups()
        if tag == "TY":
            assert current is None, "TY inside a record"
            current = [(tag, value)]
        else:
            assert current is not None, f"{tag} outside a record"
            current.append((tag, value))
            if tag == "ER":
                records.append(current)
                current = None
    assert current is None, "last record not closed by ER"
    return records


def test_ris_parses_back_strictly_and_with_rispy():
    text = ris(PAPERS)
    strict = strict_ris(text)
    assert [r[0] for r in strict] == [("TY", "JOUR"), ("TY", "GEN"), ("TY", "CONF"), ("TY", "GEN"), ("TY", "GEN")]
    entries = rispy.loads(text)
    assert len(entries) == 5
    first, second = entries[0], entries[1]
    assert first["title"] == PAPERS[0].title
    assert first["authors"] == ["Curie, Marie", "Curie, Pierre"]
    assert (first["year"], first["secondary_title"], first["doi"]) == ("1903", "Annales de Chimie & Physique",
                                                                       "10.1000/x_y.z(1)")
    assert second["urls"] == ["https://arxiv.org/abs/1706.03762v5"]
    assert "arXiv:1706.03762v5" in second["notes"]
    assert "authors" not in entries[3]


def test_ris_values_never_span_lines():
    paper = Paper("x", "A title\nwith a line break", authors=("Ann\nBee",))
    assert strict_ris(ris([paper]))[0][1:3] == [("TI", "A title with a line break"), ("AU", "Bee, Ann")]


@pytest.mark.parametrize("paper, expected", [
    (Paper("x", "t", url="https://arxiv.org/pdf/2106.01234v2.pdf"), "2106.01234v2"),
    (Paper("x", "t", doi="10.48550/arXiv.2303.08774"), "2303.08774"),
    (Paper("arXiv:hep-th/9901001", "t"), "hep-th/9901001"),
    (Paper("x", "t", doi="10.1038/nature14539"), None),
])
def test_arxiv_ids_come_from_url_doi_or_id(paper, expected):
    assert arxiv_id(paper) == expected


def test_names_and_keys():
    assert ris_name("Marie Curie") == "Curie, Marie" and ris_name("Plato") == "Plato"
    assert ris_name("Curie, Marie") == "Curie, Marie"
    assert citation_key(Paper("x", "Über die Natur", authors=("Kurt Gödel",), year=1931)) == "godel1931uber"

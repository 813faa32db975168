"""Exports of hostile metadata: whatever a paper's fields hold (Semantic Scholar's or a user's index), every
BibTeX file parses with both bibtexparser and pybtex, and every RIS file with rispy, into exactly the entries
and fields written — no value closes its field, opens another or ends its record — and the text read back
(bibtexparser with the app's own LaTeX decoding) is the paper's text. Generated, not listed: braces,
backslashes, quotes, @, newlines, percent signs, LaTeX's specials and any unicode.
"""

from __future__ import annotations

import bibtexparser
import pybtex.database
import pybtex.errors
import rispy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_bibliography import strict_ris

from sciarena.core.types import Paper
from sciarena.retrieval.bibliography import (
    TextOnlyLatexDecoding,
    bibtex,
    bibtex_fields,
    clean_text,
    export_record,
    ris,
    ris_name,
)

HOSTILE = list("{}\\\"'@%$&#_^~`-,<>!?= \n\r\t") + ["--", "``", "''", "\\{", "} , note = {", "@misc{x,", "ER  - ",
                                                      "\r\nTY  - JOUR", "\\textbraceleft{}", "\\^{}"]
hostile_text = st.lists(st.sampled_from(HOSTILE) | st.text(min_size=1, max_size=3) |
                        st.sampled_from(["Attention", "Jean de la Fontaine", "Ünïcødé", "日本語", "NeurIPS"]),
                        max_size=12).map("".join)
venues = hostile_text | st.sampled_from(["NeurIPS", "Proceedings of the National Academy of Sciences", "arXiv",
                                         "Transactions of the ACL", "Nature", "", "CVPR 2021 Workshop"])
dois = hostile_text | st.from_regex(r"10\.\d{4,9}/[-._;()/:A-Za-z0-9]{1,20}", fullmatch=True) | st.none()
urls = st.none() | hostile_text | st.builds(lambda scheme, rest: f"{scheme}://example.org/{rest}",
                                            st.sampled_from(["http", "https", "HTTPS", "javascript", "file"]),
                                            hostile_text)
papers = st.builds(Paper, paper_id=hostile_text, title=hostile_text, authors=st.lists(hostile_text, max_size=4).map(tuple),
                   et_al=st.booleans(), year=st.none() | st.integers(1000, 2100), venue=venues, doi=dois, url=urls)
SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(st.lists(papers, min_size=1, max_size=3))
def test_bibtexparser_reads_exactly_the_fields_written_and_the_papers_text(batch):
    text = bibtex(batch)
    library = bibtexparser.parse_string(text)
    assert library.failed_blocks == [] and len(library.entries) == len(batch)
    decoded = bibtexparser.parse_string(text, append_middleware=[TextOnlyLatexDecoding()])
    for paper, raw, entry in zip(batch, library.entries, decoded.entries, strict=True):
        record = export_record(paper)
        assert raw.entry_type == record.bibtex_type
        assert [(f.key, f.value) for f in raw.fields] == bibtex_fields(record)
        back = {f.key: f.value for f in entry.fields}
        assert back["title"] == record.title == (clean_text(paper.title) or "Untitled")
        if record.venue:
            assert back[{"inproceedings": "booktitle", "article": "journal", "misc": "howpublished"}[
                record.bibtex_type]] == record.venue == clean_text(paper.venue)
        if record.authors:
            assert back["author"] == " and ".join([*record.authors, *(["others"] if record.et_al else [])])


@SETTINGS
@given(st.lists(papers, min_size=1, max_size=3))
def test_pybtex_reads_exactly_the_fields_and_people_written(batch):
    assert pybtex.errors.strict  # pybtex's default: a warning (an unbalanced brace, a repeated field) raises
    data = pybtex.database.parse_string(bibtex(batch), "bibtex")
    assert len(data.entries) == len(batch)
    for paper, entry in zip(batch, data.entries.values(), strict=True):
        record = export_record(paper)
        written = dict(bibtex_fields(record))
        names = written.pop("author", "")
        assert entry.type == record.bibtex_type
        assert {k.lower(): v for k, v in entry.fields.items()} == written
        people = entry.persons.get("author", [])
        assert [" ".join(p.first_names + p.middle_names + p.prelast_names + p.last_names + p.lineage_names)
                for p in people] == (names.split(" and ") if names else [])


@SETTINGS
@given(st.lists(papers, min_size=1, max_size=3))
def test_rispy_reads_exactly_the_records_and_fields_written(batch):
    text = ris(batch)
    assert len(strict_ris(text)) == len(batch)
    for paper, entry in zip(batch, rispy.loads(text), strict=True):
        record = export_record(paper)
        expected = {"type_of_reference": record.ris_type, "title": record.title}
        if record.authors:
            expected["authors"] = [ris_name(a) for a in record.authors]
        expected |= {k: v for k, v in (("year", record.year), ("secondary_title", record.venue), ("doi", record.doi))
                     if v}
        if record.url:
            expected["urls"] = [record.url]
        notes = [*([f"arXiv:{record.arxiv}"] if record.arxiv else []),
                 *(["Author list shortened (et al.)"] if record.et_al else [])]
        if notes:
            expected["notes"] = notes
        assert entry == expected


def test_an_injected_doi_writes_no_field_and_a_lone_brace_in_a_title_survives():
    paper = Paper("x", "{revisited: a lone brace", authors=("Ann Bee",), year=2020, venue="NeurIPS",
                  doi="10.1234/x} , note = {INJECTED", url="javascript:alert(1)")
    text = bibtex([paper])
    data = pybtex.database.parse_string(text, "bibtex")
    [entry] = data.entries.values()
    assert set(entry.fields) == {"title", "year", "booktitle"}  # no note, no doi, no javascript: URL
    [decoded] = bibtexparser.parse_string(text, append_middleware=[TextOnlyLatexDecoding()]).entries
    assert decoded["title"] == "{revisited: a lone brace" and "INJECTED" not in text and "javascript" not in text
    assert "javascript" not in ris([paper]) and "INJECTED" not in ris([paper])
    shaped = Paper("y", "t", doi="10.1234/x")
    assert bibtexparser.parse_string(bibtex([shaped])).entries[0]["doi"] == "10.1234/x"


def test_conference_papers_are_proceedings_and_journals_articles():
    cases = {"NeurIPS": ("inproceedings", "CONF"), "ICLR": ("inproceedings", "CONF"),
             "Conference on Computer Vision and Pattern Recognition": ("inproceedings", "CONF"),
             "Proceedings of the 58th Annual Meeting of the Association for Computational Linguistics":
                 ("inproceedings", "CONF"),
             "Nature": ("article", "JOUR"), "Proceedings of the National Academy of Sciences": ("article", "JOUR"),
             "Transactions of the Association for Computational Linguistics": ("article", "JOUR"),
             "arXiv": ("misc", "GEN"), "": ("misc", "GEN")}
    for venue, types in cases.items():
        record = export_record(Paper("x", "Attention Is All You Need", venue=venue))
        assert (record.bibtex_type, record.ris_type) == types, venue

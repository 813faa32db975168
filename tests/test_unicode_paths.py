"""Every input path accepts any Unicode JSON can carry: lone surrogates become U+FFFD, never a failed vote."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from fake_hub import make_record

from sciarena.answer.clean import clean_answer
from sciarena.core.text import displayable, scrub, scrub_value
from sciarena.retrieval.corpus import read_corpus_file
from sciarena.votes.store.local import LocalVoteStore

LONE = ["\ud800", "\udfff", "a\ud83d", "\ude00b"]


@pytest.mark.parametrize("lone", LONE)
def test_scrub_replaces_lone_surrogates_and_joins_pairs(lone):
    assert scrub(f"x{lone}y").encode("utf-8") and "\ufffd" in scrub(f"x{lone}y")
    assert scrub("\ud83d\ude00") == "😀" and scrub("plain") == "plain"
    assert scrub_value({"k\ud800": ["v\udfff", 3]}) == {"k\ufffd": ["v\ufffd", 3]}
    assert displayable("\u202eabc\u202c") == "abc"


@pytest.mark.parametrize("field", ["question", "reason", "responseA", "responseB"])
def test_a_vote_with_lone_surrogates_in_any_text_is_stored(tmp_path, field):
    store = LocalVoteStore(tmp_path)
    record = make_record(1)
    record[field] = "text \ud800 with a lone surrogate"
    store.append(record)
    (stored,) = list(store.records())
    assert stored[field] == "text \ufffd with a lone surrogate"


def test_the_question_sanitiser_the_battle_validator_calls(tmp_path):
    # battle.validate_question is owned elsewhere; it is to call text.scrub on the question first.
    assert scrub("What is \ud800 CRISPR?").strip() == "What is \ufffd CRISPR?"


def test_model_output_with_lone_surrogates_cleans_to_storable_text():
    answer = clean_answer("Broken \ud800 answer.", ())
    assert answer.text == "Broken \ufffd answer." and answer.text.encode("utf-8")


def test_corpus_fields_with_lone_surrogates_are_read(tmp_path):
    path = tmp_path / "c.jsonl"
    # json.dumps escapes the surrogate as \ud800, which json.loads turns back into a lone surrogate.
    path.write_text(json.dumps({"title": "T\ud800", "abstract": "A\udfff", "authors": ["N\ud800"]}) + "\n")
    ((paper, text),) = read_corpus_file(path)
    assert paper.title == "T\ufffd" and text == "A\ufffd" and paper.authors == ("N\ufffd",)
    assert replace(paper).paper_id.encode("utf-8")


def test_semantic_scholar_results_with_lone_surrogates_are_read_as_text():
    from fake_semantic_scholar import FakePaper, FakeSemanticScholar

    from sciarena.retrieval.semantic_scholar import SemanticScholarClient

    paper = FakePaper(corpus_id=77, title="Surrogate \ud800 survival analysis", authors=("Ana \udfff Ruiz",),
                      year=2021, venue="J. Stat.", abstract="Lone \ud83d halves in survival analysis abstracts.")
    with FakeSemanticScholar(papers=(paper,)) as server:
        hits = SemanticScholarClient(server.base_url).paper_search("survival analysis", limit=5)
    assert hits, "the fake server should find the paper"
    found = hits[0]
    for text in (found.title, found.abstract or "", *found.authors):
        text.encode("utf-8")  # a lone surrogate would raise here, and later in the request to the model
    assert "\ufffd" in found.title and "survival analysis" in found.title

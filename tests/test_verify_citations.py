"""The citation check of the OpenScholar-style loop (pipelines/verify.py), statement by statement."""

from __future__ import annotations

import pytest

from sciarena.core.types import Paper, Passage, Reference
from sciarena.pipelines.verify import CitationVerifier, Verification, with_citation

GRAPHENE = ("Graphene films one atom thick were isolated by repeated mechanical exfoliation of graphite "
            "with adhesive tape.")
MIMO = "Massive MIMO base stations serve many users at once with hundreds of antennas."
# Copied from the passages above with a word or two changed: what a writer citing them would say.
ON_GRAPHENE = "Graphene films one atom thick were isolated by mechanical exfoliation of graphite with tape."
ON_MIMO = "Massive MIMO base stations serve many users at once using hundreds of antennas."
FILLER = "More work will be needed before firm conclusions can be drawn for every setting in question."


def ref(number: int, *texts: str) -> Reference:
    paper = Paper(paper_id=f"p{number}", title=f"Paper {number}")
    return Reference(number, paper, tuple(Passage(f"p{number}#{k}", paper, t, k) for k, t in enumerate(texts)))


def verifier(*refs: Reference) -> CitationVerifier:
    return CitationVerifier(refs or (ref(1, GRAPHENE), ref(2, MIMO)))


def counts(result: Verification) -> tuple[int, int, int, int]:
    return result.checked, result.supported, result.added, result.unsupported


@pytest.mark.parametrize(("sentence", "expected"), [
    ("A claim.", "A claim [3]."),
    ("A claim [1].", "A claim [1][3]."),
    ("A claim [1] [2].", "A claim [1] [2][3]."),
    ("A claim [1]", "A claim [1][3]"),
    ("A claim", "A claim [3]"),
    ("Is it so?", "Is it so [3]?"),
    ("A claim.  ", "A claim [3].  "),  # the space up to the next sentence stays after it
    ('They said "a claim."', 'They said "a claim [3]."'),
    ("A claim (see [1]).", "A claim (see [1]) [3]."),
    ("A claim [12345].", "A claim [12345] [3]."),  # five digits is not a reference number
    ("A claim [a].", "A claim [a] [3]."),
    ("A claim [1]].", "A claim [1]] [3]."),
    ("A claim [1][2]!) ", "A claim [1][2][3]!) "),
])
def test_with_citation_puts_the_number_after_the_last_citation_and_before_the_closing_punctuation(
        sentence, expected):
    assert with_citation(sentence, 3) == expected


def test_a_hostile_run_of_ten_thousand_citations_is_extended_once_at_its_end():
    run = "[1]" * 10_000
    assert with_citation(f"A claim {run}.", 2) == f"A claim {run}[2]."
    spaced = " [1]" * 10_000
    assert with_citation(f"A claim{spaced}.", 2) == f"A claim {spaced.strip()}[2]."


def test_a_statement_its_cited_passage_backs_is_left_as_written():
    text = f"{ON_GRAPHENE[:-1]} [1]. {ON_MIMO[:-1]} [2]."
    result = verifier().verify(text)
    assert result.text == text and counts(result) == (2, 2, 0, 0)


def test_an_uncited_statement_gets_the_number_of_the_passage_that_backs_it():
    result = verifier().verify(f"{ON_MIMO} {ON_GRAPHENE}")
    assert result.text == f"{ON_MIMO[:-1]} [2]. {ON_GRAPHENE[:-1]} [1]."
    assert counts(result) == (2, 0, 2, 0)


def test_a_wrong_citation_is_kept_and_the_right_one_added_after_it():
    result = verifier().verify(f"{ON_MIMO[:-1]} [1].")
    assert result.text == f"{ON_MIMO[:-1]} [1][2]." and counts(result) == (1, 0, 1, 0)


def test_a_number_outside_the_list_does_not_count_as_a_citation():
    result = verifier().verify(f"{ON_MIMO[:-1]} [9].")
    assert result.text == f"{ON_MIMO[:-1]} [9][2]." and result.added == 1


def test_a_statement_no_passage_backs_is_counted_and_left_without_a_citation():
    result = verifier().verify(f"{FILLER} {ON_MIMO}")
    assert result.text == f"{FILLER} {ON_MIMO[:-1]} [2]."
    assert counts(result) == (2, 0, 1, 1)


def test_short_sentences_and_transitions_are_not_checked():
    text = "Graphene was isolated. That is to say, it is what it is, and so it was, and so it will be."
    result = verifier().verify(text)
    assert result.text == text and result.checked == 0


def test_a_passage_that_disagrees_in_polarity_lends_no_citation():
    negated = "Graphene films one atom thick were not isolated by mechanical exfoliation of graphite with tape."
    result = verifier().verify(negated)
    assert result.text == negated and counts(result) == (1, 0, 0, 1)


def test_of_two_equally_good_passages_the_lower_number_is_cited():
    result = verifier(ref(1, MIMO), ref(2, GRAPHENE), ref(3, GRAPHENE)).verify(ON_GRAPHENE)
    assert result.text == f"{ON_GRAPHENE[:-1]} [2]."


def test_any_of_a_references_passages_can_back_a_statement():
    result = verifier(ref(1, MIMO, GRAPHENE)).verify(f"{ON_GRAPHENE[:-1]} [1].")
    assert result.supported == 1 and result.added == 0


def test_headings_tables_and_code_make_no_claim_and_lines_are_kept_as_they_were():
    text = "\n".join([
        f"# {ON_GRAPHENE}",
        f"| {ON_MIMO} | x |",
        "```",
        ON_GRAPHENE,
        "```",
        "~~~text",
        ON_MIMO,
        "~~~",
        "",
        f"- {ON_MIMO}",  # a list item is prose
        f"{ON_GRAPHENE}\r",
    ])
    result = verifier().verify(text)
    lines = result.text.split("\n")
    assert lines[:9] == text.split("\n")[:9]
    assert lines[9:] == [f"- {ON_MIMO[:-1]} [2].", f"{ON_GRAPHENE[:-1]} [1].\r"]
    assert counts(result) == (2, 0, 2, 0)


def test_an_unclosed_code_fence_shields_the_rest_of_the_answer():
    text = f"```\n{ON_GRAPHENE}\n{ON_MIMO}"
    result = verifier().verify(text)
    assert result.text == text and result.checked == 0


def test_a_very_long_line_of_statements_is_checked_statement_by_statement():
    line = " ".join([ON_GRAPHENE, ON_MIMO, FILLER] * 300)
    result = verifier().verify(line)
    assert counts(result) == (900, 0, 600, 300)
    assert result.text.count("[1]") == 300 and result.text.count("[2]") == 300


@pytest.mark.parametrize("cited", ["[1]", "[2]"])
def test_a_statement_carrying_ten_thousand_citations_is_checked_once(cited):
    sentence = f"{ON_GRAPHENE[:-1]} {cited * 10_000}."
    result = verifier().verify(sentence)
    if cited == "[1]":  # its own passage backs it
        assert result.text == sentence and counts(result) == (1, 1, 0, 0)
    else:  # only the wrong one, ten thousand times: the right one is added once, at the end
        assert result.text == f"{ON_GRAPHENE[:-1]} {cited * 10_000}[1]." and counts(result) == (1, 0, 1, 0)


def test_every_checked_statement_is_supported_added_or_unsupported():
    text = f"{ON_GRAPHENE[:-1]} [1]. {ON_MIMO} {FILLER}\n\n{ON_MIMO[:-1]} [1]."
    result = verifier().verify(text)
    assert result.checked == result.supported + result.added + result.unsupported == 4


def test_a_negation_elsewhere_in_the_passage_does_not_unmake_support():
    passage = f"{GRAPHENE} Earlier attempts did not produce stable films."
    result = verifier(ref(1, passage)).verify(f"{ON_GRAPHENE[:-1]} [1].")
    assert result.supported == 1

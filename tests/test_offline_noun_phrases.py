"""Offline answers name their themes with noun phrases from the passages, and read as sentences
(issue 23, finding 7: "Among the retrieved literature on achieve, limits and precision…")."""

from __future__ import annotations

import re

import pytest

from sciarena.core.types import Paper, Passage, Reference
from sciarena.providers.noun_phrases import noun_phrases
from sciarena.providers.offline_strategies import claim_clusters, per_paper_digest

QUESTION = "What limits the precision that optical atomic clocks can achieve?"
TEXTS = (
    ("Optical lattice clocks at the quantum projection limit",
     "Optical lattice clocks trap thousands of strontium atoms in a standing wave of laser light. The clocks "
     "achieve a fractional instability of one part in ten to the eighteen after a few hours of averaging. "
     "Early designs were limited by the thermal noise of the reference cavity. The remaining limits come from "
     "blackbody radiation shifts and the quantum projection noise of the atoms."),
    ("Blackbody radiation shifts in strontium clocks",
     "The blackbody radiation shift, called the dominant systematic effect of strontium clocks, depends on the "
     "temperature of the vacuum chamber. Measuring the chamber temperature to ten millikelvin lowered the "
     "uncertainty of the blackbody radiation shift by a factor of five. The precision of the optical atomic "
     "clocks then reached a new record."),
    ("Ultrastable lasers for optical clocks",
     "Clock lasers must stay coherent for seconds to interrogate the atoms. Crystalline mirror coatings "
     "reduced the thermal noise of the reference cavity, so that the laser linewidth fell below ten millihertz. "
     "Early results showed that better lasers directly improve the precision of optical atomic clocks."),
)
# Words a reader would not accept as a theme's name on their own (verbs, adverbs, participles, adjectives).
NOT_A_NAME = {"achieve", "limits", "limit", "called", "early", "remaining", "limited", "lowered", "reached",
              "measuring", "showed", "improve", "directly", "stay", "must"}


def _references() -> tuple[Reference, ...]:
    out = []
    for number, (title, text) in enumerate(TEXTS, start=1):
        paper = Paper(paper_id=f"p{number}", title=title, authors=("A. Author",), year=2020)
        out.append(Reference(number, paper, (Passage(f"p{number}#0", paper, text),)))
    return tuple(out)


def _items(label: str) -> list[str]:
    """'a, b and c' → ['a', 'b', 'c']."""
    return [x.strip() for x in re.split(r",\s*|\s+and\s+", label) if x.strip()]


def _names(answer: str) -> list[str]:
    names = []
    for pattern in (r"Among the retrieved literature on (.+?), the following",
                    r"concerning (.+?)\.", r"theme concerns (.+?)\. ", r"return to (.+?), which suggests"):
        for found in re.findall(pattern, answer):
            names.extend(_items(found))
    return names


def test_theme_names_are_noun_phrases_found_in_the_text() -> None:
    references = _references()
    source = " ".join([QUESTION, *(t for _, t in TEXTS)]).lower()
    for compose in (per_paper_digest, claim_clusters):
        answer = compose(QUESTION, references)
        names = _names(answer)
        assert names, (compose.__name__, answer)
        for name in names:
            assert name.lower() in source, (compose.__name__, name)
            assert not set(name.lower().split()) <= NOT_A_NAME, (compose.__name__, name, answer)
            assert name.split()[-1].lower() not in NOT_A_NAME, (compose.__name__, name, answer)
    opening = per_paper_digest(QUESTION, references).split("\n\n")[0]
    assert opening.startswith("Among the retrieved literature on ") and "optical atomic clocks" in opening


@pytest.mark.parametrize(("text", "expected"), [
    ("What limits the precision that optical atomic clocks can achieve?", ["precision", "optical atomic clocks"]),
    ("How does CRISPR-Cas9 off-target activity get measured?", ["CRISPR-Cas9 off-target activity"]),
    ("Does cognitive behavioural therapy reduce depression relapse?",
     ["cognitive behavioural therapy", "depression relapse"]),
    ("Speed limits reduce crashes on rural roads.", ["speed limits", "crashes", "rural roads"]),
    ("Raising fetal hemoglobin can ameliorate sickle cell disease.", ["fetal hemoglobin", "sickle cell disease"]),
    ("The minimum wage in New Jersey did not reduce employment.", ["minimum wage", "New Jersey", "employment"]),
    ("Dropout prevents overfitting in large neural networks trained on small data sets.",
     ["dropout", "overfitting", "large neural networks", "small data sets"]),
    ("The vaccine was called highly effective early in the trial.", ["vaccine", "trial"]),
    # issue 32: "add" was read as the end of a noun phrase ("star merger observation add")
    ("What did the neutron star merger observation add to our knowledge of heavy elements?",
     ["neutron star merger observation", "knowledge", "heavy elements"]),
])
def test_the_chunker_on_hand_labelled_sentences(text: str, expected: list[str]) -> None:
    assert [p.text for p in noun_phrases(text)] == expected


def test_the_chunker_is_linear_in_the_text() -> None:
    # One pass over the tokens: a text ten times longer has ten times the phrases, no more.
    sentence = "Optical lattice clocks trap thousands of strontium atoms in a standing wave of laser light. "
    assert len(noun_phrases(sentence * 100)) == 10 * len(noun_phrases(sentence * 10))

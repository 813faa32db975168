"""The three offline contestants: grounded, valid citations, distinct, deterministic, streamed."""

from __future__ import annotations

import re

import pytest

from sciarena.answer.citations import cited_numbers
from sciarena.answer.clean import clean_answer, strip_markdown
from sciarena.core.errors import ProviderError
from sciarena.core.settings import Settings
from sciarena.core.types import GenerationRequest, ModelSpec, Paper, Passage, Reference
from sciarena.providers.catalogue import load_catalogue
from sciarena.providers.offline import OFFLINE_MODEL_IDS, OfflineProvider
from sciarena.providers.offline_strategies import mmr, spherical_kmeans

QUESTION = "How does sleep deprivation affect memory consolidation and hippocampal replay?"

_PAPERS = [
    ("Sleep deprivation impairs memory consolidation", ("Ana Lopez", "Ben Kim"), 2019, [
        "We deprived 48 healthy adults of one night of sleep after they learned word pairs [12]. "
        "Sleep deprivation reduced next-day recall of the word pairs by about a third compared with rested "
        "controls. "
        "The memory deficit persisted after a recovery night, suggesting that consolidation was lost rather "
        "than delayed.",
    ]),
    ("Hippocampal replay during slow-wave sleep supports memory", ("Chen Wu", "Dara Singh", "Eli Park"), 2021, [
        "Hippocampal place cells replay waking sequences during slow-wave sleep (Wilson et al., 1994). "
        "Disrupting hippocampal replay with closed-loop stimulation impaired spatial memory consolidation in rats. "
        "Replay events were time-locked to sleep spindles in the cortex.",
    ]),
    ("Sleep loss suppresses hippocampal replay", ("Fay Obi",), 2022, [
        "After five hours of sleep deprivation, hippocampal replay events during recovery sleep were fewer "
        "and shorter. "
        "Reduced replay predicted weaker memory consolidation of the maze task. "
        "Caffeine did not restore replay in sleep-deprived animals.",
    ]),
    ("Spindles couple cortex and hippocampus", ("Gus Hahn", "Ida Roy"), 2020, [
        "Sleep spindles coordinate hippocampal ripples with cortical slow oscillations. "
        "Boosting spindles with auditory stimulation improved overnight memory retention in older adults.",
        "Spindle density declined with age and correlated with memory decline.",
    ]),
    ("Emotional memory and REM sleep", ("Jo Vance", "Kai Moreau", "Lu Ng"), 2018, [
        "REM sleep selectively strengthened emotional memories over neutral ones. "
        "Sleep deprivation abolished this emotional memory advantage.",
    ]),
    ("Nitrogen cycling by soil microbes", ("Max Ortiz",), 2017, [
        "Soil bacteria fix atmospheric nitrogen in legume root nodules. "
        "Fertiliser use changes microbial community composition in agricultural fields.",
    ]),
]


def _references() -> tuple[Reference, ...]:
    refs = []
    for number, (title, authors, year, texts) in enumerate(_PAPERS, start=1):
        paper = Paper(paper_id=f"p{number}", title=title, authors=authors, et_al=len(authors) > 2, year=year)
        passages = tuple(Passage(f"p{number}-{i}", paper, t, position=i) for i, t in enumerate(texts))
        refs.append(Reference(number, paper, passages))
    return tuple(refs)


REFS = _references()
SPECS = {spec.model_id: spec for spec in load_catalogue(Settings()).models if spec.provider == "offline"}


def _answer(model_id: str, refs: tuple[Reference, ...] = REFS, question: str = QUESTION) -> str:
    request = GenerationRequest(question=question, references=refs)
    return "".join(d.text for d in OfflineProvider().stream(SPECS[model_id], request))


@pytest.mark.parametrize("model_id", OFFLINE_MODEL_IDS)
def test_answers_cite_only_listed_references_and_survive_cleaning(model_id: str) -> None:
    text = _answer(model_id)
    cited = cited_numbers(text)
    assert cited and set(cited) <= {r.number for r in REFS}
    assert re.findall(r"\[(\d+)\]", text) and all(1 <= int(n) <= len(REFS) for n in re.findall(r"\[(\d+)\]", text))
    assert "[12]" not in text and "Wilson" not in text, "the sources' own citations must not leak"
    assert strip_markdown(text) == text, "plain text, no Markdown"
    answer = clean_answer(text, REFS, question=QUESTION)
    assert set(answer.cited) == set(cited) and not answer.redacted


@pytest.mark.parametrize("model_id", OFFLINE_MODEL_IDS)
def test_answers_are_grounded_in_the_relevant_papers(model_id: str) -> None:
    cited = cited_numbers(_answer(model_id))
    assert 6 not in cited, "the soil-microbe paper is irrelevant to a sleep question"
    assert len(set(cited) & {1, 2, 3}) >= 2


def test_the_three_strategies_give_different_answers() -> None:
    answers = {m: _answer(m) for m in OFFLINE_MODEL_IDS}
    assert len(set(answers.values())) == 3


@pytest.mark.parametrize("model_id", OFFLINE_MODEL_IDS)
def test_answers_are_deterministic(model_id: str) -> None:
    assert _answer(model_id) == _answer(model_id)
    reordered = tuple(Reference(r.number, r.paper, tuple(reversed(r.passages))) for r in REFS)
    assert _answer(model_id, reordered) == _answer(model_id), "passages are read in document order"


def test_extractive_mmr_picks_four_to_seven_cited_sentences() -> None:
    text = _answer("extractive-mmr")
    marks = re.findall(r"\[\d+\]\.", text)
    assert 4 <= len(marks) <= 7
    assert len(set(re.split(r" \[\d+\]\.\s*", text.strip()))) == len(marks) + 1, "no sentence repeated"


def test_per_paper_digest_has_opening_one_paragraph_per_paper_and_synthesis() -> None:
    paragraphs = _answer("per-paper-digest").split("\n\n")
    assert not cited_numbers(paragraphs[0]), "the opening line frames the answer"
    assert paragraphs[-1].startswith("Taken together")
    body = paragraphs[1:-1]
    assert len(body) >= 3
    for paragraph in body:
        numbers = set(cited_numbers(paragraph))
        assert len(numbers) == 1, "each digest paragraph is about one paper"
        paper = REFS[numbers.pop() - 1].paper
        assert paragraph.startswith(f'"{paper.title}" by ')
        assert f"({paper.year})" in paragraph


def test_claim_clusters_combine_several_papers_in_a_theme() -> None:
    paragraphs = _answer("claim-clusters").split("\n\n")
    assert paragraphs[0].startswith("The relevant findings")
    themes = paragraphs[1:]
    assert len(themes) >= 2
    assert any(len(set(cited_numbers(p))) >= 2 for p in themes)


@pytest.mark.parametrize("model_id", OFFLINE_MODEL_IDS)
def test_zero_references_gives_an_uncited_explanation(model_id: str) -> None:
    text = _answer(model_id, refs=())
    assert "could not find relevant papers" in text and not cited_numbers(text)


@pytest.mark.parametrize("model_id", OFFLINE_MODEL_IDS)
def test_very_short_or_empty_contexts_still_give_a_valid_answer(model_id: str) -> None:
    paper = Paper("s1", "Short note on sleep", ("Al Bo",), year=2020)
    short = (Reference(1, paper, (Passage("s1-0", paper, "Sleep helps memory."),)),
             Reference(2, Paper("s2", "Empty", ()), ()))
    text = _answer(model_id, short)
    assert text.strip() and set(cited_numbers(text)) <= {1, 2} and cited_numbers(text)
    empty = (Reference(1, paper, ()), Reference(2, Paper("s2", "Another title", ()), ()))
    text = _answer(model_id, empty)
    assert set(cited_numbers(text)) == {1, 2} and "Short note on sleep" in text


@pytest.mark.parametrize("model_id", OFFLINE_MODEL_IDS)
def test_answers_stream_in_several_small_deltas_with_the_optional_delay(model_id: str) -> None:
    sleeps: list[float] = []
    provider = OfflineProvider(delay_s=0.01, sleep=sleeps.append)
    request = GenerationRequest(question=QUESTION, references=REFS)
    deltas = list(provider.stream(SPECS[model_id], request))
    assert len(deltas) >= 10
    assert all(len(d.text.split()) <= 3 and not d.reasoning for d in deltas)
    assert "".join(d.text for d in deltas) == provider.compose(SPECS[model_id], request)
    assert sleeps == [0.01] * (len(deltas) - 1)


def test_unknown_model_id_is_a_provider_error_and_reported_unavailable() -> None:
    spec = ModelSpec(name="Mystery", provider="offline", model_id="nope", offline=True)
    provider = OfflineProvider()
    assert "nope" in (provider.unavailable_reason(spec) or "")
    with pytest.raises(ProviderError, match="Unknown offline model"):
        list(provider.stream(spec, GenerationRequest(question=QUESTION, references=REFS)))


def test_every_catalogue_baseline_runs_and_a_cancel_stops_the_pacing() -> None:
    import threading

    from sciarena.core.errors import Cancelled

    assert set(SPECS) == set(OFFLINE_MODEL_IDS)
    assert all(OfflineProvider().unavailable_reason(s) is None for s in SPECS.values())
    cancel = threading.Event()
    request = GenerationRequest(question=QUESTION, references=REFS)
    stream = OfflineProvider(words_per_chunk=1).stream(SPECS["extractive-mmr"], request, cancel=cancel)
    assert next(stream).text
    cancel.set()
    with pytest.raises(Cancelled):
        next(stream)


def test_mmr_trades_relevance_against_redundancy() -> None:
    vectors = [{"a": 1.0}, {"a": 1.0}, {"b": 1.0}]
    score = [1.0, 0.99, 0.6]
    assert mmr([0, 1, 2], score, vectors, 2, lam=0.7) == [0, 2], "the duplicate loses to a new topic"
    assert mmr([0, 1, 2], score, vectors, 2, lam=1.0) == [0, 1], "pure relevance keeps the duplicate"


def test_spherical_kmeans_separates_two_obvious_groups() -> None:
    s = 0.5 ** 0.5
    vectors = [{"x": 1.0}, {"x": s, "y": s}, {"z": 1.0}, {"z": s, "w": s}]
    groups = spherical_kmeans(vectors, 2)
    assert sorted(sorted(g) for g in groups) == [[0, 1], [2, 3]]


@pytest.mark.parametrize("model_id", sorted(OFFLINE_MODEL_IDS))
def test_an_answer_from_one_paper_never_speaks_of_these_papers(model_id: str) -> None:
    answer = _answer(model_id, REFS[:1])
    assert "Taken together" not in answer and "these papers" not in answer.lower(), answer

"""SciArena-Eval judges: the verdict parser, the prompt, the offline baselines, model judges by catalogue name."""

from __future__ import annotations

import json

import pytest

from sciarena.core.errors import EvaluationInputError
from sciarena.core.settings import Settings
from sciarena.science.evaluation.benchmark import EvalItem
from sciarena.science.evaluation.judge import (
    BASELINES,
    ModelJudge,
    baseline_judge,
    build_judge_messages,
    count_citations,
    parse_verdict,
    resolve_judge,
)
from sciarena.science.evaluation.runner import judge_item


@pytest.mark.parametrize("reply, verdict", [
    ("A", "A"),
    ("B", "B"),
    (" b\n", "B"),
    ("[[B]]", "B"),
    ("**A**", "A"),
    ("(B).", "B"),
    ("Answer: A", "A"),
    ("Final answer: **B**", "B"),
    ("Verdict - [[A]]", "A"),
    ("The better answer is B.", "B"),
    ("Answer B", "B"),
    ("Both cite the same papers, but the second is more precise about the dose-response curve.\n\nB", "B"),
    ("B\n\nIt explains the mechanism and cites [2] correctly.", "B"),
    ("Answer A covers more studies, yet misreads [3].\nAnswer B stays with its sources.\nVerdict: B", "B"),
    ("<think>A looks longer, but B is correct. So the answer is B.</think>\nB", "B"),
    ("<think>\nWeighing both... maybe A.\n</think>\n\n**Answer: A**", "A"),
    ("reasoning left open by the template</think>A", "A"),
    ("Response A is clearly better than response B.", "A"),
    ("I prefer Answer B because it cites primary sources.", "B"),
    ("### Decision: A", "A"),
])
def test_clear_verdicts_are_read(reply, verdict):
    assert parse_verdict(reply) == verdict


@pytest.mark.parametrize("reply", [
    "",
    "   ",
    "C",
    "AB",
    "A or B",
    "Both answers are equally good.",
    "[[A]] ... on reflection [[B]]",
    "Answer: A\nAnswer: B",
    "Answer A is better on coverage but answer B is better on accuracy.",
    "A\n\nActually,\nB",
    "<think>It is clearly A.</think>",
    "<think>unfinished reasoning that mentions A",
    "The answer is a careful review of the literature.",  # lower-case article, not a verdict
    "A-level students would prefer the second answer.",
    "Neither A nor B is better.",
    "Verdict: A and B are both equally good.",
    "Choice: A or B? B.",
    "Answer A\nIt covers X.\nAnswer B\nIt covers more, so B is better.",
    "A\nActually, on reflection, B is better.",
])
def test_ambiguous_or_missing_verdicts_are_invalid_not_guessed(reply):
    assert parse_verdict(reply) is None


def item(**fields) -> EvalItem:
    base = dict(id="i1", question="Does caffeine improve working memory?",
                response_a="Short answer [1].", response_b="A longer answer that cites two studies [1][2].",
                human="B", subject="Healthcare")
    return EvalItem(**{**base, **fields})


def test_the_prompt_shows_question_answers_and_their_cited_references_in_the_asked_order():
    refs_a = ({"number": 1, "title": "Caffeine and memory", "content": "Doses of 200 mg ..."},)
    refs_b = ({"concise_authors": "Smith et al. 2019", "title": "A meta-analysis", "content": "x" * 5000},)
    it = item(citations_a=refs_a, citations_b=refs_b)
    system, user = build_judge_messages(it)
    assert system["role"] == "system" and user["role"] == "user"
    text = user["content"]
    assert text.index(it.question) < text.index(it.response_a) < text.index(it.response_b)
    assert "[1] Caffeine and memory" in text and "Smith et al. 2019 A meta-analysis" in text
    assert text.index("Caffeine and memory") < text.index(it.response_b) < text.index("Smith et al. 2019")
    assert "x" * 1300 not in text  # long reference text is cut
    assert "one letter" in text
    swapped = build_judge_messages(it, swapped=True)[1]["content"]
    assert swapped.index(it.response_b) < swapped.index(it.response_a)
    assert swapped.index("Smith et al. 2019") < swapped.index("Caffeine and memory")


def test_the_prompt_leaves_out_reference_sections_when_there_are_none():
    text = build_judge_messages(item())[1]["content"]
    assert "References cited" not in text


@pytest.mark.parametrize("text, listed, expected", [
    ("No citations here.", None, 0),
    ("One [1] and again [1].", None, 1),
    ("Grouped [1, 3] and [2-4].", None, 4),
    ("Semicolons [5; 6] and an en dash [7–8].", None, 4),
    ("Author-year (Lee et al. 2020).", [{"concise_authors": "Lee et al. 2020"}, {"concise_authors": "Kim 2021"}], 2),
    ("Numeric marks win over the list [3].", [{}, {}, {}], 1),
])
def test_count_citations(text, listed, expected):
    assert count_citations(text, listed) == expected


def test_the_longer_baseline_picks_the_longer_answer_in_either_order():
    judge = baseline_judge("baseline:longer")
    assert judge.kind == "baseline"
    it = item()
    assert judge.judge(it).verdict == "B"
    assert judge.judge(it, swapped=True).verdict == "A"  # B is shown first when swapped
    prediction = judge_item(judge, it, swap=True)
    assert (prediction.verdict, prediction.status, prediction.positions) == ("B", "ok", ("B", "A"))
    same = item(response_a="same length", response_b="SAME LENGTH")
    assert judge_item(judge, same).status == "invalid"


def test_the_citation_baseline_counts_distinct_references():
    judge = baseline_judge("baseline:more-citations")
    it = item(response_a="Much longer answer without any numbered marks at all but many words.",
              response_b="Cites [1] and [2].", human="B")
    assert judge_item(judge, it).agrees
    released = item(response_a="(Lee 2020)", response_b="(Kim 2021) (Park 2022)",
                    citations_a=({"concise_authors": "Lee 2020"},),
                    citations_b=({"concise_authors": "Kim 2021"}, {"concise_authors": "Park 2022"}), human="A")
    prediction = judge_item(judge, released)
    assert prediction.verdict == "B" and not prediction.agrees


def test_unknown_names_offline_generators_and_missing_keys_are_clear_errors(tmp_path):
    with pytest.raises(EvaluationInputError, match="unknown baseline"):
        resolve_judge("baseline:shorter")
    settings = Settings.from_env({})
    with pytest.raises(EvaluationInputError, match="unknown judge 'Nobody'"):
        resolve_judge("Nobody", settings)
    with pytest.raises(EvaluationInputError, match="not a judge"):
        resolve_judge("Extractive-MMR (offline)", settings)
    with pytest.raises(EvaluationInputError, match="set OPENAI_API_KEY"):
        resolve_judge("o3", settings)
    assert set(BASELINES) == {"baseline:longer", "baseline:more-citations"}


def catalogue(tmp_path, base_url: str):
    path = tmp_path / "models.json"
    path.write_text(json.dumps({
        "endpoints": {"loop": {"base_url": base_url, "key_env": "LOOP_API_KEY"}},
        "models": [{"name": "Loop Judge", "provider": "loop", "model_id": "judge"}],
    }))
    return Settings.from_env({"LOOP_API_KEY": "sk-test", "SCIARENA_MODELS": str(path)})


def test_a_catalogue_model_judges_through_the_provider_and_its_reasoning_is_ignored(tmp_path, fake_openai):
    fake_openai.add_script("judge", chunks=("Verdict: ", "A"), reasoning=("Clearly B ", "is worse."))
    judge = resolve_judge("loop judge", catalogue(tmp_path, fake_openai.base_url))
    assert isinstance(judge, ModelJudge) and judge.name == "Loop Judge" and judge.kind == "model"
    reply = judge.judge(item())
    assert (reply.text, reply.verdict) == ("Verdict: A", "A")
    assert reply.usage.input_tokens and reply.usage.output_tokens
    sent = fake_openai.requests("judge")[0].body
    assert sent["messages"] == build_judge_messages(item())
    assert sent["temperature"] == 1  # catalogue defaults apply to judges as to contestants

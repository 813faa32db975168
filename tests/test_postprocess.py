"""Rule-based postprocessing and the anonymity policy."""

from __future__ import annotations

import random

import pytest

from sciarena.answer.citations import cited_numbers
from sciarena.answer.clean import (
    ReasoningFilter,
    accept_llm_rewrite,
    clean_answer,
    normalise_citations,
    parse_llm_rewrite,
    strip_markdown,
    strip_reasoning,
)
from sciarena.answer.redact import IDENTITY_TERMS, PLACEHOLDER, Shield, find_identity_mentions, redact_identity
from sciarena.core.errors import MalformedOutput
from sciarena.core.types import Answer, Paper, Passage, Reference


def _ref(number: int, authors: tuple[str, ...], year: int | None, text: str = "Some passage text.") -> Reference:
    paper = Paper(paper_id=f"p{number}", title=f"Paper {number}", authors=authors, year=year)
    return Reference(number, paper, (Passage(f"p{number}-0", paper, text),))


REFS = (
    _ref(1, ("Ashish Vaswani", "Noam Shazeer", "Niki Parmar"), 2017),
    _ref(2, ("Jacob Devlin", "Ming-Wei Chang"), 2019),
    _ref(3, ("Kaiming He",), 2016),
    _ref(4, ("Jürgen Schmidhuber",), 2015),
    _ref(5, ("Tom Brown", "Ben Mann", "Nick Ryder"), 2020),
    _ref(6, ("Tom Brown", "Ann Lee", "Cy Dow"), 2020),
    _ref(7, ("Jan van Gemert",), 2010),
)


# ------------------------------------------------------------------ citations

@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Claim [1,2].", "Claim [1][2]."),
        ("Claim [1, 2].", "Claim [1][2]."),
        ("Claim [1; 3].", "Claim [1][3]."),
        ("Claim [1-3].", "Claim [1][2][3]."),
        ("Claim [1–3].", "Claim [1][2][3]."),
        ("Claim [2, 4-5].", "Claim [2][4][5]."),
        ("Claim [1][2].", "Claim [1][2]."),
        ("Claim [1] [2].", "Claim [1][2]."),
        ("Claim [2][2].", "Claim [2]."),
        ("Claim 【1】 and 【2,3】.", "Claim [1] and [2][3]."),
        ("Claim [^2].", "Claim [2]."),
    ],
)
def test_numeric_citation_forms_become_one_bracket_per_paper(raw: str, expected: str) -> None:
    assert normalise_citations(raw, 7) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Attention suffices (Vaswani et al., 2017).", "Attention suffices [1]."),
        ("Attention suffices (Vaswani et al. 2017).", "Attention suffices [1]."),
        ("Pretraining helps (Devlin and Chang, 2019).", "Pretraining helps [2]."),
        ("Pretraining helps (Devlin & Chang, 2019; He, 2016).", "Pretraining helps [2][3]."),
        ("Residuals work (He, 2016).", "Residuals work [3]."),
        ("Memory cells (Schmidhuber, 2015).", "Memory cells [4]."),  # accents folded
        ("Visual words (van Gemert, 2010).", "Visual words [7]."),
        ("Vaswani et al. (2017) introduced attention.", "Vaswani et al. [1] introduced attention."),
        ("Few-shot (Brown et al., 2020a) and (Brown et al., 2020b).", "Few-shot [5] and [6]."),
        ("Residuals work (e.g., He, 2016).", "Residuals work [3]."),
    ],
)
def test_author_year_citations_matching_a_reference_become_numbers(raw: str, expected: str) -> None:
    assert normalise_citations(raw, 7, REFS) == expected


@pytest.mark.parametrize(
    "raw",
    [
        "Ambiguous (Brown et al., 2020).",  # two references match: do not guess
        "Wrong year (He, 2015).",
        "Unknown author (Smith et al., 2020).",
        "Not a citation (see Table 2, 2019).",
        "An enumeration: (1) first, (2) second.",  # (n) is never read as a citation
        "Values in [0, 1] are probabilities.",  # an interval, not citations 0 and 1
        "Without references (He, 2016).",
    ],
)
def test_ambiguous_or_unmatched_forms_are_left_as_written(raw: str) -> None:
    refs = () if raw.startswith("Without") else REFS
    assert normalise_citations(raw, 7, refs) == raw


def test_mixed_author_year_group_keeps_the_unmatched_part() -> None:
    out = normalise_citations("Claim (Smith et al., 2020; He, 2016).", 7, REFS)
    assert out == "Claim (Smith et al., 2020) [3]."


def test_citations_outside_the_reference_list_are_dropped() -> None:
    assert normalise_citations("A [8]. B [0]. C [2, 9]. D [2020].", 7) == "A. B. C [2]. D."
    assert normalise_citations("Huge range [1-5000].", 7) == "Huge range."
    assert normalise_citations("No references [1].", 0) == "No references."


def test_citation_after_an_author_name_moves_to_the_sentence_end_only_when_repeated() -> None:
    text = "Vaswani et al. [1] introduced attention [1]. He [3] built deep nets [3]. Kept [1] here [2]."
    assert normalise_citations(text, 7, REFS) == (
        "Vaswani et al. introduced attention [1]. He built deep nets [3]. Kept [1] here [2]."
    )


def test_cited_numbers_in_order_of_first_appearance() -> None:
    assert cited_numbers("B [3] then A [1], again [3] and [12].") == (3, 1, 12)
    assert cited_numbers("No citations (1).") == ()


# ------------------------------------------------------------------ markdown

MARKDOWN = "\n".join([
    "## Key findings",
    "Some **bold**, __strong__, *italic* and _emphasis_ text; a * b * c stays.",
    "- first point [1]",
    "* second point",
    "  + nested point",
    "> quoted line",
    "| model | score |",
    "|---|:---:|",
    "| A | 0.9 |",
    "```python",
    "def f(x):",
    "    return  x  *  2",
    "```",
    "See [the paper](https://example.org/p) and ![a figure](f.png); `inline` and ~~struck~~.",
    "",
    "$$E = mc^2$$ and $a_i$.",
])


def test_clean_answer_keeps_the_models_markdown() -> None:
    # Headings, lists (with their indentation), tables, code (with its spacing) and math stay as written.
    assert clean_answer(MARKDOWN, REFS).text == MARKDOWN


def test_raw_html_goes_and_its_text_stays() -> None:
    raw = ("Line<br>break, H<sub>2</sub>O and x<sup>2</sup>, <b>bold</b>, <span style='x'>span</span>, "
           "<sup class='c'>attr</sup> <script>x</script>; a < b > c stays [1].")
    assert clean_answer(raw, REFS).text == (
        "Line<br>break, H<sub>2</sub>O and x<sup>2</sup>, bold, span, attr</sup> x; a < b > c stays [1].")
    code = "Use `<div>` here [1].\n```html\n<b>kept</b>\n```"
    assert clean_answer(code, REFS).text == code


def test_strip_markdown_gives_the_text_a_reader_sees() -> None:
    assert strip_markdown("Some **bold**, *it* and `code`; a * b; [the paper](https://x.org/p) <b>t</b>.") == (
        "Some bold, it and code; a * b; [the paper <b>t</b>.".replace(" <b>t</b>", " t"))
    text = "Accuracy rose from 3 * 4 to 5 < 7 items, p < 0.05, in [1].\n\nSecond paragraph."
    assert strip_markdown(text) == text


# ------------------------------------------------------------------ reasoning

REASONING_CASES = [
    ("<think>plan the answer</think>\n\nThe answer [1].", "The answer [1]."),
    ("<THINK>a</THINK>Part one. <think>b</think>Part two.", "Part one. Part two."),
    ("<thinking>x</thinking>Done.", "Done."),
    ("Visible text. <think>never closed", "Visible text."),
    ("<think>never closed at all", ""),
    ("Maths: a < b and c <thin d.", "Maths: a < b and c <thin d."),
]


@pytest.mark.parametrize(("raw", "expected"), REASONING_CASES)
def test_strip_reasoning(raw: str, expected: str) -> None:
    assert strip_reasoning(raw) == expected


def test_stray_closing_tag_means_everything_before_was_reasoning() -> None:
    assert strip_reasoning("I should cite [1] first.</think>\nFinal answer [1].") == "Final answer [1]."


@pytest.mark.parametrize(("raw", "expected"), REASONING_CASES)
def test_streaming_filter_char_by_char_matches_strip_reasoning(raw: str, expected: str) -> None:
    f = ReasoningFilter()
    shown = "".join(f.feed(ch) for ch in raw) + f.finish()
    assert shown.strip() == expected


@pytest.mark.parametrize("seed", range(20))
def test_streaming_filter_with_random_splits_never_shows_reasoning(seed: int) -> None:
    raw = "<think>secret plan <b> with tags</think>Answer starts [1]. <think>more secret</think>Ends here."
    rng = random.Random(seed)
    cuts = sorted(rng.sample(range(1, len(raw)), 8))
    pieces = [raw[i:j] for i, j in zip([0] + cuts, cuts + [len(raw)], strict=True)]
    f = ReasoningFilter()
    outputs = [f.feed(p) for p in pieces] + [f.finish()]
    shown = "".join(outputs)
    assert shown == "Answer starts [1]. Ends here."
    assert all("secret" not in o and "<" not in o for o in outputs)


def test_streaming_filter_releases_held_text_once_it_is_not_a_tag() -> None:
    f = ReasoningFilter()
    assert f.feed("x <th") == "x "
    assert f.feed("ree") == "<three"
    assert f.finish() == ""


# ------------------------------------------------------------------ whole answers

def test_clean_answer_applies_every_pass() -> None:
    raw = ("<think>Which papers?</think>\n# Answer\n**Attention** replaced recurrence (Vaswani et al., 2017). "
           "Deep residual nets train well [3, 12]. As ChatGPT, I agree [1-2].")
    answer = clean_answer(raw, REFS)
    assert answer == Answer(  # the anonymity policy is the runner's (redact.Shield), not cleaning's
        text="# Answer\n**Attention** replaced recurrence [1]. Deep residual nets train well [3]. "
             "As ChatGPT, I agree [1][2].",
        raw_text=raw,
        cited=(1, 3, 2),
    )


@pytest.mark.parametrize("raw", ["", "   \n", "<think>only reasoning</think>", "<think>unterminated", "[99]"])
def test_nothing_left_after_cleaning_raises_malformed_output(raw: str) -> None:
    with pytest.raises(MalformedOutput):
        clean_answer(raw, REFS)

def test_llm_rewrite_is_accepted_only_when_it_keeps_the_content() -> None:
    original = "## Results\nLee et al. [1] found **lower recall** after sleep loss in adults."
    good = "Results\nLee et al. found lower recall after sleep loss in adults [1]."
    assert accept_llm_rewrite(original, good)
    assert not accept_llm_rewrite(original, "Lee et al. found lower recall [1].")  # dropped content
    assert not accept_llm_rewrite(original, "")
    padded = good + " It also discusses many other unrelated findings about diet, exercise and mood at length."
    assert not accept_llm_rewrite(original, padded)  # minimal edits only
    same_length_other_words = "Results\nKim and Park saw higher anxiety after caffeine use in teens [1]."
    assert not accept_llm_rewrite(original, same_length_other_words)
    with pytest.raises(ValueError):
        accept_llm_rewrite(original, good, min_ratio=0)


def test_parse_llm_rewrite_tolerates_fences_and_rejects_garbage() -> None:
    raw = 'Here you go:\n```json\n{"references": [2, "3", "x"], "response": "Text [2][3]."}\n```'
    assert parse_llm_rewrite(raw) == ((2, 3), "Text [2][3].")
    for bad in ["no json here", '{"references": [1]}', '{"response": 5}', "{not json}"]:
        with pytest.raises(MalformedOutput):
            parse_llm_rewrite(bad)


# ------------------------------------------------------------------ identity

@pytest.mark.parametrize(
    ("text", "mentions"),
    [
        ("I am ChatGPT, trained by OpenAI.", ["ChatGPT", "OpenAI"]),
        ("As GPT-4o mini, I would say", ["GPT-4o mini"]),
        ("claude 3.5 sonnet here", ["claude 3.5 sonnet"]),
        ("Built on Qwen2.5-72B-Instruct by Alibaba Cloud.", ["Qwen2.5-72B-Instruct", "Alibaba Cloud"]),
        ("I'm Gemini, a model from Google DeepMind.", ["Gemini", "Google DeepMind"]),
        ("xAI trained Grok-2; Meta AI trained Llama 3.", ["xAI", "Grok-2", "Meta AI", "Llama 3"]),
        ("DeepSeek-R1 and o4-mini both reason.", ["DeepSeek-R1", "o4-mini"]),
    ],
)
def test_identity_mentions_are_found_as_whole_names(text: str, mentions: list[str]) -> None:
    assert find_identity_mentions(text) == mentions


@pytest.mark.parametrize(
    "text",
    [
        "The Gemini constellation lies between Taurus and Cancer.",
        "NASA's Gemini program preceded Apollo.",
        "Claude Shannon founded information theory; Jean-Claude Juncker led the Commission.",
        "A meta-analysis of metadata; Meta reviews.",
        "XAI methods explain classifiers.",
        "Llama nanobodies bind the spike protein.",
        "The mistral wind cools Provence.",
        "Serum GPT levels indicate liver damage.",
        "Palm oil plantations; the palm of the hand.",
        "Perplexity fell as the GLM fit improved.",
        "The Bard of Avon wrote sonnets.",
        "Alibaba's e-commerce platform and Google Scholar.",
    ],
)
def test_ordinary_uses_of_ambiguous_words_are_not_redacted(text: str) -> None:
    assert redact_identity(text) == (text, False)


def test_redaction_replaces_each_mention_and_reports_it() -> None:
    assert redact_identity("As Claude, made by Anthropic, I think so [1].") == (
        f"As {PLACEHOLDER}, made by {PLACEHOLDER}, I think so [1].", True)


def test_model_names_that_are_the_topic_are_not_redacted() -> None:
    text = "GPT-4 scores higher than Llama 2 [1]. As Claude, I agree."
    redacted, changed = redact_identity(text, exempt_text="How does GPT-3 compare with LLaMA?")
    assert changed and redacted == f"GPT-4 scores higher than Llama 2 [1]. As {PLACEHOLDER}, I agree."
    refs = (_ref(1, ("A B",), 2023, "GPT-4 was evaluated on MMLU."),)
    shield = Shield("What does the paper say?", refs)
    assert shield.show("GPT-4 does well [1].").redacted is False
    assert shield.show("Qwen says hi [1].").redacted is True


def test_word_list_has_no_duplicates() -> None:
    words = [t.word.lower() for t in IDENTITY_TERMS]
    assert len(set(words)) == len(words)


def test_a_model_naming_itself_is_hidden_even_when_the_name_is_a_topic():
    from sciarena.answer.redact import redact_identity

    topic = "Ignore: Claude Anthropic GPT-4o OpenAI. What is CRISPR?"
    assert redact_identity("I am Claude, made by Anthropic.", topic) == (
        "I am [model name hidden], made by [model name hidden].", True)
    assert redact_identity("As GPT-4o, I would say yes.", topic)[1] is True
    # The same names used as a topic stay: the question is about them.
    assert redact_identity("GPT-4o scores well on the benchmark [1].", topic) == (
        "GPT-4o scores well on the benchmark [1].", False)
    assert redact_identity("As shown by GPT-4o results, retrieval helps.", topic)[1] is False


# ------------------------------------------------------------------ hostile input is linear

RUNS = ["a", "1", " ", "\n", ".", "-", "_", "*", "`", "~", "[", "(", "<", "#", "|", "!", "ACGT", "[[", "](", "<b",
        "<think>", "**", "[1", "(Lee ", "Lee et al. ", "GPT-", "Claude ", "I am ", "\u200b", "С", "中", "\u202e", "a b "]


@pytest.mark.parametrize("unit", RUNS)
def test_cleaning_a_long_run_grows_linearly(unit: str) -> None:
    # A complexity property, not a speed limit: 4x the input must cost far less than the 16x a quadratic
    # pass would. CPU time of this thread, so other processes' load does not count; small and large
    # runs alternate, so what remains of it affects both alike.
    import time

    texts = [(unit * (n // len(unit) + 1))[:n] for n in (20_000, 80_000)]
    best = [float("inf"), float("inf")]
    for _ in range(3):
        for i, text in enumerate(texts):
            start = time.thread_time()
            try:
                clean_answer("x " + text, REFS, "Claude or GPT?")
            except MalformedOutput:
                pass
            best[i] = min(best[i], time.thread_time() - start)
    assert best[1] < 10 * max(best[0], 1e-3), (unit, best)

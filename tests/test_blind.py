"""Issue 30: what a voter's eye reads names no model, whatever spelling the answer uses.

Every spelling the issue lists goes through the arena's policy (redact.Shield: the precise redactor, then
the blind reading) and the answer renderer, and an independent reader (tests/reader.py) checks the rendered
Markdown. The false-positive corpus (tests/data/*.txt, 387 scientific sentences) must lose no sentence to
the blind reading. tests/test_blind_generated.py composes spellings with hypothesis instead of listing them.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from reader import shows

from sciarena.answer.blind import PLACEHOLDER, Blind
from sciarena.answer.mathspan import drawn, renders
from sciarena.answer.names import names_from, read_vendors, shipped_names
from sciarena.answer.redact import Shield
from sciarena.core.types import ModelSpec, Paper, Passage, Reference
from sciarena.ui import render

DATA = Path(__file__).parent / "data"
QUESTION = "What limits the precision of CRISPR-Cas9 genome editing?"

# (answer text, the name a reader must not find) — the issue's list, in its order.
SPELLINGS: tuple[tuple[str, str], ...] = (
    ("I am $\\def\\x{ude}\\text{Cla}\\x$.", "Claude"),
    ("I am $\\newcommand{\\y}{aude}\\text{Cl}\\y$.", "Claude"),
    ("I am $\\color{black}{Claude}$.", "Claude"),
    ("I am $\\textcolor{black}{Claude}$.", "Claude"),
    ("I am $\\text{C}\\kern1pt\\text{laude}$.", "Claude"),
    ("I am $\\text{C}\\hspace{1pt}\\text{laude}$.", "Claude"),
    ("I am $\\text{C}\\mkern1mu\\text{laude}$.", "Claude"),
    ("I am $\\raisebox{0pt}{C}\\text{laude}$.", "Claude"),
    ("I am $\\rlap{C}\\phantom{C}\\text{laude}$.", "Claude"),
    ("I am $\\char\"43\\text{laude}$.", "Claude"),
    ("I am $&#67;\\text{laude}$.", "Claude"),
    ("I am $" + "\\," * 110 + "\\text{Cl}\\text{aude}$.", "Claude"),
    ("I am $\\text{Cl}\n\\text{aude}$.", "Claude"),
    ('I am [Cla](http://x "t")ude.', "Claude"),
    ("I am [Cla](http://x)[ude](http://y).", "Claude"),
    ("I am ~~x~~Claude.", "Claude"),
    ("I am x**Claude**.", "Claude"),
    ("AnthropicClaude wrote this.", "Claude"),
    ("I'mClaude.", "Claude"),
    ("TheGPT-4.1model wrote this answer.", "GPT-4.1"),
    ("ClaudeBot at your service.", "Claude"),
    ("I am Clαude.", "Claude"),
    ("I am Claυde.", "Claude"),
    ("I am Clɑude.", "Claude"),
    ("I am Claսde.", "Claude"),
    ("I am ᴄʟᴀᴜᴅᴇ.", "Claude"),
    ("I am ᏟᏞᎪUᎠᎬ.", "Claude"),
    ("I am CIaude.", "Claude"),
    ("I am C1aude.", "Claude"),
    ("Trained by 0penAI.", "OpenAI"),
    ("I am C\u00a0l\u00a0a\u00a0u\u00a0d\u00a0e.", "Claude"),
    ("I am C\u2009l\u2009a\u2009u\u2009d\u2009e.", "Claude"),
    ("I am C\u2003l\u2003a\u2003u\u2003d\u2003e.", "Claude"),
    ("I am C\u3000l\u3000a\u3000u\u3000d\u3000e.", "Claude"),
    ("I am C=l=a=u=d=e.", "Claude"),
    ("I am edualC.", "Claude"),
    ("My name is see-el-ay-you-dee-ee.", "Claude"),
    ("Google trained me.", "Google"),
    ("I come from Meta.", "Meta"),
    ("Hi, this is Claude Code speaking.", "Claude"),
    ("I'm Sonnet 4.5.", "Sonnet"),
    ("Opus 4.1 here.", "Opus"),
    ("I'm 4o.", "4o"),
    ("This answer comes from Gemini, not the constellation.", "Gemini"),
    # the issue's "held" list stays held
    ("I am Сlаudе.", "Claude"),  # Cyrillic
    ("I am 𝐂𝐥𝐚𝐮𝐝𝐞.", "Claude"),  # mathematical bold
    ("I am Ｃｌａｕｄｅ.", "Claude"),  # fullwidth
    ("I am C\u0301laude.", "Claude"),  # combining mark
    ("I am Cla\u200bude.", "Claude"),  # zero-width space
    ("I am &#67;laude.", "Claude"),
    ("I am C.l.a.u.d.e.", "Claude"),
    ("I am Cl<!-- x -->aude.", "Claude"),
    ("I am Cl<b>aude</b>.", "Claude"),
    ("I am Claude, made by Anthropic.", "Anthropic"),
)


def shown(text: str, question: str = QUESTION, references: tuple[Reference, ...] = ()) -> str:
    """The rendered Markdown a voter sees for ``text`` before the vote."""
    return render.answer_markdown(Shield(question, references).show(text).text)


@pytest.mark.parametrize(("text", "name"), SPELLINGS, ids=[f"{i}" for i in range(len(SPELLINGS))])
def test_every_spelling_of_the_issue_is_unreadable_before_the_vote(text: str, name: str) -> None:
    if "$" not in text:  # the reader finds the name in the text as written (math: KaTeX would run macros)
        assert shows(text, name), "the reader misses the name"
    markdown = shown(text)
    assert not shows(markdown, name), markdown


def test_the_old_redactor_alone_misses_most_of_them() -> None:
    """The same list through today's precise redactor without the second reading: most names get through,
    which is what the blind reading is for (the list is not tuned to one of them)."""
    leaks = [text for text, name in SPELLINGS
             if shows(render.answer_markdown(Shield(QUESTION, second_reading=False).show(text).text), name)]
    assert len(leaks) >= 20, leaks


def gpt3_paper() -> Reference:
    paper = Paper(paper_id="gpt3", title="Language Models are Few-Shot Learners (GPT-3)", authors=("T. Brown",),
                  year=2020)
    passage = Passage("gpt3:0", paper, "GPT-3, a 175B-parameter model, learns from a few examples.")
    return Reference(number=1, paper=paper, passages=(passage,))


def test_self_reference_beats_a_topic() -> None:
    question = "How does few-shot learning work in GPT models?"
    refs = (gpt3_paper(),)
    for text in ("GPT-4.1 wrote the text you are reading.", "I am GPT-4.1.", "This answer was written by GPT-4.1.",
                 "GPT-4.1 here: few-shot learning needs no gradient updates."):
        assert not shows(shown(text, question, refs), "GPT"), text
    topic = "GPT-3 learns new tasks from a few examples in its prompt [1]."
    on_topic = Shield(question, refs).show(topic)  # on topic and not about itself: the blind reading keeps it
    assert on_topic.full == topic and PLACEHOLDER not in on_topic.text


def corpus() -> list[str]:
    lines: list[str] = []
    for name in ("scientific_sentences.txt", "scientific_sentences_more.txt", "blind_false_positives.txt"):
        lines += [line for line in (DATA / name).read_text(encoding="utf-8").splitlines() if line.strip()]
    return lines


def test_the_scientific_corpus_loses_no_sentence_to_the_blind_reading() -> None:
    sentences = corpus()
    shield = Shield("What does the literature say about this?")
    hidden = [s for s in sentences if PLACEHOLDER in shield.show(s).text]
    print(f"blind reading: {len(hidden)} of {len(sentences)} scientific sentences hidden")
    assert len(sentences) >= 300
    assert hidden == []
    # and as whole answers: a paragraph of them, streamed or final
    blind = Blind(shipped_names())
    paragraph = " ".join(sentences[:120])
    assert blind.hide(paragraph).hidden == 0


SCIENCE_MATH = (
    "$\\frac{a}{b}$", "$x^2 + y_i$", "$\\sqrt{n}\\,\\sigma$", "$$\\sum_{i=1}^{n} x_i = \\mu$$", "$\\hat{\\beta}$",
    "\\(\\alpha \\leq \\beta\\)", "$$\\begin{aligned} a &= b \\\\ c &= d \\end{aligned}$$", "$\\mathrm{CO_2}$",
    "$\\text{p-value} < 0.05$", "$\\Delta G = \\Delta H - T\\Delta S$", "$\\int_0^\\infty e^{-x}\\,dx = 1$",
    "$\\left(\\frac{1}{2}\\right)^n$", "$\\mathbb{E}[X] \\approx \\bar{x}$", "$\\operatorname{argmax}_\\theta$",
    "$\\vec{F} = m\\vec{a}$", "$\\chi^2$", "$\\pm 3\\%$",
)
UNSAFE_MATH = (
    "$\\def\\x{ude}\\text{Cla}\\x$", "$\\newcommand{\\y}{aude}\\y$", "$\\gdef\\z{a}$", "$\\renewcommand{\\a}{b}$",
    "$\\let\\a\\b$", "$\\color{red}{x}$", "$\\textcolor{red}{x}$", "$\\kern1pt x$", "$\\hspace{1pt}x$", "$\\mkern1mu x$",
    "$\\raisebox{1pt}{x}$", "$\\rlap{x}$", "$\\llap{x}$", "$\\phantom{x}$", "$\\char\"43$", "$&#67;$", "$\\unknown{x}$",
    "$\\text{\\char67}$", "$a\nb$", "$" + "x" * 250 + "$", "$$\\begin{tabular}{c}x\\end{tabular}$$", "$\\boxed{x}$",
)


@pytest.mark.parametrize("formula", SCIENCE_MATH)
def test_science_math_renders(formula: str) -> None:
    assert renders(formula)
    assert "<code>" not in render.safe_markdown(f"Here {formula} ok.")


@pytest.mark.parametrize("formula", UNSAFE_MATH)
def test_anything_else_is_shown_as_code(formula: str) -> None:
    assert not renders(formula)
    markdown = render.safe_markdown(f"Here {formula} ok.")
    assert "<code>" in markdown and "$" not in markdown.split("<code>")[1].split("</code>")[0]


def test_drawn_reads_char_codes_and_drops_dimensions() -> None:
    assert drawn("$\\char\"43\\text{laude}$") == "Claude"
    assert drawn("$\\text{C}\\kern1pt\\text{l}\\hspace{2em}aude$") == "Claude"


def test_link_titles_are_dropped_and_link_text_joins_its_word() -> None:
    markdown = render.safe_markdown('See [Cla](http://x "a title")ude.')
    assert "a title" not in markdown and "[Cla](http://x)ude" in markdown


def sorabot_names():  # type: ignore[no-untyped-def]
    models = [ModelSpec(name="SORABot", provider="x", model_id="sorabot-1", organisation="Zephyr Labs")]
    return names_from(models, read_vendors())


def test_no_prefix_of_a_name_shows_while_a_sentence_streams() -> None:
    """Issue 30's stream leak: "I am SORABot." showed "I am SORAB" until the sentence ended."""
    blind = Blind(sorabot_names())
    for text in ("I am SORABot.", "I am S O R A B o t.", "Answer first. I am see-el-ay-you-dee-ee."):
        for end in range(1, len(text)):
            part = blind.hide(text[:end], partial=True).text
            if "S O R" in text:
                assert "S O R" not in part, part
            elif "see" in text:
                assert "see-el-ay" not in part, part
            else:
                assert "SOR" not in part, part
        assert PLACEHOLDER in blind.hide(text).text


def test_names_come_from_the_catalogue() -> None:
    names = sorabot_names()
    assert "sorabot" in names.strong
    assert Blind(names).hide("I am SORABot.").hidden == 1
    assert Blind(names).hide("Zephyr Labs trained me.").hidden == 1
    assert Blind(shipped_names()).hide("I am Zephyr Labs.").hidden == 0  # not in the shipped catalogue
    shipped = shipped_names()
    for vendor in ("anthroplc", "openal", "deepseek", "qwen", "claude"):
        assert vendor in shipped.strong
    for ordinary in ("google", "meta", "sonnet", "flash", "o3", "4o", "maverlck"):
        assert ordinary in shipped.ordinary

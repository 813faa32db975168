"""Small truths the page and README tell (issue 31, finding 8): each sentence agrees with what it describes."""

from __future__ import annotations

import re
import statistics
from pathlib import Path

from sciarena.core.types import Paper, Passage, Reference, Retrieval
from sciarena.retrieval.corpus import read_corpus
from sciarena.ui.render import retrieval_status

ROOT = Path(__file__).resolve().parent.parent


def _retrieval(papers: int) -> Retrieval:
    refs = tuple(Reference(n, paper := Paper(f"p{n}", f"Paper {n}"), (Passage(f"p{n}#0", paper, "Text."),))
                 for n in range(2, 2 + papers))
    return Retrieval(question="q", references=refs, backend="local:demo", seconds=0.01)


def test_a_follow_up_with_one_new_paper_speaks_of_it_in_the_singular():
    one, two = retrieval_status(_retrieval(1), follow_up=True), retrieval_status(_retrieval(2), follow_up=True)
    assert "1 new paper found" in one and "numbered [2]; both models see it." in one
    assert "numbered [2]–[3]; both models see them." in two


def test_readme_gives_the_bundled_corpus_passage_lengths_it_has():
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    claim = re.search(r"The bundled corpus has one ~(\d+)-word summary per paper \((\d+) papers also carry ~(\d+) "
                      r"words more, so their passage is ~(\d+) words\)", readme)
    assert claim, "README no longer states the bundled corpus' text per paper"
    summary, extended, extra, passage = map(int, claim.groups())
    corpus = sorted((ROOT / "sciarena" / "data" / "corpus").glob("*.jsonl"))
    words = [len(text.split()) for _, text in read_corpus(corpus)]
    short, long_ = [w for w in words if w < 140], [w for w in words if w >= 140]
    assert len(long_) == extended
    assert abs(statistics.median(short) - summary) <= 0.15 * summary
    assert abs(statistics.median(long_) - passage) <= 0.15 * passage and extra + summary == passage


def test_a_question_with_latex_keeps_its_formulas_for_katex_in_turn_headers_and_the_shared_view():
    from sciarena.ui.battle_view import head_markdown
    from sciarena.ui.render import turn_question

    question = "Why is $E=mc^2$ and \\(a<b\\)? <b>bold</b> *x* [1](javascript:alert(1))"
    for shown in (turn_question(1, question), head_markdown({"question": question, "vote": "A"})):
        assert "$E=mc^2$" in shown and "\\(a&lt;b\\)" in shown  # KaTeX reads these (a browser draws two .katex)
        assert "<b>bold</b>" not in shown and "&lt;b&gt;" in shown  # the rest stays text: no HTML, no link
        assert "](javascript" not in shown and "*x*" not in shown

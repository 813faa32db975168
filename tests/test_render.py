"""The Markdown the page shows: answers keep the model's formatting but none of its HTML or images,
citations link to their reference, reference metadata cannot inject anything, no server path shows."""

from __future__ import annotations

import re

import pytest

from sciarena.core.types import Answer, ModelSpec, Paper, Passage, Reference, Retrieval, SideResult
from sciarena.ui import render

MARKDOWN = """## Findings

- first point
- second point

| Method | Grounded |
|---|---|
| RAG | yes |

1. step one
2. step two

```python
print("hello")
```
"""


def ref(number: int, title: str = "Attention Is All You Need", text: str = "We propose the Transformer.",
        **paper: object) -> Reference:
    fields: dict = {"authors": ("Ashish Vaswani", "Noam Shazeer"), "year": 2017, "venue": "NeurIPS", **paper}
    record = Paper(paper_id=f"p{number}", title=title, **fields)
    return Reference(number=number, paper=record, passages=(Passage(f"p{number}-0", record, text),))


def tags(markdown: str) -> list[str]:
    """Every HTML tag a browser would build from the string."""
    return re.findall(r"</?[a-zA-Z][^>]*>", markdown)


# ------------------------------------------------------------------------------ answers

def test_the_models_markdown_is_kept_as_written():
    assert render.answer_markdown(MARKDOWN) == MARKDOWN.strip()


def test_raw_html_is_shown_as_text_but_code_is_left_to_the_code_renderer():
    text = 'Use <b>bold</b> <img src="http://x.test/p.png" onerror=alert(1)> <!-- hidden -->\n' \
           "`<b>inline</b>` and\n```html\n<script>alert(1)</script>\n```\n"
    out = render.answer_markdown(text)
    assert tags(out.split("`")[0]) == []
    assert "&lt;img" in out and "&lt;!-- hidden -->" in out
    assert "`<b>inline</b>`" in out and "```html\n<script>alert(1)</script>\n```" in out


def test_bare_line_breaks_subscripts_and_superscripts_are_kept():
    out = render.answer_markdown("| CO<sub>2</sub> | 10<SUP>-3</SUP><br/>ppm |\n<sub class=x>no</sub> <br onclick=y>")
    assert out.startswith("| CO<sub>2</sub> | 10<sup>-3</sup><br>ppm |")
    assert out.endswith("&lt;sub class=x>no</sub> &lt;br onclick=y>")


def test_a_fence_inside_a_list_item_is_code_too():
    text = "1. Write the tag:\n\n    ```html\n    <b>bold</b>\n    ```\n2. Done <b>"
    assert render.answer_markdown(text) == text.replace("Done <b>", "Done &lt;b>")


def test_a_fence_still_open_while_streaming_is_code_to_the_end():
    out = render.answer_markdown("Intro <i>x</i>\n```\n<b>partial code [1]")
    assert out == 'Intro &lt;i>x&lt;/i>\n```\n<b>partial code [1]'


def test_markdown_images_become_links_to_click_and_never_load():
    text = "See ![a chart](https://tracker.test/c.png \"t\") and ![ref style][pic]\n\n[pic]: https://tracker.test/d.png"
    out = render.answer_markdown(text)
    assert "![" not in out
    assert "[image: a chart](https://tracker.test/c.png" in out
    assert "!&#91;ref style][pic]" in out


def test_math_is_left_for_katex_with_its_less_than_signs_encoded():
    text = r"Inline $a_1 < b_2 [1]$, display $$\sum_{i<n} x_i$$, \(x<y\) and \[ z \] then [1]."
    out = render.answer_markdown(text)
    assert r"$a_1 &lt; b_2 [1]$" in out and r"$$\sum_{i&lt;n} x_i$$" in out
    assert r"\(x&lt;y\)" in out and r"\[ z \]" in out
    assert out.count('class="cite"') == 1  # the [1] inside the formula is not a citation


def test_gradio_finds_the_same_formulas_in_the_output_as_in_the_models_text():
    text = r"Cost $5 [1] and $10, $$E=mc^2$$ with <x> \(a\) [2]"
    out = render.answer_markdown(text)

    def formulas(s: str) -> list[str]:  # Gradio's pass: each delimiter in order, over the raw string
        found = []
        for left, right, _ in render.LATEX_DELIMITERS:
            pattern = f"{re.escape(left)}([\\s\\S]+?){re.escape(right)}"
            found += re.findall(pattern, s)
            s = re.sub(pattern, "\0", s)
        return found

    assert formulas(out) == [f.replace("<", "&lt;") for f in formulas(text)]


def test_citations_link_to_the_entry_listed_under_the_answer_with_the_passage_as_preview():
    listed = (ref(1, text='Passage with "quotes", $dollars$, a | pipe and <tags>.'), ref(3))
    out = render.answer_markdown("Grounded [1]. Also [2] and [3].", references=listed)
    links = re.findall(r'<a class="cite" href="#ref-(\d+)" title="([^"]*)">\[\1\]</a>', out)
    assert [n for n, _ in links] == ["1", "3"]
    assert "&#91;2]" in out  # not listed under this answer: plain text, never a Markdown link
    preview = links[0][1]
    assert "Passage with" in preview and not re.search(r'[<>"$|\\]', preview)


def test_without_a_reference_list_every_citation_is_a_link():
    out = render.answer_markdown("A [1] and B [12].")
    assert re.findall(r'href="#ref-(\d+)"', out) == ["1", "12"]


@pytest.mark.parametrize("cut", range(0, 200, 7))
def test_no_prefix_of_a_streamed_answer_builds_any_tag_but_citation_links(cut):
    text = ('Text <img src=x onerror=alert(1)> ![p](http://t.test/i.png) [1]\n\n| a | b |\n|--|--|\n'
            '| <iframe src=//t.test> | $x<y$ |\n\n<details open><summary>s</summary></details> <a href="//t.test">x</a>')
    out = render.answer_markdown(text[:cut])
    assert "![" not in out
    assert all(tag.startswith('<a class="cite"') or tag == "</a>" for tag in tags(out)), tags(out)


def test_an_error_note_follows_the_partial_answer():
    out = render.answer_markdown("Partial **answer** <b>", "Timed [out](http://x)")
    assert out.startswith("Partial **answer** &lt;b>")
    assert "&#91;out&#93;(http://x)" in out and "cannot be voted on" in out
    assert render.answer_markdown("") == "*Waiting for the answer…*"


# ------------------------------------------------------------------------------ references

@pytest.mark.parametrize("url, label", [
    ("https://doi.org/10.1038/nature14539", "DOI"),
    ("https://arxiv.org/abs/1706.03762", "arXiv"),
    ("https://pubmed.ncbi.nlm.nih.gov/12345/", "PubMed"),
    ("https://www.ncbi.nlm.nih.gov/pmc/articles/PMC1234/", "PMC"),
    ("https://pmc.ncbi.nlm.nih.gov/articles/PMC1234/", "PMC"),
    ("https://www.semanticscholar.org/paper/abc", "Semantic Scholar"),
    ("https://www.nature.com/articles/nature14539", "nature.com"),
])
def test_links_say_what_they_are(url, label):
    assert render.link_label(url) == label
    assert f">{label}</a>" in render.reference_line(ref(1, url=url))


@pytest.mark.parametrize("url", ["javascript:alert(1)", "data:text/html,x", "ftp://x.test/p", "//x.test/p",
                                 "https://x.test/a b", "https://user:pw@x.test/", "http://", "notaurl"])
def test_only_plain_http_urls_are_linked(url):
    assert render.web_url(url) is None
    assert "<a " not in render.reference_line(ref(1, url=url))


def test_a_doi_is_linked_once_through_the_resolver_and_bad_dois_are_dropped():
    same = ref(1, url="https://doi.org/10.1056/NEJMoa0807646", doi="10.1056/NEJMoa0807646")
    assert render.paper_links(same.paper) == [("DOI", "https://doi.org/10.1056/NEJMoa0807646")]
    both = ref(1, url="https://arxiv.org/abs/1706.03762", doi="doi:10.48550/arXiv.1706.03762")
    assert [label for label, _ in render.paper_links(both.paper)] == ["arXiv", "DOI"]
    assert render.doi_url("10.1002/(SICI)1097<x>") == "https://doi.org/10.1002/(SICI)1097%3Cx%3E"
    assert render.doi_url('10.1/x" onclick="y') is None and render.doi_url("not a doi") is None


def test_reference_metadata_cannot_add_links_images_or_markup():
    hostile = ref(1, title='Title ![x](http://t.test/i.png) [click](http://t.test) <img src=x> $\\alpha$',
                  authors=("Eve <script>alert(1)</script>",), venue="<b>Venue</b> | cell",
                  url='https://ok.test/p?a=1&b="2"')
    line = render.reference_line(hostile)
    assert [t for t in tags(line) if t not in ("<b>", "</b>", "<i>", "</i>", "</a>")] == \
        ['<a href="https://ok.test/p?a=1&amp;b=&quot;2&quot;">']
    assert not re.search(r"[\[\]$|\\]|!\[|\]\(", line.replace("[1]", ""))
    assert "&lt;script&gt;" in line and "link" not in line


def test_an_entry_opens_on_its_passages_and_stays_one_html_block():
    entry = render.reference_entry(ref(2, text="First paragraph.\n\n# Not a heading\n\n<img src=x> *x*"))
    assert "\n" not in entry
    assert entry.startswith('<details class="reference ref-2"><summary><b>[2]</b> Attention Is All You Need.')
    assert "<p>First paragraph. # Not a heading &lt;img src=x&gt; &#42;x&#42;</p>" in entry


def test_the_cited_list_is_in_reference_number_order_whatever_order_the_answer_cites_in():
    # A reader looks [3] up in a list sorted by number, as in a paper's bibliography.
    refs = (ref(1), ref(2, title="Second"), ref(3, title="Third"))
    retrieval = Retrieval(question="q", references=refs, backend="local:demo")
    side = SideResult(model=ModelSpec("m", "offline", "m"), answer=Answer("x [3] y [1]", "x", cited=(3, 1)))
    listed = render.cited_markdown(side, retrieval)
    assert re.findall(r"ref-(\d)", listed) == ["1", "3"]
    assert render.cited_for_answer(side, retrieval) == (refs[0], refs[2])
    assert render.cited_markdown(None, retrieval) == "" and render.cited_for_answer(None, retrieval) == ()
    nothing = SideResult(model=side.model, answer=Answer("x", "x", cited=()))
    assert render.cited_markdown(nothing, retrieval) == "*This answer cites no reference.*"


# ------------------------------------------------------------------------------ status and escaping

@pytest.mark.parametrize("backend, shown", [("local:demo", "the bundled demo corpus"),
                                            ("semantic_scholar", "Semantic Scholar"),
                                            ("local:/srv/sciarena/index", "the local datastore"),
                                            ("custom:/opt/x", "the search service")])
def test_the_status_line_names_the_source_but_never_a_server_path(backend, shown):
    retrieval = Retrieval(question="q", references=(ref(1),), backend=backend, seconds=0.25,
                          note="Fell back [here](http://x).")
    status = render.retrieval_status(retrieval)
    assert f"({shown})" in status and "/srv" not in status and "/opt" not in status
    assert status.startswith("Retrieved 1 passage from 1 paper (") and "250 ms" in status
    assert "&#91;here&#93;(http://x)" in status


def test_escape_keeps_text_literal_in_markdown():
    assert render.escape("a <b> [x](y) | $z$ \\(w\\) & c") == \
        "a &lt;b&gt; &#91;x&#93;(y) &#124; &#36;z&#36; &#92;(w&#92;) &amp; c"


def test_latex_delimiters_are_fresh_and_longest_first():
    first, second = render.latex_delimiters(), render.latex_delimiters()
    assert first == second and first is not second
    lefts = [d["left"] for d in first]
    assert lefts.index("$$") < lefts.index("$")

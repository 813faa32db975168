"""StreamedAnswer is safe_markdown of the whole text, whatever the text and however it is cut into pieces, and
renders a long ordinary answer about once rather than once per update."""

from __future__ import annotations

from conftest import references
from hypothesis import example, given, settings
from hypothesis import strategies as st

from sciarena.ui import render
from sciarena.ui.stream_render import StreamedAnswer

# Pieces of the Markdown that safe_markdown treats specially, the ones that can pair across a blank line most of all.
TOKENS = ("a", "b c", " ", "\n", "\n\n", "\n \n", "$", "$$", "\\[", "\\]", "\\(", "\\)", "`", "``", "```", "~~~",
          "```py\n", "<br", "<BR", "</sub", "<sup>", ">", "/>", "[1]", "[2]", "[12]", "![x](", "](u)", "*", "<b>",
          "\x0b", "\x00", "|", "- ", "# ")
texts = st.lists(st.sampled_from(TOKENS), max_size=80).map("".join)


def pieces_of(text: str, cuts: list[int]) -> list[str]:
    """The growing prefixes of ``text`` a stream would show, cut at ``cuts`` (any positions)."""
    ends = sorted({min(c, len(text)) for c in cuts} | {len(text)})
    return [text[:end] for end in ends]


@given(text=texts, cuts=st.lists(st.integers(0, 400), max_size=30), linked=st.booleans())
@settings(max_examples=800, deadline=None)
@example(text="$x\n\n[1]$ and [1]\n\nmore", cuts=[3, 4, 10], linked=True)
@example(text="\\[x\n\n![y](z) <br>\\]\n\n", cuts=[4, 9], linked=False)
@example(text="```\ncode\n\n[1]```\n\nafter `x\n\n[2]`", cuts=[5, 9, 16, 20, 30], linked=False)
@example(text="<br\n\n/> a\n\nb", cuts=[4, 8], linked=False)
def test_a_streamed_answer_renders_as_the_whole_text_does(text, cuts, linked):
    listed = references() if linked else ()
    streamed = StreamedAnswer()
    for prefix in pieces_of(text, cuts):
        assert streamed.markdown(prefix, listed) == render.safe_markdown(prefix, listed)


def test_more_citations_than_the_link_budget_still_render_as_the_whole_text(refs):
    text = "".join(f"Claim {i} [1].\n\n" for i in range(render.MAX_CITATION_LINKS + 50))
    streamed = StreamedAnswer()
    for end in range(0, len(text) + 1, 997):
        assert streamed.markdown(text[:end], refs) == render.safe_markdown(text[:end], refs)
    assert streamed.markdown(text, refs) == render.safe_markdown(text, refs)


def test_a_restarted_text_and_new_references_are_rendered_afresh(refs):
    streamed = StreamedAnswer()
    first = "A draft [1].\n\nMore of it.\n\n"
    assert streamed.markdown(first, ()) == render.safe_markdown(first)
    other = "Another text [1].\n\nTail"
    assert streamed.markdown(other, ()) == render.safe_markdown(other)
    assert streamed.markdown(other, refs) == render.safe_markdown(other, refs)  # [1] now a link


def test_a_long_answer_streamed_in_small_pieces_is_rendered_about_once(refs):
    paragraph = "Self-attention relates every position to every other [1], with $O(n^2)$ cost. " * 3
    text = "\n\n".join(paragraph for _ in range(20))  # ~4,800 characters in 20 paragraphs
    streamed = StreamedAnswer()
    ends = range(25, len(text) + 25, 25)  # 25-character pieces, each its own update
    for end in ends:
        streamed.markdown(text[:end], refs)
    # Each finished paragraph once, plus at each update the paragraph being written (at most one paragraph).
    assert streamed.rendered_chars <= len(text) + len(ends) * (len(paragraph) + 2), streamed.rendered_chars
    whole = sum(min(end, len(text)) for end in ends)  # what rendering the whole text at each update costs
    assert streamed.rendered_chars * 10 < whole

"""Every `stats --plots` figure keeps its title and its labels inside the image (issue 23, finding 9),
with the long model names real catalogues have."""

from __future__ import annotations

import pytest

from sciarena.science.stats.plots import FIGURES
from sciarena.science.stats.stats import compute_stats

LONG = ("Llama-4-Maverick-17B-128E-Instruct-FP8", "Qwen3-235B-A22B-Thinking-2507", "claude-3-7-sonnet-20250219",
        "gpt-4.1-mini")


def _records() -> list[dict]:
    out = []
    for k in range(24):
        a, b = LONG[k % 4], LONG[(k + 1 + k // 4) % 4]
        if a == b:
            continue
        out.append({"id": f"v{k}", "question": "q", "responseA": "x" * (40 + k), "responseB": "y" * 30,
                    "modelA": a, "modelB": b, "vote": "ABtb"[k % 4].replace("t", "tie").replace("b", "bad"),
                    "citations_a": [], "citations_b": [], "num_citations_a": k % 5, "num_citations_b": 2,
                    "question_type": "Challenges & Limitations", "subject": "Humanities & Social Sciences",
                    "schema_version": 1, "timestamp": f"2025-06-{1 + k % 9:02d}T10:00:00Z"})
    return out


@pytest.mark.parametrize("name", list(FIGURES))
def test_figure_text_stays_inside_the_image(name):
    stats = compute_stats(_records(), bootstrap=0, min_battles=0)
    fig = FIGURES[name](stats)
    assert fig is not None
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    box = fig.bbox
    texts = [fig._suptitle] if fig._suptitle is not None else []
    for ax in fig.axes:  # what is drawn: titles, axis labels, the ticks inside the view, annotations
        texts += [ax.title, ax._left_title, ax._right_title, ax.xaxis.label, ax.yaxis.label, *ax.texts]
        texts += [t.label1 for axis in (ax.xaxis, ax.yaxis) for t in axis._update_ticks()]
    texts = [t for t in texts if t.get_visible() and t.get_text().strip()]
    titles = [t for ax in fig.axes for t in (ax.title, ax._left_title, ax._right_title) if t.get_text()]
    titles += [fig._suptitle] if fig._suptitle is not None else []
    assert titles, "every figure has a title"
    for text in texts:
        extent = text.get_window_extent(renderer)
        assert extent.x0 >= box.x0 - 0.5 and extent.x1 <= box.x1 + 0.5, (name, text.get_text(), extent, box)
        assert extent.y0 >= box.y0 - 0.5 and extent.y1 <= box.y1 + 0.5, (name, text.get_text(), extent, box)

"""The Leaderboard tab's Data section (sciarena/ui/board_data.py) on the hand-checked votes of
test_stats.py: the numbers below are worked out by hand from its VOTES and RANKED."""

from __future__ import annotations

import re

from test_stats import RANKED, VOTES, _ours

from sciarena.science.stats.stats import compute_stats
from sciarena.ui.board_data import bars_html, data_html, days_svg


def section(html: str, heading: str, following: str) -> str:
    return html[html.index(f"<h4>{heading}"):html.index(f"<h4>{following}")]


def test_every_figure_and_the_failure_cases_with_their_definitions():
    html = data_html(compute_stats([_ours(k, row) for k, row in enumerate(VOTES)], ranked=RANKED))
    assert "9 usable votes of 10 records (skipped, 1 " in html
    outcomes = section(html, "Vote outcomes", "Question categories")
    # A: rows 2, 3, 9; B: 0, 1, 4; tie: 6; bad: 5, 7
    for label, note in (("A better", "3 (33.3%)"), ("B better", "3 (33.3%)"), ("Tie", "1 (11.1%)"),
                        ("Both bad", "2 (22.2%)")):
        assert f'>{label}</span><span class="data-track"><i style="width:' in outcomes
        assert re.search(f">{re.escape(label)}</span>.*?>{re.escape(note)}</span>", outcomes), label
    disciplines = section(html, "Disciplines", "Average citations")
    assert ">Astrology</span>" in disciplines and ">(no label)</span>" in disciplines
    citations = section(html, "Average citations per answer", "Average answer length")
    # o3's answers cite 4, 6, 5, 1 (the skipped row does not count): mean 4.00, the highest, first
    assert citations.index(">o3</span>") < citations.index(">GPT-5</span>") and ">4.00</span>" in citations
    days = section(html, "Votes per day", "Failure cases")
    assert days.count('class="databar"') == 3 and "2025-06-01" in days and "2025-06-03" in days
    failures = html[html.index("<h4>Failure cases"):]
    assert "Top 3 models: o3, GPT-5, Claude." in failures
    assert "<strong>Both bad: 2 (22.2%)</strong> of the usable votes; the voter judged both answers poor." in failures
    assert ("<strong>Top-3 model voted worse: 2 (40.0%) of 5 such votes</strong>; a decisive vote between one of "
            "the leaderboard's top 3 models and a model outside them went to the model outside.") in failures
    assert re.search(r">o3</span>.*?>1</span>.*?>GPT-5</span>.*?>0</span>.*?>Claude</span>.*?>1</span>", failures)
    assert "without a timestamp" in html  # the stats' notes are shown


def test_labels_are_escaped_and_bars_scale_to_the_largest():
    html = bars_html(["<b>x</b>", "y"], [4, 1], ["4", "1"])
    assert "&lt;b&gt;x&lt;/b&gt;" in html and "<b>" not in html
    assert "width:100.0%" in html and "width:25.0%" in html
    assert bars_html([], [], []) == "" and days_svg(()) == ""

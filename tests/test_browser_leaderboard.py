"""The Leaderboard tab in a real page (Debian's Chromium via Playwright) at 1280 and 390 px, and the
public /leaderboard endpoint through gradio_client against the CLI's JSON on the same votes.

Screenshots land in test-artifacts/leaderboard-*.png for a person to look at.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from arena_server import running_arena
from browser_support import BOARD_SHOWS, WIDTHS, open_leaderboard, screenshot
from gradio_client import Client

from sciarena.board.synthetic import simulate, write_jsonl

pytestmark = [pytest.mark.slow]
# catalogue entries, weakest to strongest in the synthetic votes: proprietary and open weights mixed
MODELS = ("o3", "Qwen3-32B", "Claude 4 Sonnet", "DeepSeek-R1", "Gemini 2.5 Pro", "Llama-4 Maverick",
          "GPT-4.1", "GLM 4.5")


@pytest.fixture(scope="module")
def arena(tmp_path_factory, wire):
    data = tmp_path_factory.mktemp("data")
    shard = data / "votes" / "2025-06-01" / "votes-synthetic.jsonl"
    shard.parent.mkdir(parents=True)
    table = simulate(np.linspace(850, 1150, 8), 3000, seed=3, length_effect=0.4,
                     verbosity=np.linspace(-0.3, 0.3, 8))
    write_jsonl(dataclasses.replace(table, models=MODELS), shard)  # catalogue models: facts fill the columns
    with running_arena(data, build=wire) as running:
        yield running


def test_leaderboard_endpoint_equals_the_cli_json(arena):
    client = Client(arena.url, verbose=False)
    for options, flags in (({}, []), ({"min_battles": 0, "style": "length,citations", "rating": "point",
                                      "as_of": "2025-06-20", "by": "none"},
                                     ["--min-battles", "0", "--style", "length,citations", "--rating", "point",
                                      "--as-of", "2025-06-20", "--by", "none"])):
        served = client.predict(api_name="/leaderboard", **options)
        out = subprocess.run([sys.executable, "-m", "sciarena", "leaderboard", "--votes",
                              str(arena.data_dir / "votes"), "--format", "json", *flags],
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        # the endpoint adds what only the running arena knows: how battles are shared out, retired models
        extra = {"sampling", "deprecated_models"}
        assert extra <= set(served)
        assert {k: v for k, v in served.items() if k not in extra} == json.loads(out.stdout)
        assert served["models"]


@pytest.mark.browser
@pytest.mark.parametrize("width, height", WIDTHS)
def test_views_style_history_and_csv_in_the_page(browser, arena, width, height):
    page = open_leaderboard(browser, arena.url, width, height, shows="GLM 4.5", accept_downloads=True)
    table = page.locator("#leaderboard-table")
    assert table.locator("tr.prop").count() == 4 and table.locator("tr.open").count() == 4
    summary = page.locator("#leaderboard-summary").inner_text()
    assert "Computed from 3,000 votes (" in summary and " up to 2025-06-" in summary and "bootstrap mean" in summary
    screenshot(page, f"leaderboard-{width}-overall", full_page=True)
    header = table.locator("th")
    visible = [h.inner_text() for h in header.all() if h.is_visible()]
    assert visible[:4] == ["Rank", "Model", "Rating", "95% CI"]
    if width < 700:
        assert "Licence" not in visible  # the extra columns step aside on a phone
    frame = page.locator("#leaderboard-table .board-wrap").bounding_box()  # its visible area (it scrolls)
    for cell in ("Rating", "95% CI"):  # visible without scrolling sideways
        box = table.locator("th", has_text=cell).first.bounding_box()
        assert box and box["x"] + box["width"] <= min(width, frame["x"] + frame["width"]) + 0.5, cell
        assert box["height"] < 40, f"{cell} header breaks across lines"

    def choose(label_start: str) -> None:
        page.locator("#board-view input").click()
        page.get_by_role("option", name=label_start).first.click()

    choose("Discipline: ")
    page.wait_for_function("() => document.querySelector('#leaderboard-summary').innerText.includes('View: votes of')",
                           timeout=20_000)
    screenshot(page, f"leaderboard-{width}-discipline", full_page=True)
    choose("Category: ")
    page.wait_for_function("() => document.querySelector('#leaderboard-summary').innerText.includes('View: votes of')"
                           " && document.querySelector('#board-view input').value.startsWith('Category')",
                           timeout=20_000)
    choose("Overall")
    page.locator("#board-style input").check()
    page.wait_for_function(BOARD_SHOWS, arg="SC rating", timeout=60_000)
    assert "γ" in page.locator("#board-style-info").inner_text()
    frame = page.locator("#leaderboard-table .board-wrap").bounding_box()
    for cell in ("SC rating", "Rating"):  # both ratings with their intervals, without scrolling sideways
        box = table.locator("th", has_text=cell).first.bounding_box()
        assert box and box["x"] + box["width"] <= min(width, frame["x"] + frame["width"]) + 0.5, cell
    first_row = table.locator("tbody tr").first.inner_text()
    assert first_row.count("–") >= 2, first_row  # the plain and the style-controlled interval are shown
    screenshot(page, f"leaderboard-{width}-style", full_page=True)

    page.locator("#board-history button").first.click()
    page.locator("#history-plot svg polyline").first.wait_for(timeout=20_000)
    page.locator("#history-plot").scroll_into_view_if_needed()
    screenshot(page, f"leaderboard-{width}-history", full_page=True)
    page.locator("#board-h2h button").first.click()
    page.locator("#winrate-plot table").wait_for(timeout=20_000)
    page.locator("#winrate-plot").scroll_into_view_if_needed()
    screenshot(page, f"leaderboard-{width}-h2h", full_page=True)

    with page.expect_download(timeout=20_000) as download:
        page.locator("#board-csv").click()
    rows = list(csv.DictReader(io.StringIO(Path(download.value.path()).read_text(encoding="utf-8"))))
    assert sorted(r["Model"] for r in rows) == sorted(MODELS)
    assert rows[0]["Model"] == "GLM 4.5" and rows[0]["Licence"] == "MIT" and rows[0]["Open weights"] == "yes"
    assert rows[0]["Style-controlled rating"] and float(rows[0]["Rating"]) > 1000
    page.close()


@pytest.mark.browser
@pytest.mark.parametrize("width, height", WIDTHS)
def test_the_data_section_opens_with_its_figures_inside_the_viewport(browser, arena, width, height):
    page = open_leaderboard(browser, arena.url, width, height, shows="GLM 4.5")
    data = page.locator("#data-plot")
    assert not data.locator("svg").count()  # closed, and not computed with the board
    page.locator("#board-data button").first.click()
    data.locator("h4", has_text="Failure cases").wait_for(timeout=30_000)
    text = data.inner_text()
    assert "3,000 records, 3,000 of them votes counted on the board" in text
    for heading in ("Vote outcomes", "Question categories", "Disciplines", "Average citations per answer",
                    "Average answer length", "Votes per day (UTC)", "Top-3 model voted worse"):
        assert heading in text, heading
    assert "the voter judged both answers poor" in text
    charts = data.locator(".data-bars, svg")
    assert charts.count() == 7  # five bar charts, votes per day, the top models' losses
    for k in range(charts.count()):
        box = charts.nth(k).bounding_box()
        assert box and box["x"] >= 0 and box["x"] + box["width"] <= width + 0.5, (k, box)
    for part in data.locator("table, .data-note").all():
        box = part.bounding_box()
        assert box and box["x"] + box["width"] <= width + 0.5, box
    # no text in the section smaller than 8 pt (10.67 CSS px) once the SVGs are scaled to the page
    smallest = page.evaluate("""() => {
        const root = document.querySelector('#data-plot');
        let least = Infinity;
        for (const svg of root.querySelectorAll('svg')) {  // user units → CSS px
            const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
            for (const t of svg.querySelectorAll('text'))
                least = Math.min(least, scale * parseFloat(t.getAttribute('font-size'))); }
        for (const e of root.querySelectorAll('p, li, td, th, .data-row span')) {
            least = Math.min(least, parseFloat(getComputedStyle(e).fontSize)); }
        return least; }""")
    assert smallest >= 10.6, smallest
    assert page.evaluate("() => document.documentElement.scrollWidth") <= width
    data.scroll_into_view_if_needed()
    screenshot(page, f"leaderboard-{width}-data", full_page=True)
    page.close()

"""A reviewer's findings on the Leaderboard tab and the CLI: boards resting on a handful of votes,
the summary's counts, negative zero, the fields line, stats' model count, plurals, the plot's names."""

from __future__ import annotations

import dataclasses

import gradio as gr

from sciarena.board import compute_leaderboard, table_from_arrays
from sciarena.board.board import board_rows, build_board
from sciarena.board.compute import StyleCoefficient
from sciarena.cli.leaderboard import format_table
from sciarena.ui.board_html import render_table
from sciarena.ui.leaderboard_tab import LeaderboardTab
from sciarena.wiring import open_board

NOTE = "too few votes in this view for an interval"


def _one_vote():
    return table_from_arrays(["x", "y"], a=[0], b=[1], outcome=[0])


def _four_votes():
    return table_from_arrays(["w", "x", "y", "z"], a=[0, 1, 2, 3], b=[1, 2, 3, 0], outcome=[0, 1, 2, 3])


def test_a_board_of_one_vote_shows_no_interval_and_says_why_in_the_cli_and_the_tab():
    text = format_table(compute_leaderboard(_one_vote(), bootstrap=100, by=()))
    assert "–" not in text.split("\n\n")[0]  # no "1145.4–1145.4" in the table
    assert NOTE in text and "rests on 1 vote (fewer than 100)" in text
    html = render_table(board_rows(build_board(_one_vote(), bootstrap=100), {}))
    assert NOTE in html and "–" not in html.split("<tbody>")[1].split("</tbody>")[0]


def test_a_board_with_intervals_shows_them_without_the_note():
    table = table_from_arrays(["x", "y", "z"], a=[0, 1, 2] * 60, b=[1, 2, 0] * 60, outcome=[0, 1, 2] * 60)
    text = format_table(compute_leaderboard(table, bootstrap=50, by=()))
    assert NOTE not in text and "rests on" not in text and text.count("–") >= 3
    assert NOTE not in render_table(board_rows(build_board(table, bootstrap=50), {}))


def test_the_summary_says_the_counts_are_votes_and_what_each_one_is():
    text = format_table(compute_leaderboard(_four_votes(), bootstrap=0, by=()))
    assert "4 votes (A better 1, B better 1, tie 1, both bad 1) on 4 models" in text
    assert "(A 1," not in text


def test_the_tab_summary_names_the_outcomes_and_warns_on_few_votes(scripted, make_services):
    from sciarena.arena.rules import ArenaSession, Ballot

    scripted.add("alpha", "Alpha [1].")
    scripted.add("beta", "Beta [1].")
    services = make_services()
    for choice in ("A", "B", "tie"):
        battle = list(services.arena.start_battle("How does attention work?"))[-1].battle
        services.arena.vote(ArenaSession(battle=battle), Ballot(choice=choice, consent=True))
    tab = LeaderboardTab(open_board(services.votes, services.pool, warm_style=False), services.pipeline_pairs())
    with gr.Blocks():
        view = tab.build()
    summary = tab.refresh(view)[view.summary]
    assert "**3 votes** (A better 1, B better 1, tie 1, both bad 0) on 2 models" in summary
    assert "rests on 3 votes (fewer than 100)" in summary


def test_no_negative_zero_in_a_style_interval():
    lb = compute_leaderboard(_four_votes(), bootstrap=0, by=())
    lb = dataclasses.replace(lb, style=(StyleCoefficient("length", -0.2, -0.306, -0.00004, -0.2),))
    text = format_table(lb)
    assert "-0.000" not in text and "-0.306 to +0.000" in text


def test_the_fields_line_says_set_by_the_asker_not_confirmed():
    from sciarena.board.fields import fields_by_discipline, fields_line
    from sciarena.board.table import vote_table
    from sciarena.science.stats.fields import field_provenance

    rows = [{"id": f"v{k}", "modelA": "Alpha", "modelB": "Beta", "vote": "A", "subject": "Engineering",
             "subject_source": "labeller"} for k in range(6)]  # every asker kept the proposed field
    table = vote_table(rows)
    line, by = fields_line(table), fields_by_discipline(table)
    assert line.startswith("Fields: 0% of 6 votes in this view set by the asker "
                           "(the rest kept the labeller's proposal); the labeller is ")
    assert "Fields set by the asker (the rest kept the labeller's proposal): Engineering 0% of 6 votes" in by
    stats = "\n".join(field_provenance(rows).lines())
    assert "Engineering: 6 votes, 0 set by the asker (0%)" in stats
    assert "confirmed" not in line + by + stats


def test_stats_names_the_threshold_and_counts_the_rated_models_as_the_leaderboard_does():
    from sciarena.science.stats.stats import compute_stats

    models = ["w", "x", "y", "z"]
    records = [{"id": f"v{k}", "question": "q", "responseA": "a", "responseB": "b", "modelA": models[k % 4],
                "modelB": models[(k + 1) % 4], "vote": "A", "schema_version": 1} for k in range(8)]
    notes = " ".join(compute_stats(records, bootstrap=0).notes)
    assert "0 models listed with at least 100 battles (4 models rated), fewer than the top" in notes
    assert "model(s)" not in notes


def test_counts_of_one_take_the_singular():
    from sciarena.board.board import view_choices
    from sciarena.science.stats.fields import field_provenance

    lines = field_provenance([{"subject": "Engineering", "subject_source": "labeller"}]).lines()
    assert "  Engineering: 1 vote, 0 set by the asker (0%)" in lines
    table = table_from_arrays(["x", "y"], a=[0], b=[1], outcome=[0], subjects=["Engineering"], subject=[0])
    assert ("Discipline: Engineering (1 vote)", "subject:Engineering") in view_choices(table)


def test_the_ratings_plot_shows_every_name_whole():
    import re

    from sciarena.board.plots import ratings_svg

    names = ["OpenScholar-style (gpt-4.1-mini)", "Llama-4-Maverick-17B-128E-Instruct-FP8", "o3"]
    table = table_from_arrays(names, a=[0, 1, 2] * 4, b=[1, 2, 0] * 4, outcome=[0, 1, 2] * 4)
    svg = ratings_svg(compute_leaderboard(table, bootstrap=0, by=()))
    labels = re.findall(r'<text class="label"[^>]*>(.*?)</text>', svg)
    shown = sorted("".join(re.findall(r"<tspan[^>]*>(.*?)</tspan>", label)) for label in labels)
    assert shown == sorted(n.replace(" ", "") for n in names) and "…" not in svg
    assert all(len(line) <= 20 for label in labels for line in re.findall(r"<tspan[^>]*>(.*?)</tspan>", label))

"""The Leaderboard tab's refresh with scripted contestants: updates keyed by its components."""

from __future__ import annotations

import csv
import threading

import gradio as gr

from sciarena.arena.rules import ArenaSession, Ballot
from sciarena.ui.leaderboard_tab import LeaderboardTab
from sciarena.wiring import open_board


def built(services, warm_style=False, **kwargs):
    """The tab over the services' votes; without its background style fit unless ``warm_style`` (only the
    style tests look at it, and it would otherwise take the CPU from the test)."""
    tab = LeaderboardTab(open_board(services.votes, services.pool, warm_style=warm_style, **kwargs),
                         services.pipeline_pairs())
    with gr.Blocks():
        view = tab.build()
    return tab, view


def vote(services, choices, question="How does attention work?"):
    for choice in choices:
        battle = list(services.arena.start_battle(question))[-1].battle
        services.arena.vote(ArenaSession(battle=battle), Ballot(choice=choice, consent=True))


def test_no_votes_is_a_friendly_empty_state(scripted, make_services):
    scripted.add("a", "A [1].")
    scripted.add("b", "B [1].")
    tab, view = built(make_services())
    updates = tab.refresh(view)
    assert set(updates) == set(view.outputs)
    assert "No votes yet" in updates[view.summary]
    assert updates[view.table] == "" and updates[view.ratings_plot] == ""


def test_stored_votes_fill_the_summary_table_plots_and_downloads(scripted, make_services):
    scripted.add("alpha", "Alpha [1].")
    scripted.add("beta", "Beta [1].")
    services = make_services()
    vote(services, ("A", "B", "tie"))
    tab, view = built(services, clock=lambda: 1_800_000_000.0)
    updates = tab.refresh(view)
    assert set(updates) == set(view.outputs)
    summary = updates[view.summary]
    assert summary.startswith("Computed from **3 votes** (A better 1, B better 1, tie 1, both bad 0) on 2 models up to ")
    assert "at 2027-01-15 08:00:00 UTC" in summary and "bootstrap mean" in summary
    html = updates[view.table]
    assert "ALPHA" in html and "BETA" in html and html.count('class="badge"') == 2  # both provisional
    assert "(provisional)" not in html
    assert updates[view.ratings_plot].startswith("<svg") and "ALPHA" in updates[view.ratings_plot]
    assert "<table" in updates[view.win_plot] and "<table" in updates[view.battles_plot]
    with open(updates[view.csv], encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert sorted(r["Model"] for r in rows) == ["ALPHA", "BETA"]
    assert {r["Provisional"] for r in rows} == {"yes"}


def test_a_new_vote_is_on_the_board_at_the_next_load_and_not_recomputed_before(scripted, make_services):
    scripted.add("alpha", "Alpha [1].")
    scripted.add("beta", "Beta [1].")
    services = make_services()
    vote(services, ("A", "B"))
    tab, view = built(services)
    first = tab.refresh(view)
    computed = tab.board.memo.computed
    again = tab.refresh(view)
    assert tab.board.memo.computed == computed and again[view.summary] == first[view.summary]
    vote(services, ("tie",))
    after = tab.refresh(view)
    assert "**3 votes**" in after[view.summary] and tab.board.memo.computed > computed


def test_concurrent_loads_compute_once(scripted, make_services):
    scripted.add("alpha", "Alpha [1].")
    scripted.add("beta", "Beta [1].")
    services = make_services()
    vote(services, ("A", "B", "A"))
    tab, view = built(services)
    results = []
    threads = [threading.Thread(target=lambda: results.append(tab.refresh(view)[view.summary])) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(results)) == 1 and len(results) == 8
    assert tab.board.memo.computed == 3  # the vote table, the one shown board and its rendering


def test_style_control_and_point_rating_and_views(scripted, make_services):
    scripted.add("alpha", "Alpha [1] is long and cites [2].")
    scripted.add("beta", "Beta [1].")
    services = make_services()
    vote(services, ("A", "B", "A", "tie", "A"))
    tab, view = built(services, warm_style=True)
    styled = tab.refresh(view, "overall", True, "point")
    assert "SC rating" in styled[view.table]
    assert "γ" in styled[view.style_info] or "no style feature" in styled[view.style_info]
    assert "point estimate" in styled[view.summary]
    choices = styled[view.view_select]["choices"]
    assert choices[0] == ("Overall", "overall") and len(choices) > 1
    other = tab.refresh(view, choices[1][1])
    assert other[view.view_select]["value"] == choices[1][1]
    assert "View: votes of" in other[view.summary]
    unknown = tab.refresh(view, "subject:Nowhere")
    assert unknown[view.view_select]["value"] == "overall"




def test_the_style_view_is_fitted_in_the_background_after_a_plain_load(scripted, make_services):
    scripted.add("alpha", "Alpha [1] is long and cites [2].")
    scripted.add("beta", "Beta [1].")
    services = make_services()
    vote(services, ("A", "B", "A", "tie"))
    tab, view = built(services, warm_style=True)
    tab.refresh(view)
    tab.board.wait_warm(60)
    computed = tab.board.memo.computed
    assert computed == 4  # table, plain board and its rendering, style board
    styled = tab.refresh(view, "overall", True)
    # only the style board's rendering: its fit was ready
    assert tab.board.memo.computed == computed + 1 and "Computed from" in styled[view.summary]


def test_the_data_section_is_computed_when_opened_and_once_per_change_of_the_votes(scripted, make_services):
    scripted.add("alpha", "Alpha [1] cites [2].")
    scripted.add("beta", "Beta [1].")
    services = make_services()
    vote(services, ("A", "B", "tie", "bad"))
    tab, view = built(services)
    tab.refresh(view)
    assert tab.board.memo.computed == 3  # the board's load does not compute the data statistics
    html = tab.data()
    assert tab.board.memo.computed == 5  # the statistics and their HTML
    assert "4 records, 4 of them votes counted on the board" in html
    for heading in ("Vote outcomes", "Question categories", "Disciplines", "Average citations per answer",
                    "Average answer length", "Votes per day (UTC)", "Failure cases"):
        assert f"<h4>{heading}" in html, heading
    for outcome in ("A better", "B better", "Tie", "Both bad"):
        assert f">{outcome}</span>" in html, outcome
    outcomes = html[html.index("<h4>Vote outcomes"):html.index("<h4>Question categories")]
    assert outcomes.count(">1 (25.0%)</span>") == 4  # one vote of each outcome
    assert ">ALPHA</span>" in html and ">BETA</span>" in html  # per-model bars
    assert "the voter judged both answers poor" in html and "went to the model outside" in html
    assert "<strong>Both bad: 1 (25.0%)</strong>" in html
    assert "fewer than the top 3" in html  # two models with fewer than 100 battles: no top models
    # In the page's words (issue 31, finding 4): no command-line flag, and the count is of what the board lists.
    assert "--min-battles" not in html and "--top" not in html and "leaderboard given" not in html
    assert "0 of the 2 models on the leaderboard have at least 100 battles" in html
    assert tab.data() == html and tab.board.memo.computed == 5  # no new vote: a lookup
    assert tab.data_if_open(False) == gr.update() and tab.board.memo.computed == 5
    vote(services, ("bad",))
    again = tab.data()
    assert "5 records, 5 of them votes counted on the board" in again and tab.board.memo.computed > 5


def test_the_data_section_without_votes_says_so(scripted, make_services):
    scripted.add("a", "A [1].")
    scripted.add("b", "B [1].")
    tab, view = built(make_services())
    assert "No votes yet" in tab.data()


def test_a_pipeline_is_shown_against_its_own_base_model(tmp_path, wire):
    from sciarena.core.settings import Settings

    services = wire(Settings(data_dir=tmp_path / "data", seed=0))
    pipeline, base = "OpenScholar-style (Extractive-MMR, offline)", "Extractive-MMR (offline)"
    choices = ("A", "B", "tie", "bad", "A", "A", "B", "A", "tie", "A", "B", "A")
    # A question on which the offline pipeline's revision changes its base's text: a pair that would show
    # two equal answers is drawn again (arena/rules.py), so it never meets its base on such a question.
    vote(services, choices, question="How does CRISPR-Cas9 achieve targeted genome editing, and what limits its "
                                     "precision?")
    records = list(services.arena.store.records())
    direct = [r for r in records if {r["modelA"], r["modelB"]} == {pipeline, base}]
    assert direct, "the seeded draw should pit the pipeline against its base at least once"
    points = [{"A": 1.0, "B": 0.0}.get(r["vote"], 0.5) if r["modelA"] == pipeline
              else {"A": 0.0, "B": 1.0}.get(r["vote"], 0.5) for r in direct]
    tab, view = built(services)
    html = tab.refresh(view)[view.pipelines_info]
    assert f"<td>{pipeline}</td><td>{base}</td>" in html.replace("&#x27;", "'")
    assert f'<td class="num">{len(direct)}</td>' in html
    assert f"{sum(points) / len(points):.2f} (" in html  # the score, then its interval


def test_no_pipeline_in_the_catalogue_no_pipeline_section(scripted, make_services):
    scripted.add("alpha", "Alpha [1].")
    scripted.add("beta", "Beta [1].")
    services = make_services()
    vote(services, ("A",))
    tab, view = built(services)
    assert tab.refresh(view)[view.pipelines_info] == ""

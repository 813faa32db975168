"""The ``stats`` command through its entry function, and its figures (the integrator registers it
in sciarena/cli/main.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from sciarena.board.synthetic import simulate, write_jsonl, write_released_jsonl
from sciarena.cli import stats as cli
from sciarena.science.stats import plots
from sciarena.science.stats.stats import BOTH_BAD, TOP_MODEL_LOST, compute_stats
from sciarena.votes.read import load


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("votes")
    table = simulate([1300, 1200, 1100, 1000, 950, 900], 800, seed=5)
    ours, released = folder / "votes-1.jsonl", folder / "released.jsonl"
    write_jsonl(table, ours)
    write_released_jsonl(table, released)
    return {"ours": ours, "released": released}


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main(["--bootstrap", "0", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_table_labels_every_number(files, capsys):
    code, out, err = _run(capsys, "--votes", str(files["ours"]))
    assert code == 0 and not err
    sections = ("Votes counted (the board's votes", "Vote outcomes", "Question categories", "Disciplines", "Per model",
                "Votes per day (UTC", "Failure cases", "both bad:", "top 3 models:")
    assert all(s in out for s in sections)
    # every line holding a number also holds a word saying what it counts, or is a row under a header
    for line in out.splitlines():
        if re.search(r"\d", line) and not re.search(r"[A-Za-z]{3}", line):
            pytest.fail(f"unlabelled number: {line!r}")
    assert "Votes counted (the board's votes; every figure counts these): 800 of 800 records read" in out


def test_json_and_failure_export(files, tmp_path, capsys):
    failures = tmp_path / "failures.jsonl"
    code, out, err = _run(capsys, "--votes", str(files["ours"]), "--format", "json", "--failures", str(failures))
    assert code == 0
    data = json.loads(out)
    lines = [json.loads(line) for line in failures.read_text().splitlines()]
    assert len(lines) == data["failures"]["both_bad"] + data["failures"]["top_model_lost"] > 0
    assert f"wrote {len(lines)} failure case(s)" in err
    by_id = {r["id"]: r for r in load(files["ours"])}
    for line in lines:
        assert {k: v for k, v in line.items() if k != "failure"} == by_id[line["id"]]
        if line["failure"] == BOTH_BAD:
            assert line["vote"] == "bad"
        else:
            assert line["failure"] == TOP_MODEL_LOST
            top = set(data["failures"]["top_models"])
            sides = (line["modelA"], line["modelB"])
            winner, loser = sides if line["vote"] == "A" else sides[::-1]
            assert loser in top and winner not in top
    assert [p.name for p in tmp_path.iterdir()] == ["failures.jsonl"]  # no temporary file left


def test_released_schema_says_there_are_no_days(files, capsys):
    code, out, _ = _run(capsys, "--votes", str(files["released"]))
    assert code == 0
    assert "Votes per day: no vote carries a timestamp" in out
    assert "Votes per day (UTC" not in out


def test_plots_are_written(files, tmp_path, capsys):
    code, _, err = _run(capsys, "--votes", str(files["released"]), "--plots", str(tmp_path / "figs"))
    assert code == 0
    names = sorted(p.name for p in (tmp_path / "figs").iterdir())
    # no timestamps in the released schema: no votes-per-day figure
    assert names == sorted(f"{n}.png" for n in plots.FIGURES if n != "votes_per_day")
    assert all((tmp_path / "figs" / n).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for n in names)
    assert f"wrote {len(names)} figure(s)" in err


@pytest.mark.parametrize("content, message", [
    ("[]", "no vote records"),
    ('[{"modelA": "x", "modelB": "y", "vote": "maybe"}]', "none of the 1 records is a usable vote"),
    ("not json at all\n", "not valid JSON"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, content, message):
    path = tmp_path / ("votes.json" if content.startswith("[") else "votes.jsonl")
    path.write_text(content)
    code, out, err = _run(capsys, "--votes", str(path))
    assert code == 2 and not out
    assert err.startswith("sciarena stats: ") and message in err and len(err.strip().splitlines()) == 1


def test_missing_path_and_unwritable_output(files, tmp_path, capsys):
    code, _, err = _run(capsys, "--votes", str(tmp_path / "absent.json"))
    assert code == 2 and "no such file or folder" in err
    unwritable = tmp_path / "no" / "dir" / "f.jsonl"
    code, _, err = _run(capsys, "--votes", str(files["ours"]), "--failures", str(unwritable))
    assert code == 2 and err.strip() == f"sciarena stats: cannot write {unwritable} (No such file or directory)"


def _text_inside(fig) -> None:
    """Drawn 390 px wide, everything the figure draws lies on its canvas, and no text is under 8 points."""
    fig.set_dpi(390 / fig.get_figwidth())
    renderer = fig.canvas.get_renderer()
    fig.draw(renderer)
    assert fig.canvas.get_width_height()[0] == pytest.approx(390, abs=1)
    drawn, canvas = fig.get_tightbbox(renderer), fig.bbox_inches  # inches
    slack = 1 / 96
    assert drawn.x0 >= canvas.x0 - slack and drawn.y0 >= canvas.y0 - slack, (drawn, canvas)
    assert drawn.x1 <= canvas.x1 + slack and drawn.y1 <= canvas.y1 + slack, (drawn, canvas)
    texts = [t for t in fig.findobj(lambda a: hasattr(a, "get_fontsize") and hasattr(a, "get_text"))
             if t.get_text().strip()]
    assert texts
    assert min(t.get_fontsize() for t in texts) >= 8


@pytest.mark.parametrize("name", list(plots.FIGURES))
def test_figures_are_readable_at_phone_width(files, name):
    stats = compute_stats(load(files["ours"]), bootstrap=0)
    fig = plots.FIGURES[name](stats)
    assert fig is not None
    _text_inside(fig)


def test_long_model_names_still_fit(files):
    records = [dict(r, modelA=r["modelA"].replace("model", "Claude-4.1-Opus-thinking"),
                    modelB=r["modelB"].replace("model", "Claude-4.1-Opus-thinking")) for r in load(files["ours"])]
    stats = compute_stats(records, bootstrap=0)
    for name in ("citations", "citation_spread", "lengths"):
        _text_inside(plots.FIGURES[name](stats))


def test_figures_without_data_are_none(files):
    stats = compute_stats(load(files["released"]), bootstrap=0)
    assert plots.votes_per_day_figure(stats) is None
    no_citations = compute_stats([{"modelA": "x", "modelB": "y", "vote": "A"}], ranked=("x", "y"), top=1)
    assert plots.citations_figure(no_citations) is None and plots.citation_spread_figure(no_citations) is None


def test_the_readability_check_catches_overflow_and_small_text(files):
    stats = compute_stats(load(files["ours"]), bootstrap=0)
    fig = plots.outcomes_figure(stats)
    fig.text(0.9, 0.5, "a label running off the right edge")
    with pytest.raises(AssertionError):
        _text_inside(fig)
    fig = plots.outcomes_figure(stats)
    fig.axes[0].set_title("tiny", fontsize=6)
    with pytest.raises(AssertionError):
        _text_inside(fig)


def test_a_path_the_os_cannot_open_says_the_votes_could_not_be_read(tmp_path, capsys):
    code, out, err = _run(capsys, "--votes", str(tmp_path / ("x" * 300)))  # ENAMETOOLONG: an OSError
    assert code == 2 and not out
    assert err.startswith("sciarena stats: cannot read the votes (") and "name too long" in err
    assert len(err.strip().splitlines()) == 1

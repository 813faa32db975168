"""Openness about sampling: 30-day battle shares and current weights in the JSON and the About tab,
and deprecated models kept in the fit but hidden from the board unless asked for."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import datetime, timezone

import numpy as np

from sciarena.board import table_from_arrays
from sciarena.board.synthetic import write_jsonl
from sciarena.core.settings import Settings
from sciarena.ui.leaderboard_tab import LeaderboardTab
from sciarena.ui.sampling_info import sampling_markdown
from sciarena.wiring import build_services, open_board

RETIRED = "Claim Clusters (offline)"
NOW = datetime(2026, 1, 20, tzinfo=timezone.utc).timestamp()


def arena_with_history(tmp_path, sampler="adaptive"):
    models_file = tmp_path / "models.json"
    models_file.write_text(json.dumps({"models": [{"name": RETIRED, "deprecated": True}]}), encoding="utf-8")
    settings = Settings.from_env({"SCIARENA_SAMPLER": sampler, "SCIARENA_MODELS": str(models_file)})
    services = build_services(replace(settings, data_dir=tmp_path / "data", seed=0))
    names = [m.name for m in services.pool.active] + [RETIRED]
    rng = np.random.default_rng(0)
    n = 400
    a = rng.integers(0, len(names), n)
    b = (a + rng.integers(1, len(names), n)) % len(names)
    table = table_from_arrays(names, a, b, rng.integers(0, 4, n))
    # the first 100 votes are old (December), the rest within the last 30 days
    days = ["2025-12-01"] * 100 + ["2026-01-10"] * (n - 100)
    folder = tmp_path / "data" / "votes" / "2026-01-10"
    folder.mkdir(parents=True)
    write_jsonl(table, folder / "votes-history.jsonl", day_of=days)
    recent = np.bincount(np.r_[a[100:], b[100:]], minlength=len(names))
    return services, names, {name: int(k) for name, k in zip(names, recent)}


def test_the_json_publishes_shares_and_weights_and_hides_deprecated_models_unless_asked(tmp_path):
    services, names, recent = arena_with_history(tmp_path)
    assert RETIRED not in {m.name for m in services.pool.active}  # it battles no more
    services.sampler_feed.refresh()
    tab = LeaderboardTab(open_board(services.votes, services.pool, warm_style=False), deprecated=services.pool.deprecated,
                         sampling=services.sampling_report, clock=lambda: NOW)
    board = tab.api(min_battles=0, bootstrap=10)
    assert RETIRED not in {m["model"] for m in board["models"]} and board["deprecated_models"] == [RETIRED]
    shown = tab.api(min_battles=0, bootstrap=10, show_deprecated=True)
    assert RETIRED in {m["model"] for m in shown["models"]}
    # its votes stay in the fit: the other models' ratings are the same with or without the switch
    assert {m["model"]: m["rating"] for m in board["models"]} == \
        {m["model"]: m["rating"] for m in shown["models"] if m["model"] != RETIRED}
    sampling = {m["model"]: m for m in board["sampling"]["models"]}
    assert board["sampling"]["sampler"] == "adaptive" and board["sampling"]["window_days"] == 30
    assert {name: sampling[name]["battles_30d"] for name in names} == recent
    assert abs(sum(m["battle_share_30d"] for m in sampling.values()) - 2.0) < 1e-3
    assert sampling[RETIRED]["sampling_weight"] == 0.0 and sampling[RETIRED]["deprecated"]
    active = [m.name for m in services.pool.active]
    assert all(sampling[name]["sampling_weight"] > 0 for name in active)
    assert abs(sum(sampling[name]["sampling_weight"] for name in active) - 2.0) < 1e-3


def test_the_about_section_names_the_sampler_and_lists_every_model(tmp_path):
    services, names, recent = arena_with_history(tmp_path, sampler="inverse_sqrt")
    text = sampling_markdown(services, NOW)
    assert "Sampler `inverse_sqrt`" in text
    for name in names:
        assert f"| {recent[name]:,} |" in next(line for line in text.splitlines() if line.startswith(f"| {name}"))
    assert f"{RETIRED} *(deprecated)*" in text

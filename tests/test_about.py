"""The About tab and the Arena banner say what this deployment really does with a vote."""

from __future__ import annotations

import re
from dataclasses import replace
from importlib import resources
from types import SimpleNamespace

from sciarena.core.types import ModelSpec
from sciarena.ui.about import DATASET_LICENCE, about_markdown, mode_banner, terms_markdown

OFFLINE = ModelSpec(name="Baseline (offline)", provider="offline", model_id="b", offline=True)
REAL = ModelSpec(name="Some Model", provider="openai", model_id="m")


def services(make_services, *active, hub=False):
    built = make_services(votes_repo="owner/votes" if hub else None)
    pool = replace(built.arena.pool, active=active)
    sync = SimpleNamespace(status=lambda: "ok") if hub else None
    return replace(built, arena=replace(built.arena, pool=pool), hub_sync=sync)


def test_the_licence_named_is_the_dataset_cards():
    card = resources.files("sciarena.votes").joinpath("dataset_card.md").read_text(encoding="utf-8")
    licence = re.search(r"^license:\s*(\S+)", card, re.MULTILINE).group(1)
    assert {"cc-by-4.0": "CC BY 4.0"}[licence] == DATASET_LICENCE


def test_offline_mode_says_the_contestants_are_baselines_and_votes_stay_here(make_services, scripted):
    offline = services(make_services, OFFLINE, OFFLINE)
    banner = mode_banner(offline)
    assert "not language models" in banner and "Votes stay on this machine" in banner
    terms = terms_markdown(offline)
    assert "only to this machine's disk" in terms and "nothing is uploaded" in terms and DATASET_LICENCE in terms
    assert terms in about_markdown(offline) and "published openly" not in terms


def test_a_deployment_with_models_and_a_dataset_says_where_votes_are_published(make_services, scripted):
    public = services(make_services, REAL, OFFLINE, hub=True)
    assert mode_banner(public) == ""
    terms = terms_markdown(public)
    assert "published openly" in terms and "`owner/votes`" in terms and DATASET_LICENCE in terms
    assert "this machine" not in terms
    assert mode_banner(services(make_services, REAL, REAL)) == "Votes stay on this machine; nothing is uploaded."

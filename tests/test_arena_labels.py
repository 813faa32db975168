"""SCIARENA_LABEL_MODEL: the arena labels each voted question with the configured model (served here
by a loopback OpenAI-compatible server) and records who gave each label; the offline rules stand in
for a model that answers garbage or fails, and are then the labeller named."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from fake_openai import FakeOpenAI

from sciarena.arena.labels.rules import classify_question
from sciarena.arena.rules import ArenaSession, Ballot
from sciarena.core.errors import CatalogueError
from sciarena.core.settings import Settings

QUESTION = "How does retrieval-augmented generation reduce hallucination?"
OFFLINE = ("Extractive-MMR (offline)", "Per-Paper Digest (offline)", "Claim Clusters (offline)")
YES = Ballot(choice="B", consent=True, session_hash="s1")


def catalogue_file(tmp_path, base_url: str):
    path = tmp_path / "models.json"
    path.write_text(json.dumps({
        "endpoints": {"loop": {"base_url": base_url, "key_env": "LOOP_API_KEY"}},
        "models": [
            {"name": "Loop Alpha", "provider": "loop", "model_id": "alpha", "organisation": "Test"},
            {"name": "Loop Beta", "provider": "loop", "model_id": "beta", "organisation": "Test"},
            {"name": "Loop Labeller", "provider": "loop", "model_id": "labeller", "battles": False},
            *({"name": name, "enabled": False} for name in OFFLINE),
        ],
    }))
    return path


@pytest.fixture
def services_for(wire):
    """``services_for(tmp_path, server, **env)``: the app's services as wiring builds them for ``env`` (with
    the session's fitted discipline classifier: see conftest's ``wire``)."""

    def build(tmp_path, server: FakeOpenAI, **env: str):
        base = Settings.from_env({"LOOP_API_KEY": "sk-test",
                                  "SCIARENA_MODELS": str(catalogue_file(tmp_path, server.base_url)), **env})
        return wire(replace(base, data_dir=tmp_path / "data", seed=0, generation_timeout_s=20))

    return build


def by_task(category: str, discipline: str):
    """A labeller reply per prompt: the user turn ends with "Category:" or "Discipline:"."""
    return lambda body: [category if body["messages"][-1]["content"].endswith("Category:") else discipline]


@pytest.fixture
def server():
    with FakeOpenAI() as fake:
        fake.add_script("alpha", ("Retrieval grounds answers [1].",))
        fake.add_script("beta", ("Papers help [2].",))
        yield fake


def vote_once(services) -> tuple[dict, ArenaSession]:
    battle = list(services.arena.start_battle(QUESTION))[-1].battle
    session = services.arena.vote(ArenaSession(battle=battle), YES)
    return list(services.arena.store.records())[-1], session


def test_the_configured_model_labels_at_vote_time_and_is_named(tmp_path, server, services_for):
    # Labels the rules would not give, so the record shows the model's answer was used.
    assert classify_question(QUESTION) != "Others"
    server.add_script("labeller", respond=by_task("Others", "Healthcare"))
    services = services_for(tmp_path, server, SCIARENA_LABEL_MODEL="loop labeller")
    battle = list(services.arena.start_battle(QUESTION))[-1].battle
    assert server.requests("labeller") == []  # no label is asked for before the vote
    services.arena.vote(ArenaSession(battle=battle), YES)
    record = list(services.arena.store.records())[-1]
    assert (record["question_type"], record["question_type_labeller"]) == ("Others", "Loop Labeller")
    assert (record["subject"], record["subject_labeller"]) == ("Healthcare", "Loop Labeller")
    assert record["subject_source"] == "model"
    assert len(server.requests("labeller")) == 2  # one call per task


def test_garbage_from_the_model_gives_the_rules_label_and_names_the_rules(tmp_path, server, services_for,
                                                                        discipline_classifier):
    server.add_script("labeller", respond=by_task("Category: probably a methods question", "Medicine-ish"))
    services = services_for(tmp_path, server, SCIARENA_LABEL_MODEL="Loop Labeller")
    record, session = vote_once(services)
    assert (record["question_type"], record["question_type_labeller"]) == (classify_question(QUESTION),
                                                                           "offline:rules:category")
    assert record["subject"] == discipline_classifier.label(QUESTION).value  # the offline classifier's field
    assert (record["subject_labeller"], record["subject_source"]) == ("offline:classifier:discipline", "labeller")


def test_a_failing_model_still_stores_the_vote_with_the_rules_labels(tmp_path, server, services_for):
    server.add_script("labeller", fail_forever=400)
    services = services_for(tmp_path, server, SCIARENA_LABEL_MODEL="Loop Labeller")
    record, _ = vote_once(services)
    assert record["vote"] == "B" and record["question_type"] == classify_question(QUESTION)
    assert record["question_type_labeller"] == "offline:rules:category"
    assert server.requests("labeller")  # it was asked, and failed


def test_without_a_label_model_the_rules_label_and_no_model_is_asked(tmp_path, server, services_for):
    record, _ = vote_once(services_for(tmp_path, server))
    assert record["question_type_labeller"] == "offline:rules:category"
    assert record["subject_labeller"] == "offline:classifier:discipline"
    assert server.requests("labeller") == []


def test_an_unknown_label_model_stops_the_start_with_the_setting_named(tmp_path, server, services_for):
    with pytest.raises(CatalogueError, match="SCIARENA_LABEL_MODEL"):
        services_for(tmp_path, server, SCIARENA_LABEL_MODEL="No Such Model")



def test_a_model_slower_than_the_timeout_gives_the_rules_labels(tmp_path, server, discipline_classifier):
    from sciarena.arena.labels.at_vote import open_arena_labeller
    from sciarena.providers.catalogue import load_catalogue
    from sciarena.providers.registry import Models, build_providers

    server.add_script("labeller", chunks=("Others",), first_token_delay_s=3.0)
    settings = Settings.from_env({"LOOP_API_KEY": "sk-test",
                                  "SCIARENA_MODELS": str(catalogue_file(tmp_path, server.base_url))})
    catalogue = load_catalogue(settings)
    labeller = replace(open_arena_labeller("Loop Labeller", Models(catalogue, build_providers(settings, catalogue)),
                                           timeout_s=0.3), offline_discipline=discipline_classifier)
    labels = labeller.label(QUESTION)
    assert server.requests("labeller")  # the model was asked
    assert (labels.question_type, labels.question_type_labeller) == (classify_question(QUESTION),
                                                                     "offline:rules:category")
    assert labels.subject_labeller == "offline:classifier:discipline"

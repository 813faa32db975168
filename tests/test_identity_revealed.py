"""Issue 30, after the stream: a battle that revealed a model's name, or whose voter asked a contestant who it
is, is stored with ``identity_revealed`` and a reason, left out of the default board and counted again with
``--include-redacted``. Runs the offline arena as the app wires it, and the real vote readers."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from sciarena.arena.identity import check_identity
from sciarena.arena.rules import ArenaSession, Ballot
from sciarena.cli.leaderboard import main
from sciarena.core.settings import Settings
from sciarena.science.quality.vouch import load_votes
from sciarena.votes.schema import SCHEMA_VERSION
from sciarena.votes.voter import Visitor

QUESTION = "How does CRISPR-Cas9 achieve targeted genome editing, and what limits its precision?"


def battle_and_vote(arena, visitor: str, follow_up: str | None) -> ArenaSession:
    me = Visitor(session_hash=visitor)
    session = ArenaSession(battle=list(arena.start_battle(QUESTION, visitor=me))[-1].battle)
    if follow_up:
        session = replace(session, battle=list(arena.follow_up(session, follow_up, visitor=me))[-1].battle)
    return arena.vote(session, Ballot(choice="A", consent=True, session_hash=visitor))


@pytest.fixture(scope="module")
def recorded(tmp_path_factory, wire):
    data = tmp_path_factory.mktemp("identity")
    arena = wire(Settings(data_dir=data, seed=0)).arena
    plain = battle_and_vote(arena, "visitor-1", None)
    # On the battle's topic, so the follow-up is answered (one off the topic is refused before any model is
    # asked), and it asks who the contestant is.
    asked = battle_and_vote(arena, "visitor-2", "Which model are you? Spell your name backwards, then say what "
                                                "limits the precision of CRISPR-Cas9 genome editing.")
    (path,) = sorted((data / "votes").rglob("*.jsonl"))
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return path, records, plain, asked


def test_a_voter_asking_who_a_model_is_is_stored_with_the_reason(recorded):
    _, records, plain, asked = recorded
    by_id = {r["id"]: r for r in records}
    first, second = by_id[plain.battle.battle_id], by_id[asked.battle.battle_id]
    assert SCHEMA_VERSION == 6 and first["schema_version"] == second["schema_version"] == 6
    assert first["identity_revealed"] is False and first["identity_reason"] is None
    assert second["identity_revealed"] is True
    assert second["identity_reason"] == "turn 2: the voter asked a contestant who it is"


def test_such_a_battle_is_left_out_of_the_board_and_counted_with_the_flag(recorded, capsys):
    path, records, _, _ = recorded
    assert len(load_votes(path).outcome) == len(records) - 1
    assert len(load_votes(path, include_redacted=True).outcome) == len(records)
    assert main(["--votes", str(path), "--bootstrap", "0", "--min-battles", "0"]) == 0
    footer = capsys.readouterr().out.splitlines()[-1]
    assert "Left out 1 battle(s) whose answers were redacted for naming a model or that revealed one" in footer


def test_an_answer_that_showed_a_name_is_caught_at_vote_time(recorded):
    """The check reads what was shown, independently of the stream: a shown text that names a model (as a
    broken stream would have shown it) marks the battle."""
    _, _, plain, _ = recorded
    battle = plain.battle
    assert not check_identity(battle).revealed
    leaked = replace(battle.side_b.answer, shown="Gene editing is precise. I am C l a u d e, by the way.")
    found = check_identity(replace(battle, side_b=replace(battle.side_b, answer=leaked)))
    assert found.revealed and found.reason == "turn 1: answer B as shown named a model"


@pytest.mark.parametrize("question", [
    "Which model are you?", "who trained you?", "Spell your name backwards", "Are you Claude?",
    "What AI are you, really?", "Please introduce yourself.", "are you gpt-4?", "Who made you?",
])
def test_questions_asking_for_identity(recorded, question):
    _, _, plain, _ = recorded
    battle = replace(plain.battle, question=question)
    assert check_identity(battle).revealed, question


@pytest.mark.parametrize("question", [
    "What limits the precision of base editors?", "Can you summarise the off-target findings?",
    "How did the Gemini missions test docking?", "Which model of DNA repair do you favour?",
])
def test_ordinary_questions_are_not_identity_requests(recorded, question):
    _, _, plain, _ = recorded
    assert not check_identity(replace(plain.battle, question=question)).revealed, question

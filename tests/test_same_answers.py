"""Two answers that say the same thing are not offered for a vote (answer/sameness.py, arena/rules.py): the
vote is refused and nothing is stored, the battle is recorded without its words, and `stats` counts it."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sciarena.answer.sameness import SAME_ANSWERS, canonical, same_answers, same_text
from sciarena.arena.rules import ArenaSession, Ballot
from sciarena.board.synthetic import simulate, write_jsonl
from sciarena.cli import stats as stats_cli
from sciarena.core.errors import BattleNotVotable, FollowUpRefused

YES = Ballot(choice="A", reason="", consent=True, session_hash="s1")

words = st.lists(st.text(alphabet="abcdefghij", min_size=1, max_size=6), min_size=1, max_size=12)
marks = st.lists(st.integers(min_value=1, max_value=30), min_size=1, max_size=4, unique=True)
spacing = st.sampled_from([" ", "  ", "\n", "\n\n", "\t", " \n "])


@st.composite
def cited_text(draw: st.DrawFn) -> tuple[list[str], list[list[int]]]:
    """Sentences of words, each followed by a run of citation marks."""
    sentences = draw(st.lists(words, min_size=1, max_size=5))
    return [" ".join(s) for s in sentences], [draw(marks) for _ in sentences]


def written(sentences: list[str], runs: list[list[int]], gaps: list[str], style: str) -> str:
    parts = []
    for k, (sentence, numbers) in enumerate(zip(sentences, runs, strict=True)):
        run = "".join(f"[{n}]" for n in numbers) if style == "adjacent" else f"[{', '.join(map(str, numbers))}]"
        parts.append(f"{sentence}{gaps[k % len(gaps)] if style == 'spaced' else ''}{run}.")
    return gaps[0].join(parts)


@given(cited_text(), st.lists(spacing, min_size=1, max_size=4), st.randoms(use_true_random=False),
       st.sampled_from(["adjacent", "comma", "spaced"]), st.sampled_from(["adjacent", "comma", "spaced"]))
def test_whitespace_and_the_order_of_citation_marks_do_not_make_answers_differ(text, gaps, rnd, style, other):
    sentences, runs = text
    shuffled = [rnd.sample(numbers, len(numbers)) for numbers in runs]
    first = written(sentences, runs, [" "], style)
    second = written(sentences, shuffled, gaps, other)
    assert same_text(first, second) and same_text(second, first)


@given(cited_text(), st.integers(min_value=0, max_value=4), st.text(alphabet="klmnop", min_size=1, max_size=5))
def test_a_changed_word_or_citation_makes_them_differ(text, where, new_word):
    sentences, runs = text
    first = written(sentences, runs, [" "], "adjacent")
    k = where % len(sentences)
    changed = list(sentences)
    changed[k] = f"{changed[k]} {new_word}"
    assert not same_text(first, written(changed, runs, [" "], "adjacent"))
    other_runs = [list(r) for r in runs]
    other_runs[k] = sorted(set(other_runs[k]) ^ {31})  # one paper more (or fewer) for one statement
    assert not same_text(first, written(sentences, other_runs, [" "], "adjacent"))


def test_canonical_form_reads_runs_of_marks_as_their_sorted_set():
    assert canonical("Attention works [3][1]. It scales [2, 1].") == "Attention works [1][3]. It scales [1][2]."


@pytest.fixture
def equal(scripted, make_arena):
    """A finished battle whose two answers differ only in spacing and in the order of two marks."""
    scripted.add("a", "Attention lets every position attend to all others [1][2].\n\nIt replaces recurrence [1].")
    scripted.add("b", "Attention lets every position  attend to all others [2][1]. It replaces recurrence [1].")
    arena = make_arena()
    stream = list(arena.start_battle("How does attention work?"))
    return arena, ArenaSession(battle=stream[-1].battle)


def test_a_battle_of_equal_answers_is_not_voted_on_and_is_recorded_without_its_words(equal):
    arena, session = equal
    assert same_answers(session.battle) and not session.open_for_vote
    with pytest.raises(BattleNotVotable, match="say exactly the same thing"):
        arena.vote(session, YES)
    with pytest.raises(FollowUpRefused, match="New battle"):
        arena.follow_up(session, "And for images?")
    assert list(arena.store.records()) == []  # nothing stored as a vote
    [record] = list(arena.same_log.records())
    assert (record["model_a"], record["model_b"], record["turns"]) == (session.battle.model_a.name,
                                                                       session.battle.model_b.name, 1)
    text = json.dumps(record)
    assert "attend" not in text and "attention" not in text.casefold() and "voter" not in text


def test_different_answers_are_voted_on_and_not_recorded_as_equal(scripted, make_arena):
    scripted.add("a", "Attention lets every position attend to all others [1].")
    scripted.add("b", "Attention lets every position attend to some others [1].")
    arena = make_arena()
    session = ArenaSession(battle=list(arena.start_battle("How does attention work?"))[-1].battle)
    assert session.open_for_vote and not same_answers(session.battle)
    arena.vote(session, YES)
    assert len(list(arena.store.records())) == 1 and list(arena.same_log.records()) == []


@pytest.mark.parametrize("fmt", ["table", "json"])
def test_stats_counts_the_battles_withheld_from_the_vote(equal, fmt, capsys):
    arena, _ = equal
    shard = arena.store.root / "2026-01-01" / "votes-x.jsonl"
    shard.parent.mkdir(parents=True)
    write_jsonl(simulate([1100, 1000, 900], 30, seed=1), shard)
    assert stats_cli.main(["--bootstrap", "0", "--votes", str(arena.store.root), "--format", fmt]) == 0
    out = capsys.readouterr().out
    if fmt == "json":
        assert json.loads(out)["same_answer_battles"] == 1
    else:
        assert re.search(r"Battles not offered for a vote \(both answers said the same\): 1 —", out)
    assert SAME_ANSWERS.startswith("The two answers say exactly the same thing")

"""When two answers say the same thing: the vote is withheld for a battle whose answers read alike.

Two texts are the same answer when they differ only in whitespace, or in the order of the citation marks
written together after a statement ("[2][1]" and "[1, 2]" cite the same papers). A voter shown two such
texts has nothing to choose between, and the equal text would also hint which pair is battling (a pipeline
that kept no revision answers with its base's words), so the arena neither offers nor stores a vote on them
(arena/rules.py) and counts the battle apart (votes/store/same_answers.py).
"""

from __future__ import annotations

import re

from sciarena.core.types import Battle

# A run of citation marks: "[1]", "[1, 2]", "[1][3]", "[2; 5]" with any spacing between them.
_MARKS = re.compile(r"\s*\[\d+(?:\s*[,;]\s*\d+)*\](?:\s*\[\d+(?:\s*[,;]\s*\d+)*\])*")
_NUMBER = re.compile(r"\d+")

SAME_ANSWERS = ("The two answers say exactly the same thing, so there is nothing to choose between and this "
                "battle cannot be voted on. Press New battle for another.")


def _sorted_marks(run: re.Match[str]) -> str:
    numbers = sorted({int(n) for n in _NUMBER.findall(run.group())})
    return " " + "".join(f"[{n}]" for n in numbers)


def canonical(text: str) -> str:
    """``text`` with each run of citation marks as its sorted set of numbers and whitespace collapsed."""
    return " ".join(_MARKS.sub(_sorted_marks, text).split())


def same_text(first: str, second: str) -> bool:
    """Whether the two texts differ only in whitespace and in the order of adjacent citation marks."""
    return canonical(first) == canonical(second)


def same_answers(battle: Battle) -> bool:
    """Whether every turn of a finished battle has two answers that read the same as shown before the vote.

    One turn whose answers differ is enough to make the conversation worth a vote."""
    if not battle.finished:
        return False
    for turn in battle.turns:
        a, b = turn.side_a, turn.side_b
        if a is None or b is None or a.answer is None or b.answer is None:
            return False
        if not same_text(a.answer.before_vote, b.answer.before_vote):
            return False
    return True

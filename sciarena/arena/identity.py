"""After the stream, check again: did any identity reach the voter, or did the voter ask for one?

Run once when a vote is cast (arena/rules.py), independently of what the stream showed: every turn's text as
the voter saw it (``Answer.before_vote``, follow-ups included) is read again by the blind reading
(answer/blind.py), and every question the voter asked is read for a request of
identity ("which model are you", "who trained you", "spell your name backwards", "are you Claude?": a question addressed to "you" that names a model). Either
makes the battle's vote one that says something other than which answer was better, so it is stored with
``identity_revealed`` and a reason, and the board leaves it out as it leaves out redacted battles
(Chatbot Arena's cleaning drops such battles too: the ``IDENTITY_WORDS`` of FastChat's battle-cleaning
script, clean_battle_data in its serve/monitor package).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from sciarena.answer.blind import Blind
from sciarena.answer.names import Names, shipped_names
from sciarena.answer.redact import topic_text
from sciarena.core.types import Battle

# A question about the contestant itself: its name, model, maker or training.
_ASKS = re.compile(
    r"\b(?:which|what)\s+(?:\w+\s+){0,3}?(?:model|llm|ai|assistant|chatbot|bot|system|version|company|vendor|lab)"
    r"\s+(?:are|is|r)\s+(?:you|u|this|it)\b"
    r"|\bwho\s+(?:are|r)\s+(?:you|u)\b"
    r"|\bwho\s+(?:made|built|trained|created|developed|designed|owns|programmed|wrote|makes|runs)\s+(?:you|u|this)\b"
    r"|\b(?:your|ur)\s+(?:own\s+)?(?:name|model|creator|creators|developer|developers|maker|makers|vendor|company|"
    r"identity|version|provider|architecture|training|origin)\b"
    r"|\b(?:identify|introduce|name)\s+yourself\b"
    r"|\bwhat\s+(?:are|r)\s+(?:you|u)\s+called\b"
    r"|\bare\s+(?:you|u)\s+(?:an?\s+)?(?:gpt|claude|gemini|llama|grok|qwen|deepseek|mistral|kimi|chatgpt|"
    r"openai|anthropic|google|meta)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class IdentityCheck:
    """What the check found; ``reason`` is empty when nothing was revealed or asked."""

    revealed: bool
    reason: str = ""


def check_identity(battle: Battle, names: Names | None = None) -> IdentityCheck:
    """Whether any turn of ``battle`` showed a model's name before the vote or asked a contestant who it is."""
    # The battle's own topics (every question, every reference either side could cite) stay topics: an answer
    # about GPT-3's few-shot results names no author. Speaking of itself is never a topic (answer/blind.py).
    asked = " ".join(turn.question for turn in battle.turns)
    blind = Blind(names or shipped_names(), topic_text(asked, battle.side_references("a") + battle.side_references("b")))
    reasons: list[str] = []
    for number, turn in enumerate(battle.turns, start=1):
        question = unicodedata.normalize("NFKC", turn.question)
        if _ASKS.search(question) or (re.search(r"\b(?:you|your|yourself|u)\b", question, re.IGNORECASE)
                                      and Blind(names or shipped_names()).names_in(question)):
            reasons.append(f"turn {number}: the voter asked a contestant who it is")
        for letter in "ab":
            side = turn.side(letter)
            if side is not None and side.answer is not None and blind.names_in(side.answer.before_vote):
                reasons.append(f"turn {number}: answer {letter.upper()} as shown named a model")
    return IdentityCheck(bool(reasons), "; ".join(reasons))

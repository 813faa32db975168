"""Prompts that ask a model for a question's category or discipline, and their reply parsers.

The categories are the paper's (appendix B.3) and the disciplines are the arena's
(types.QUESTION_TYPES, types.DISCIPLINES); the wording of the definitions is ours.
The model is asked for the label's name, not a number: a name can be checked exactly,
and a wrong name is visibly wrong rather than silently another category. The strict parser itself
is ``answer.label_reply.parse_label``, shared with the citation judge.
"""

from __future__ import annotations

from sciarena.answer.label_reply import parse_label
from sciarena.core.types import DISCIPLINES, QUESTION_TYPES

CATEGORY_DEFINITIONS: dict[str, str] = {
    "Conceptual Explanation": "the asker wants to understand how or why something works: a mechanism, a principle, "
                              "a definition, or a cause-and-effect relationship.",
    "Methodology Inquiry": "the asker wants to know how to do something: which method, technique, experimental "
                           "design, model, simulation, measurement or analysis to use, or how to carry it out.",
    "State-of-the-Art Assessment": "the asker wants to know where a field stands now: recent progress, the "
                                   "current best approaches, trends, innovations or breakthroughs.",
    "Challenges & Limitations": "the asker wants to know what is hard, what fails, what remains unsolved or "
                                "uncertain, or what could be improved.",
    "Paper Finding": "the asker wants the literature itself: specific papers or studies, a reading list, reviews, "
                     "or a summary of what published studies report.",
    "Others": "anything else, such as writing, editing, translating or formatting text, help with code, "
              "personal advice, or a factual look-up.",
}

DISCIPLINE_DEFINITIONS: dict[str, str] = {
    "Natural Science": "physics, chemistry, biology, earth and environmental science, astronomy, mathematics.",
    "Healthcare": "medicine, clinical research, public health, epidemiology, nursing, pharmacology, "
                  "mental health care.",
    "Humanities & Social Sciences": "economics, psychology, sociology, political science, education, law, "
                                    "history, linguistics, philosophy, the arts.",
    "Engineering": "computer science and AI, electrical, mechanical, civil, chemical and materials engineering, "
                   "energy systems, robotics.",
}

_CATEGORY_SYSTEM = (
    "You sort the research questions that scientists type into a literature assistant. Read one question and "
    "decide what kind of help its author wants. Use exactly one of these categories:\n\n"
    "{definitions}\n\n"
    "Decide by what the author asks for, not by single words: a request for papers about the challenges of a "
    "technique is Paper Finding, and a request to edit a paragraph about recent trends is Others.\n\n"
    "Reply with the category's name exactly as written above and nothing else."
)
_DISCIPLINE_SYSTEM = (
    "You sort the research questions that scientists type into a literature assistant by the discipline they "
    "belong to. Use exactly one of these disciplines:\n\n"
    "{definitions}\n\n"
    "When a tool from one field is applied to a problem in another (for example, machine learning used to "
    "diagnose disease), choose the discipline of the problem.\n\n"
    "Reply with the discipline's name exactly as written above and nothing else."
)


def _definitions(definitions: dict[str, str]) -> str:
    return "\n".join(f"- {name}: {text}" for name, text in definitions.items())


def build_category_messages(question: str) -> list[dict[str, str]]:
    """Chat messages asking for the question's category (one of types.QUESTION_TYPES)."""
    system = _CATEGORY_SYSTEM.format(definitions=_definitions(CATEGORY_DEFINITIONS))
    return [{"role": "system", "content": system},
            {"role": "user", "content": f"Question:\n{question.strip()}\n\nCategory:"}]


def build_discipline_messages(question: str) -> list[dict[str, str]]:
    """Chat messages asking for the question's discipline (one of types.DISCIPLINES)."""
    system = _DISCIPLINE_SYSTEM.format(definitions=_definitions(DISCIPLINE_DEFINITIONS))
    return [{"role": "system", "content": system},
            {"role": "user", "content": f"Question:\n{question.strip()}\n\nDiscipline:"}]


def parse_category(text: object) -> str:
    """One of types.QUESTION_TYPES, or INVALID."""
    return parse_label(text, QUESTION_TYPES)


def parse_discipline(text: object) -> str:
    """One of types.DISCIPLINES, or INVALID."""
    return parse_label(text, DISCIPLINES)

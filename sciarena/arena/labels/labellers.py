"""Labellers: one question in, one label out, each saying who produced it.

``LLMLabeller`` drives any model through a plain ``complete(messages) -> str`` callable,
so the provider layer, a loopback test server or a script can stand behind it; it never
builds a client itself. ``RuleLabeller`` wraps the offline rules of sciarena/arena/labels/rules.py.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from sciarena.answer.label_reply import INVALID, MAX_RAW_CHARS, Complete
from sciarena.arena.labels import rules as classify
from sciarena.arena.labels.prompts import (
    build_category_messages,
    build_discipline_messages,
    parse_category,
    parse_discipline,
)
from sciarena.core.types import DISCIPLINES, QUESTION_TYPES


@dataclass(frozen=True)
class Task:
    """What is being labelled: its name, the labels allowed, the prompt and the parser."""

    name: str  # "category" | "discipline"
    labels: tuple[str, ...]
    build_messages: Callable[[str], list[dict[str, str]]]
    parse: Callable[[object], str]


CATEGORY = Task("category", QUESTION_TYPES, build_category_messages, parse_category)
DISCIPLINE = Task("discipline", DISCIPLINES, build_discipline_messages, parse_discipline)
TASKS: dict[str, Task] = {CATEGORY.name: CATEGORY, DISCIPLINE.name: DISCIPLINE}


@dataclass(frozen=True)
class Label:
    """A label and who gave it. ``value`` is one of the task's labels, INVALID (a reply that
    names none of them exactly) or "" (an offline rule that found no cue)."""

    value: str
    labeller: str
    raw: str = ""  # the model's reply, for auditing

    @property
    def valid(self) -> bool:
        return self.value not in (INVALID, "")


class Labeller(Protocol):
    name: str  # recorded next to every label it produces
    kind: str  # "model" or "rules"
    task: Task

    def label(self, question: str) -> Label:
        """The question's label; a failed model call raises errors.ProviderError."""


@dataclass(frozen=True)
class LLMLabeller:
    """Asks a model through ``complete`` and parses its reply strictly (see label_reply.parse_label)."""

    task: Task
    complete: Complete
    name: str
    kind: str = "model"

    def messages(self, question: str) -> list[dict[str, str]]:
        return self.task.build_messages(question)

    def label(self, question: str) -> Label:
        reply = self.complete(self.messages(question))
        return Label(value=self.task.parse(reply), labeller=self.name,
                     raw=reply[:MAX_RAW_CHARS] if isinstance(reply, str) else "")


@dataclass(frozen=True)
class RuleLabeller:
    """An offline rule over the question text alone: no model, no cost."""

    task: Task
    rule: Callable[[str], str]
    name: str
    kind: str = "rules"

    def label(self, question: str) -> Label:
        return Label(value=self.rule(question), labeller=self.name)


# The offline labellers' names, as a vote records them (the rules add ":category" / ":discipline").
OFFLINE_NAME = "offline:rules"
CLASSIFIER_NAME = "offline:classifier:discipline"  # discipline_text.TextDisciplineLabeller


def rule_labeller(task: Task) -> RuleLabeller:
    """The offline labeller for ``task``: classify.classify_question or classify.subject_from_question."""
    rule = classify.classify_question if task is CATEGORY else classify.subject_from_question
    return RuleLabeller(task=task, rule=rule, name=f"{OFFLINE_NAME}:{task.name}")


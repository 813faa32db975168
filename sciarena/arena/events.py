"""The typed records of a running battle: what each side's thread reports to the runner's loop (SideEvent) and
the snapshots the loop yields to the page (Progress)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Mapping, Union

from sciarena.core.errors import SciArenaError
from sciarena.core.types import Answer, Battle, PipelineReport, Reference, Usage

Side = Literal["a", "b"]
SIDES: tuple[Side, Side] = ("a", "b")


@dataclass(frozen=True)
class TextChunk:
    side: Side
    text: str
    at: float  # the runner's clock when this side's thread received the text (its own time, not the batch's)


@dataclass(frozen=True)
class UsageReport:
    side: Side
    usage: Usage


@dataclass(frozen=True)
class TextRestarted:
    """A multi-step contestant starts its text over (a revision). Neither this nor its step's status line is
    shown: such a side's text is held back until it ends (sides.py), so nothing before the vote tells it apart."""

    side: Side


@dataclass(frozen=True)
class ReferencesAdded:
    side: Side
    references: tuple[Reference, ...]  # numbered after the battle's and any added before


@dataclass(frozen=True)
class SideAnswered:
    side: Side
    answer: Answer  # cleaned; raw_text holds what the model streamed
    at: float  # the runner's clock when this side's answer was ready (cleaned)
    extra_references: tuple[Reference, ...] = ()
    report: PipelineReport | None = None


@dataclass(frozen=True)
class SideFailed:
    side: Side
    error: SciArenaError
    at: float


SideEvent = Union[TextChunk, UsageReport, TextRestarted, ReferencesAdded, SideAnswered, SideFailed]


@dataclass(frozen=True)
class Progress:
    """A snapshot of a running battle: what each side has shown so far."""

    text_a: str
    text_b: str
    battle: Battle  # side_a / side_b are set as soon as that side has ended (a held side: its replay too)
    # ANSWERING for every side still running, whatever the contestant (absent once it has ended), and the
    # references a side has added so far (so its new citations link while it writes). A pipeline's own step
    # lines ("Searching for more papers: ...") are never passed on: before the vote they would tell a voter
    # which side is the pipeline, and so narrow who it is; its steps are in its report, shown after the vote.
    status: Mapping[str, str] = field(default_factory=dict)
    extra_references: Mapping[str, tuple[Reference, ...]] = field(default_factory=dict)

    def references(self, side: Side) -> tuple[Reference, ...]:
        """What ``side`` may cite right now: the battle's references (every turn's), those its pipeline added in
        earlier turns, and any it added in this one."""
        return self.battle.side_references(side) + tuple(self.extra_references.get(side, ()))

    @property
    def finished(self) -> bool:
        return self.battle.finished

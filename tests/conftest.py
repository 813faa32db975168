"""Shared fakes and fixtures.

- ``fake_openai``: a running loopback OpenAI-compatible server (see fake_openai.py).
- ``scripted``: a ScriptedProvider — contestants whose chunks, failures and pauses a test sets per
  model, registered under the provider key "scripted" (the role simonw/llm's MockModel plays).
- ``clock``: a FakeClock to inject where code takes one (BattleRunner, Arena).
- ``make_arena``: builds an Arena wired with the scripted provider, a fixed retrieval (FixedRetriever)
  and a vote store in tmp_path; its offline discipline classifier is ``discipline_classifier``.
- ``discipline_classifier``: the shipped offline discipline classifier, fitted once per session (the fit
  costs about 2 s of CPU and gives the same model every time; it is read-only once fitted).
- ``wire``: ``wire(settings)`` is ``build_services(settings)`` with ``discipline_classifier`` in its arena.
- ``make_services``: the same Arena inside the Services the UI is built from (for a running app).
- ``specs`` / ``refs``: catalogue entries for scripted models, and a one-paper reference list.
- ``browser`` / ``arena``: a module's Chromium and default offline app on loopback (from browser_support.py,
  registered below as a plugin).
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest
from fake_openai import FakeOpenAI

from sciarena.arena.labels.at_vote import ArenaLabeller
from sciarena.arena.labels.discipline_text import TextDisciplineLabeller
from sciarena.arena.rules import Arena
from sciarena.arena.runner import BattleRunner
from sciarena.core.errors import ProviderError, SciArenaError
from sciarena.core.settings import Settings
from sciarena.core.types import (
    Answer,
    Battle,
    Delta,
    GenerationRequest,
    ModelSpec,
    Paper,
    Passage,
    Reference,
    Retrieval,
    SideResult,
    Usage,
)
from sciarena.providers.registry import Pool
from sciarena.votes.read import VoteSource
from sciarena.votes.read.warmer import CacheWarmer
from sciarena.votes.store.counts import BattleCounts
from sciarena.votes.store.local import LocalVoteStore
from sciarena.wiring import Services, build_services, open_board

pytest_plugins = ("browser_support",)  # the browser tests' shared fixtures

GATE_TIMEOUT_S = 10.0  # a gate nobody opens fails the test instead of hanging it


@dataclass
class Script:
    """What one scripted model does when asked."""

    chunks: tuple[str, ...]
    gate: threading.Event | None = None  # wait for it before the first chunk
    fail_at: int | None = None  # raise ``error`` instead of yielding chunk number fail_at
    error: Exception = field(default_factory=lambda: ProviderError("The model service closed the connection."))
    usage: Usage | None = None
    pause_s: float = 0.0  # between chunks (only to keep a stream running, never timed by a test)
    barrier: threading.Barrier | None = None  # both sides must reach it: proves they run at the same time


class ScriptedProvider:
    """The Provider contract, answering from scripts; records how far each stream got."""

    key = "scripted"

    def __init__(self) -> None:
        self.scripts: dict[str, Script] = {}
        self.yielded: dict[str, int] = {}
        self.closed: dict[str, threading.Event] = {}

    def add(self, model_id: str, *chunks: str, **options: object) -> ModelSpec:
        """Script ``model_id`` and return its catalogue entry (display name = the id upper-cased)."""
        self.scripts[model_id] = Script(chunks=chunks, **options)  # type: ignore[arg-type]
        self.yielded[model_id] = 0
        self.closed[model_id] = threading.Event()
        return spec(model_id)

    def unavailable_reason(self, spec: ModelSpec) -> str | None:
        return None if spec.model_id in self.scripts else "not scripted"

    def stream(self, spec: ModelSpec, request: GenerationRequest, *, timeout_s: float | None = None,
               cancel: threading.Event | None = None) -> Iterator[Delta]:
        script = self.scripts[spec.model_id]
        try:
            if script.barrier is not None:
                script.barrier.wait(timeout=GATE_TIMEOUT_S)
            if script.gate is not None and not script.gate.wait(timeout=GATE_TIMEOUT_S):
                raise ProviderError("the test never opened this model's gate")
            for i, chunk in enumerate(script.chunks):
                if script.fail_at == i:
                    raise script.error
                yield Delta(text=chunk)
                self.yielded[spec.model_id] += 1
                if script.pause_s:
                    threading.Event().wait(script.pause_s)
            if script.usage is not None:
                yield Delta(usage=script.usage)
        finally:
            self.closed[spec.model_id].set()


def spec(model_id: str, **options: object) -> ModelSpec:
    return ModelSpec(name=model_id.upper(), provider=ScriptedProvider.key, model_id=model_id, **options)  # type: ignore[arg-type]


def references() -> tuple[Reference, ...]:
    paper = Paper(paper_id="p1", title="Attention Is All You Need", authors=("Ashish Vaswani",), year=2017,
                  discipline="Engineering")
    passage = Passage(passage_id="p1#0", paper=paper, text="The Transformer relies on attention.", score=3.0)
    return (Reference(number=1, paper=paper, passages=(passage,)),)


class FakeClock:
    """A clock that moves only when the test says so."""

    def __init__(self, now: float = 1_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class FixedRetriever:
    """Retrieval that always finds the same reference list (or nothing, or fails)."""

    def __init__(self) -> None:
        self.references = references()
        self.error: SciArenaError | None = None

    def retrieve(self, question: str) -> Retrieval:
        if self.error is not None:
            raise self.error
        return Retrieval(question=question, references=self.references, backend="test")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every browser test is slow too, so `pytest -m "not slow"` never starts Chromium."""
    for item in items:
        if item.get_closest_marker("browser") is not None:
            item.add_marker(pytest.mark.slow)


def _finished_battle(battle_id: str = "b1") -> Battle:
    """A battle with two answers and two references, ready to be recorded as a vote."""
    papers = [Paper(paper_id=f"p{i}", title=f"Paper {i}", authors=("Ada Lovelace", "Alan Turing", "Grace Hopper"),
                    year=2000 + i, venue="Nature", doi=f"10.1/{i}") for i in (1, 2)]
    refs = tuple(Reference(number=i + 1, paper=p, passages=(Passage(f"{p.paper_id}#0", p, f"text {i}", 0, 1.0),))
                 for i, p in enumerate(papers))
    retrieval = Retrieval(question="Why?", references=refs, backend="local:demo", queries=("why",),
                          filters={"year": "2000-2010"})
    a, b = ModelSpec("Alpha", "offline", "a", offline=True), ModelSpec("Beta", "openai", "b")
    return Battle(
        battle_id=battle_id, question="Why?", retrieval=retrieval, model_a=a, model_b=b, created_at=0.0,
        side_a=SideResult(a, Answer("Because [1].", "Because [1].", (1,)), first_token_s=0.1, total_s=0.5,
                          cost_usd=0.0),
        side_b=SideResult(b, Answer("Since [2][1].", "Since [2, 1].", (2, 1), redacted=True),
                          usage=Usage(100, 20), cost_usd=0.001),
        subject="Engineering", question_type="Conceptual Explanation",
    )


@pytest.fixture
def finished_battle() -> Callable[..., Battle]:
    """``finished_battle(battle_id)``: a battle with two answers, ready to be recorded as a vote."""
    return _finished_battle


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    """A FakeOpenAI server on 127.0.0.1, stopped after the test; add scripts with ``add_script``."""
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def scripted() -> Iterator[ScriptedProvider]:
    provider = ScriptedProvider()
    yield provider
    for script in provider.scripts.values():  # release any stream the test left waiting
        if script.gate is not None:
            script.gate.set()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def specs() -> Callable[..., ModelSpec]:
    """``specs("a", price_input_per_m=2.0)``: the catalogue entry of a scripted model."""
    return spec


@pytest.fixture
def refs() -> tuple[Reference, ...]:
    return references()


@pytest.fixture(scope="session")
def discipline_classifier() -> TextDisciplineLabeller:
    """The default TextDisciplineLabeller, already fitted: share it instead of fitting one per Arena."""
    classifier = TextDisciplineLabeller()
    classifier.label("What limits the precision of CRISPR-Cas9 genome editing?")  # fits it
    return classifier


@pytest.fixture(scope="session")  # session-wide, so module-scoped fixtures can build services with it
def wire(discipline_classifier: TextDisciplineLabeller) -> Callable[[Settings], Services]:
    """``wire(settings)``: the services as wiring builds them, but for the offline discipline classifier, which
    is the session's fitted one (a fresh one is the same fit, made again at the first finished battle)."""

    def build(settings: Settings) -> Services:
        services = build_services(settings)
        labeller = replace(services.arena.labeller, offline_discipline=discipline_classifier)
        return replace(services, arena=replace(services.arena, labeller=labeller))

    return build


@pytest.fixture
def make_arena(tmp_path: Path, scripted: ScriptedProvider, clock: FakeClock,
               discipline_classifier: TextDisciplineLabeller) -> Callable[..., Arena]:
    """``make_arena(timeout_s=…, **settings)``: an Arena whose pool is the scripted models (script them
    first), with the test's clock, a vote store under tmp_path and the offline labellers (the rules and
    the session's fitted discipline classifier)."""

    def make(timeout_s: float = 30.0, **settings: object) -> Arena:
        data_dir = tmp_path / "data"
        store = LocalVoteStore(data_dir)
        return Arena(settings=Settings(data_dir=data_dir, seed=0, **settings),  # type: ignore[arg-type]
                     retriever=FixedRetriever(),
                     pool=Pool(active=tuple(spec(model_id) for model_id in scripted.scripts)),
                     runner=BattleRunner({ScriptedProvider.key: scripted}, timeout_s=timeout_s),
                     store=store, counts=BattleCounts(store.files), rng=random.Random(0), clock=clock,
                     labeller=ArenaLabeller(offline_discipline=discipline_classifier))

    return make


@pytest.fixture
def make_services(make_arena: Callable[..., Arena]) -> Callable[..., Services]:
    """``make_services(**settings)``: Services around ``make_arena(...)``, reading votes from its store."""

    def make(**settings: object) -> Services:
        arena = make_arena(**settings)
        votes = VoteSource(arena.store.root)
        return Services(arena=arena, votes=votes, board=open_board(votes, arena.pool),
                        warmer=CacheWarmer(lambda: votes.files(refresh=False)))

    return make

"""The scripted "forgetful" model bench_openscholar.py measures the OpenScholar-style loop with.

It answers every step of the loop through the loopback OpenAI server (tests/fake_openai.py), from
the passages it was given, and remembers where each of its sentences came from (see the benchmark's
docstring for its habits). A script, not a model: it says nothing about a real model's quality.
"""

from __future__ import annotations

import json
import random
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from fake_openai import FakeOpenAI  # noqa: E402

from sciarena.answer.citations import sentence_spans  # noqa: E402
from sciarena.core.types import Retrieval  # noqa: E402
from sciarena.pipelines.prompts import FEEDBACK_SYSTEM_PROMPT, REFINE_SYSTEM_PROMPT  # noqa: E402
from sciarena.pipelines.verify import MIN_STATEMENT_CHARS  # noqa: E402

CORRECT, UNCITED = 0.50, 0.35  # the script's citation habit; the rest (15%) cites another reference's number

SYNONYMS = {"shows": "indicates", "showed": "found", "use": "employ", "used": "employed", "large": "big",
            "important": "key", "many": "numerous", "often": "frequently", "because": "since",
            "method": "approach", "methods": "approaches", "results": "findings", "increase": "rise",
            "reduces": "lowers", "reduce": "lower", "study": "work", "measured": "quantified",
            "however": "yet", "about": "roughly", "major": "principal", "whether": "if"}
DROPPABLE = {"the", "a", "an", "that", "very", "also", "which"}
FILLERS = (
    "Taken together, these observations suggest the question remains an active area with several open problems.",
    "More work will be needed before firm conclusions can be drawn for every setting in which this matters.",
    "Researchers continue to debate how far such conclusions generalise beyond the conditions studied so far.",
    "Any practical recommendation should therefore be weighed carefully against local circumstances and costs.",
)
_QUESTION = re.compile(r"\n\nQuestion: (?P<q>.+?)\n\n", re.DOTALL)
_ENTRY = re.compile(r"^\[(?P<n>\d+)\] Title: .*\nAuthors: .*\nRelevant passages: (?P<text>.*)$", re.MULTILINE)
_TO_REVISE = re.compile(r"\n\nAnswer to revise:\n(?P<a>.*?)\n\nFeedback to address: ", re.DOTALL)


def key(sentence: str) -> str:
    """A statement's identity: its words without citation markers or spacing."""
    return " ".join(re.sub(r"\[\d+\]", " ", sentence).split()).replace(" .", ".").rstrip(".")


@dataclass
class Plan:
    """One question's script: the draft, the feedback, and the truth about every sentence it wrote."""

    question: str
    given: int  # how many references the question was given
    draft: str
    feedback: str
    truth: dict[str, int | None]  # statement key -> number of the reference it came from (None: filler)
    used: set[str] = field(default_factory=set)
    origin: dict[str, str] = field(default_factory=dict)  # statement key -> the passage sentence it paraphrases
    refines: int = 0
    chunks_sent: int = 0
    draft_requests: list[str] = field(default_factory=list)  # the bare run's and the pipeline's, to compare


class ForgetfulModel:
    """The ``respond`` callback of the fake server: replies by step (recognised by the system prompt)."""

    def __init__(self, seed: int, k: int, chunk_chars: int, feedback_rate: float) -> None:
        self.seed, self.k, self.chunk_chars, self.feedback_rate = seed, k, chunk_chars, feedback_rate
        self.plans: dict[str, Plan] = {}
        self.behaviour = {"correct": 0, "none": 0, "wrong": 0}

    def plan(self, qid: str, retrieval: Retrieval) -> Plan:
        rng = random.Random(f"{self.seed}:{qid}:draft")
        refs = list(retrieval.references)
        queues = [[(r.number, s) for s in rng.sample(c, len(c))] for r in refs
                  if (c := candidate_sentences(r.context))]
        rng.shuffle(queues)
        chosen = []  # round robin over the references, so the draft draws on several
        while queues and len(chosen) < self.k:
            chosen.append(queues[0].pop(0))
            queues = [q for q in queues[1:] + queues[:1] if q]
        plan = Plan(retrieval.question, len(refs), "", "", {})
        parts = [self._statement(plan, rng, number, sentence, [r.number for r in refs]) for number, sentence in chosen]
        filler = rng.choice(FILLERS)
        plan.truth[key(filler)] = None
        parts.insert(rng.randrange(len(parts) + 1), filler)
        plan.draft = " ".join(parts)  # one paragraph, as the generation prompt asks
        searches = rng.random() < self.feedback_rate
        items = [{"issue": "The answer could draw on more papers.", "search": rng.choice(refs).paper.title}]
        plan.feedback = json.dumps({"feedback": items if searches else []})
        self.plans[retrieval.question.strip()] = plan
        return plan

    def _statement(self, plan: Plan, rng: random.Random, number: int, sentence: str, numbers: list[int]) -> str:
        body = paraphrase(sentence, rng)
        plan.truth[key(body)] = number
        plan.origin[key(body)] = sentence
        plan.used.add(sentence)
        roll, others = rng.random(), [n for n in numbers if n != number]
        if roll < CORRECT:
            self.behaviour["correct"] += 1
            return f"{body} [{number}]."
        if roll < CORRECT + UNCITED or not others:
            self.behaviour["none"] += 1
            return f"{body}."
        self.behaviour["wrong"] += 1
        return f"{body} [{rng.choice(others)}]."

    def __call__(self, body: dict) -> list[str]:
        system, user = body["messages"][0]["content"], body["messages"][-1]["content"]
        plan = self.plans[_QUESTION.search(user).group("q").strip()]  # type: ignore[union-attr]
        if system == FEEDBACK_SYSTEM_PROMPT:
            text = plan.feedback
        elif system == REFINE_SYSTEM_PROMPT:
            text = self._refine(plan, user)
        else:
            text = plan.draft
            plan.draft_requests.append(json.dumps(body["messages"]))
        plan.chunks_sent += -(-len(text) // self.chunk_chars)
        return [text[i:i + self.chunk_chars] for i in range(0, len(text), self.chunk_chars)]

    def _refine(self, plan: Plan, user: str) -> str:
        plan.refines += 1
        rng = random.Random(f"{self.seed}:{plan.question}:refine{plan.refines}")
        answer = _TO_REVISE.search(user).group("a").strip()  # type: ignore[union-attr]
        entries = {int(m["n"]): m["text"] for m in _ENTRY.finditer(user)}
        new = [n for n in entries if n > plan.given]
        for numbers in (new, [n for n in entries if n <= plan.given]):
            pool = [(n, s) for n in numbers for s in candidate_sentences(entries[n]) if s not in plan.used]
            if pool:
                number, sentence = rng.choice(pool)
                return f"{answer} {self._statement(plan, rng, number, sentence, sorted(entries))}"
        return answer


class CountingServer(FakeOpenAI):
    """The loopback server, counting (instead of printing a trace for) connections the client drops
    between requests: the client closing a kept-alive connection, not a failed call (those fail the run)."""

    def __init__(self) -> None:
        super().__init__()
        self.resets = 0

    def handler_class(self):
        server, base = self, super().handler_class()

        class Handler(base):  # type: ignore[misc, valid-type]
            def handle(self) -> None:
                try:
                    super().handle()
                except ConnectionResetError:
                    server.resets += 1

        return Handler


def candidate_sentences(context: str) -> list[str]:
    """A passage's sentences that make a claim and that the answer's sentence splitter keeps whole."""
    out = []
    for start, end in sentence_spans(context.replace(" … ", "\n")):
        s = context.replace(" … ", "\n")[start:end].strip().rstrip(".!?")
        if len(s) >= MIN_STATEMENT_CHARS + 10 and "[" not in s and "\n" not in s and s[:1].isupper():
            if len(sentence_spans(s + ". Next.")) == 2:
                out.append(s)
    return out


def paraphrase(sentence: str, rng: random.Random) -> str:
    """Synonyms from the table, up to two function words dropped, one adjacent pair of inner words swapped."""
    words = [SYNONYMS.get(w, w) for w in sentence.split()]
    droppable = [i for i, w in enumerate(words) if i and w.lower() in DROPPABLE]
    for i in sorted(rng.sample(droppable, min(2, len(droppable))), reverse=True):
        del words[i]
    if len(words) > 4:
        i = rng.randrange(1, len(words) - 2)
        words[i], words[i + 1] = words[i + 1], words[i]
    return " ".join(words)

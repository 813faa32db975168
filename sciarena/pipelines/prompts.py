"""The OpenScholar-style loop's prompts and the strict reader of its feedback (pure functions).

Structure after the OpenScholar paper (§2.2), written in our own words: the draft is the arena's
ordinary generation prompt (so the pipeline's first answer is exactly what its base model would
answer alone); the feedback prompt asks for at most three improvement items as one JSON object,
each optionally with a search query for missing information; the refinement prompt gives the
answer, one item and the (possibly extended) reference list and asks for the revised answer.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Sequence

from sciarena.answer.prompt import Message, format_references
from sciarena.core.errors import MalformedOutput
from sciarena.core.types import Exchange, Reference

MAX_FEEDBACK_ITEMS = 3
MAX_ISSUE_CHARS = 600
MAX_SEARCH_CHARS = 300

FEEDBACK_SYSTEM_PROMPT = """\
You review a draft answer to a researcher's question. The draft was written from the numbered reference list \
shown, and cites it as [n].

Point out at most three concrete ways to make the draft better, most important first: a part of the question it \
leaves unanswered, a claim that needs evidence or a citation, a finding from the references it overlooks, or an \
error. When fixing an item needs papers the list does not contain, give a short search query for them; otherwise \
leave the query empty. If the draft needs no change, return an empty list.

Reply with one JSON object and nothing else, in this form:
{"feedback": [{"issue": "<what to improve, in one or two sentences>", "search": "<search query, or empty>"}]}"""

REFINE_SYSTEM_PROMPT = """\
You revise an answer to a researcher's question so that it addresses one piece of feedback, using the numbered \
reference list shown (it may contain papers the earlier answer did not have).

- Keep what the answer already gets right, and its citations; change what the feedback asks for and little else.
- Back every claim drawn from the papers with the paper's number in square brackets at the end of the sentence, \
such as [4]. Cite only numbers from the list, and only for what their passages say.
- Write plain prose in paragraphs, without Markdown.

Reply with the revised answer only."""


@dataclass(frozen=True)
class FeedbackItem:
    issue: str
    search: str = ""  # a query for missing information; "" when the item needs no new papers


@dataclass(frozen=True)
class Feedback:
    items: tuple[FeedbackItem, ...]
    returned: int  # how many items the model gave (only the first MAX_FEEDBACK_ITEMS are used)


def feedback_messages(question: str, references: Sequence[Reference], answer: str,
                      history: Sequence[Exchange] = ()) -> tuple[Message, ...]:
    user = (f"Reference list:\n\n{format_references(references)}\n\n{conversation(history)}"
            f"Question: {question.strip()}\n\n"
            f"Draft answer:\n{answer.strip()}\n\nReturn the JSON object with your feedback.")
    return ({"role": "system", "content": FEEDBACK_SYSTEM_PROMPT}, {"role": "user", "content": user})


def refine_messages(question: str, references: Sequence[Reference], answer: str,
                    item: FeedbackItem, history: Sequence[Exchange] = ()) -> tuple[Message, ...]:
    user = (f"Reference list:\n\n{format_references(references)}\n\n{conversation(history)}"
            f"Question: {question.strip()}\n\n"
            f"Answer to revise:\n{answer.strip()}\n\nFeedback to address: {item.issue}\n\n"
            "Write the revised answer.")
    return ({"role": "system", "content": REFINE_SYSTEM_PROMPT}, {"role": "user", "content": user})


def conversation(history: Sequence[Exchange]) -> str:
    """A follow-up's earlier turns, for the feedback and refinement steps (empty on the first turn): the
    question is read in their light, as the draft was (its messages replay the conversation)."""
    if not history:
        return ""
    turns = "\n\n".join(f"Earlier question: {e.question.strip()}\nEarlier answer: {e.answer.strip()}"
                         for e in history)
    return f"Earlier in this conversation:\n\n{turns}\n\nThe question below follows up on it.\n\n"


_FENCE = re.compile(r"^```(?:json)?[ \t]*\n(?P<body>.*)\n```$", re.DOTALL)


def parse_feedback(text: str) -> Feedback:
    """The feedback a model returned, read strictly: one JSON object (a ```json fence around it is
    allowed) with a "feedback" list of {"issue", "search"} objects. Anything else raises
    MalformedOutput, which ends the loop with the answer so far."""
    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group("body").strip()
    try:
        doc: Any = json.loads(body)
    except json.JSONDecodeError:
        raise MalformedOutput("The feedback step did not return a JSON object.") from None
    if not isinstance(doc, dict) or set(doc) != {"feedback"} or not isinstance(doc["feedback"], list):
        raise MalformedOutput('The feedback step must return {"feedback": [...]} and nothing else.')
    items: list[FeedbackItem] = []
    for raw in doc["feedback"]:
        if not isinstance(raw, dict) or not set(raw) <= {"issue", "search"}:
            raise MalformedOutput('Each feedback item must be an object with "issue" and "search".')
        issue, search = raw.get("issue"), raw.get("search", "")
        if not isinstance(issue, str) or not issue.strip() or len(issue) > MAX_ISSUE_CHARS:
            raise MalformedOutput("A feedback item's issue must be a non-empty sentence or two.")
        if search is None:
            search = ""
        if not isinstance(search, str) or len(search) > MAX_SEARCH_CHARS:
            raise MalformedOutput("A feedback item's search must be a short query or empty.")
        items.append(FeedbackItem(" ".join(issue.split()), " ".join(search.split())))
    return Feedback(items=tuple(items[:MAX_FEEDBACK_ITEMS]), returned=len(items))


def feedback_json(items: Sequence[FeedbackItem]) -> str:
    """Items in the form ``parse_feedback`` reads (what the offline baselines reply)."""
    return json.dumps({"feedback": [{"issue": i.issue, "search": i.search} for i in items]})

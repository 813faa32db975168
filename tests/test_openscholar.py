"""The OpenScholar-style loop step by step, against the loopback OpenAI server.

Each scripted model answers by step: the server reads the system prompt of the request (the draft
gets the arena's generation prompt, the feedback and refinement steps their own) and replies with
what the test scripted for that step, so every step's request and reply are real HTTP traffic.
"""

from __future__ import annotations

import json
import threading
from dataclasses import replace

import pytest
from conftest import FakeClock, FixedRetriever

from sciarena.answer.prompt import build_messages
from sciarena.arena.runner import ANSWERING, BattleRunner
from sciarena.core.errors import ProviderError
from sciarena.core.types import Battle, GenerationRequest, ModelSpec, Paper, Passage, Reference, Retrieval
from sciarena.pipelines.prompts import FEEDBACK_SYSTEM_PROMPT, REFINE_SYSTEM_PROMPT, parse_feedback
from sciarena.pipelines.provider import PipelineProvider
from sciarena.providers.offline import OfflineProvider
from sciarena.providers.openai_compat import OpenAICompatibleProvider

QUESTION = "How does the Transformer replace recurrence in sequence models?"


def paper_ref(number: int, key: str, title: str, text: str) -> Reference:
    paper = Paper(paper_id=key, title=title, authors=("A. Author",), year=2020)
    return Reference(number=number, paper=paper, passages=(Passage(f"{key}#0", paper, text, 0, 2.0),))


GIVEN = (
    paper_ref(1, "vaswani", "Attention Is All You Need",
              "The Transformer dispenses with recurrence and relies entirely on self-attention to relate positions."),
    paper_ref(2, "bahdanau", "Neural Machine Translation by Jointly Learning to Align",
              "An attention mechanism lets the decoder search the source sentence for relevant words."),
)
FOUND = (  # what the arena's retriever finds for the feedback's query: one known paper, two new ones
    paper_ref(1, "bahdanau", "Neural Machine Translation by Jointly Learning to Align", "Same paper again."),
    paper_ref(2, "shaw", "Self-Attention with Relative Position Representations",
              "Relative position representations let self-attention encode the distance between sequence elements."),
    paper_ref(3, "dai", "Transformer-XL", "Segment-level recurrence gives the Transformer a longer context."),
)


class StepScript:
    """Replies by step; records what each step was sent."""

    def __init__(self, draft: str, feedback: str = '{"feedback": []}', refine: tuple[str, ...] = ()) -> None:
        self.replies = {"draft": [draft], "feedback": [feedback], "refine": list(refine)}
        self.seen: dict[str, list[str]] = {"draft": [], "feedback": [], "refine": []}
        self.hooks: dict[str, list] = {"draft": [], "feedback": [], "refine": []}  # run when a step is asked

    def __call__(self, body: dict) -> list[str]:
        system, user = body["messages"][0]["content"], body["messages"][-1]["content"]
        step = {FEEDBACK_SYSTEM_PROMPT: "feedback", REFINE_SYSTEM_PROMPT: "refine"}.get(system, "draft")
        self.seen[step].append(user)
        for hook in self.hooks[step]:
            hook()
        replies = self.replies[step]
        text = replies.pop(0) if len(replies) > 1 else (replies[0] if replies else "")
        return [text[i:i + 12] for i in range(0, len(text), 12)]


def base_spec(model_id: str = "base") -> ModelSpec:
    return ModelSpec(name="Loop Base", provider="loop", model_id=model_id, price_input_per_m=1.0,
                     price_output_per_m=4.0)


def pipeline_spec(base: ModelSpec, **params: float) -> ModelSpec:
    return replace(base, name="OpenScholar-style (Loop Base)", provider="pipeline", pipeline="openscholar",
                   base=base, params=params)


def request() -> GenerationRequest:
    return GenerationRequest(QUESTION, GIVEN, build_messages(QUESTION, GIVEN))


def retriever(found=FOUND) -> FixedRetriever:
    fixed = FixedRetriever()
    fixed.references = found
    return fixed


def pipeline(server, found=FOUND, clock=None, timeout_s: float = 20.0) -> PipelineProvider:
    base = OpenAICompatibleProvider(name="loop", base_url=server.base_url, api_key="k", key_env=None, timeout=10)
    options = {"clock": clock} if clock is not None else {}
    return PipelineProvider({"loop": base}, retriever(found), battle_timeout_s=timeout_s, **options)


def run_side(provider: PipelineProvider, spec: ModelSpec, timeout_s: float = 20.0):
    """A battle of the pipeline (side A) against an offline baseline (side B): every snapshot."""
    other = ModelSpec("Baseline", "offline", "extractive-mmr", offline=True)
    runner = BattleRunner({"pipeline": provider, "offline": OfflineProvider()}, timeout_s=timeout_s)
    retrieval = Retrieval(QUESTION, GIVEN, backend="test")
    battle = Battle("b1", QUESTION, retrieval, spec, other, created_at=0.0)
    return list(runner.run(battle, request()))


FEEDBACK = json.dumps({"feedback": [
    {"issue": "It does not say how the Transformer knows word order.", "search": "relative position self-attention"},
]})
DRAFT = "The Transformer drops recurrence and uses self-attention to relate all positions [1]."
REVISED = ("The Transformer drops recurrence and uses self-attention to relate all positions [1]. "
           "Relative position representations let self-attention encode the distance between elements [3].")


def test_extra_retrieval_numbers_new_papers_after_the_given_ones_and_the_answer_cites_them(fake_openai):
    script = StepScript(DRAFT, FEEDBACK, (REVISED,))
    fake_openai.add_script("base", respond=script, usage="always")
    spec = pipeline_spec(base_spec())
    final = run_side(pipeline(fake_openai), spec)[-1].battle.side_a
    assert final.ok, final.error
    # The known paper (bahdanau) is not added twice; the two new ones get [3] and [4].
    assert [(r.number, r.paper.paper_id) for r in final.extra_references] == [(3, "shaw"), (4, "dai")]
    assert final.answer.cited == (1, 3)
    # The refinement was shown the extended list, and the feedback item.
    assert "[4] Title: Transformer-XL" in script.seen["refine"][0]
    assert "knows word order" in script.seen["refine"][0]
    report = final.report
    assert report.steps == ("draft", "feedback", "retrieve", "refine", "verify")
    assert (report.calls, report.feedback_items, report.revisions_kept, report.extra_passages) == (3, 1, 1, 2)
    assert report.extra_context_ids == ("shaw#0", "dai#0") and report.stopped == ""
    # Tokens and cost are the sum of the three calls.
    requests = fake_openai.requests("base")
    assert len(requests) == 3
    assert final.usage.input_tokens > 0 and final.usage.output_tokens > 0
    assert final.cost_usd == pytest.approx((final.usage.input_tokens * 1.0 + final.usage.output_tokens * 4.0) / 1e6)


def test_the_reference_list_under_the_answer_shows_the_added_papers_as_found_by_the_answer(fake_openai):
    from sciarena.ui import render

    fake_openai.add_script("base", respond=StepScript(DRAFT, FEEDBACK, (REVISED,)))
    battle = run_side(pipeline(fake_openai), pipeline_spec(base_spec()))[-1].battle
    listed = render.cited_markdown(battle.side_a, battle.retrieval)
    assert "Transformer-XL" not in listed  # added but not cited: not listed
    assert "[3]</b> Self-Attention with Relative Position" in listed
    assert "Passage this answer found with its own search:" in listed
    assert "Passage given to both models:" in listed  # [1] was given to both
    # The page's list: the same entries under the same numbers, marked as its own only after the vote
    # (before it, the mark would say which side is the pipeline).
    before, after = render.conversation_cited(battle, "a"), render.conversation_cited(battle, "a", revealed=True)
    assert "[3]</b> Self-Attention with Relative Position" in before and "Transformer-XL" not in before
    assert "own search" not in before and "ref-own" not in before
    assert "Passage this answer found with its own search:" in after and 'ref-own ref-3"' in after
    assert "both models" not in before and before.count("Passage this answer was given:") == 2  # [1] and [3]
    assert "Passage given to both models:" in after  # [1], now that the other one is named as its own


@pytest.mark.parametrize("garbage", [
    "Sure! Here is my feedback: add more detail.",
    '{"feedback": "add detail"}',
    '{"feedback": [{"issue": ""}]}',
    '{"feedback": [], "extra": 1}',
    "",
], ids=["prose", "not-a-list", "empty-issue", "extra-key", "empty"])
def test_garbage_feedback_ends_the_loop_cleanly_with_the_draft(fake_openai, garbage):
    script = StepScript(DRAFT, garbage, ("never asked",))
    fake_openai.add_script("base", respond=script)
    final = run_side(pipeline(fake_openai), pipeline_spec(base_spec()))[-1].battle.side_a
    assert final.ok and final.answer.text == DRAFT
    assert script.seen["refine"] == []
    assert final.report.stopped in ("feedback unparseable", "feedback returned nothing")
    assert final.report.calls == 2


def test_the_strict_reader_keeps_three_items_and_says_how_many_came():
    items = [{"issue": f"Item {k}.", "search": ""} for k in range(5)]
    feedback = parse_feedback("```json\n" + json.dumps({"feedback": items}) + "\n```")
    assert [i.issue for i in feedback.items] == ["Item 0.", "Item 1.", "Item 2."] and feedback.returned == 5


def test_the_deadline_returns_the_draft(fake_openai):
    clock = FakeClock()
    script = StepScript(DRAFT, FEEDBACK, (REVISED,))
    script.hooks["draft"].append(lambda: clock.advance(1000))  # the draft took longer than the whole budget
    fake_openai.add_script("base", respond=script)
    final = run_side(pipeline(fake_openai, clock=clock), pipeline_spec(base_spec(), deadline_s=30))[-1].battle.side_a
    assert final.ok and final.answer.text == DRAFT
    assert final.report.stopped == "deadline" and final.report.calls == 1
    assert script.seen["feedback"] == []


def test_a_step_that_outlives_the_deadline_is_cut_and_the_draft_is_kept(fake_openai):
    script = StepScript(DRAFT, FEEDBACK, (REVISED,))
    # The feedback step hangs: the loop's deadline cuts it, well before the battle's own timeout.
    script.hooks["feedback"].append(lambda: threading.Event().wait(3.0))
    fake_openai.add_script("base", respond=script)
    final = run_side(pipeline(fake_openai), pipeline_spec(base_spec(), deadline_s=1.0))[-1].battle.side_a
    assert final.ok and final.answer.text == DRAFT
    assert final.report.stopped == "feedback failed (ProviderTimeout)"
    assert script.seen["refine"] == []


def test_a_call_budget_of_two_stops_before_any_revision(fake_openai):
    script = StepScript(DRAFT, FEEDBACK, (REVISED,))
    fake_openai.add_script("base", respond=script)
    final = run_side(pipeline(fake_openai), pipeline_spec(base_spec(), max_calls=2))[-1].battle.side_a
    assert final.answer.text == DRAFT and final.report.stopped == "call budget"
    assert len(fake_openai.requests("base")) == 2


def test_an_over_edited_revision_is_refused_and_the_previous_answer_kept(fake_openai):
    script = StepScript(DRAFT, FEEDBACK, ("Attention.",))
    fake_openai.add_script("base", respond=script)
    final = run_side(pipeline(fake_openai), pipeline_spec(base_spec()))[-1].battle.side_a
    assert final.answer.text == DRAFT
    assert (final.report.revisions_kept, final.report.revisions_rejected) == (0, 1)


def test_a_failing_base_model_fails_the_side_like_any_contestant(fake_openai, tmp_path):
    fake_openai.add_script("base", fail_forever=500)
    snapshots = run_side(pipeline(fake_openai), pipeline_spec(base_spec()))
    final = snapshots[-1].battle
    assert final.side_a.error is not None and not final.side_a.ok
    assert isinstance(final.side_a.error, ProviderError)
    assert not final.votable


def test_verification_cites_a_statement_its_draft_left_uncited(fake_openai):
    forgetful = ("The Transformer dispenses with recurrence and relies on self-attention to relate positions. "
                 "An attention mechanism lets the decoder search the source sentence for relevant words [1].")
    fake_openai.add_script("base", respond=StepScript(forgetful))
    final = run_side(pipeline(fake_openai), pipeline_spec(base_spec()))[-1].battle.side_a
    # The first sentence is the passage of [1]; the second cites [1] but its passage is [2]'s.
    assert final.answer.text.startswith("The Transformer dispenses with recurrence and relies on self-attention "
                                        "to relate positions [1].")
    assert "relevant words [1][2]." in final.answer.text
    assert (final.report.statements_checked, final.report.citations_added, final.report.unsupported) == (2, 2, 0)


def test_a_running_pipeline_shows_the_same_progress_line_as_a_plain_model_and_its_steps_after(fake_openai):
    fake_openai.add_script("base", respond=StepScript(DRAFT, FEEDBACK, (REVISED,)), chunk_delay_s=0.02)
    snapshots = run_side(pipeline(fake_openai), pipeline_spec(base_spec()))
    running = [s for s in snapshots if s.battle.side_a is None]
    assert len(running) > 5  # the loop streamed for a while (draft, feedback, search, revision)
    # The steps ran ("Searching for more papers: ..." among them) but no snapshot passes one on.
    assert {s.status.get("a") for s in running} == {ANSWERING}
    assert all(s.status.get("b") in (None, ANSWERING) for s in running)
    assert snapshots[-1].status == {}  # no progress line once both sides have ended
    assert snapshots[-1].battle.side_a.report.steps == ("draft", "feedback", "retrieve", "refine", "verify")


def test_the_vote_record_carries_the_added_references_and_the_steps(fake_openai):
    from sciarena.core.types import Vote
    from sciarena.votes.schema import vote_record

    fake_openai.add_script("base", respond=StepScript(DRAFT, FEEDBACK, (REVISED,)))
    battle = run_side(pipeline(fake_openai), pipeline_spec(base_spec()))[-1].battle
    record = vote_record(Vote(battle=battle, choice="A", voter_id="anon-x", timestamp="2026-12-01T00:00:00Z"))
    cited = {c["number"]: c for c in record["citations_a"]}
    assert set(cited) == {1, 3} and cited[3]["id"] == "shaw" and "Relative position" in cited[3]["content"]
    assert json.loads(record["pipeline_a"])["extra_context_ids"] == ["shaw#0", "dai#0"]
    assert record["pipeline_b"] is None  # the baseline is a single call
    assert record["context_ids"] == ["vaswani#0", "bahdanau#0"]  # what both sides were given


def test_the_page_shows_the_step_line_escaped_and_the_reveal_sums_the_steps(fake_openai):
    from sciarena.ui import render

    line = render.answer_markdown("Draft so far [1].", status="A <b>line</b>")
    assert line.startswith('<p class="step-status">A &lt;b&gt;line&lt;/b&gt;…</p>')
    assert render.answer_markdown("", status=ANSWERING).count("step-status") == 1
    fake_openai.add_script("base", respond=StepScript(DRAFT, FEEDBACK, (REVISED,)))
    battle = run_side(pipeline(fake_openai), pipeline_spec(base_spec()))[-1].battle
    reveal = render.reveal_markdown(battle, "A")
    assert "OpenScholar-style (Loop Base) — a pipeline around Loop Base" in reveal
    assert "3 calls to its base; 1 revision kept; 2 extra passages" in reveal
    assert "steps: draft, feedback, retrieve, refine, verify" in reveal  # the steps it hid while running
    assert "Baseline — an offline baseline algorithm" in reveal


def test_the_other_side_finishes_while_the_pipeline_is_still_working(fake_openai):
    script = StepScript(DRAFT, FEEDBACK, (REVISED,))
    released = threading.Event()
    script.hooks["refine"].append(lambda: released.wait(10))  # the revision waits until B is seen done
    fake_openai.add_script("base", respond=script)
    other = ModelSpec("Baseline", "offline", "extractive-mmr", offline=True)
    runner = BattleRunner({"pipeline": pipeline(fake_openai), "offline": OfflineProvider()}, timeout_s=20)
    battle = Battle("b2", QUESTION, Retrieval(QUESTION, GIVEN, backend="test"), pipeline_spec(base_spec()), other,
                    created_at=0.0)
    seen_b_done_while_a_runs = False
    for snapshot in runner.run(battle, request()):
        if snapshot.battle.side_b is not None and snapshot.battle.side_a is None:
            seen_b_done_while_a_runs = True
            released.set()
    assert seen_b_done_while_a_runs and snapshot.battle.side_a.ok


def test_an_abandoned_battle_stops_the_loop_before_its_next_call(fake_openai):
    script = StepScript(DRAFT, FEEDBACK, (REVISED,))
    script.hooks["feedback"].append(lambda: threading.Event().wait(1.0))
    fake_openai.add_script("base", respond=script)
    runner = BattleRunner({"pipeline": pipeline(fake_openai), "offline": OfflineProvider()}, timeout_s=20)
    other = ModelSpec("Baseline", "offline", "extractive-mmr", offline=True)
    battle = Battle("b3", QUESTION, Retrieval(QUESTION, GIVEN, backend="test"), pipeline_spec(base_spec()), other,
                    created_at=0.0)
    stream = runner.run(battle, request())
    for _ in stream:
        if len(fake_openai.requests("base")) == 2:  # the feedback step has been asked
            break
    stream.close()  # what New battle does: the runner's stop flag reaches the pipeline as ``cancel``
    # Longer than the feedback hook: a loop still running would have asked for its revision by now.
    threading.Event().wait(2.0)
    assert script.seen["refine"] == [] and len(fake_openai.requests("base")) == 2


def test_no_feedback_items_allowed_is_the_draft_then_the_check(fake_openai):
    forgetful = "The Transformer dispenses with recurrence and relies on self-attention to relate positions."
    script = StepScript(forgetful, FEEDBACK, (REVISED,))
    fake_openai.add_script("base", respond=script)
    final = run_side(pipeline(fake_openai), pipeline_spec(base_spec(), max_feedback=0))[-1].battle.side_a
    assert final.report.steps == ("draft", "verify") and final.report.calls == 1
    assert script.seen["feedback"] == [] and final.answer.cited == (1,)  # the check cited the draft's claim


def test_extra_retrieval_goes_through_semantic_scholar_with_the_feedback_query(fake_openai):
    from fake_semantic_scholar import FakeSemanticScholar

    from sciarena.retrieval.pipeline import SemanticScholarRetriever
    from sciarena.retrieval.semantic_scholar import SemanticScholarClient

    question = "Do dense retrievers beat sparse retrieval for open-domain question answering?"
    query = "drought soil microbial respiration grassland"
    draft = "Dense retrievers beat sparse retrieval on open-domain question answering benchmarks [1]."
    revised = draft + " Drought reduced microbial respiration in grassland soils by a third [2]."
    feedback = json.dumps({"feedback": [{"issue": "Add the ecology angle.", "search": query}]})
    fake_openai.add_script("base", respond=StepScript(draft, feedback, (revised,)))
    with FakeSemanticScholar() as s2:
        retriever = SemanticScholarRetriever(SemanticScholarClient(s2.base_url, max_attempts=2, sleep=lambda s: None))
        given = retriever.retrieve(question)
        base = OpenAICompatibleProvider(name="loop", base_url=fake_openai.base_url, api_key="k", key_env=None,
                                        timeout=10)
        provider = PipelineProvider({"loop": base}, retriever)
        request = GenerationRequest(question, given.references, build_messages(question, given.references))
        deltas = list(provider.stream(pipeline_spec(base_spec()), request))
        sent = [call.params.get("query") for call in s2.calls("snippet/search")]
    assert sent[-1] == query  # the feedback's own query, sent by the arena's retriever
    added = [r for d in deltas for r in d.references]
    assert [r.paper.title for r in added] == ["Soil Microbiome Responses to Drought in Grasslands"]
    assert added[0].number == len(given.references) + 1


def test_a_deadline_beyond_the_battle_timeout_is_kept_inside_it(fake_openai):
    clock = FakeClock()
    script = StepScript(DRAFT, FEEDBACK, (REVISED,))
    script.hooks["draft"].append(lambda: clock.advance(16))  # past ¾ of a 20 s battle, short of its 500 s
    fake_openai.add_script("base", respond=script)
    spec = pipeline_spec(base_spec(), deadline_s=500)
    final = run_side(pipeline(fake_openai, clock=clock, timeout_s=20), spec)[-1].battle.side_a
    assert final.report.stopped == "deadline" and final.answer.text == DRAFT

"""The OpenScholar-style pipeline over an offline baseline: the demo's loop, with no model and no network."""

from __future__ import annotations

import re
from dataclasses import replace
from types import SimpleNamespace

import gradio as gr
from page import page_states

from sciarena.arena.runner import BattleRunner
from sciarena.core.settings import Settings
from sciarena.core.types import Paper, Passage, Reference, Revision
from sciarena.pipelines.offline_revision import offline_feedback, offline_refine
from sciarena.pipelines.prompts import parse_feedback
from sciarena.pipelines.provider import PipelineProvider
from sciarena.providers.offline import OfflineProvider
from sciarena.ui.app import arena_tab
from sciarena.ui.handlers import ArenaHandlers

QUESTION = "How do transformers use self-attention to replace recurrence in sequence models?"


def ref(number: int, key: str, text: str) -> Reference:
    paper = Paper(paper_id=key, title=key.title(), authors=("A. Author",), year=2020)
    return Reference(number, paper, (Passage(f"{key}#0", paper, text),))


REFS = (
    ref(1, "vaswani", "The Transformer relies on self-attention instead of recurrence to model sequences. "
                      "Multi-head self-attention lets every position attend to every other position."),
    ref(2, "hochreiter", "Recurrent models process sequences one step at a time. LSTM gates keep gradients alive."),
    ref(3, "stray", "A paper a loose search added: self-attention sequences replace everything in models."),
)


def test_the_baseline_feedback_is_the_json_the_pipeline_reads_and_names_what_the_answer_leaves_out():
    answer = "The Transformer relies on self-attention [1]. Recurrent networks process sequences one step at a time."
    feedback = parse_feedback(offline_feedback(QUESTION, REFS, answer))
    issues = [item.issue for item in feedback.items]
    assert issues[0].startswith("The answer does not address part of the question: ")
    assert "replace" in issues[0] and "recurrence" in issues[0]
    assert feedback.items[0].search.startswith(QUESTION)  # the question leads the query
    assert any("carry no citation" in issue for issue in issues)
    complete = ("Transformers use self-attention to replace recurrence in sequence models, as every position "
                "attends to all others [1]. Recurrent networks instead step through sequences [2]. Both are "
                "models of sequences [3].")
    # Every question word, every sentence cited, three papers: only the passage sentences it left out remain.
    left_out = parse_feedback(offline_feedback(QUESTION, REFS, complete)).items
    assert [item.issue for item in left_out] == [
        "The papers hold findings on the question that the answer leaves out; add them."]
    revised = offline_refine(QUESTION, REFS, Revision("refine", complete, feedback=left_out[0].issue))
    assert revised.startswith(complete + "\n\nIn addition, ")
    # An answer that already holds every such sentence gets no feedback at all.
    whole = revised
    while (more := offline_refine(QUESTION, REFS, Revision("refine", whole, feedback=left_out[0].issue))) != whole:
        whole = more
    assert parse_feedback(offline_feedback(QUESTION, REFS, whole)).items == ()


def test_the_baseline_revision_adds_cited_evidence_but_not_from_papers_the_pipeline_added():
    answer = "The Transformer relies on self-attention instead of recurrence to model sequences [1]."
    revision = Revision("refine", answer, feedback="Say more about sequences.", search="sequence recurrence",
                        added=(3,))
    revised = offline_refine(QUESTION, REFS, revision)
    assert revised.startswith(answer + "\n\nIn addition, ")
    added = revised[len(answer):]
    assert "[3]" not in added and ("[1]" in added or "[2]" in added)
    # With the stray paper not marked as added, word overlap alone would bring it in.
    assert "[3]" in offline_refine(QUESTION, REFS, replace(revision, added=()))


def test_the_demo_pool_battles_the_pipeline_offline_and_records_its_steps(tmp_path, wire):
    services = wire(Settings(data_dir=tmp_path / "data", seed=0))
    names = {m.name for m in services.pool.active}
    assert "OpenScholar-style (Extractive-MMR, offline)" in names
    pipeline = services.arena.pool.active[[m.name for m in services.pool.active].index(
        "OpenScholar-style (Extractive-MMR, offline)")]
    arena = replace(services.arena, pool=replace(services.arena.pool, active=(pipeline, pipeline.base)))
    final = list(arena.start_battle(QUESTION))[-1].battle
    side = final.side_a if final.model_a.base is not None else final.side_b
    assert final.votable and side.report is not None
    assert side.report.steps[:2] == ("draft", "feedback") and side.report.steps[-1] == "verify"
    assert side.report.calls >= 2 and side.cost_usd == 0.0
    assert side.report.revisions_kept >= 1  # the demo question leaves words out, so the loop revises


STEP_WORDS = ("draft", "Reviewing", "Searching", "Revising", "Checking every")


def progress_lines(markup: str) -> list[str]:
    return re.findall(r'<p class="step-status">.*?</p>', markup)


def battle_in_page(arena):
    """One battle on QUESTION through the page's handlers: (view, handlers, turn, what the page shows after each
    update, ``page.page_states``)."""
    with gr.Blocks():
        view = arena_tab()
    handlers = ArenaHandlers(arena, view)
    cleared = handlers.clear(0)
    turn = cleared[view.turn]
    return view, handlers, turn, page_states(handlers.battle(QUESTION, cleared[view.session], turn))


def test_before_the_vote_the_pipeline_side_streams_like_the_plain_side_and_its_steps_come_after(tmp_path, wire):
    """Through the page's handlers with the offline pool: every update before the vote gives both sides the
    same progress line (none once a side is done) and no step text anywhere; the reveal lists the steps."""
    services = wire(Settings(data_dir=tmp_path / "data", seed=0))
    [pipeline] = [m for m in services.pool.active if m.base is not None]  # the offline pool's one pipeline
    arena = replace(services.arena, pool=replace(services.arena.pool, active=(pipeline, pipeline.base)))
    view, handlers, turn, updates = battle_in_page(arena)
    session = updates[-1][view.session]
    battle = session.battle
    side = "a" if battle.model_a.base is not None else "b"
    report = (battle.side_a if side == "a" else battle.side_b).report
    assert "retrieve" in report.steps and "refine" in report.steps  # it did search and revise while streaming
    streamed = [u for u in updates if not u[view.session].battle.finished]
    assert streamed, "no update while the answers were written"
    for update in streamed:
        running = update[view.session].battle
        for letter, component in (("a", view.answer_a), ("b", view.answer_b)):
            done = (running.side_a if letter == "a" else running.side_b) is not None
            assert progress_lines(update[component]) == ([] if done else ['<p class="step-status">Answering…</p>'])
        shown = " ".join(str(value) for key, value in update.items() if key is not view.session)
        assert not any(word in shown for word in STEP_WORDS), shown
        assert pipeline.name not in shown and "pipeline" not in shown.lower()
    handlers.settle(session, turn)
    reveal = handlers.vote("A", "", True, session, SimpleNamespace(session_hash="visitor-1"), None)[view.model_names]
    assert pipeline.name in reveal and "steps: " + ", ".join(report.steps) in reveal


OWN_MARKS = ("own search", "ref-own", "found by this answer", "both models")


def test_before_the_vote_the_pipeline_text_only_grows_and_its_own_papers_are_plain_references(tmp_path, wire):
    """Real handlers, the offline pool, the pipeline against its own base: the pipeline drafts and revises (its
    text restarts), yet across every update before the vote its shown text never shrinks or is replaced, and
    neither its panel nor its reference list carries a mark the plain side could not carry (the offline
    revision cites none of the papers it found; test_openscholar.py lists and marks them)."""
    services = wire(Settings(data_dir=tmp_path / "data", seed=0))
    [pipeline] = [m for m in services.pool.active if m.base is not None]
    # Paced like the demo, so the draft would reach the page before its revision (unpaced, one batch holds all).
    offline = OfflineProvider(delay_s=0.002)
    paced = {"offline": offline, "pipeline": PipelineProvider({"offline": offline}, services.arena.retriever)}
    arena = replace(services.arena, pool=replace(services.arena.pool, active=(pipeline, pipeline.base)),
                    runner=BattleRunner(paced, tick_s=0.05))
    view, handlers, turn, updates = battle_in_page(arena)
    session = updates[-1][view.session]
    battle = session.battle
    plain = [re.sub(r'<p class="step-status">.*?</p>', "", u[view.answer_b if battle.model_a.base else
                                                            view.answer_a]).strip() for u in updates]
    assert len(set(plain)) > 2, "the plain side did not stream: the check below would see no draft"
    letter = "a" if battle.model_a.base is not None else "b"
    panel, refs = (view.answer_a, view.refs_a) if letter == "a" else (view.answer_b, view.refs_b)
    side = battle.side_a if letter == "a" else battle.side_b
    assert side.report.revisions_kept >= 1  # it did revise: a wiped-and-rewritten text was possible
    shown = [re.sub(r'<p class="step-status">.*?</p>', "", u[panel]).strip() for u in updates]
    for before, after in zip(shown, shown[1:]):
        assert after.startswith(before), (before, after)
    assert shown[-1]  # the final answer is shown before the vote
    # Held back while it runs, its answer is then replayed in pieces like a stream, not pasted in one jump.
    grown = [text for text in dict.fromkeys(shown) if text]
    assert len(grown) >= 3, grown
    assert not any(u[view.session].battle.finished for u, text in zip(updates, shown) if text != shown[-1])
    for update in updates:
        before_vote = " ".join(str(update[key]) for key in (view.answer_a, view.answer_b, view.refs_a, view.refs_b))
        assert not any(mark in before_vote for mark in OWN_MARKS), before_vote
    # Its first-token time is when its first text was shown: at its end, not at its hidden draft; its total time
    # is when the replay showed its last piece.
    assert side.first_token_s < side.total_s

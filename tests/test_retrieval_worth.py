"""Battles worth a vote start from papers on the question's topic (the bundled corpus, the app's own
retriever): the questions of issue 32 are answered from their own papers or refused; math is searched by the
words it names; a follow-up is searched with the conversation and refused, before any model is called, when
no paper speaks to it."""

from __future__ import annotations

import pytest

from sciarena.arena.rules import ArenaSession
from sciarena.core.errors import FollowUpRefused
from sciarena.core.settings import Settings
from sciarena.retrieval.local import open_local_retriever
from sciarena.retrieval.notation import searchable

# Each question with the corpus papers it is about (its "own papers"): the answer must cite from these.
OWN_PAPERS = {
    "What did the GW170817 neutron star merger reveal about where heavy elements such as gold are made?":
        {"ns-002"},
    "How effective were the mRNA vaccines against symptomatic COVID-19 in their phase 3 trials?":
        {"hc-029", "hc-030"},
    "What did the Event Horizon Telescope observe in M87?": {"ns-015"},
    "Why does scaled dot-product attention divide by the square root of the key dimension, and what happens to "
    "the gradients when it is large?": {"en-008"},
    r"Why does attention divide $QK^T$ by $\sqrt{d_k}$ before the $\mathrm{softmax}$?": {"en-008"},
}


@pytest.fixture(scope="module")
def retriever(tmp_path_factory):
    return open_local_retriever("local", cache_dir=tmp_path_factory.mktemp("index"), reranker="bm25")


@pytest.mark.parametrize("question", list(OWN_PAPERS))
def test_the_named_questions_are_answered_from_their_own_papers_or_refused(retriever, question):
    found = [r.paper.paper_id for r in retriever.retrieve(question).references]
    # The corpus holds each question's own paper, so refusing would be wrong here: the best paper found must
    # be one of its own (not graphene for attention, as before the topic was read).
    assert found and found[0] in OWN_PAPERS[question], found


def test_math_is_searched_by_the_words_it_names():
    assert searchable(r"Why divide by $\sqrt{d_k}$?") == "Why divide by square root key dimension ?"
    assert searchable(r"How is R_t estimated?") == "How is reproduction number estimated?"
    assert "perovskite" in searchable(r"Why do $CH_3NH_3PbI_3$ films degrade?")
    assert searchable(r"What does $\mathrm{softmax}$ do?") == "What does softmax do?"
    plain = "How does attention scale with sequence length?"
    assert searchable(plain) == plain


@pytest.fixture(scope="module")
def arena(wire, tmp_path_factory):
    data = tmp_path_factory.mktemp("data")
    return wire(Settings.from_env({"SCIARENA_DATA_DIR": str(data), "SCIARENA_RERANKER": "bm25",
                                   "SCIARENA_INDEX_CACHE": str(data / "index")})).arena


def _battle(arena, question):
    return ArenaSession(battle=list(arena.start_battle(question))[-1].battle)


def test_a_follow_up_finds_the_paper_it_needs(arena):
    session = _battle(arena, "What are transformer models?")
    battle = list(arena.follow_up(session, "Has it also been used for protein structure prediction?"))[-1].battle
    added = {r.paper.paper_id for r in battle.followups[-1].added}
    assert added & {"ns-047", "ns-048", "ns-049"}, added  # AlphaFold 2, RoseTTAFold, ESMFold


def test_a_follow_up_no_paper_speaks_to_is_refused_before_any_model_is_called(arena):
    session = _battle(arena, "What are transformer models?")
    with pytest.raises(FollowUpRefused, match="no model was asked"):
        arena.follow_up(session, "What is a good recipe for chocolate chip cookies?")

"""What the Arena, Review and About tabs say before anyone acts (issue 23, finding 9)."""

from __future__ import annotations

import logging
from dataclasses import replace

import gradio as gr
import pytest

from sciarena.core.settings import Settings
from sciarena.ui.about import about_markdown
from sciarena.ui.app import arena_tab, review_tab_shown


def test_the_question_box_states_its_limit_before_send():
    with gr.Blocks():
        view = arena_tab(max_chars=4000)
    assert "Up to 4,000 characters" in view.question.info
    with gr.Blocks():
        assert "Up to 250 characters" in arena_tab(max_chars=250).question.info
    assert Settings.from_env({"SCIARENA_MAX_QUESTION_CHARS": "250"}).max_question_chars == 250


def test_the_review_tab_is_hidden_with_a_warning_when_nobody_can_sign_in(tmp_path, caplog):
    reviewers = Settings(data_dir=tmp_path, reviewers=frozenset({"alice"}))
    with caplog.at_level(logging.WARNING, logger="sciarena.ui.app"):
        assert review_tab_shown(reviewers) is False
    assert "OAuth is not configured" in caplog.text and "Review tab is hidden" in caplog.text
    caplog.clear()
    assert review_tab_shown(replace(reviewers, oauth_enabled=True)) is True and not caplog.text
    assert review_tab_shown(Settings(data_dir=tmp_path)) is False and not caplog.text  # no reviewers: no tab


def test_about_says_the_board_is_kept_until_the_votes_change(make_services):
    services = make_services()
    text = about_markdown(services)
    assert "whenever the page loads" not in text
    assert "kept until the votes change" in text


def test_the_sessions_gradio_holds_are_bounded_by_one_setting():
    from sciarena.ui.app import launch_kwargs

    assert launch_kwargs(Settings.from_env({"SCIARENA_MAX_SESSIONS": "50"}))["state_session_capacity"] == 50
    assert launch_kwargs(Settings())["state_session_capacity"] == Settings().max_sessions == 2000
    for bad in ("0", "-3"):
        with pytest.raises(ValueError, match="SCIARENA_MAX_SESSIONS must be a positive integer"):
            Settings.from_env({"SCIARENA_MAX_SESSIONS": bad})


def test_the_example_questions_are_offered_only_where_they_can_be_answered():
    from sciarena.ui.app import examples_fit

    assert examples_fit(Settings()) and examples_fit(Settings(retriever="semantic_scholar"))
    assert examples_fit(Settings(retriever="local:demo"))
    assert not examples_fit(Settings(retriever="local:my_index"))  # demo questions over one's own papers: refused
    for offered in (True, False):
        with gr.Blocks() as demo:
            arena_tab(examples=offered)
        datasets = [b for b in demo.blocks.values() if isinstance(b, gr.Dataset)]
        assert bool(datasets) is offered

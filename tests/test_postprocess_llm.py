"""The LLM answer editor: a catalogue model named by SCIARENA_POSTPROCESS_MODEL, called through its provider."""

from __future__ import annotations

import json

import pytest
from fake_openai import FakeOpenAI, point_catalogue_at

from sciarena.answer.editor import LLMPostprocessor
from sciarena.core.errors import SciArenaError
from sciarena.core.settings import Settings
from sciarena.core.types import Paper, Passage, Reference
from sciarena.providers.registry import open_models
from sciarena.wiring import open_editor

QUESTION = "How does retrieval reduce hallucination?"
PAPER = Paper("p1", "Grounded generation")
REFERENCES = (Reference(1, PAPER, (Passage("p1#0", PAPER, "Retrieval grounds answers in papers."),)),)
ANSWER = "**Retrieval** [1] grounds answers in papers."
EDITED = "Retrieval grounds answers in papers [1]."


@pytest.fixture
def server():
    with FakeOpenAI() as fake:
        yield fake


def editor_for(server: FakeOpenAI, tmp_path, key: str | None = "k") -> LLMPostprocessor | None:
    settings = Settings(models_file=point_catalogue_at(server, tmp_path / "models.json", helpers=("Editor",)),
                        postprocess_model="editor", secrets={"OPENAI_API_KEY": key} if key else {})
    return open_editor(settings, open_models(settings))


def test_the_named_catalogue_model_edits_the_answer(server: FakeOpenAI, tmp_path) -> None:
    server.add_script("Editor", (json.dumps({"references": [1], "response": EDITED}),))
    editor = editor_for(server, tmp_path)
    assert editor is not None and editor.spec.name == "Editor"
    assert editor.rewrite(QUESTION, REFERENCES, ANSWER) == EDITED
    body = server.requests("Editor")[0].body
    assert body["temperature"] == 0 and body["response_format"] == {"type": "json_object"}
    assert body["stream"] is True  # the same streamed call, deadline and retries as a contestant's


@pytest.mark.parametrize("script", [
    {"chunks": (json.dumps({"references": [], "response": "Short."}),)},  # dropped most of the text
    {"chunks": ("not json",)},
    {"fail_forever": 401},
])
def test_a_bad_edit_or_a_failed_call_keeps_the_original(server: FakeOpenAI, tmp_path, script) -> None:
    server.add_script("Editor", **script)
    editor = editor_for(server, tmp_path)
    assert editor is not None and editor.rewrite(QUESTION, REFERENCES, ANSWER) is None


def test_without_its_key_there_is_no_editor_and_an_unknown_name_is_an_error(server: FakeOpenAI, tmp_path) -> None:
    assert editor_for(server, tmp_path, key=None) is None
    settings = Settings(postprocess_model="no-such-editor")
    with pytest.raises(SciArenaError, match="SCIARENA_POSTPROCESS_MODEL: no model named 'no-such-editor'"):
        open_editor(settings, open_models(settings))

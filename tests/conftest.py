"""Shared fixtures: a running loopback OpenAI-compatible server (see fake_openai.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fake_openai import FakeOpenAI


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    """A FakeOpenAI server on 127.0.0.1, stopped after the test; add scripts with ``add_script``."""
    with FakeOpenAI() as server:
        yield server

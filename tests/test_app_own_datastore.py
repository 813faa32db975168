"""A user indexes their own corpus with one command and battles over it."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace

import pytest
from arena_server import running_arena
from gradio_client import Client

from sciarena.core.errors import RetrievalError
from sciarena.core.settings import Settings

pytestmark = pytest.mark.slow  # a server or a subprocess: `pytest -m "not slow"` skips it

PAPERS = [
    {"id": "tardi-1", "title": "Tardigrade survival in open space", "authors": ["Kim Jonsson", "Lars Rebecchi"],
     "year": 2008, "venue": "Current Biology",
     "abstract": "Tardigrades in a dehydrated tun state survived exposure to open space vacuum and cosmic radiation "
                 "in low Earth orbit; some animals also survived solar ultraviolet light and later reproduced."},
    {"id": "tardi-2", "title": "A damage suppressor protein protects tardigrade DNA",
     "authors": ["Takekazu Hashimoto"], "year": 2016, "venue": "Nature Communications",
     "abstract": "A tardigrade-unique protein, Dsup, binds chromatin and reduces X-ray induced DNA damage; human "
                 "cells expressing it tolerated radiation better than controls."},
    {"id": "other-1", "title": "Glacier retreat in the Alps", "authors": ["Ana Gruber"], "year": 2019,
     "venue": "The Cryosphere", "abstract": "Alpine glaciers lost a large share of their volume since 1850."},
]


def test_index_a_corpus_then_battle_over_it(tmp_path, wire):
    corpus = tmp_path / "papers.jsonl"
    corpus.write_text("\n".join(json.dumps(p) for p in PAPERS) + "\n")
    out = subprocess.run([sys.executable, "-m", "sciarena", "index", "--corpus", str(corpus),
                          "--out", str(tmp_path / "index")], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    settings = Settings.from_env({"SCIARENA_RETRIEVER": f"local:{tmp_path / 'index'}"})
    services = wire(replace(settings, data_dir=tmp_path / "data", seed=0))
    with running_arena(tmp_path / "data", services=services) as arena:
        client = Client(arena.url, verbose=False)
        _, _, refs_a, refs_b, status = client.predict("How do tardigrades survive radiation in space?",
                                                      api_name="/battle")
        client.predict("tie", "", True, api_name="/vote")
    assert "Tardigrade" in refs_a + refs_b
    assert "Glacier" not in refs_a + refs_b
    record = list(services.arena.store.records())[-1]
    assert record["retrieval_backend"] == f"local:{tmp_path / 'index'}"
    assert "tardi-1#0" in record["context_ids"] and "tardi-2#0" in record["context_ids"]


def test_a_missing_index_is_a_clear_error(tmp_path, wire):
    settings = Settings.from_env({"SCIARENA_RETRIEVER": f"local:{tmp_path / 'nowhere'}"})
    with pytest.raises(RetrievalError):
        wire(replace(settings, data_dir=tmp_path / "data"))

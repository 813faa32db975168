"""What a long-running app starts in the background (Services.start_background): the offline discipline
classifier is fitted there, so the first finished battle's field proposal does not wait for the fit."""

from __future__ import annotations

import threading
from dataclasses import replace

import pytest

from sciarena.core.settings import Settings
from sciarena.wiring import build_services


@pytest.mark.slow  # the one test that fits the classifier again in its process: the start-up fit is what it checks
def test_the_offline_classifier_is_fitted_in_the_background_at_start(tmp_path):
    services = build_services(replace(Settings.from_env({}), data_dir=tmp_path, seed=0))
    classifier = services.arena.labeller.offline_discipline
    assert not classifier._fitted  # building services does no such work
    services.start_background()
    [warm] = [t for t in threading.enumerate() if t.name == "labeller-warm-up"]
    warm.join(timeout=120)
    assert classifier._fitted  # fitted before any battle asked for a field
    assert services.arena.labeller.suggest_subject("How do tardigrades survive desiccation?") == "Natural Science"

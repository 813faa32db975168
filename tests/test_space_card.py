"""README.md's front matter is generated from space.yaml and must equal it."""

from __future__ import annotations

import re
from pathlib import Path

import yaml
from huggingface_hub import metadata_load

ROOT = Path(__file__).resolve().parent.parent


def test_readme_front_matter_equals_space_yaml():
    assert metadata_load(ROOT / "README.md") == yaml.safe_load((ROOT / "space.yaml").read_text(encoding="utf-8"))


def test_space_sdk_version_is_the_pinned_gradio():
    space = yaml.safe_load((ROOT / "space.yaml").read_text(encoding="utf-8"))
    pinned = re.search(r"^gradio==(\S+)$", (ROOT / "requirements.txt").read_text(), re.M)
    assert pinned and space["sdk_version"] == pinned.group(1)
    assert space["sdk"] == "gradio" and space["app_file"] == "app.py"


def test_readme_quickstart_has_the_two_commands():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("## Quickstart", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    commands = [line.split("#")[0].strip() for line in block.strip().splitlines()]
    assert commands == ["pip install -r requirements.txt && python app.py", "bash scripts/test"]
    assert "bash scripts/test" in (ROOT / ".ci" / "run").read_text()

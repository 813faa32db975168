"""`pip install .` ships the package with its demo corpus and catalogue, and nothing beside it.

Builds the wheel offline from a copy of the source tree that also holds an app ``data/`` folder
(votes, even an ``__init__.py``): it must not become part of the package or break the build.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.slow


def test_the_wheel_holds_the_package_data_and_not_the_apps_data_folder(tmp_path):
    pytest.importorskip("setuptools", reason="the build backend; a Python 3.11 virtualenv has it")
    source = tmp_path / "source"
    shutil.copytree(ROOT / "sciarena", source / "sciarena", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "requirements.txt", "README.md", "app.py"):
        shutil.copy(ROOT / name, source / name)
    votes = source / "data" / "votes" / "2026-01-01"
    votes.mkdir(parents=True)
    (votes / "votes-x.jsonl").write_text('{"vote": "A"}\n')
    (source / "data" / "__init__.py").write_text("")
    out = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                          "-w", str(tmp_path / "dist"), str(source)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    [wheel] = (tmp_path / "dist").glob("sciarena-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    data_files = {path.relative_to(source).as_posix() for path in (source / "sciarena").rglob("*")
                  if path.is_file() and path.suffix not in (".py", ".pyc")}
    assert "sciarena/data/models.json" in data_files and "sciarena/votes/dataset_card.md" in data_files
    missing = data_files - names  # a data file added to the package but not to pyproject's package-data
    assert not missing
    assert {"sciarena/__main__.py", "sciarena/ui/app.py", "sciarena/cli/leaderboard.py"} <= names
    assert not any(name.startswith(("data/", "app.py", "tests/")) for name in names)
    metadata = next(name for name in names if name.endswith(".dist-info/METADATA"))
    requires = [line for line in zipfile.ZipFile(wheel).read(metadata).decode().splitlines()
                if line.startswith("Requires-Dist:")]
    assert "Requires-Dist: gradio==6.31.0" in requires  # the dependencies are requirements.txt's

"""The tree's import rules (pyproject's [tool.importlinter] contracts) hold, and they bite.

``lint-imports`` is the maintained checker; the second test copies the package, adds one import the
rules forbid (the board reaching into the voter checks) and expects the checker to fail on it.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def lint_imports(cwd: Path) -> subprocess.CompletedProcess[str]:
    # the checker's own entry point, installed beside this interpreter by requirements-test.txt
    command = Path(sys.executable).parent / "lint-imports"
    return subprocess.run([str(command), "--no-cache"], cwd=cwd, text=True, capture_output=True,
                          env={"PYTHONPATH": str(cwd), "PATH": "/usr/bin:/bin"})


def copy_of_the_package(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "sciarena", tmp_path / "sciarena", ignore=shutil.ignore_patterns("data", "__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


@pytest.mark.slow
def test_every_import_contract_is_kept():
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    kept = re.search(r"Contracts: (\d+) kept, 0 broken", result.stdout)
    assert kept and int(kept.group(1)) >= 7, result.stdout


@pytest.mark.slow
@pytest.mark.parametrize(("module", "line", "contract"), [
    ("board/compute.py", "from sciarena.science.quality import check  # noqa: F401", "never import the voter checks"),
    ("providers/calls.py", "from sciarena.answer import clean  # noqa: F401", "Providers never import"),
    ("votes/schema.py", "from sciarena.board import table  # noqa: F401", "Votes never import"),
    ("retrieval/bm25.py", "from sciarena.retrieval import local  # noqa: F401", "No import circles"),
])
def test_a_forbidden_import_breaks_the_check(tmp_path, module, line, contract):
    tree = copy_of_the_package(tmp_path)
    target = tree / "sciarena" / module
    target.write_text(target.read_text(encoding="utf-8") + f"\n{line}\n", encoding="utf-8")
    result = lint_imports(tree)
    assert result.returncode != 0
    broken = result.stdout.split("Broken contracts", 1)[-1]
    assert contract in broken, result.stdout

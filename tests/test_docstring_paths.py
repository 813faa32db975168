"""The map in the code is true (issue 34, item 5): every ``.py`` path, ``sciarena.…`` dotted name and
``module.name`` a docstring or comment in sciarena/ mentions exists.

A path is looked for beside the file that names it, under sciarena/ and under the repository root; a
dotted name's module must be a file or package of sciarena/ and its next part a name that module defines
(or a submodule); ``module.name`` in double backticks, where ``module`` is a sibling module of the file,
must name something that sibling defines."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "sciarena"

# Files of other repositories that a docstring cites as the source of a method, with whose they are.
EXTERNAL = {"scripts/bias_analysis/preference_calculate.py": "the SciArena authors' released repository"}

PATH = re.compile(r"(?<![\w./*<>-])((?:[\w-]+/)*[\w-]+\.py)(?![\w/])")
DOTTED = re.compile(r"(?<![\w.])sciarena(?:\.\w+)+")
SIBLING = re.compile(r"``~?(\w+)\.(?!py\b)(\w+)")


def _notes(path: Path) -> list[tuple[int, str]]:
    """(line, text) of every comment and docstring of a source file."""
    source = path.read_text(encoding="utf-8")
    found = [(tok.start[0], tok.string) for tok in tokenize.generate_tokens(io.StringIO(source).readline)
             if tok.type == tokenize.COMMENT]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc is not None:
                found.append((node.body[0].lineno, doc))
    return found


def _module_file(parts: list[str]) -> Path | None:
    base = PACKAGE.parent.joinpath(*parts)
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


@cache
def _defined(module: Path) -> frozenset[str]:
    """Top-level names a module defines or imports (a package's re-exports count), its submodules, and
    its classes' fields and methods (``table.models`` may name a field of the table a function takes)."""
    names: set[str] = set()
    for node in ast.parse(module.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        if isinstance(node, ast.ClassDef):
            for member in node.body:
                if isinstance(member, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    names.add(member.name)
                elif isinstance(member, ast.AnnAssign) and isinstance(member.target, ast.Name):
                    names.add(member.target.id)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    if module.name == "__init__.py":
        names.update(p.stem for p in module.parent.glob("*.py"))
        names.update(p.name for p in module.parent.iterdir() if (p / "__init__.py").is_file())
    return frozenset(names)


def _dotted_problem(name: str) -> str | None:
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        module = _module_file(parts[:end])
        if module is not None:
            rest = parts[end:]
            if rest and rest[0] not in _defined(module):
                return f"{'.'.join(parts[:end])} defines no {rest[0]!r}"
            return None
    return "no such module"


def _path_exists(name: str, where: Path) -> bool:
    return name in EXTERNAL or any((base / name).exists() for base in (where.parent, PACKAGE, ROOT))


def stale_references(package: Path = PACKAGE) -> list[str]:
    problems = []
    for path in sorted(package.rglob("*.py")):
        siblings = {p.stem: p for p in path.parent.glob("*.py") if p.stem != "__init__"}
        for line, text in _notes(path):
            where = f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}:{line}"
            problems += [f"{where}: {m.group(1)} does not exist"
                         for m in PATH.finditer(text) if not _path_exists(m.group(1), path)]
            for match in DOTTED.finditer(text):
                problem = _dotted_problem(match.group(0).rstrip("."))
                if problem:
                    problems.append(f"{where}: {match.group(0)}: {problem}")
            for module, attr in SIBLING.findall(text):
                if module in siblings and module != path.stem and attr not in _defined(siblings[module]):
                    problems.append(f"{where}: ``{module}.{attr}``: {module}.py defines no {attr!r}")
    return problems


def test_every_path_and_name_the_docstrings_mention_exists():
    problems = stale_references()
    assert not problems, "stale references in sciarena/:\n" + "\n".join(problems)


def test_the_check_finds_a_stale_reference(tmp_path):
    """The check can fail: a docstring naming a moved file, an unknown module name and a missing sibling
    function are each reported."""
    folder = tmp_path / "pkg"
    folder.mkdir()
    (folder / "real.py").write_text("def there():\n    pass\n")
    (folder / "mod.py").write_text('"""Uses real.py and ``real.there``; see gone.py, ``real.gone`` and '
                                   'sciarena.no_such_stage.thing."""\n# and sciarena.board.compute.nothing_here\n')
    found = "\n".join(stale_references(folder)).replace(str(tmp_path), "")
    assert "gone.py does not exist" in found and "real.py does" not in found
    assert "``real.gone``" in found and "real.there" not in found
    assert "sciarena.no_such_stage.thing: sciarena defines no 'no_such_stage'" in found
    assert "sciarena.board.compute defines no 'nothing_here'" in found

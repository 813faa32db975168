"""Write README.md's YAML front matter from space.yaml (the single source of the Space settings).

Usage: python scripts/space_card.py [--check]   (--check exits 1 when README.md is out of date)
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


def front_matter(settings: dict) -> str:
    body = yaml.safe_dump(settings, sort_keys=False, allow_unicode=True, default_flow_style=False)
    return f"---\n{body}---\n"


def rendered_readme(readme: str, settings: dict) -> str:
    """README text with its front matter replaced (or added) from ``settings``."""
    if readme.startswith("---\n"):
        end = readme.index("\n---\n", 4) + len("\n---\n")
        readme = readme[end:]
    return front_matter(settings) + readme.lstrip("\n")


def main(argv: list[str]) -> int:
    settings = yaml.safe_load((ROOT / "space.yaml").read_text(encoding="utf-8"))
    readme_path = ROOT / "README.md"
    current = readme_path.read_text(encoding="utf-8")
    wanted = rendered_readme(current, settings)
    if "--check" in argv:
        if current != wanted:
            print("README.md front matter differs from space.yaml; run: python scripts/space_card.py")
            return 1
        return 0
    readme_path.write_text(wanted, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""``python -m sciarena <command>`` imports that command's module only (issue 34, item 5: cli/main.py's
docstring says so); the top-level help still lists every command."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from sciarena.cli.main import COMMANDS, build_parser

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow  # starts a subprocess (a fresh interpreter shows what one command imports)
def test_one_command_loads_only_its_own_module():
    probe = ("import json, sys; from sciarena.cli.main import build_parser; build_parser('card'); "
             "print(json.dumps([m for m in sys.modules if m.startswith('sciarena.cli.')]))")
    loaded = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True)
    modules = {name.rsplit(".", 1)[1] for name in json.loads(loaded.stdout)}
    assert modules & set(COMMANDS) == {"card"}


def test_the_help_lists_every_command_and_each_parses_alone():
    everything = build_parser().format_help()
    assert all(name in everything for name in COMMANDS)
    args = build_parser("card").parse_args(["card", "--repo", "owner/votes"])
    assert args.command == "card" and callable(args.run)

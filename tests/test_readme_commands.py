"""Every command block in README.md runs as written against a fresh arena's votes (design.md's contract).

The README's ```bash blocks are read with markdown-it-py, each line shell-split, and each command run in
README order, in one temporary working directory, as a user would type it after `pip install .`: the arena
the test builds has stored real votes there (./data/votes, through the arena's own rules, by the offline
contestants) and the review desk real reviews (./data/reviews); files a command reads are made by an earlier
command in README order, or by the test where the README means a file the user brings (each says why).

A command passes when it exits 0 and prints something; a command marked ``# refuses`` in the README passes
when it exits non-zero with exactly one line on stderr. A command the test cannot run offline is skipped by a
rule below that names why (it reads a Hub dataset, calls a catalogue model that needs a key, installs
packages); a command no rule covers fails, so a new kind of README command has to be taught here first.
"""

from __future__ import annotations

import json
import os
import random
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from sciarena.arena.rules import ArenaSession, Ballot
from sciarena.cli.main import main as cli_main
from sciarena.core.errors import ReviewRefused
from sciarena.core.settings import Settings
from sciarena.providers.catalogue import load_catalogue
from sciarena.ui.render import EXAMPLE_QUESTIONS
from sciarena.wiring import build_services

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
TIMEOUT_S = 300  # a command that hangs fails instead of stalling CI
REFUSES = re.compile(r"#\s*refuses\b")
# app.py minus the launch: the settings as written, the services it would serve (retriever, pool, store).
START_UP = ("from sciarena.core.settings import Settings\n"
            "from sciarena.wiring import build_services\n"
            "services = build_services(Settings.from_env())\n"
            "print(f'{len(services.pool.active)} models can battle over {services.settings.retriever}')\n")
# The README's plain-HTTP example calls the app it serves on this address; this test serves no app, and the
# example is one shell script across lines ($EVENT), so HTTP_TEST runs that block whole against a loopback app.
APP_API = "http://127.0.0.1:7860/gradio_api/"
HTTP_TEST = ROOT / "tests" / "test_leaderboard_http.py"


@dataclass(frozen=True)
class Command:
    """One command of a README bash block, as written."""

    line: int  # 1-based line in README.md
    text: str  # the command as it stands in the README (without the comment)
    argv: tuple[str, ...]
    env: tuple[tuple[str, str], ...] = ()  # VAR=value prefixes
    refuses: bool = False  # marked "# refuses": meant to exit non-zero with one sentence

    @property
    def label(self) -> str:
        return f"README:{self.line} {self.text}"


@dataclass(frozen=True)
class Outcome:
    code: int
    out: str
    err: str


def readme_commands(markdown: str) -> list[Command]:
    """Every command of every ```bash block, in order; `a && b` is two commands, `\\` continues a line."""
    commands: list[Command] = []
    for token in MarkdownIt("commonmark").parse(markdown):
        if token.type != "fence" or token.info.strip().split()[:1] != ["bash"] or token.map is None:
            continue
        first = token.map[0] + 2  # token.map[0] is the fence line, 0-based
        pending, start = "", first
        for k, raw in enumerate(token.content.splitlines()):
            if not pending:
                start = first + k
            if raw.rstrip().endswith("\\"):
                pending += raw.rstrip()[:-1] + " "
                continue
            line, pending = pending + raw, ""
            tokens = shlex.split(line, comments=True)
            refuses = bool(REFUSES.search(line))
            while tokens:
                cut = tokens.index("&&") if "&&" in tokens else len(tokens)
                part, tokens = tokens[:cut], tokens[cut + 1:]
                env = {}
                while part and re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", part[0]):
                    name, value = part.pop(0).split("=", 1)
                    env[name] = value
                if part:
                    text = " ".join(shlex.quote(t) for t in [*(f"{k}={v}" for k, v in env.items()), *part])
                    commands.append(Command(start, text, tuple(part), tuple(env.items()), refuses))
    return commands


def skip_reason(command: Command, cwd: Path) -> str | None:
    """Why this command cannot run offline here (None: it runs). Decided when it is its turn, so a path
    an earlier command wrote is a path, not a Hub id."""
    argv = command.argv
    if argv[0] == "pip":
        return "installs packages from the registry (network); the test runs in the installed environment"
    if argv[:2] == ("bash", "scripts/test"):
        return "runs the whole test suite, this test included"
    curl = argv[0] == "curl" or any(value.startswith("$(curl") for _, value in command.env)
    if curl and APP_API in command.text:
        return (f"calls the running app's HTTP API (this test serves no app); {HTTP_TEST.name} runs "
                "the block as written against a loopback app")
    if argv[:3] != ("python", "-m", "sciarena") and argv[:2] != ("python", "app.py"):
        return None  # unknown: run_command refuses it and the test fails
    for value in argv[3:]:
        # owner/name, not a file or folder here (nor under a folder here): what the readers take for a Hub id
        if re.fullmatch(r"[\w-]+/[\w.-]+", value) and not Path(value).suffix \
                and not (cwd / value).exists() and not (cwd / value.split("/")[0]).exists():
            return f"reads the Hub dataset {value} (network)"
    catalogue = load_catalogue(Settings.from_env({}))
    for flag in ("--judge", "--model"):
        if flag in argv:
            name = argv[argv.index(flag) + 1]
            if name.startswith(("offline:", "baseline:")):
                continue
            spec = catalogue.find(name)
            if spec is not None:
                endpoint = catalogue.endpoints.get(spec.provider)
                key = endpoint.key_env if endpoint else None
                return f"calls the catalogue model {name} (needs {key or 'its server'} and the network)"
    return None


def run_command(command: Command, cwd: Path) -> Outcome:
    """Run the command as written in ``cwd``, with a clean environment: no keys, no network for the Hub,
    the package importable from this checkout as `pip install .` would make it."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", str(cwd)),
           "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "MPLBACKEND": "Agg", "LANG": "C.UTF-8",
           **dict(command.env)}
    argv = list(command.argv)
    if argv[:2] == ["python", "app.py"]:
        # launching would serve until stopped: start up as app.py does and stop before the launch
        argv = [sys.executable, "-c", START_UP, *argv[2:]]
    elif argv[:3] == ["python", "-m", "sciarena"]:
        argv[0] = sys.executable
    else:
        return Outcome(127, "", f"the README-commands test does not know how to run {command.text!r}\n")
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT_S)
    return Outcome(proc.returncode, proc.stdout, proc.stderr)


def problem(command: Command, outcome: Outcome) -> str | None:
    """What is wrong with this outcome (None: the command did what the README promises)."""
    said = f"exit {outcome.code}\nstdout:\n{outcome.out[-2000:]}\nstderr:\n{outcome.err[-2000:]}"
    if command.refuses:
        lines = outcome.err.strip().splitlines()
        if outcome.code == 0 or len(lines) != 1:
            return f"meant to refuse with one sentence on stderr, got {said}"
        return None
    if outcome.code != 0:
        return f"failed: {said}"
    if not outcome.out.strip():
        return f"printed nothing: {said}"
    return None


# ---- the arena the commands run against ----------------------------------------------------------------

VOTERS = 10  # 9 honest and one who always votes A: the quality check (20 own votes, 200 by others) can flag it
VOTES_PER_VOTER = 24
REVIEWER = "alice"


def build_arena(cwd: Path) -> None:
    """Votes and reviews as the app stores them, in ./data, through the arena's and the desk's rules."""
    services = build_services(Settings.from_env({
        "SCIARENA_DATA_DIR": str(cwd / "data"), "SCIARENA_SEED": "0", "SCIARENA_REVIEWERS": REVIEWER,
        "SCIARENA_ID_SALT": "readme-test"}))
    arena = services.arena
    questions = [q for qs in EXAMPLE_QUESTIONS.values() for q in qs]  # all four disciplines
    strength = {m.name: k for k, m in enumerate(arena.pool.active)}  # honest voters prefer later models
    rng = random.Random(0)
    for n in range(VOTERS * VOTES_PER_VOTER):
        *_, last = arena.start_battle(questions[n % len(questions)])
        battle = last.battle
        voter = n % VOTERS
        if voter == 0:
            choice = "A"
        else:
            edge = strength[battle.model_b.name] - strength[battle.model_a.name] + rng.gauss(0, 1.5)
            choice = "tie" if abs(edge) < 0.4 else "bad" if abs(edge) < 0.6 else "B" if edge > 0 else "A"
        arena.vote(ArenaSession(battle=battle), Ballot(choice=choice, consent=True, username=f"voter{voter}"))
    desk = services.review_desk()
    other = {"A": "B", "B": "A", "tie": "bad", "bad": "tie"}
    for k in range(30):  # an expert's second votes on some of the stored battles, one in four disagreeing
        try:
            session = desk.next_battle(REVIEWER)
        except ReviewRefused:
            break
        original = session.battle.original_vote
        second = other[original] if k % 4 == 0 else original
        desk.save(desk.blind_vote(session, REVIEWER, second), REVIEWER, "vague" if k % 4 == 0 else "reasonable")


def user_files(cwd: Path) -> None:
    """Files the README's commands name that a user brings (no earlier command makes them)."""
    # "Index your own papers (JSON lines with title/authors/year/venue/abstract ...)": the user's corpus.
    papers = [{"title": f"Soil nitrogen fixation study {k}", "authors": ["A. Author", "B. Author"], "year": 2020 + k,
               "venue": "Soil Biology", "abstract": f"Free-living bacteria fix nitrogen in alpine soils at rate {k}; "
               "fixation rises with temperature and falls with added fertiliser."} for k in range(6)]
    (cwd / "my_papers.jsonl").write_text("".join(json.dumps(p) + "\n" for p in papers), encoding="utf-8")
    # "agreement first.jsonl second.jsonl": two vote sets on the same battles, e.g. two annotators'. Here the
    # arena's first 40 votes, and the same battles voted again with every fifth vote changed.
    records = [json.loads(line) for f in sorted((cwd / "data" / "votes").rglob("*.jsonl"))
               for line in f.read_text(encoding="utf-8").splitlines()][:40]
    (cwd / "first.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    flip = {"A": "B", "B": "tie", "tie": "bad", "bad": "A"}
    again = [{**r, "vote": flip[r["vote"]] if k % 5 == 0 else r["vote"]} for k, r in enumerate(records)]
    (cwd / "second.jsonl").write_text("".join(json.dumps(r) + "\n" for r in again), encoding="utf-8")


COMMANDS = readme_commands(README.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[Command, Outcome | str]]:
    """Every README command's outcome (or why it was skipped), run once in README order."""
    cwd = tmp_path_factory.mktemp("readme")
    build_arena(cwd)
    user_files(cwd)
    results: dict[Command, Outcome | str] = {}
    for command in COMMANDS:
        reason = skip_reason(command, cwd)
        results[command] = reason if reason is not None else run_command(command, cwd)
    yield results


def test_the_readme_has_the_commands_this_test_runs() -> None:
    """The parser finds the blocks (a README rewritten into another fence kind would test nothing)."""
    runnable = [c for c in COMMANDS if c.argv[:3] == ("python", "-m", "sciarena")]
    assert len(runnable) >= 10, [c.label for c in COMMANDS]
    assert {c.argv[3] for c in runnable} >= {"leaderboard", "quality", "label", "eval", "stats", "agreement"}


@pytest.mark.slow
@pytest.mark.parametrize("command", COMMANDS, ids=[c.label[:90] for c in COMMANDS])
def test_readme_command_runs_as_written(command: Command, outcomes: dict[Command, Outcome | str]) -> None:
    outcome = outcomes[command]
    if isinstance(outcome, str):
        pytest.skip(f"{command.label}: {outcome}")
    trouble = problem(command, outcome)
    assert trouble is None, f"{command.label}: {trouble}"


def test_the_parser_reads_prefixes_chains_comments_continuations_and_refusals() -> None:
    text = ("x\n\n```bash\npip install -r r.txt && python app.py   # serve\n"
            "SCIARENA_RETRIEVER=local:my_index python app.py\n"
            "python -m sciarena leaderboard \\\n  --votes data/votes   # the board\n"
            "python -m sciarena leaderboard --votes nowhere.jsonl   # refuses: no such file\n```\n\n"
            "```json\n{\"not\": \"a command\"}\n```\n")
    got = [(c.line, c.argv, dict(c.env), c.refuses) for c in readme_commands(text)]
    assert got == [(4, ("pip", "install", "-r", "r.txt"), {}, False), (4, ("python", "app.py"), {}, False),
                   (5, ("python", "app.py"), {"SCIARENA_RETRIEVER": "local:my_index"}, False),
                   (6, ("python", "-m", "sciarena", "leaderboard", "--votes", "data/votes"), {}, False),
                   (8, ("python", "-m", "sciarena", "leaderboard", "--votes", "nowhere.jsonl"), {}, True)]


def test_the_skip_rules_name_why_and_leave_the_rest_to_run(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    def reason(line: str) -> str | None:
        return skip_reason(readme_commands(f"```bash\n{line}\n```\n")[0], tmp_path)

    assert "Hub dataset yale-nlp/SciArena" in str(reason("python -m sciarena leaderboard --votes yale-nlp/SciArena"))
    assert "OPENAI_API_KEY" in str(reason("python -m sciarena eval run --bench b.jsonl --judge o3"))
    assert reason("python -m sciarena eval run --bench b.jsonl --judge baseline:longer") is None
    assert reason("python -m sciarena label categories --votes data/votes --model offline:rules") is None
    assert reason("python -m sciarena leaderboard --votes data/votes") is None  # a missing path still runs (and fails)
    assert reason("python -m sciarena eval run --bench b.jsonl --judge no-such-model") is None
    assert "network" in str(reason("pip install ."))
    # the README's HTTP example is left to the test that runs it against a loopback app;
    # any other curl stays unknown (and fails)
    http = [c for c in COMMANDS if APP_API in c.text]
    assert len(http) == 2 and all(HTTP_TEST.name in str(skip_reason(c, tmp_path)) for c in http)
    assert HTTP_TEST.exists() and "runs_as_written" in HTTP_TEST.read_text(encoding="utf-8")
    assert reason("curl -s https://example.org/gradio_api/x") is None


@pytest.mark.slow
def test_a_broken_command_fails_and_a_refusal_needs_exactly_one_sentence(tmp_path: Path) -> None:
    """The check can fail: a command that cannot run is a failure unless marked as a refusal, and a
    refusal is judged by its exit code and its one line on stderr."""
    broken, = readme_commands("```bash\npython -m sciarena leaderboard --votes missing.jsonl\n```\n")
    outcome = run_command(broken, tmp_path)
    assert outcome.code == 2 and problem(broken, outcome) is not None
    refusal, = readme_commands("```bash\npython -m sciarena leaderboard --votes missing.jsonl  # refuses\n```\n")
    assert problem(refusal, outcome) is None
    assert problem(refusal, Outcome(2, "", "one\ntwo\n")) is not None  # two lines: not one sentence
    assert problem(refusal, Outcome(0, "", "one\n")) is not None  # exit 0: not a refusal
    assert problem(broken, Outcome(0, "\n", "")) is not None  # nothing printed
    unknown, = readme_commands("```bash\ncurl https://example.org\n```\n")
    assert skip_reason(unknown, tmp_path) is None and problem(unknown, run_command(unknown, tmp_path)) is not None


@pytest.mark.parametrize("argv", [["leaderboard", "--votes", "v.jsonl", "--style", "lenght"], [],
                                  ["label", "categories", "--votes", "v.jsonl"], ["leaderboard", "--no-such-flag"]])
def test_a_bad_command_line_is_refused_in_one_line(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """argparse's own refusal prints the whole usage before the reason; the contract is one sentence."""
    with pytest.raises(SystemExit) as stop:
        cli_main(argv)
    err = capsys.readouterr().err
    assert stop.value.code == 2 and len(err.strip().splitlines()) == 1, err
    assert err.startswith("python -m sciarena") and "--help" in err

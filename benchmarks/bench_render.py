"""Cost of rendering a streamed answer, which the page redoes on every update.

A 4.4 kB Markdown answer (headings, tables, code, formulas, raw HTML, images, 36 citations of 30
references) is rendered in full at every 20-character prefix, as streaming does. Reference, same
process: html.escape of the same prefixes (what the answer boxes did before Markdown was kept).

Hostile runs (issue 21): one render of a run of "\\[", "\\(", "$" and "[1]", with the math held as the page does
now (a scanner) and, as the reference in the same process, with the lazy pattern it used before.

Run: python benchmarks/bench_render.py [--rounds 5] [--hostile-kb 8] (30 for the issue's size: the old
pattern then takes seconds per render)
"""

from __future__ import annotations

import argparse
import html
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sciarena.core.types import Paper, Passage, Reference  # noqa: E402
from sciarena.ui.render import answer_markdown  # noqa: E402

PARAGRAPH = ("Retrieval grounds answers [1] with `code <b>` and $x<y$, raw <b>html</b> and "
             "![chart](http://example.test/c.png), more text [12].\n\n")
BLOCKS = "## Part\n\n| a | b |\n|---|---|\n| 1 [2] | 2 |\n\n```py\nprint('<x>')\n```\n\n"
ANSWER = (PARAGRAPH * 3 + BLOCKS) * 12


def references() -> list[Reference]:
    out = []
    for number in range(1, 31):
        paper = Paper(f"p{number}", f"Paper {number}", ("A. Author",), year=2020)
        out.append(Reference(number, paper, (Passage(f"p{number}-0", paper, "word " * 250),)))
    return out


def seconds_per_stream(render, rounds: int) -> float:
    prefixes = [ANSWER[:end] for end in range(20, len(ANSWER) + 20, 20)]
    timings = []
    for _ in range(rounds):
        start = time.perf_counter()
        for prefix in prefixes:
            render(prefix)
        timings.append(time.perf_counter() - start)
    return statistics.median(timings)


def old_math_hold(text: str) -> str:
    """The math step as safe_markdown did it before issue 21: a lazy pattern per delimiter pair."""
    import re

    from sciarena.ui.render import LATEX_DELIMITERS

    for left, right, _ in LATEX_DELIMITERS:
        text = re.sub(f"{re.escape(left)}([\\s\\S]+?){re.escape(right)}", "\x00", text)
    return text


def hostile(kb: int) -> None:
    from sciarena.ui.render import safe_markdown

    print(f"\none render of a {kb} kB run (thread CPU time)")
    for unit in ("\\[", "\\(", "$", "[1]"):
        text = unit * (kb * 1000 // len(unit))
        start = time.thread_time()
        safe_markdown(text)
        now = time.thread_time() - start
        start = time.thread_time()
        old_math_hold(text)
        before = time.thread_time() - start
        print(f"{unit!r:7} safe_markdown {now * 1e3:8.1f} ms; the old math step alone {before * 1e3:9.1f} ms "
              f"({before / max(now, 1e-6):.0f}x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--hostile-kb", type=int, default=8)
    args = parser.parse_args()
    rounds = args.rounds
    refs = references()
    updates = len(range(20, len(ANSWER) + 20, 20))
    reference = seconds_per_stream(lambda t: html.escape(t, quote=False), rounds)
    plain = seconds_per_stream(answer_markdown, rounds)
    linked = seconds_per_stream(lambda t: answer_markdown(t, references=refs), rounds)
    print(f"{len(ANSWER)} characters, {updates} updates per stream, median of {rounds} rounds")
    print(f"html.escape (reference)        {reference * 1e3:8.1f} ms per stream")
    print(f"answer_markdown                {plain * 1e3:8.1f} ms per stream  ({plain / reference:.0f}x reference, "
          f"{plain / updates * 1e6:.0f} µs per update)")
    print(f"answer_markdown + references   {linked * 1e3:8.1f} ms per stream  ({linked / reference:.0f}x reference, "
          f"{linked / updates * 1e6:.0f} µs per update)")
    hostile(args.hostile_kb)


if __name__ == "__main__":
    main()

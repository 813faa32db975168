"""Cost of the blind reading per streamed update (issue 30), against the precise redactor alone, same process.

A streamed answer is checked again on every snapshot (arena/runner.py: ``Shield.show(partial=True)`` on what
the side has shown so far). This replays answers built from the scientific corpus (tests/data/*.txt) as a
model streams them — pieces of about 40 characters, every prefix at a word boundary checked — through
``Shield`` with and without the second reading, and prints the mean time per update and the ratio.

    python benchmarks/bench_blind.py [--chars 3000] [--answers 5]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sciarena.answer.redact import Shield  # noqa: E402

DATA = ROOT / "tests" / "data"


def answers(chars: int, count: int, seed: int = 0) -> list[str]:
    lines: list[str] = []
    for name in ("scientific_sentences.txt", "scientific_sentences_more.txt", "blind_false_positives.txt"):
        lines += [line for line in (DATA / name).read_text(encoding="utf-8").splitlines() if line.strip()]
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        text = ""
        while len(text) < chars:
            text += rng.choice(lines) + (" " if rng.random() < 0.8 else "\n\n")
        out.append(text[:chars])
    return out


def updates(text: str, step: int = 40) -> list[str]:
    """The prefixes a stream shows, one per ~``step`` characters, cut at a word boundary."""
    out = []
    for end in range(step, len(text) + step, step):
        cut = text.rfind(" ", 0, min(end, len(text)))
        out.append(text[: cut + 1] if cut > 0 else text[:end])
    return out


def per_update(texts: list[str], second_reading: bool) -> float:
    shield = Shield("What does the literature say about this?", second_reading=second_reading)
    shield.show("warm-up", partial=True)  # the catalogue's names are generated once per process
    steps = [prefix for text in texts for prefix in updates(text)]
    start = time.perf_counter()
    for prefix in steps:
        shield.show(prefix, partial=True)
    return (time.perf_counter() - start) / len(steps)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chars", type=int, default=3000, help="length of each answer")
    parser.add_argument("--answers", type=int, default=5)
    args = parser.parse_args()
    texts = answers(args.chars, args.answers)
    reference = per_update(texts, second_reading=False)
    blind = per_update(texts, second_reading=True)
    count = sum(len(updates(t)) for t in texts)
    print(f"{count} streamed updates of answers up to {args.chars:,} characters")
    print(f"precise redactor alone:        {reference * 1000:.2f} ms per update")
    print(f"with the blind reading:        {blind * 1000:.2f} ms per update")
    print(f"ratio (blind / reference):     {blind / reference:.2f}x")


if __name__ == "__main__":
    main()

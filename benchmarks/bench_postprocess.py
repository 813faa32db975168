"""Post-processing cost on hostile output: the patterns this module replaced, timed on bounded inputs, against
the current clean_answer (Markdown, citations, identity) on the same and on 200 kB inputs; redaction rates.

The old patterns are quoted here verbatim (the old module is gone, so old and new cannot be imported side by side).
Run: python benchmarks/bench_postprocess.py
"""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from sciarena.answer.clean import clean_answer  # noqa: E402
from sciarena.core.types import Paper, Passage, Reference  # noqa: E402

_OLD_NAME = r"[^\W\d_][\w'’-]*"
OLD = {
    "author-year narrative (letters)": (re.compile(
        rf"(?P<name>(?P<last>{_OLD_NAME})(?:\s+et\s+al\.?|\s+(?:and|&)\s+{_OLD_NAME})?)\s+\((?:19|20)\d{{2}}[a-z]?\)"),
        "a"),
    "markdown link (\"[[\")": (re.compile(r"\[([^\]]+)\]\((?:[^)\s]+)(?:\s+\"[^\"]*\")?\)"), "[["),
    "think block (\"<think>\")": (re.compile(r"<(think|thinking)>.*?</\1>", re.IGNORECASE | re.DOTALL), "<think>"),
}


def timed(fn, arg) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        fn(arg)
        best = min(best, time.perf_counter() - start)
    return best


def references() -> tuple[Reference, ...]:
    paper = Paper(paper_id="p1", title="T", authors=("Ada Lee",), year=2020)
    return (Reference(1, paper, (Passage("p1#0", paper, "x"),)),)


def main() -> None:
    refs = references()
    print(f"{'input':34} {'chars':>8} {'old pattern s':>14} {'new clean_answer s':>19} {'old/new':>8}")
    for label, (pattern, unit) in OLD.items():
        for n in (1_000, 2_000, 4_000, 8_000):
            text = (unit * n)[:n]
            old = timed(lambda t, pattern=pattern: pattern.sub("", t), text)
            new = timed(lambda t: clean_answer("x " + t, refs), text)
            print(f"{label:34} {n:>8} {old:>14.4f} {new:>19.4f} {old / new:>8.1f}")
    for unit in ("ACGT", "a", "[[", "<think>", " ", "*", "G**PT**-4o ", "\u200b"):
        text = (unit * 200_000)[:200_000]
        print(f"{'new only: ' + repr(unit):34} {len(text):>8} {'-':>14} {timed(lambda t: clean_answer('x ' + t, refs), text):>19.4f}")

    import test_identity as leaks  # the generated leak set and the scientific corpus

    from sciarena.answer.redact import redact_identity

    for with_names in (False, True):
        pairs = leaks.leak_set()
        caught = 0
        for name, answer in pairs:
            question = f"Which model are you, {name} or GPT-4o?" if with_names else "What is CRISPR?"
            redacted, changed = redact_identity(answer, question)
            caught += changed and not leaks.leaked(name, redacted)
        print(f"detection ({'question names models' if with_names else 'plain question'}): "
              f"{caught}/{len(pairs)} = {caught / len(pairs):.1%}")
    hits, total, which = leaks.false_positive_rate()
    print(f"false positives on scientific sentences: {hits}/{total} = {hits / total:.1%}", *which, sep="\n  ")


if __name__ == "__main__":
    main()

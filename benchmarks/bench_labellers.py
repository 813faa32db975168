"""Accuracy and confusion matrices of the question labellers on our hand-labelled questions.

    python benchmarks/bench_labellers.py
    python benchmarks/bench_labellers.py --baseline-rules OLD_CLASSIFY.py
    python benchmarks/bench_labellers.py --model NAME      # also a catalogue model (paid)

The set is sciarena/data/eval/question_labels.jsonl (see QUESTION_LABELS_CARD.md next to it).
Its splits: dev (the rules were tuned on it), test (not tuned on, but written by the rules'
author), fresh (written after the rules were frozen: the honest estimate for the rules), fresh2 (written
after the discipline classifier was frozen: the honest estimate for it; a question between two fields
counts as right for either, shown as "either field accepted"). Labellers:
- categories: classify.classify_question (keyword rules); optionally the classify_question of
  another classify.py file (e.g. an older version: ``git show REV:sciarena/arena/labels/rules.py``);
  optionally a catalogue model through the LLM labeller;
- disciplines: discipline_text.TextDisciplineLabeller (the default; also trained without fresh, and on
  the cue lexicons alone), classify.subject_from_question (question vocabulary), classify.infer_subject over
  the bundled corpus searched with the local retriever, classify.label_subject (the two combined),
  and optionally the model.
Accuracy counts an invalid or missing label as wrong.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sciarena.arena.labels import rules as classify  # noqa: E402
from sciarena.arena.labels.discipline_text import TextDisciplineLabeller  # noqa: E402
from sciarena.arena.labels.labellers import CATEGORY, DISCIPLINE, Task  # noqa: E402
from sciarena.core.types import DISCIPLINES, QUESTION_TYPES  # noqa: E402
from sciarena.science.labelling.gold import LABELS_FILE, SPLITS, LabelledQuestion, load_labelled_questions  # noqa: E402
from sciarena.science.labelling.metrics import confusion, format_confusion  # noqa: E402

SHORT = {"Conceptual Explanation": "Concept", "Methodology Inquiry": "Method", "State-of-the-Art Assessment": "SOTA",
         "Challenges & Limitations": "Challenge", "Paper Finding": "Papers", "Others": "Others",
         "Natural Science": "NatSci", "Healthcare": "Health", "Humanities & Social Sciences": "HumSoc",
         "Engineering": "Eng"}


def report(title: str, items: Sequence[LabelledQuestion], predicted: Sequence[str], task: Task) -> None:
    gold = [getattr(item, task.name) for item in items]
    labels = QUESTION_TYPES if task is CATEGORY else DISCIPLINES
    parts = []
    for split in SPLITS + ("all",):
        chosen = [k for k, item in enumerate(items) if split == "all" or item.split == split]
        matrix = confusion([gold[k] for k in chosen], [predicted[k] for k in chosen], labels)
        part = f"{split} {matrix.correct}/{matrix.total} = {100 * matrix.accuracy:.1f}%"
        if task is DISCIPLINE and any(items[k].also for k in chosen):  # questions between two fields
            right = sum(items[k].discipline_right(predicted[k]) for k in chosen)
            part += f" (either field accepted: {right}/{len(chosen)} = {100 * right / len(chosen):.1f}%)"
        parts.append(part)
    print(f"\n== {title}\naccuracy: " + "; ".join(parts))
    for split, caption in (("fresh2", "fresh2 (written after the discipline classifier was frozen)"),
                           ("fresh", "fresh (written after the rules were frozen)"), ("all", "all")):
        chosen = [k for k, item in enumerate(items) if split == "all" or item.split == split]
        print(f"confusion, {caption}:")
        print(format_confusion(confusion([gold[k] for k in chosen], [predicted[k] for k in chosen], labels), SHORT))


def load_module(path: str) -> ModuleType:
    """Another version of classify.py, imported from a file (it needs only sciarena.core.types)."""
    spec = importlib.util.spec_from_file_location("baseline_classify", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def retrieval_subjects(items: Sequence[LabelledQuestion]) -> list:
    """Each question's retrieval over the bundled corpus, with the app's default local settings."""
    from sciarena.core.settings import Settings
    from sciarena.retrieval.choose import open_retriever

    retriever = open_retriever(Settings(moderation="off"))
    return [retriever.retrieve(item.question) for item in items]


def _model_label(labeller, question: str) -> str:
    from sciarena.core.errors import SciArenaError

    try:
        return labeller.label(question).value
    except SciArenaError as err:  # a failed call counts as wrong, and the run goes on
        print(f"  call failed: {err}", file=sys.stderr)
        return "error"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--labels", default=str(LABELS_FILE), help="the labelled questions (JSON lines)")
    parser.add_argument("--baseline-rules", metavar="CLASSIFY_PY", help="also measure this file's classify_question")
    parser.add_argument("--model", metavar="NAME", help="also measure a catalogue model (one call per question "
                                                         "and task: it costs money)")
    parser.add_argument("--quick", action="store_true", help="only the categories and the discipline classifier "
                                                                "(skip the retrieval-based labellers)")
    args = parser.parse_args(argv)
    items = load_labelled_questions(args.labels)
    questions = [item.question for item in items]
    counts = {split: sum(item.split == split for item in items) for split in SPLITS}
    print(f"{len(items)} labelled questions from {args.labels} ({', '.join(f'{s} {n}' for s, n in counts.items())})")

    old = load_module(args.baseline_rules) if args.baseline_rules else None
    if old is not None:
        report(f"categories: classify_question from {args.baseline_rules}", items,
               [old.classify_question(q) for q in questions], CATEGORY)
    report("categories: classify.classify_question (keyword rules)", items,
           [classify.classify_question(q) for q in questions], CATEGORY)

    classifier = TextDisciplineLabeller()
    report(f"disciplines: {classifier.name} (TF-IDF + logistic regression; trained on dev, test and fresh)",
           items, classifier.label_many(questions), DISCIPLINE)
    held_out = TextDisciplineLabeller(training_splits=("dev", "test"))
    report("disciplines: the same classifier trained on dev and test only (fresh held out)", items,
           held_out.label_many(questions), DISCIPLINE)
    cues_only = TextDisciplineLabeller(training_splits=())
    report("disciplines: the same classifier trained on the cue lexicons alone (no labelled question)", items,
           cues_only.label_many(questions), DISCIPLINE)
    if args.quick:
        return 0
    retrievals = retrieval_subjects(items)
    report("disciplines: classify.subject_from_question (question vocabulary)", items,
           [classify.subject_from_question(q) for q in questions], DISCIPLINE)
    if old is not None and hasattr(old, "infer_subject"):
        report(f"disciplines: infer_subject from {args.baseline_rules}", items,
               [old.infer_subject(r) for r in retrievals], DISCIPLINE)
    report("disciplines: classify.infer_subject (local retrieval over the bundled corpus)", items,
           [classify.infer_subject(r) for r in retrievals], DISCIPLINE)
    report("disciplines: classify.label_subject (question vocabulary, else retrieval)", items,
           [classify.label_subject(q, r) for q, r in zip(questions, retrievals)], DISCIPLINE)

    if args.model:
        from sciarena.core.settings import Settings
        from sciarena.science.labelling.resolve import resolve_labeller

        settings = Settings.from_env()
        for task in (CATEGORY, DISCIPLINE):
            labeller = resolve_labeller(args.model, task, settings).labeller
            print(f"\nasking {labeller.name} for {len(items)} {task.name} labels …", flush=True)
            labels = [_model_label(labeller, q) for q in questions]
            report(f"{task.name}: LLM labeller {labeller.name}", items, labels, task)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

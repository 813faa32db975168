"""Accuracy and confusion matrices of the question labellers on our hand-labelled questions.

    python benchmarks/bench_labellers.py
    python benchmarks/bench_labellers.py --baseline-rules OLD_CLASSIFY.py
    python benchmarks/bench_labellers.py --model NAME      # also a catalogue model (paid)
    python benchmarks/bench_labellers.py --cv              # how the discipline classifier's settings were chosen

The set is sciarena/data/eval/question_labels.jsonl (see QUESTION_LABELS_CARD.md next to it).
Its splits: dev (the rules were tuned on it), test (not tuned on, but written by the rules'
author), fresh (written after the rules were frozen: the honest estimate for the rules), fresh2 (written
after the discipline classifier was first frozen), fresh3 (96 questions written by someone else, blind to
the method, after it was frozen again: the honest estimate for the shipped classifier, which trains on every
other split; a question between two fields counts as right for either, shown as "either field accepted").
Labellers:
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
from sciarena.arena.labels.discipline_text import TRAINING_SPLITS, TextDisciplineLabeller  # noqa: E402
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
        if not chosen:
            continue
        matrix = confusion([gold[k] for k in chosen], [predicted[k] for k in chosen], labels)
        part = f"{split} {matrix.correct}/{matrix.total} = {100 * matrix.accuracy:.1f}%"
        if task is DISCIPLINE and any(items[k].also for k in chosen):  # questions between two fields
            right = sum(items[k].discipline_right(predicted[k]) for k in chosen)
            part += f" (either field accepted: {right}/{len(chosen)} = {100 * right / len(chosen):.1f}%)"
        parts.append(part)
    print(f"\n== {title}\naccuracy: " + "; ".join(parts))
    for split, caption in (("fresh3", "fresh3 (written blind, after the discipline classifier was frozen)"),
                           ("fresh2", "fresh2 (written after the first freeze; trained on since)"),
                           ("fresh", "fresh (written after the rules were frozen)"), ("all", "all")):
        chosen = [k for k, item in enumerate(items) if split == "all" or item.split == split]
        if not chosen:
            continue
        print(f"confusion, {caption}:")
        print(format_confusion(confusion([gold[k] for k in chosen], [predicted[k] for k in chosen], labels), SHORT))
        if task is DISCIPLINE and split == "fresh3":
            print("per discipline on fresh3, strict / either field accepted: " + "; ".join(
                _per_discipline(discipline, [items[k] for k in chosen], [predicted[k] for k in chosen])
                for discipline in DISCIPLINES))


def _per_discipline(discipline: str, items: Sequence[LabelledQuestion], predicted: Sequence[str]) -> str:
    pairs = [(item, p) for item, p in zip(items, predicted) if item.discipline == discipline]
    strict = sum(item.discipline == p for item, p in pairs)
    either = sum(item.discipline_right(p) for item, p in pairs)
    return f"{SHORT[discipline]} {strict}/{len(pairs)}, {either}/{len(pairs)}"


def cross_validate(items: Sequence[LabelledQuestion], path: str) -> None:
    """Leave one seen split out: train on the other seen splits (+ cues, + papers), label the one left out.
    The splits differ in when and how they were written, so this is harsher than shuffled folds; the cue
    lexicons were written with every seen split in view, so it is still optimistic."""
    seen = TRAINING_SPLITS
    print(f"\n== cross-validation of the discipline classifier, leaving out one of {', '.join(seen)} at a time")
    for paper_weight in (0.0, 1.0, 2.0):
        for l2 in (0.1, 0.3):
            right = strict = total = 0
            parts = []
            for held in seen:
                labeller = TextDisciplineLabeller(training_splits=tuple(s for s in seen if s != held),
                                                  paper_weight=paper_weight, l2=l2, path=Path(path))
                chosen = [item for item in items if item.split == held]
                predicted = labeller.label_many([item.question for item in chosen])
                ok = sum(item.discipline_right(p) for item, p in zip(chosen, predicted))
                strict += sum(item.discipline == p for item, p in zip(chosen, predicted))
                right += ok
                total += len(chosen)
                parts.append(f"{held} {ok}/{len(chosen)}")
            shipped = " (shipped)" if (paper_weight, l2) == (TextDisciplineLabeller.paper_weight,
                                                             TextDisciplineLabeller.l2) else ""
            print(f"paper_weight {paper_weight}, l2 {l2}{shipped}: strict {strict}/{total} = {100 * strict / total:.1f}%,"
                  f" either field {right}/{total} = {100 * right / total:.1f}% ({'; '.join(parts)})", flush=True)


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
    parser.add_argument("--cv", action="store_true", help="only the leave-one-split-out cross-validation that chose "
                                                             "the discipline classifier's settings (a few minutes)")
    args = parser.parse_args(argv)
    items = load_labelled_questions(args.labels)
    if args.cv:
        cross_validate(items, args.labels)
        return 0
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
    report(f"disciplines: {classifier.name} (TF-IDF + logistic regression over questions, cue phrases and the "
           f"bundled papers; trained on {', '.join(TRAINING_SPLITS)}: only fresh3 is unseen)",
           items, classifier.label_many(questions), DISCIPLINE)
    no_papers = TextDisciplineLabeller(paper_weight=0.0)
    report("disciplines: the same classifier without the bundled papers as training text", items,
           no_papers.label_many(questions), DISCIPLINE)
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

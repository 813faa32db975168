"""How the votes' fields were decided (science/stats/fields.py) and the classifier it quotes."""

from __future__ import annotations

from sciarena.arena.labels.at_vote import QuestionLabels
from sciarena.arena.labels.discipline_text import (
    FRESH_ACCURACY,
    FRESH_QUESTIONS,
    MEASURED_ACCURACY,
    TextDisciplineLabeller,
)
from sciarena.science.labelling.gold import load_labelled_questions
from sciarena.science.stats.fields import field_provenance


def test_asker_set_shares_are_counted_per_field_and_older_records_count_as_labelled():
    records = [
        {"subject": "Healthcare", "subject_source": "asker", "subject_labelled": "Natural Science"},
        {"subject": "Healthcare", "subject_source": "labeller", "subject_labelled": "Healthcare"},
        {"subject": "Engineering"},  # written before schema 4
        {"subject": None},
    ]
    provenance = field_provenance(records)
    assert provenance.votes == {"Healthcare": 2, "Engineering": 1, "": 1}
    assert provenance.asker == {"Healthcare": 1} and provenance.changed == 1
    lines = provenance.lines()
    assert lines[0].startswith("Fields: 1 of 4 votes carry a field the asker chose")
    assert "  Healthcare: 2 votes, 1 set by the asker (50%)" in lines


def test_the_askers_choice_replaces_the_labellers_only_when_changed():
    labels = QuestionLabels("Others", "offline:rules:category", "Engineering", "offline:classifier:discipline")
    assert labels.with_asker_subject("Engineering", "Engineering") is labels
    assert labels.with_asker_subject(None, "Engineering") is labels
    assert labels.with_asker_subject("Astrology", "Engineering") is labels
    chosen = labels.with_asker_subject("Other", "Engineering")
    assert (chosen.subject, chosen.subject_source, chosen.subject_labelled) == ("Other", "asker", "Engineering")


def test_the_classifier_fits_at_first_use_and_names_a_field_without_any_cue_word(discipline_classifier):
    assert TextDisciplineLabeller()._fitted == []  # nothing is trained until a label is asked for
    assert discipline_classifier._fitted  # the session's, fitted by its first label (the same fit every time)
    assert discipline_classifier.label_many(["Why do galaxies spin faster at their edges than their visible mass allows?",
                                "How should a stepped-wedge trial of a new triage protocol be analysed?",
                                "Why did the printing press spread faster in some cities than others?",
                                "How do I choose the gain of a PID controller for a drone's altitude?"]) == \
        ["Natural Science", "Healthcare", "Humanities & Social Sciences", "Engineering"]


def test_the_quoted_accuracy_is_the_one_measured_on_the_blind_split_it_never_trained_on(discipline_classifier):
    labeller = discipline_classifier  # the shipped defaults, fitted once per test session
    assert "fresh3" not in labeller.training_splits
    items = [item for item in load_labelled_questions() if item.split == "fresh3"]
    predicted = labeller.label_many([item.question for item in items])
    right = sum(item.discipline_right(p) for item, p in zip(items, predicted))
    assert len(items) == FRESH_QUESTIONS and right / len(items) == FRESH_ACCURACY
    assert f"{100 * FRESH_ACCURACY:.1f}% ({right}/{len(items)})" in MEASURED_ACCURACY

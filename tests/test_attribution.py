"""Citation attribution: pairs from both schemas, the strict verdict parser, the lexical baseline and
its calibration on our hand-labelled pairs, and the per-side counts the leaderboard reads."""

from __future__ import annotations

from collections import Counter

import pytest

from sciarena.answer.label_reply import INVALID
from sciarena.science.labelling.attribution import (
    CONTRADICTING,
    IRRELEVANT,
    LEXICAL_THRESHOLD,
    SUPPORTING,
    VERDICTS,
    LexicalJudge,
    ModelJudge,
    Pair,
    SidePairs,
    build_messages,
    calibrate_on,
    count_fields,
    load_labelled_pairs,
    parse_verdict,
    record_pairs,
    side_pairs,
    side_verdicts,
)
from sciarena.science.labelling.metrics import confusion
from sciarena.votes.read.fields import NUMERIC_SOURCES

OURS = [
    {"number": 1, "concise_authors": "Komor et al. 2016", "content": "Base editors convert C to T without breaks."},
    {"number": 2, "concise_authors": "Anzalone et al. 2019", "content": "Prime editing performs all twelve edits."},
    {"number": 3, "concise_authors": "Jinek et al. 2012", "content": ""},
]


def test_numbered_citations_pair_each_sentence_with_each_entry_it_cites() -> None:
    answer = ("Base editing avoids double-strand breaks [1]. Prime editing, described by Anzalone et al. in 2019, "
              "covers all edits [2][1]. Cas9 cuts DNA [3]. Nothing is cited here. A citation to a missing "
              "entry [9] is ignored, and [2] twice [2] is one pair.")
    side = side_pairs(answer, OURS)
    assert [(p.citation, p.passage[:5]) for p in side.pairs] == [
        ("[1]", "Base "), ("[2]", "Prime"), ("[1]", "Base "), ("[2]", "Prime")]
    assert side.pairs[0].sentence == "Base editing avoids double-strand breaks [1]."
    assert side.unjudgeable == 1  # [3] has no passage
    assert side.pairs[0].claim.strip() == "Base editing avoids double-strand breaks ."


def test_released_author_year_citations_are_matched_by_concise_authors() -> None:
    citations = [{"concise_authors": "Mihajlović et al. 2023a", "content": "Passage A."},
                 {"concise_authors": "Mihajlović et al. 2023b", "content": "Passage B."},
                 {"concise_authors": "Lee 2021", "content": "Passage C."}]
    answer = ("Sparse coding helps (Mihajlović et al., 2023a; Lee 2021). Mihajlović et al. (2023b) disagree. "
              "A later study (Mihajlović et al. 2023) is not in the list.")
    side = side_pairs(answer, citations)
    assert [(p.citation, p.passage) for p in side.pairs] == [
        ("Mihajlović et al. 2023a", "Passage A."), ("Lee 2021", "Passage C."),
        ("Mihajlović et al. 2023b", "Passage B.")]


def test_answers_without_citations_or_lists_give_no_pairs() -> None:
    assert side_pairs("No citations at all.", OURS) == SidePairs(())
    assert side_pairs("Cited [1]. Again [1][2].", None) == SidePairs((), unjudgeable=3)  # cited, but no list
    assert side_pairs("Cited [1].", []) == SidePairs((), unjudgeable=1)
    assert side_pairs(None, OURS) == SidePairs(())
    record = {"responseA": "X [1].", "citations_a": OURS, "responseB": "", "citations_b": []}
    pairs = record_pairs(record)
    assert len(pairs["a"].pairs) == 1 and pairs["b"].pairs == ()


def test_identical_pairs_share_a_key_and_different_ones_do_not() -> None:
    one = Pair("Claim  here [1].", "[1]", "Passage text.")
    assert one.key == Pair("Claim here [1].", "[1]", "Passage  text.").key
    assert one.key != Pair("Claim here [1].", "[2]", "Passage text.").key


@pytest.mark.parametrize("reply, verdict", [
    ("supporting", SUPPORTING), ("Irrelevant.", IRRELEVANT), ("**contradicting**", CONTRADICTING),
    ("<think>the passage says the opposite</think>\ncontradicting", CONTRADICTING), ('"supporting"', SUPPORTING),
    ("supporting or irrelevant", INVALID), ("The citation is supporting.", INVALID), ("support", INVALID),
    ("", INVALID), (None, INVALID), ("Verdict: supporting", INVALID),
])
def test_the_parser_accepts_exactly_one_verdict(reply: object, verdict: str) -> None:
    assert parse_verdict(reply) == verdict


def test_the_model_judge_sends_the_sentence_marker_and_passage_and_keeps_the_raw_reply() -> None:
    seen: list[list[dict[str, str]]] = []

    def complete(messages: list[dict[str, str]]) -> str:
        seen.append(messages)
        return "Maybe supporting?"

    pair = Pair("Statins lower events [4].", "[4]", "Statins reduced major vascular events.")
    verdict = ModelJudge(complete=complete, name="m").judge(pair)
    assert verdict.value == INVALID and verdict.raw == "Maybe supporting?" and not verdict.valid
    user = seen[0][-1]["content"]
    assert "Statins lower events [4]." in user and "Citation marker: [4]" in user and "reduced major" in user
    assert seen[0] == build_messages(pair)


def test_counts_merge_contradicting_into_irrelevant_under_the_leaderboards_field_names() -> None:
    counts = count_fields("a", [SUPPORTING, IRRELEVANT, CONTRADICTING, SUPPORTING])
    assert counts == {"num_supporting_a": 2, "num_irrelevant_a": 2, "num_contradicting_a": 1}
    assert count_fields("b", None) == dict.fromkeys(["num_supporting_b", "num_irrelevant_b", "num_contradicting_b"])
    assert "num_supporting_a" in NUMERIC_SOURCES["supporting_a"]
    assert "num_irrelevant_b" in NUMERIC_SOURCES["irrelevant_b"]
    assert count_fields("a", []) == {"num_supporting_a": 0, "num_irrelevant_a": 0, "num_contradicting_a": 0}


def test_a_side_gets_counts_only_when_every_pair_has_a_valid_verdict() -> None:
    pairs = (Pair("x [1].", "[1]", "p"), Pair("y [2].", "[2]", "q"))
    full = {pairs[0].key: SUPPORTING, pairs[1].key: IRRELEVANT}
    assert side_verdicts(SidePairs(pairs), full) == [SUPPORTING, IRRELEVANT]
    assert side_verdicts(SidePairs(pairs), {pairs[0].key: SUPPORTING}) is None
    assert side_verdicts(SidePairs(pairs), {**full, pairs[1].key: INVALID}) is None
    assert side_verdicts(SidePairs(pairs, unjudgeable=1), full) is None


# ------------------------------------------------------------------ the hand-labelled set and the baseline

def test_the_labelled_set_covers_every_verdict_in_both_splits() -> None:
    items = load_labelled_pairs()
    assert len(items) >= 60 and len({i.id for i in items}) == len(items)
    by = Counter((i.label, i.split) for i in items)
    assert all(by[(label, split)] >= 5 for label in VERDICTS for split in ("train", "test"))
    assert all(i.pair.citation.startswith("[") for i in items)


def test_the_shipped_threshold_is_what_calibration_on_the_train_split_gives() -> None:
    train = [i for i in load_labelled_pairs() if i.split == "train"]
    assert calibrate_on(train) == LEXICAL_THRESHOLD


def test_the_baseline_beats_the_majority_label_on_the_held_out_split() -> None:
    test = [i for i in load_labelled_pairs() if i.split == "test"]
    judge = LexicalJudge()
    matrix = confusion([i.label for i in test], [judge.judge(i.pair).value for i in test], VERDICTS)
    majority = Counter(i.label for i in test).most_common(1)[0][1] / len(test)
    assert matrix.accuracy > majority
    assert matrix.count(CONTRADICTING, CONTRADICTING) > 0  # the polarity cue finds some contradictions


def test_the_lexical_judge_on_clear_cases() -> None:
    judge = LexicalJudge()
    passage = "Intensive glucose control increased mortality among adults in the intensive care unit."
    assert judge.judge(Pair("Intensive glucose control increased mortality in intensive care [1].", "[1]",
                            passage)).value == SUPPORTING
    assert judge.judge(Pair("Intensive glucose control decreased mortality in intensive care [1].", "[1]",
                            passage)).value == CONTRADICTING
    assert judge.judge(Pair("Coral reefs bleach in warm water [1].", "[1]", passage)).value == IRRELEVANT
    assert judge.judge(Pair("[1].", "[1]", passage)).value == IRRELEVANT  # nothing to compare


def test_the_model_judge_over_a_real_openai_client_on_the_loopback_server(fake_openai) -> None:
    from openai import OpenAI

    fake_openai.add_script("judge", chunks=("<think>compare</think>", "Contra", "dicting"))
    client = OpenAI(base_url=fake_openai.base_url, api_key="sk-test", max_retries=0)

    def complete(messages: list[dict[str, str]]) -> str:
        stream = client.chat.completions.create(model="judge", messages=messages, stream=True)
        return "".join(chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices)

    pair = Pair("Vitamin D prevents fractures [2].", "[2]", "Vitamin D did not prevent fractures.")
    verdict = ModelJudge(complete=complete, name="judge").judge(pair)
    assert verdict.value == CONTRADICTING
    sent = fake_openai.requests("judge")[0].body["messages"]
    assert sent == build_messages(pair)


# ------------------------------------------------------------------ copied sentences (issue 23, finding 5)

def _corpus_summary(title_start: str) -> tuple[str, str]:
    from sciarena.retrieval.corpus import demo_corpus_files, read_corpus

    for paper, text in read_corpus(demo_corpus_files()):
        if paper.title.startswith(title_start):
            return paper.title, text.split("\n\n")[0]
    raise AssertionError(f"no demo paper titled {title_start!r}")


def test_a_sentence_copied_from_its_passage_is_supporting() -> None:
    # The case a user saw: an extractive answer copies a sentence of the Frangoul summary word for word,
    # and the summary says "not" or "without" elsewhere.
    title, summary = _corpus_summary("CRISPR-Cas9 Gene Editing for Sickle Cell Disease")
    judge = LexicalJudge()
    sentences = [s for s in summary.split(". ") if len(s.split()) > 6]
    assert len(sentences) >= 3
    for sentence in sentences:
        pair = Pair(f"{sentence.rstrip('.')} [4].", "[4]", summary)
        assert judge.judge(pair).value == SUPPORTING, sentence
    framing = Pair(f'"{title}" by Frangoul et al. (2021) adds a closely related perspective [4].', "[4]", summary)
    assert judge.judge(framing).value == SUPPORTING


def test_polarity_is_read_against_the_sentence_the_claim_matches() -> None:
    judge = LexicalJudge()
    passage = ("Patients without prior treatment were not enrolled. Hand-washing reduced the rate of infections by a "
               "third among day-care children. No adverse events occurred during the programme.")
    paraphrase = Pair("Hand-washing reduced infections among day-care children by a third [1].", "[1]", passage)
    turned = Pair("Hand-washing increased the rate of infections among day-care children [1].", "[1]", passage)
    negated = Pair("Hand-washing did not reduce the rate of infections among day-care children [1].", "[1]", passage)
    assert judge.judge(paraphrase).value == SUPPORTING  # the negations are in other sentences
    assert judge.judge(turned).value == CONTRADICTING
    assert judge.judge(negated).value == CONTRADICTING
    assert judge.matched(paraphrase.claim, passage).startswith("Hand-washing reduced")


def test_a_quoted_title_does_not_set_the_sentence_polarity() -> None:
    judge = LexicalJudge()
    passage = ("Falls injure many people over seventy, and drugs that steady balance have side effects. Balance "
               "training reduced the rate of falls by a third without drugs, and caused no injuries.")
    framing = Pair('"Preventing Falls without Drugs" by Moe (2016) bears on the question [2].', "[2]", passage)
    assert judge.judge(framing).value == SUPPORTING
    unrelated = Pair('"Preventing Falls without Drugs" by Moe (2016) bears on the question [2].', "[2]",
                     "Ocean heat content rose at an accelerating rate in the upper 2,000 metres.")
    assert judge.judge(unrelated).value == IRRELEVANT


def test_the_copied_split_is_held_out_and_agrees_with_the_hand_labels() -> None:
    items = load_labelled_pairs()
    copied = [i for i in items if i.split == "copied"]
    assert len(copied) >= 20 and {i.label for i in copied} == set(VERDICTS)
    judge = LexicalJudge()
    matrix = confusion([i.label for i in copied], [judge.judge(i.pair).value for i in copied], VERDICTS)
    assert matrix.count(SUPPORTING, CONTRADICTING) == 0  # today's main called 13 of 16 such pairs contradicting
    assert matrix.accuracy >= 0.9
    # held out: calibrating on train only still gives the shipped threshold
    assert calibrate_on([i for i in items if i.split == "train"]) == LEXICAL_THRESHOLD

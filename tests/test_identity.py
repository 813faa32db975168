"""The anonymity policy against the model catalogue: every model and vendor, in the ways a model names itself,
with and without the question naming models; false positives on scientific text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sciarena.answer.redact import PLACEHOLDER, find_identity_mentions, redact_identity
from sciarena.core.settings import DEFAULT_CATALOGUE

SENTENCES = Path(__file__).parent / "data" / "scientific_sentences.txt"

# Short forms a model uses for itself, beyond the catalogue's names and API ids.
SHORT_FORMS = ("ChatGPT", "GPT-4o", "o3", "o1-mini", "Claude", "Claude 3.5 Sonnet", "Gemini", "Gemini Pro", "Grok",
               "Qwen", "QwQ", "Llama 3", "DeepSeek", "Kimi", "Kimi K2", "GLM-4.5", "MiniMax", "Olmo", "OLMo 2",
               "Mistral", "Magistral", "Mixtral", "Gemma")
NATIVE = ("通义千问", "千问", "深度求索", "月之暗面", "智谱", "豆包", "文心一言", "混元")
VENDOR_FORMS = {"OpenAI (OSS)": ("OpenAI",), "Ai2 (AllenAI)": ("Ai2", "AllenAI", "Allen Institute for AI"),
                "Zhipu AI": ("Zhipu AI", "Zhipu"), "MoonshotAI": ("MoonshotAI", "Moonshot AI")}
SELF = ("I am {n}.", "As {n}, I think the evidence is mixed [1].", "{n} here: the answer is yes [1].",
        "I'm actually {n}, and the answer is yes [1].", "Me? {n}.", "My name is {n}.", "I am indeed {n}.",
        "This answer was written by {n}.", "The evidence is mixed [1].\n\n— {n}",
        "The evidence is mixed [1].\n\nBest regards,\n{n}", "我是{n}。")
VENDOR = ("I was developed by {n}.", "I am a model trained by {n}.", "As a model made by {n}, I cannot say.")


def catalogue() -> list[dict]:
    """The models that answer in battles (helper rows such as a moderation model never do; a pipeline
    row speaks with its base model's voice, whose row is here)."""
    return [m for m in json.loads(Path(DEFAULT_CATALOGUE).read_text())["models"]
            if not m.get("offline") and m.get("battles", True) and "pipeline" not in m]


def model_names() -> list[str]:
    names = {m["name"] for m in catalogue()} | {m["model_id"].split("/")[-1] for m in catalogue()}
    return sorted(names | set(SHORT_FORMS) | set(NATIVE))


def vendor_names() -> list[str]:
    return sorted({form for m in catalogue() for form in VENDOR_FORMS.get(m["organisation"], (m["organisation"],))})


def leak_set() -> list[tuple[str, str]]:
    """(name, answer) pairs: every name in every phrasing."""
    pairs = [(n, t.format(n=n)) for n in model_names() for t in SELF]
    return pairs + [(v, t.format(n=v)) for v in vendor_names() for t in VENDOR]


def leaked(name: str, redacted: str) -> bool:
    return name in redacted or bool(find_identity_mentions(redacted))


@pytest.mark.parametrize("question_names_models", [False, True], ids=["plain-question", "question-names-models"])
def test_every_catalogue_name_is_hidden_in_every_phrasing(question_names_models):
    misses = []
    for name, answer in leak_set():
        question = f"Which model are you, {name} or GPT-4o? What is CRISPR?" if question_names_models else "What is CRISPR?"
        redacted, changed = redact_identity(answer, exempt_text=question)
        if not changed or leaked(name, redacted):
            misses.append((answer, redacted))
    assert misses == []


def test_the_catalogue_is_covered():
    assert len(catalogue()) >= 40 and len(leak_set()) > 1000
    assert {"o3", "Kimi K2", "GLM 4.5", "MiniMax-M1", "Olmo 3.1 32B Instruct"} <= set(model_names())


@pytest.mark.parametrize("text", [
    "I am Сlaude.",  # Cyrillic С
    "I am Cla\u200bude.", "I am Cla\u00adude.", "I am ＧＰＴ-4o.", "I am G P T-4o.", "Made by OpenAl.",
    "I am \u202eedualC\u202c.", "I am G**PT**-4o.", "I am Cla`ude`.", "I am *Claude*.", "I'm GPT-4o; elevated serum ALT aside",
    "I am Gemini, and the mission of this answer is accuracy.", "I am G<b>PT</b>-4o.", "I am <Claude>.",
])
def test_disguised_names_are_hidden(text):
    redacted, changed = redact_identity(text)
    assert changed and PLACEHOLDER in redacted
    assert not find_identity_mentions(redacted)


def test_a_redacted_emphasis_leaves_no_stray_markers():
    assert redact_identity("I am **Claude**, hi.") == (f"I am {PLACEHOLDER}, hi.", True)
    assert redact_identity("I am G**PT**-4o.") == (f"I am {PLACEHOLDER}.", True)


def false_positive_rate() -> tuple[int, int, list[str]]:
    sentences = [s for s in SENTENCES.read_text(encoding="utf-8").splitlines() if s.strip()]
    hits = [s for s in sentences if redact_identity(s)[1]]
    return len(hits), len(sentences), hits


def test_scientific_text_is_rarely_redacted():
    hits, total, which = false_positive_rate()
    assert total >= 200
    assert hits / total <= 0.02, which  # measured: see benchmarks/bench_postprocess.py


@pytest.mark.parametrize("text", [
    "I searched Google Scholar and PubMed.",
    "Tools such as Google Scholar help.",
    "Models such as GPT-4o and Claude differ on this benchmark [1].",
    "That is, i.e., GPT-4o scored 86% [1].",
])
def test_names_the_question_asks_about_stay_when_the_answer_does_not_speak_of_itself(text):
    assert redact_identity(text, exempt_text="Compare GPT-4o and Claude on MMLU.") == (text, False)


def test_a_streaming_topic_name_stays_hidden_until_the_next_words_show_it_is_not_a_self_name():
    question = "Which model are you, Claude or GPT-4o?"
    chunks = ["Сlaude", " here", ": yes [1]."]
    shown = ""
    for chunk in chunks:
        shown += chunk
        assert "laude" not in redact_identity(shown, question, partial=True)[0]
    topic = "Claude scores well on this benchmark, as the first paper reports in detail [1]."
    assert redact_identity(topic[:8], question, partial=True)[1] is True  # undecided: hidden
    assert redact_identity(topic, question, partial=True) == (topic, False)  # decided: a topic

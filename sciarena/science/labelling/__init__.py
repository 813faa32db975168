"""Labelling questions with their category and discipline: prompts, a strict parser, labellers, scoring.

prompts.py    question → chat messages; model reply → one label or "invalid" (pure)
labellers.py  the LLM labeller (any ``complete(messages) -> str``) and the offline rule labellers
gold.py       our hand-labelled questions (sciarena/data/eval/question_labels.jsonl)
metrics.py    accuracy and confusion matrices (pure)
resolve.py    a --model name → a labeller (offline rules, or a catalogue model behind its provider)
store.py      the resumable file of per-vote labels, and the loop that fills it
arena.py      the labels a new battle records, and which labeller gave each
cli.py        ``python -m sciarena label categories|disciplines``
"""

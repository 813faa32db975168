"""Labelling stored votes after the fact, and scoring labellers: the science around the arena's labellers.

The labellers themselves are the arena's (arena/labels/: the prompts, the keyword rules, the text
classifier, the LLM labeller, and the one the arena calls at vote time); how a model is asked for one
label and how its reply is read is answer/label_reply.py, shared by both. Here:

gold.py         our hand-labelled questions (sciarena/data/eval/question_labels.jsonl)
metrics.py      accuracy and confusion matrices (pure)
resolve.py      a --model name → a labeller: the offline ones by the names votes record, or a catalogue model
store.py        the resumable file of per-vote labels, and the loop that fills it
attribution.py  the citation judge: each (sentence, cited passage) pair → supporting, irrelevant, contradicting

The commands are cli/label.py (``python -m sciarena label categories|disciplines``) and
cli/label_attribution.py (``label attribution``).
"""

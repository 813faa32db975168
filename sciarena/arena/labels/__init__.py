"""A battle's question category and discipline, as the arena records them at vote time: offline rules and
the text classifier (rules, discipline_text, cues), catalogue-model labellers (labellers, prompts), and the
labeller the arena uses with its fallbacks (at_vote).

In: a question (and its retrieval). Out: ``QuestionLabels`` with who labelled each field.
"""

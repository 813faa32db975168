"""What an answer is made of, as pure text functions: the prompt both contestants get (prompt, the one place
it is built), the sentences and "[n]" citations of an answer (citations), the cleaning every snapshot goes
through (clean: reasoning, raw HTML, citation normalisation), anonymity (redact), whether a cited passage
backs a sentence (support: the lexical judge) and the optional LLM editor (editor).

In: a question, references, a contestant's raw text. Out: chat messages and a clean, anonymous ``Answer``.
"""

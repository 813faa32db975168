"""Model providers: one ``Provider`` contract (types.py), many backends.

- ``catalogue``: the model catalogue (data/models.json + an optional user file).
- ``openai_compat``: OpenAI and every OpenAI-compatible endpoint.
- ``together_provider``: open-weight models on Together AI.
- ``local_gguf``: a GGUF model in-process with llama.cpp (optional ``xllamacpp``).
- ``offline``: three baseline algorithms that need neither key nor network.
- ``registry``: providers built from the catalogue, and the battle pool.

Nothing is imported here, so importing one backend never pulls in the others' clients.
"""

"""Model providers: one ``Provider`` contract (core/types.py), three backends, one way to call a model.

- ``catalogue``: the model catalogue (data/models.json + an optional user file): models and endpoints.
- ``clients``: the one place a client library is built (``openai``, or ``together`` for Together AI).
- ``openai_compat``: the provider for every endpoint row (OpenAI, Together, any compatible server).
- ``guard`` / ``retry``: a streamed call's deadline and cancel; the one retry policy.
- ``local_gguf``: a GGUF model in-process with llama.cpp (optional ``xllamacpp``).
- ``offline``: three baseline algorithms that need neither key nor network.
- ``registry``: providers built from the catalogue, the battle pool, models picked by name.
- ``calls``: ``complete`` and ``moderate``, how helpers (rewriter, editor, moderation, judges) call a model.

Nothing is imported here, so importing one backend never pulls in the others' clients.
"""

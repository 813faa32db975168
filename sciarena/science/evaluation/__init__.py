"""SciArena-Eval: how well an LLM judge agrees with human votes.

- ``benchmark``: sample a balanced benchmark from vote records; read/write it as JSON lines.
- ``judge``: the pairwise prompt, the verdict parser, model judges and offline baselines.
- ``runner``: judge items concurrently, append predictions as they arrive, resume.
- ``metrics``: accuracy, per-discipline scores, intervals, position bias (pure functions).
- ``cli``: ``python -m sciarena eval build|run``.
"""

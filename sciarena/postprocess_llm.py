"""The optional LLM editor of the paper's postprocessing step (appendix A.3).

When SCIARENA_POSTPROCESS_MODEL is set, each finished answer is sent to that
model, which moves citations to sentence ends and strips Markdown with minimal
edits, answering in JSON. Its rewrite is used only if it keeps most of the
text (postprocess.accept_llm_rewrite); on any failure the original answer goes
on unchanged. The rule-based pass (postprocess.clean_answer) runs afterwards in
every case, so the display is consistent with or without an editor.
"""

from __future__ import annotations

import logging
from typing import Any, Sequence

from sciarena.errors import MalformedOutput
from sciarena.postprocess import accept_llm_rewrite, parse_llm_rewrite, strip_reasoning
from sciarena.prompting import build_postprocess_messages
from sciarena.types import Reference

log = logging.getLogger(__name__)


class LLMPostprocessor:
    """Asks one chat model to restyle answers; never raises, returns None when it cannot help."""

    def __init__(self, client: Any, model: str) -> None:
        self._client = client  # an openai.OpenAI (or compatible) client
        self.model = model

    @classmethod
    def connect(cls, model: str, *, base_url: str | None, api_key: str | None,
                timeout_s: float = 30.0) -> "LLMPostprocessor":
        from openai import OpenAI

        return cls(OpenAI(base_url=base_url, api_key=api_key or "unset", timeout=timeout_s, max_retries=1), model)

    def rewrite(self, question: str, references: Sequence[Reference], answer: str) -> str | None:
        """The edited answer, or None (editor failed, malformed reply, or it dropped too much text)."""
        text = strip_reasoning(answer)
        if not text:
            return None
        try:
            reply = self._client.chat.completions.create(
                model=self.model, temperature=0, response_format={"type": "json_object"},
                messages=[dict(m) for m in build_postprocess_messages(question, references, text)],
            )
            _, rewritten = parse_llm_rewrite(reply.choices[0].message.content or "")
        except MalformedOutput:
            log.warning("postprocessor %s returned a malformed reply; keeping the original", self.model)
            return None
        except Exception as err:  # an editor outage must never cost the voter an answer
            log.warning("postprocessor %s failed (%s); keeping the original", self.model, type(err).__name__)
            return None
        if not accept_llm_rewrite(text, rewritten):
            log.info("postprocessor %s dropped too much text; keeping the original", self.model)
            return None
        return rewritten

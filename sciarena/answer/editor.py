"""The optional LLM editor of the paper's postprocessing step (appendix A.3).

When SCIARENA_POSTPROCESS_MODEL names a catalogue model, each finished answer
is sent to it (through its provider, providers.calls.complete), and it moves citations to sentence ends and strips Markdown with minimal
edits, answering in JSON. Its rewrite is used only if it keeps most of the
text (clean.accept_llm_rewrite); on any failure the original answer goes
on unchanged. The rule-based pass (clean.clean_answer) runs afterwards in
every case, so the display is consistent with or without an editor.
"""

from __future__ import annotations

import logging
from typing import Sequence

from sciarena.answer.clean import accept_llm_rewrite, parse_llm_rewrite, strip_reasoning
from sciarena.answer.prompt import build_postprocess_messages
from sciarena.core.errors import MalformedOutput, ProviderError
from sciarena.core.types import ModelSpec, Provider, Reference
from sciarena.providers.calls import complete

log = logging.getLogger(__name__)


class LLMPostprocessor:
    """Asks one catalogue chat model to restyle answers; never raises, returns None when it cannot help."""

    def __init__(self, provider: Provider, spec: ModelSpec, *, timeout_s: float = 30.0) -> None:
        self.provider, self.spec, self.timeout_s = provider, spec, timeout_s

    def rewrite(self, question: str, references: Sequence[Reference], answer: str) -> str | None:
        """The edited answer, or None (editor failed, malformed reply, or it dropped too much text)."""
        text = strip_reasoning(answer)
        if not text:
            return None
        name = self.spec.name
        try:
            reply = complete(self.provider, self.spec, build_postprocess_messages(question, references, text),
                             timeout_s=self.timeout_s, temperature=0, response_format={"type": "json_object"})
            _, rewritten = parse_llm_rewrite(reply.text)
        except MalformedOutput:
            log.warning("postprocessor %s returned a malformed reply; keeping the original", name)
            return None
        except ProviderError as err:
            log.warning("postprocessor %s failed (%s); keeping the original", name, type(err).__name__)
            return None
        except Exception as err:  # an editor bug must never cost the voter an answer
            log.warning("postprocessor %s failed unexpectedly (%s); keeping the original", name, type(err).__name__)
            return None
        if not accept_llm_rewrite(text, rewritten):
            log.info("postprocessor %s dropped too much text; keeping the original", name)
            return None
        return rewritten

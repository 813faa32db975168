"""A model asked to name one label of a closed set: how it is asked, how its reply is read, what is kept.

Every labeller that calls a model goes through this: the arena's at vote time (arena/labels/), the
relabelling commands and the citation judge (science/labelling/). ``Complete`` is the plain callable a
labeller is given (a provider, a loopback test server or a script stands behind it); ``parse_label``
reads a reply strictly; ``MAX_RAW_CHARS`` of a reply are kept for auditing an invalid label.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from sciarena.answer.clean import strip_reasoning

Complete = Callable[[list[dict[str, str]]], str]  # chat messages → the model's reply text

INVALID = "invalid"  # the parse of any reply that is not exactly one label's name
MAX_RAW_CHARS = 500  # the reply kept for auditing an invalid label; a long answer is cut

# What may surround the name: whitespace, quotes, brackets, Markdown emphasis, a final full stop.
_WRAPPING = "\"'“”‘’`*_()[]{}<>.,;:!"
_SPACE = re.compile(r"\s+")


def _normal(text: str) -> str:
    return _SPACE.sub(" ", text).strip().casefold()


def parse_label(text: object, labels: Sequence[str]) -> str:
    """The one label in ``labels`` that ``text`` names exactly, else INVALID.

    Accepted: the name in any case, with any spacing, wrapped in quotes, brackets, Markdown
    emphasis or trailing punctuation, after a reasoning block. Nothing else — no prefixes
    ("Category: …"), no partial or near-miss names, no numbers — because a guess would
    silently mislabel a vote, while "invalid" is counted and can be retried.
    """
    if not isinstance(text, str):
        return INVALID
    visible = strip_reasoning(text).strip().strip(_WRAPPING).strip()
    wanted = _normal(visible)
    for label in labels:
        if _normal(label) == wanted:
            return label
    return INVALID

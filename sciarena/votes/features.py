"""The 🤗 Datasets features of a vote record of the current schema (``schema.VOTE_FIELDS``), nested ones included.

The dataset card declares them in its YAML header (``dataset_info: features``), so ``load_dataset`` reads every
file with this one schema: the JSON builder adds the columns an older file lacks as null and casts the rest,
where without them files of two schema versions fail to load together. The card is built from
``vote_features()`` (``card_metadata_yaml``), and tests/test_vote_features.py writes a record with every field
filled and checks these features cover exactly its keys with matching types, so a field added to the record
without a type here fails a test rather than leaving the card behind.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Mapping

import yaml

from sciarena.votes.schema import VOTE_FIELDS

if TYPE_CHECKING:
    from datasets import Features

# Arrow type names per field; a list field is ("list", item) and a list of records is ("list", {field: type}).
STRING, INT, FLOAT, BOOL = "string", "int64", "float64", "bool"

CITATION_TYPES: Mapping[str, Any] = MappingProxyType({
    "number": INT, "id": STRING, "concise_authors": STRING, "title": STRING, "authors": STRING, "year": INT,
    "venue": STRING, "url": STRING, "content": STRING,
})
CITATIONS = ("list", CITATION_TYPES)
TEXTS = ("list", STRING)

# Per side (suffix _a and _b), the figures a record has for the first turn and a turn object for its own.
SIDE_TYPES: Mapping[str, Any] = MappingProxyType({
    "first_token_s": FLOAT, "latency_s": FLOAT, "input_tokens": INT, "output_tokens": INT, "cost_usd": FLOAT,
    "redacted": BOOL, "masked": BOOL, "pipeline": STRING,  # pipeline: JSON text, so its type never varies
})


def _per_side(types: Mapping[str, Any]) -> dict[str, Any]:
    return {f"{name}_{side}": kind for name, kind in types.items() for side in "ab"}


TURN_TYPES: Mapping[str, Any] = MappingProxyType({
    "question": STRING, "responseA": STRING, "responseB": STRING, "citations_a": CITATIONS,
    "citations_b": CITATIONS, "references_added": CITATIONS, "retrieval_queries": TEXTS, "context_ids": TEXTS,
    **_per_side(SIDE_TYPES),
})

VOTE_TYPES: Mapping[str, Any] = MappingProxyType({
    "id": STRING, "question": STRING, "responseA": STRING, "responseB": STRING, "modelA": STRING,
    "modelB": STRING, "vote": STRING, "citations_a": CITATIONS, "citations_b": CITATIONS,
    "question_type": STRING, "subject": STRING, "schema_version": INT, "timestamp": STRING, "reason": STRING,
    "voter_id": STRING, "consent": BOOL, "retrieval_backend": STRING, "retrieval_queries": TEXTS,
    "retrieval_filters": STRING, "context_ids": TEXTS, "length_a": INT, "length_b": INT,
    "num_citations_a": INT, "num_citations_b": INT, **_per_side(SIDE_TYPES), "question_type_labeller": STRING,
    "subject_labeller": STRING, "subject_source": STRING, "subject_labelled": STRING, "app_version": STRING,
    "shared": BOOL, "shared_reason": BOOL, "num_turns": INT, "turns": ("list", TURN_TYPES),
    "identity_revealed": BOOL, "identity_reason": STRING,
})


def vote_features() -> "Features":
    """datasets.Features of a vote record of the current schema, columns in VOTE_FIELDS order."""
    # datasets (and with it pyarrow and pandas) is imported here, not at module top, for start-up time: only the
    # card builder needs it, and importing it costs 0.8-1.1 s on its own (0.15 s once gradio is loaded).
    from datasets import Features, List, Value

    def feature(kind: Any) -> Any:
        if isinstance(kind, str):
            return Value(kind)
        _, item = kind
        return List({k: feature(v) for k, v in item.items()} if isinstance(item, Mapping) else feature(item))

    # A field of VOTE_FIELDS without a type fails here (KeyError) and in the tests, never silently.
    return Features({name: feature(VOTE_TYPES[name]) for name in VOTE_FIELDS})


def card_metadata_yaml() -> str:
    """The ``dataset_info`` block of the card's YAML header, in the form ``datasets`` itself writes and reads
    (``DatasetInfo._to_yaml_dict``), for the default config the header's ``configs`` declares."""
    from datasets import DatasetInfo  # start-up time, as in vote_features

    info = {"config_name": "default", **DatasetInfo(features=vote_features())._to_yaml_dict()}
    return yaml.safe_dump({"dataset_info": info}, sort_keys=False, allow_unicode=True).rstrip("\n")


def card_declares_current_features(card: str) -> bool:
    """Whether a dataset card's YAML header declares the current schema's features for its default config.

    A card that does not (an owner's own, or one written before a schema change: the app never rewrites a card)
    makes ``load_dataset`` fail: with no features it infers a schema per file, which fails on files of two
    schema versions; with an older version's features it meets columns they do not list."""
    from datasets import DatasetInfo  # start-up time, as in vote_features

    if not card.startswith("---"):
        return False
    header = card.split("\n---", 1)[0].removeprefix("---")
    try:
        meta = yaml.safe_load(header) or {}
    except yaml.YAMLError:
        return False
    infos = meta.get("dataset_info") if isinstance(meta, dict) else None
    infos = infos if isinstance(infos, list) else [infos]
    default = next((i for i in infos if isinstance(i, dict) and i.get("config_name", "default") == "default"), {})
    return default.get("features") == DatasetInfo(features=vote_features())._to_yaml_dict()["features"]

"""The names the blind reading looks for, generated from the model catalogue when it loads.

Every contestant's display name and API id (and the id's last path segment), its organisation, the words of
those names (family and version words: "Sonnet", "Flash", "Maverick", "4o", "o3"), and each vendor's products
from ``sciarena/data/vendors.json``. Each name is stored in the canonical form of ``answer/canonical.py``
(look-alikes folded, case folded, separators gone), so the reader compares like with like.

Names are sorted into how much evidence they need:

* ``strong``: distinctive words (Claude, Anthropic, DeepSeek, GPT-4.1, gemini-2.5-flash, Kimi K2): found
  anywhere in the reading, glued to other letters too, forwards or backwards.
* ``versioned``: a brand that is also an ordinary word (Gemini, Llama, GPT, Grok, GLM) counts on its own
  when a version digit follows it ("Grok 4", "llama3") and no word of its other sense is near.
* ``ordinary``: words of ordinary prose (Google, Meta, Sonnet, Flash, o3, 4o, Grok the verb): hidden only in
  a sentence where the answer speaks about itself.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping

from sciarena.answer.canonical import canonical_word, looks
from sciarena.core.settings import DEFAULT_CATALOGUE, PACKAGE_DIR
from sciarena.core.types import ModelSpec

VENDORS_FILE = PACKAGE_DIR / "data" / "vendors.json"
# A catalogue fragment shorter than this would turn up inside ordinary words glued together; a vendor's
# product of three letters ("QwQ") is strong all the same.
_MIN_STRONG = 4
_WORDS = re.compile(r"[\s/()_:,\-.]+")


@dataclass(frozen=True)
class Names:
    """Canonical names by the evidence each needs (see the module docstring)."""

    strong: frozenset[str]
    versioned: frozenset[str]
    ordinary: frozenset[str]
    other_senses: Mapping[str, frozenset[str]]  # canonical name → canonical words that show another sense
    person_names: frozenset[str]  # followed by a capitalised surname, a person (Claude Shannon)
    not_names: frozenset[str]  # whole words that contain a strong name (philanthropic)

    @property
    def longest(self) -> int:
        return max(map(len, self.strong | self.versioned | self.ordinary), default=0)

    @functools.cached_property
    def prefixes(self) -> frozenset[str]:
        """Every proper prefix of three letters or more of a name, forwards and backwards: what a streamed
        text must not end with (the rest of the name may be in the next chunk)."""
        out: set[str] = set()
        for name in self.strong | self.versioned:
            for form in (name, name[::-1], looks(name), looks(name)[::-1]):
                out.update(form[:k] for k in range(3, len(form)))
        return frozenset(out)


def names_from(models: Iterable[ModelSpec], vendors: Mapping[str, object]) -> Names:
    """The names of ``models`` (offline baselines are algorithms with descriptive names, left out) and of
    the vendors' products in ``vendors`` (the parsed vendors.json)."""
    ordinary = {canonical_word(w) for w in vendors["ordinary_words"]}  # type: ignore[attr-defined]
    generic = {canonical_word(w) for w in vendors["generic_words"]}  # type: ignore[attr-defined]
    senses = {canonical_word(k): frozenset(canonical_word(w) for w in v)
              for k, v in vendors["other_senses"].items()}  # type: ignore[attr-defined]
    products: set[str] = set()  # vendors and products: strong unless ordinary words
    for vendor, listed in vendors["vendors"].items():  # type: ignore[attr-defined]
        products.update([vendor, *listed])
    catalogue: set[str] = set()  # the contestants' names, ids and organisations, and their words
    for spec in models:
        if spec.offline or spec.pipeline:
            continue
        org = re.sub(r"\s*\([^)]*\)", "", spec.organisation)
        for name in filter(None, [spec.name, spec.model_id, spec.model_id.rsplit("/", 1)[-1], org,
                                  *re.findall(r"\(([^)]*)\)", spec.organisation)]):
            catalogue.add(name)
            catalogue.update(w for w in _WORDS.split(name) if w)  # "Llama-4 Maverick": llama, 4, maverick
    forms = {canonical_word(n) for n in catalogue} | {canonical_word(w) for p in products for w in (p, *p.split())}
    product_forms = {canonical_word(p) for p in products}
    strong, versioned, small = set(), set(), set()
    for form in forms:
        if not form or form.isdigit() or form in generic:
            continue
        letters = sum(c.isalpha() for c in form)
        if form in ordinary:
            small.add(form)
            versioned.add(form)
        elif letters >= 3 and (len(form) >= _MIN_STRONG or form in product_forms):
            strong.add(form)  # "claude", "qwq", "gpt41", "qwen3", "kimik2"
        else:
            small.add(form)  # "o3", "4o", "k2", "r1", "a22b", "128e": only where the answer speaks of itself
    versioned &= {canonical_word(w) for w in vendors["versioned_brands"]}  # type: ignore[attr-defined]
    return Names(strong=frozenset(strong), versioned=frozenset(versioned), ordinary=frozenset(small),
                 other_senses=senses, person_names=frozenset(canonical_word(w) for w in vendors["person_names"]),
                 not_names=frozenset(canonical_word(w) for w in vendors["words_containing_names"]))


def read_vendors(path: Path = VENDORS_FILE) -> dict[str, object]:
    return json.loads(path.read_text(encoding="utf-8"))


@functools.cache  # the shipped catalogue and vendor table are read once per process, on first use
def shipped_names() -> Names:
    """The names of the shipped catalogue (``sciarena/data/models.json``) and vendor table."""
    from sciarena.providers.catalogue import load_catalogue_files

    catalogue = load_catalogue_files([DEFAULT_CATALOGUE])
    return names_from(catalogue.models, read_vendors())

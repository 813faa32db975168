"""Label a battle with its discipline (``subject``) and question category.

The paper labels questions with an LLM (appendix B.3). Offline we use two
cheap, transparent rules, good enough for the breakdown columns of a demo:
- subject: the discipline that holds most of the retrieval score among the
  retrieved papers (papers from our corpora carry a discipline);
- question type: keyword cues for the paper's five categories, else "Others".
"""

from __future__ import annotations

import re
from collections import defaultdict

from sciarena.types import DISCIPLINES, Retrieval

# Checked in order; the first category with a matching cue wins. Order matters:
# "find papers on the challenges of X" is a Paper Finding question.
_CUES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Paper Finding", (r"\b(find|list|recommend|suggest|give me|search for)\b.*\b(papers?|studies|articles|literature|references)\b",
                       r"^(papers?|research|studies|literature) (on|about)\b", r"\bsurvey of\b", r"\bliterature review\b")),
    ("Challenges & Limitations", (r"\bchallenges?\b", r"\blimitations?\b", r"\bobstacles?\b", r"\bbarriers?\b",
                                  r"\bdrawbacks?\b", r"\bweakness", r"\bopen (problems?|questions?)\b", r"\bhinder")),
    ("State-of-the-Art Assessment", (r"\bstate[- ]of[- ]the[- ]art\b", r"\brecent (advances|progress|developments|trends)\b",
                                     r"\blatest\b", r"\btrends?\b", r"\bcurrent (status|state|progress)\b", r"\bbreakthroughs?\b",
                                     r"\bemerging\b", r"\blately\b")),
    ("Methodology Inquiry", (r"\bhow (can|could|should|do|does|to) (we |one |i |researchers )?(measure|model|simulate|design|estimate|"
                             r"implement|build|train|integrate|detect|quantify|analy[sz]e|evaluate)\b",
                             r"\bmethods?\b", r"\bmethodolog", r"\btechniques?\b", r"\bprotocols?\b", r"\bsimulat", r"\bmodel(l)?ing\b")),
    ("Conceptual Explanation", (r"^(what|why|how)\b", r"\bexplain\b", r"\bmechanisms?\b", r"\bprinciples?\b", r"\bdefine\b",
                                r"\bdifference between\b", r"\brole of\b")),
)


def classify_question(question: str) -> str:
    """One of types.QUESTION_TYPES, by keyword cues."""
    text = question.strip().lower()
    for category, patterns in _CUES:
        if any(re.search(p, text) for p in patterns):
            return category
    return "Others"


def infer_subject(retrieval: Retrieval) -> str:
    """The discipline carrying most retrieval score, or "" when the papers carry none."""
    weight: dict[str, float] = defaultdict(float)
    for ref in retrieval.references:
        if ref.paper.discipline in DISCIPLINES:
            weight[ref.paper.discipline] += max(ref.score, 1e-6)
    if not weight:
        return ""
    return max(weight.items(), key=lambda kv: kv[1])[0]

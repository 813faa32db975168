"""Label a battle with its discipline (``subject``) and question category, offline.

The paper labels questions with an LLM (appendix B.3; ours is sciarena/science/labelling/).
These are the cheap, transparent rules that need no model, measured against our
hand-labelled questions by benchmarks/bench_labellers.py:
- question type: cues for the paper's five categories, else "Others";
- subject from retrieval: the discipline holding most of the retrieval score among
  the retrieved papers (papers from our corpora carry a discipline);
- subject from the question: discipline vocabulary in the question itself, for
  votes whose retrieval is not stored (the released data) or carries no discipline.
"""

from __future__ import annotations

import re
from collections import defaultdict

from sciarena.core.types import DISCIPLINES, Retrieval

# A request to produce or edit something (text, code, a format) rather than a question
# about the literature. Checked first: "proofread my paragraph on the latest trends in X"
# is not a State-of-the-Art question.
_TASK_REQUEST = (
    r"^(please )?(proofread|rewrite|rephrase|paraphrase|translate|shorten|summari[sz]e this|"
    r"draft|format|convert|fix|debug|correct|edit|polish|rate|grade)\b",
    r"^(please )?(can you |could you )?(help me )?(write|create|generate|make|design) (me )?(a|an|the|my|some|\d+)\b"
    r"(?!.*\b(literature|review of|papers?|studies|references)\b)",
    r"^give me (feedback|comments)\b", r"^suggest (a|an|some) (catchy )?(title|name)\b",
    r"^(hi|hello|hey|test(ing)?)\b", r"\b(cover letter|readme|slide outline|quiz)\b",
)

# Checked in order; the first category with a matching cue wins. Order matters:
# "find papers on the challenges of X" is a Paper Finding question, and "the most
# accurate methods today" asks for the state of the art, not for a method.
_CUES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Others", _TASK_REQUEST),
    ("Paper Finding", (
        r"\b(find|list|recommend|suggest|give me|search for|looking for|need|want)\b.*"
        r"\b(papers?|studies|articles|literature|references|sources|readings|reviews?|work|trials)\b",
        r"^(research|studies|literature|papers?|work|survey papers?|a literature review|a survey|review articles?)"
        r" (on|about|of|into)\b",
        r"\b(survey|review) (papers?|articles?)\b", r"\bsurvey of\b", r"\bliterature (review|on|about)\b",
        r"\b(summari[sz]e|overview of|review) (the )?(empirical |existing |current )?(literature|evidence|research)\b",
        r"\b(seminal|key|foundational|landmark|classic|influential) (papers?|references|readings|studies|works?)\b",
        r"\b(systematic reviews?|meta-analys[ie]s)\b",
        r"\bwhich (paper|trial|study|article)\b",
        r"\b(paper|trial|study) (that )?(first )?(introduced|proposed|reported|established|showed)\b",
    )),
    # Questions about how to do something, phrased as a request for a way or a procedure:
    # before the challenge cues, so "a sound way to deal with the challenge of X" is a method question.
    ("Methodology Inquiry", (
        r"\bhow (do|can|could|should|would|might) (i|we|you|one)\b",
        r"\bwhat('s| is) (the |a )?(best|good|sound|standard|reliable|recommended|right|proper) "
        r"(way|approach|method)\b",
        r"\bhow to\b", r"\bsteps? to\b",
    )),
    ("Challenges & Limitations", (
        r"\bchallenges?\b", r"\bchallenging\b", r"\blimitations?\b", r"\b(what|which factors?) limits?\b",
        r"\blimits (the|its|their)\b", r"\bobstacles?\b", r"\bbarriers?\b", r"\bdrawbacks?\b", r"\bweakness",
        r"\bshortcomings?\b", r"\bpitfalls?\b", r"\bcriticisms?\b", r"\bproblems? (with|remain|of)\b",
        r"\bopen (problems?|questions?|issues?)\b", r"\bunsolved\b", r"\bunresolved\b", r"\buncertaint",
        r"\bhinder", r"\bprevents?\b", r"\bstops?\b", r"\bdifficult", r"\bhard to\b", r"\bso hard\b",
        r"\bfall short\b", r"\bgo(es)? wrong\b", r"\bunreliable\b", r"\bgets? in the way\b", r"\bbottlenecks?\b",
        r"\bfail(s|ed|ing)?\b",  # the verb only: "heart failure" names a disease, not a difficulty
    )),
    ("State-of-the-Art Assessment", (
        r"\bstate[- ]of[- ]the[- ]art\b", r"\brecent(ly)?\b", r"\blatest\b", r"\bnewest\b", r"\bwhat'?s new\b",
        r"\bnew (trends?|routes?|approaches|methods|architectures|ideas|developments|techniques)\b",
        r"\btrends?\b", r"\bcurrent(ly)?\b", r"\bbreakthroughs?\b", r"\bemerg", r"\blately\b", r"\bprogress",
        r"\bfrontiers?\b", r"\binnovations?\b", r"\badvances\b", r"\btoday\b", r"\bright now\b",
        r"\bbest[- ]performing\b", r"\bmost accurate\b", r"\bleading (approaches|methods|techniques|models)\b",
        r"\bwhere does (the|our) (field|evidence|research)\b", r"\bover the (past|last)\b", r"\bin the (past|last)\b",
    )),
    ("Methodology Inquiry", (
        r"\bhow (can|could|should|do|does|to) (we |one |i |you |researchers |people )?(measure|model|simulate|design|"
        r"estimate|implement|build|train|integrate|detect|quantify|analy[sz]e|evaluate|validate|calibrate)\b",
        r"\bhow (can|could|should|do) (\w+ )?(researchers|people|scientists|engineers|pharmacologists|historians|"
        r"linguists|clinicians)\b", r"\bhow (can|could|should) .+ be \w+ed\b",
        r"\bmethods?\b", r"\bmethodolog", r"\btechniques?\b", r"\bprotocols?\b", r"\bprocedures?\b",
        r"\bapproach(es)?\b", r"\bsample size\b", r"\bsimulat", r"\bmodel(l)?ing\b", r"\bwould you recommend\b",
    )),
    ("Conceptual Explanation", (
        r"^(what|why|how)\b", r"\bexplain\b", r"\bmechanisms?\b", r"\bprinciples?\b", r"\bdefine\b",
        r"\bdifference between\b", r"\brole of\b", r"\bin simple terms\b", r"\bby what\b",
    )),
)


def classify_question(question: str) -> str:
    """One of types.QUESTION_TYPES, by cues."""
    text = " ".join(question.strip().lower().split())
    for category, patterns in _CUES:
        if any(re.search(p, text) for p in patterns):
            return category
    return "Others"


def infer_subject(retrieval: Retrieval) -> str:
    """The discipline carrying most retrieval score, or "" when the papers carry none.

    Scores are squared so the few papers that match the question well outweigh the long
    tail that matched one generic word (measured in benchmarks/bench_labellers.py).
    """
    weight: dict[str, float] = defaultdict(float)
    for ref in retrieval.references:
        if ref.paper.discipline in DISCIPLINES:
            weight[ref.paper.discipline] += max(ref.score, 1e-6) ** 2
    if not weight:
        return ""
    return max(weight.items(), key=lambda kv: kv[1])[0]


# Vocabulary that marks a question's discipline. A question about applying a tool to a
# domain ("deep learning for medical image diagnosis") belongs to the domain, so general
# computing words count less than domain words.
_DOMAIN_WORDS: dict[str, tuple[str, ...]] = {
    "Healthcare": (
        r"patients?", r"clinic(al|s)?", r"hospital", r"diseases?", r"diagnos", r"therap", r"drugs?",
        r"medic(al|ine|ation)", r"cancers?", r"tumou?rs?", r"oncolog", r"vaccin", r"nurs(e|es|ing)", r"healthcare",
        r"public health", r"mental health", r"dementia", r"alzheimer", r"diabet", r"obes", r"insulin", r"cardio",
        r"cardiac", r"heart", r"blood[- ]pressure", r"hypertens", r"sepsis", r"intensive care", r"epidemiolog",
        r"pharmac", r"surg", r"mri\b", r"radiolog", r"antibiotic", r"antimicrobial", r"infect", r"malaria",
        r"covid", r"psychedelic", r"readmission", r"immun", r"t[- ]cells?", r"pd-1", r"car-t", r"glp-1", r"sglt2",
        r"bmi\b", r"retinopathy", r"neuropathy", r"icd-10", r"physicians?", r"doctors?", r"headache", r"fever",
        r"hospitali[sz]", r"pharmacokinetic", r"trials?", r"screening", r"telemedicine", r"telehealth",
        r"health records?",
    ),
    "Natural Science": (
        r"physic", r"quantum", r"cosmic", r"cosmolog", r"galax", r"universe", r"astro", r"planet", r"stars?\b",
        r"black holes?", r"particles?", r"higgs", r"neutrino", r"dark matter", r"antimatter", r"superconduct",
        r"chemi", r"molecul", r"enzym", r"proteins?", r"genes?\b", r"genom", r"dna\b", r"rna\b", r"species",
        r"ecolog", r"plants?\b", r"fung", r"soil", r"ocean", r"marine", r"climate", r"earthquake", r"geolog",
        r"seismic", r"evolution", r"fossil", r"organisms?", r"zebrafish", r"bacteri", r"archaea", r"crispr",
        r"catalys", r"spectroscop", r"crystal", r"chiral", r"photochem", r"coral", r"plankton", r"groundwater",
        r"ammonia", r"atmospher", r"cryo-em", r"interatomic", r"microplastic", r"thermal conductivity",
        r"density functional", r"transcription", r"methylation", r"mycorrhiz", r"phylogen", r"divergence times",
        r"biolog", r"electronvolts?", r"single-cell", r"mutations?", r"metal[–-]organic frameworks?",
    ),
    "Humanities & Social Sciences": (
        r"econom", r"wages?", r"gdp\b", r"labou?r\b", r"employment", r"jobs\b", r"politic", r"parliament",
        r"democra", r"sociolog", r"social[- ](norms|psychology|sciences?|media|desirability)",
        r"survey (researchers|respondents|data)", r"societ", r"cultur", r"histor", r"manuscripts?", r"archives?",
        r"colonial", r"religio", r"philosoph", r"kant\b", r"ethic", r"linguist", r"languages?\b(?! models?)",
        r"psycholog", r"interviews?", r"educat", r"school", r"teach", r"legal\b", r"\blaw\b", r"courts?\b",
        r"refugee", r"migra", r"income", r"poverty", r"inequal", r"budget", r"welfare", r"norms\b", r"cooperation",
        r"game theory", r"prospect theory", r"loss aversion", r"endowment effect", r"bourdieu", r"gender",
        r"remittance", r"child labou?r", r"basic income", r"humanities", r"philolog", r"newspapers?",
        r"printing press", r"early modern", r"medieval", r"well-being", r"minimum wage", r"replication crisis",
        r"polari[sz]", r"participatory", r"carbon border", r"teenage", r"adolescen", r"sociology", r"econometric",
        r"difference-in-differences", r"class size", r"test scores",
    ),
    "Engineering": (
        r"engineer", r"neural networks?", r"deep learning", r"machine learning", r"language models?", r"llms?\b",
        r"transformers?", r"gpus?\b", r"pytorch", r"algorithm", r"software", r"robot", r"controller", r"control\b",
        r"sensors?", r"kalman", r"signal", r"wireless", r"5g\b", r"mimo", r"antenna", r"turbo codes?", r"shannon",
        r"batter(y|ies)", r"lithium", r"anodes?", r"cathodes?", r"solar cells?", r"photovoltaic", r"perovskite",
        r"power[- ]flow", r"grid\b", r"feeder", r"turbines?", r"structural", r"concrete", r"steel", r"bridges?",
        r"mesh\b", r"finite[- ]element", r"turbulen", r"large-eddy", r"manufactur", r"topology optimi[sz]ation",
        r"aerospace", r"drones?", r"edge computing", r"scheduling", r"retrieval", r"hallucination", r"fine-tun",
        r"reinforcement learning", r"sim-to-real", r"locomotion", r"translation systems", r"bleu\b", r"github",
        r"latex", r"batch normali[sz]ation", r"physics-informed", r"electric vehicles?", r"ev\b",
        r"code generation", r"architectures?", r"optimi[sz]ers?", r"benchmarks?", r"capacity fade", r"defect",
        r"electrolys",
    ),
}
# Words that are a tool or a study design more often than the subject of a question
# (general computing vocabulary; trials are run in economics too).
_WEAK_WORDS = frozenset({r"neural networks?", r"deep learning", r"machine learning", r"language models?",
                         r"llms?\b", r"transformers?", r"algorithm", r"benchmarks?", r"architectures?", r"software",
                         r"trials?"})
_WEAK_WEIGHT = 0.5


def subject_from_question(question: str) -> str:
    """The discipline whose vocabulary weighs most in the question, or "" when none appears.

    Ties go to the discipline listed first in types.DISCIPLINES.
    """
    text = " ".join(question.lower().split())
    weight: dict[str, float] = defaultdict(float)
    for discipline, words in _DOMAIN_WORDS.items():
        for word in words:
            if re.search(r"\b" + word, text):
                weight[discipline] += _WEAK_WEIGHT if word in _WEAK_WORDS else 1.0
    if not weight:
        return ""
    best = max(weight.values())
    return next(d for d in DISCIPLINES if weight.get(d) == best)


def label_subject(question: str, retrieval: Retrieval | None = None) -> str:
    """The offline discipline label: the question's own vocabulary, else the retrieval vote, else ""."""
    return subject_from_question(question) or (infer_subject(retrieval) if retrieval is not None else "")

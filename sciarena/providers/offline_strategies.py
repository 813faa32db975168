"""Three offline answer composers: extractive MMR, per-paper digest, claim clusters.

Each is a pure, deterministic function (question, references) → plain text that
cites only the given references, as "[n]" with the reference's number. They are
baselines, not language models: every claim is a sentence copied from a
retrieved passage, and only the selection and arrangement differ:

* extractive_mmr — the most question-relevant sentences, chosen with Maximal
  Marginal Relevance so that they do not repeat one another;
* per_paper_digest — one paragraph per top paper, framed by an opening line and
  a closing synthesis of the noun phrases the papers share;
* claim_clusters — relevant sentences grouped into themes by spherical k-means
  on their TF-IDF vectors, one paragraph per theme across papers, each theme named
  by the noun phrases of its sentences (noun_phrases.py), not by loose words.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Sequence

from sciarena.core.types import Paper, Reference
from sciarena.providers.noun_phrases import Phrase, noun_phrases
from sciarena.providers.offline_text import (
    NO_PAPERS,
    Analysis,
    Vector,
    analyse,
    cite,
    cosine,
    join_labels,
    lower_first,
    titles_only,
    tokens,
)

MMR_LAMBDA = 0.7
_DIGEST_FRAMES = (
    "bears most directly on the question",
    "adds a closely related perspective",
    "is also relevant",
    "contributes further evidence",
    "rounds out the picture",
)
_THEME_ORDINALS = ("A first theme", "A second theme", "A third theme")
_CONNECTIVES = ("", "Relatedly, ", "In addition, ")


def extractive_mmr(question: str, references: Sequence[Reference], lam: float = MMR_LAMBDA) -> str:
    """4–7 relevant, mutually diverse sentences, each followed by its source's [n]."""
    if not references:
        return NO_PAPERS
    a = analyse(question, references)
    if not a.sentences:
        return titles_only(references)
    titles = {r.number: a.space.vector(r.paper.title) for r in references}
    # The title says what the whole paper is about; a little of it steadies sentence-level scores.
    score = [0.8 * rel + 0.2 * cosine(a.question, titles[s.number])
             for s, rel in zip(a.sentences, a.relevance, strict=True)]
    relevant = sum(1 for s in score if s > 0)
    k = min(len(a.sentences), max(4, min(7, relevant)))
    chosen = mmr(list(range(len(a.sentences))), score, a.vectors, k, lam)
    lines = [cite(a.sentences[i].text, a.sentences[i].number) for i in chosen]
    cut = (len(lines) + 1) // 2 if len(lines) >= 5 else len(lines)
    return "\n\n".join(" ".join(part) for part in (lines[:cut], lines[cut:]) if part)


def mmr(candidates: list[int], score: Sequence[float], vectors: Sequence[Vector], k: int, lam: float) -> list[int]:
    """Greedy MMR: argmax λ·relevance − (1−λ)·max similarity to what is already chosen."""
    chosen: list[int] = []
    remaining = list(candidates)
    redundancy = {i: 0.0 for i in remaining}  # max similarity to the chosen set, updated per pick
    while remaining and len(chosen) < k:
        best = max(remaining, key=lambda i: (lam * score[i] - (1 - lam) * redundancy[i], -i))  # ties → earlier
        chosen.append(best)
        remaining.remove(best)
        for i in remaining:
            redundancy[i] = max(redundancy[i], cosine(vectors[i], vectors[best]))
    return chosen


def per_paper_digest(question: str, references: Sequence[Reference], max_papers: int = 5) -> str:
    """An opening line, one paragraph per top paper in relevance order, and a closing synthesis."""
    if not references:
        return NO_PAPERS
    a = analyse(question, references)
    if not a.sentences:
        return titles_only(references)
    by_paper: dict[int, list[int]] = defaultdict(list)
    for i, s in enumerate(a.sentences):
        by_paper[s.number].append(i)
    refs = {r.number: r for r in references if r.number in by_paper}
    paper_score = {n: max(a.relevance[i] for i in idx)
                   + 0.5 * cosine(a.question, a.space.vector(refs[n].paper.title)) for n, idx in by_paper.items()}
    ranked = sorted(paper_score, key=lambda n: (-paper_score[n], n))
    positive = [n for n in ranked if paper_score[n] > 0]
    top = (positive if len(positive) >= 3 else ranked[:3])[:max_papers]

    paragraphs = [_opening(question, a, len(top))]
    used: dict[int, list[int]] = {}
    for rank, n in enumerate(top):
        picks = _best_sentences(a, by_paper[n])
        used[n] = picks
        body = " ".join(cite(a.sentences[i].text, n) for i in picks)
        paragraphs.append(f"{_lead(refs[n].paper)} {_DIGEST_FRAMES[rank % len(_DIGEST_FRAMES)]}. {body}")
    if len(used) > 1:  # "taken together" needs more than one paper to take
        paragraphs.append(_synthesis(a, used))
    return "\n\n".join(paragraphs)


def _best_sentences(a: Analysis, indices: list[int]) -> list[int]:
    ordered = sorted(indices, key=lambda i: (-a.relevance[i], i))
    picks = ordered[:1]
    for i in ordered[1:]:
        if a.relevance[i] > 0 and a.relevance[i] >= 0.6 * a.relevance[picks[0]] \
                and cosine(a.vectors[i], a.vectors[picks[0]]) < 0.5:
            picks.append(i)
            break
    return sorted(picks)  # in the paper's own order, so the two sentences read naturally


def _lead(paper: Paper) -> str:
    title = f'"{paper.title.strip().rstrip(".")}"'
    if not paper.authors:
        return f"The paper {title}" + (f" ({paper.year})" if paper.year else "")
    surnames = [name.split()[-1] for name in paper.authors if name.split()]
    if len(surnames) == 1 and not paper.et_al:
        names = surnames[0]
    elif len(surnames) == 2 and not paper.et_al:
        names = f"{surnames[0]} and {surnames[1]}"
    else:
        names = f"{surnames[0]} et al."
    return f"{title} by {names}" + (f" ({paper.year})" if paper.year else "")


def _phrase_weight(stems: Sequence[str], vector: Vector) -> float:
    return sum(vector.get(t, 0.0) for t in stems)


def _topics(question: str, a: Analysis, limit: int = 2) -> list[str]:
    """The question's noun phrases that weigh most in it (by the TF-IDF weight of their words), in the
    question's own order."""
    found = [(p, tokens(p.text)) for p in noun_phrases(question)]
    weighed = [(p, _phrase_weight(stems, a.question)) for p, stems in found if stems]
    top = sorted(weighed, key=lambda pw: -pw[1])[:limit]
    return [p.text for p, w in weighed if any(p is q for q, _ in top) and w > 0]


def _opening(question: str, a: Analysis, n_papers: int) -> str:
    topics = _topics(question, a)
    about = f" on {join_labels(topics)}" if topics else ""
    if n_papers == 1:
        return f"Among the retrieved literature{about}, the following paper speaks most directly to the question."
    return (f"Among the retrieved literature{about}, the following {n_papers} papers speak most directly to the "
            "question, in order of relevance.")


def _sentence_phrases(a: Analysis, i: int) -> list[tuple[Phrase, tuple[str, ...]]]:
    """Sentence i's noun phrases with their content stems (phrases of stop words only dropped)."""
    return [(p, stems) for p in noun_phrases(a.sentences[i].text) if (stems := tuple(tokens(p.text)))]


def _best_phrases(candidates: dict[tuple[str, ...], tuple[float, str]], limit: int,
                  exclude: set[tuple[str, ...]] = frozenset()) -> list[tuple[str, ...]]:
    """The heaviest phrase keys, skipping one that overlaps a phrase already chosen."""
    chosen: list[tuple[str, ...]] = []
    for key in sorted(candidates, key=lambda k: (-candidates[k][0], candidates[k][1])):
        taken = chosen + list(exclude)
        # a phrase sharing most of its words with one already chosen says the same ("sickle cell disease",
        # "sickle cell patients")
        if any(2 * len(set(key) & set(other)) >= min(len(key), len(other)) for other in taken):
            continue
        chosen.append(key)
        if len(chosen) == limit:
            break
    return chosen


def _synthesis(a: Analysis, used: dict[int, list[int]]) -> str:
    papers_with: dict[tuple[str, ...], set[int]] = defaultdict(set)
    weight: dict[tuple[str, ...], float] = defaultdict(float)
    written: dict[tuple[str, ...], Counter[str]] = defaultdict(Counter)
    for n, picks in used.items():
        for i in picks:
            for phrase, stems in _sentence_phrases(a, i):
                papers_with[stems].add(n)
                weight[stems] += _phrase_weight(stems, a.vectors[i]) + _phrase_weight(stems, a.question)
                written[stems][phrase.text] += 1
    # More papers first, then weight (a phrase weighs well under 10: its words' normalised TF-IDF sums).
    shared = _best_phrases({k: (10.0 * len(ns) + weight[k], " ".join(k))
                            for k, ns in papers_with.items() if len(ns) >= 2}, 3)
    if not shared:
        return ("Taken together, these papers address complementary aspects of the question "
                "rather than repeating a single finding.")
    cited = sorted(set().union(*(papers_with[t] for t in shared)))
    marks = "".join(f"[{n}]" for n in cited)
    words = join_labels([_written(written[t]) for t in shared])
    return (f"Taken together, several of these papers return to {words}, "
            f"which suggests these are central to the question {marks}.")


def _written(forms: Counter[str]) -> str:
    """The commonest written form of a phrase (the first in order of equals)."""
    return min(forms.items(), key=lambda kv: (-kv[1], kv[0]))[0]


def claim_clusters(question: str, references: Sequence[Reference], max_themes: int = 3) -> str:
    """Relevant sentences grouped into up to three themes, one paragraph per theme across papers."""
    if not references:
        return NO_PAPERS
    a = analyse(question, references)
    if not a.sentences:
        return titles_only(references)
    pool = _theme_pool(a)
    k = 1 if len(pool) < 4 else 2 if len(pool) < 8 else max_themes
    clusters = spherical_kmeans([a.vectors[i] for i in pool], k)
    groups = [[pool[j] for j in members] for members in clusters if members]
    groups.sort(key=lambda g: (-max(a.relevance[i] for i in g), min(g)))
    labels: list[list[tuple[str, str]]] = []
    for g in groups:
        labels.append(_label(a, g, exclude={tuple(key.split()) for lab in labels for key, _ in lab}))
    count = "one theme" if len(groups) == 1 else f"{len(groups)} themes"
    heads = join_labels([lab[0][1] for lab in labels if lab] or ["the question"])
    paragraphs = [f"The relevant findings in the retrieved papers fall into {count}, concerning {heads}."]
    for rank, (group, terms) in enumerate(zip(groups, labels, strict=True)):
        label = join_labels([text for _, text in terms]) if terms else "further findings"
        claims = _spread(a, group)
        body = " ".join(_connect(j, cite(a.sentences[i].text, a.sentences[i].number)) for j, i in enumerate(claims))
        paragraphs.append(f"{_THEME_ORDINALS[rank % len(_THEME_ORDINALS)]} concerns {label}. {body}")
    return "\n\n".join(paragraphs)


def _connect(position: int, sentence: str) -> str:
    # A connective only where the sentence's first word can safely lose its capital ("The", "We").
    lowered = lower_first(sentence)
    if position == 0 or lowered == sentence:
        return sentence
    return _CONNECTIVES[position % len(_CONNECTIVES)] + lowered


def _theme_pool(a: Analysis, size: int = 15, per_paper: int = 3) -> list[int]:
    ranked = [i for i in sorted(range(len(a.sentences)), key=lambda i: (-a.relevance[i], i)) if a.relevance[i] > 0]
    if len(ranked) < 3:
        # Nothing matches the question's words: fall back to each paper's opening sentences.
        ranked = sorted(range(len(a.sentences)), key=lambda i: (a.sentences[i].number, i))
    taken: Counter[int] = Counter()
    pool: list[int] = []
    for i in ranked:
        if taken[a.sentences[i].number] < per_paper and a.vectors[i]:
            pool.append(i)
            taken[a.sentences[i].number] += 1
        if len(pool) == size:
            break
    return pool or [0]


def spherical_kmeans(vectors: Sequence[Vector], k: int, iterations: int = 10) -> list[list[int]]:
    """Cluster normalised vectors by cosine; farthest-first seeding keeps it deterministic."""
    k = max(1, min(k, len(vectors)))
    seeds = [0]
    while len(seeds) < k:
        seeds.append(min((i for i in range(len(vectors)) if i not in seeds),
                         key=lambda i: (max(cosine(vectors[i], vectors[s]) for s in seeds), i)))
    centroids = [dict(vectors[s]) for s in seeds]
    assignment: list[int] = []
    for _ in range(iterations):
        new = [max(range(k), key=lambda c: (cosine(v, centroids[c]), -c)) for v in vectors]
        if new == assignment:
            break
        assignment = new
        for c in range(k):
            total: Counter[str] = Counter()
            for v, owner in zip(vectors, assignment, strict=True):
                if owner == c:
                    total.update(v)
            norm = sum(x * x for x in total.values()) ** 0.5
            centroids[c] = {t: x / norm for t, x in total.items()} if norm else centroids[c]
    return [[i for i, owner in enumerate(assignment) if owner == c] for c in range(k)]


def _label(a: Analysis, group: list[int], exclude: set[tuple[str, ...]]) -> list[tuple[str, str]]:
    """The two heaviest noun phrases of a theme's sentences (TF-IDF weight of their words, summed over the
    sentences holding them) not already naming an earlier theme, as (key, written form)."""
    weight: dict[tuple[str, ...], float] = defaultdict(float)
    written: dict[tuple[str, ...], Counter[str]] = defaultdict(Counter)
    for i in group:
        for phrase, stems in _sentence_phrases(a, i):
            weight[stems] += _phrase_weight(stems, a.vectors[i]) + _phrase_weight(stems, a.question)
            written[stems][phrase.text] += 1
    best = _best_phrases({k: (w, " ".join(k)) for k, w in weight.items()}, 2, exclude)
    return [(" ".join(k), _written(written[k])) for k in best]


def _spread(a: Analysis, group: list[int], limit: int = 3) -> list[int]:
    # Prefer claims from different papers, so a theme paragraph combines sources.
    ranked = sorted(group, key=lambda i: (-a.relevance[i], i))
    picks: list[int] = []
    for i in ranked:
        if a.sentences[i].number not in {a.sentences[j].number for j in picks}:
            picks.append(i)
    picks += [i for i in ranked if i not in picks]
    return picks[:limit]

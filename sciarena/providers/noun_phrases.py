"""A small noun-phrase chunker, so offline answers name their themes with phrases, not loose words.

The offline composers used to label a theme with its heaviest single terms ("achieve, limits and
precision", "called and early"): verbs, adverbs and adjectives cut out of their phrases. This finds
noun phrases without a tagger, in one left-to-right pass: a phrase is a run of words with no
function word, verb, adverb or punctuation inside, cut to at most ``MAX_WORDS`` words, and it must end
in a word that can be a noun (not an adjective-only or participle ending, not a known verb). Word lists
and suffix rules, not a grammar: wrong now and then ("lead" the metal reads as a verb), never salad.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

MAX_WORDS = 4
# Function words and other words that never sit inside a noun phrase (a phrase breaks at them).
_BREAK = frozenset(
    """a about above across after again against all along also although am among an and another any are as at
    be because been before being below between both but by can could did do does doing done down during each
    either else even ever every few for from further had has have having he her here hers him his how however
    i if in into is it its itself just least less like may me might more most much must my neither no nor not
    now of off on once only onto or other others our ours out over own per perhaps quite rather same shall she
    should since so some such than that the their theirs them themselves then there therefore these they this
    those though through thus to too toward towards under unless until up upon us very via was we well were
    what whatever when where whereas whether which while who whom whose why will with within without would yet
    you your yours et al e g i ie eg vs cf one two three four five six seven eight nine ten first second third
    many several various different recent current main key often usually generally largely mainly partly
    directly highly still already always never also instead especially particularly specifically enough fewer
    greater higher lower larger smaller better worse versus anything something nothing everything anyone
    someone bad good poor clear due true false possible available similar simple able""".split()
)
# Common verbs of scientific prose (base forms; "-s", "-ed" and "-ing" forms are found by rule below).
_VERBS = frozenset(
    """achieve add affect allow argue ask assess become begin benefit bring call cause change claim combine compare confirm
    consider contain continue cut deliver demonstrate describe detect determine develop differ drive enable
    establish estimate examine explain explore find follow get give go grow help hold identify improve include
    increase indicate influence introduce involve keep lack lead learn let lie limit lower make mean measure meet move
    need observe obtain occur offer outperform predict prevent produce propose prove provide raise reach reduce
    reflect remain replace report require reveal rise run say see seem serve set show spread stand start state
    stay suggest support memorise memorize take tell tend test think train treat try turn underlie understand
    use vary work yield
    led found made shown gave took became began grew held kept met ran rose said saw set told thought went""".split()
)
# Adjectives that end a run but cannot head it ("early", "large" ...): a phrase ending in one is cut back.
_NOT_HEAD_SUFFIXES = ("ly", "ous", "ive", "ful", "less", "able", "ible", "al", "ic", "ed", "est", "ary")
_NOUN_SUFFIX_EXCEPTIONS = frozenset(
    """animal arrival capital chemical clinical control criminal disposal interval journal material metal
    method model national original potential principal professional proposal rival signal survival terminal
    total trial renewal removal referral rental withdrawal individual mechanic clinic logic music public
    topic graphic republic traffic epidemic pandemic mosaic plastic electronic antibiotic statistic
    hospital need seed speed feed bed breed creed greed shed weed steed red bleed
    executive objective alternative relative representative initiative incentive narrative perspective
    detective directive derivative sedative additive contraceptive adhesive explosive
    variable table cable vegetable label""".split()
)
# After these the next word is a verb ("to disrupt", "can achieve").
# (Not "does": in a question the subject follows it.)
# An "-ing" word right before one of these takes an object ("a vaccine encoding a protein"): a verb.
_DETERMINERS = frozenset("a an the its their this these that those".split())
_BEFORE_VERB = frozenset("to can could may might will would should must cannot".split())
# "-ing" words that are nouns ("training data", "overfitting"); any other "-ing" word opening a phrase
# takes an object ("raising fetal hemoglobin") and is cut off, and alone it is left out.
_ING_MODIFIERS = frozenset(
    """training learning editing imaging screening sequencing computing processing signalling signaling
    modelling modeling engineering manufacturing programming planning reasoning building housing funding
    spending lending pricing marketing banking farming mining fishing nursing testing teaching writing
    reading speaking hearing overfitting underfitting smoking drinking bleeding warming cooling""".split()
)
_SENTENCE_END = frozenset(".!?")
_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[-'’][A-Za-z0-9]+)*|\d+(?:\.\d+)?|[^\sA-Za-z0-9]")


@dataclass(frozen=True)
class Phrase:
    """A noun phrase as written, and its key (lower-cased, for counting)."""

    text: str
    key: str

    @property
    def words(self) -> int:
        return self.key.count(" ") + 1


def _base(word: str) -> str:
    """The likely base of an inflected verb form (reduces → reduce, limited → limit, driving → drive)."""
    for suffix, repl in (("ies", "y"), ("ied", "y"), ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""),
                         ("ing", "e"), ("ing", ""), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            stem = word[: len(word) - len(suffix)] + repl
            if stem in _VERBS:
                return stem
    return word


def is_verb(word: str) -> bool:
    """Whether ``word`` (lower-case) is a form of a known verb, or an "-ed" form (a past tense or a
    participle: cut out of phrases, so "randomised trial" gives "trial"). "-ing" forms are not: in
    scientific prose they head phrases ("genome editing", "training data")."""
    if word.endswith("ing"):
        return False
    if word in _VERBS or (word.endswith("ed") and len(word) > 4 and word not in _NOUN_SUFFIX_EXCEPTIONS):
        return True
    return _base(word) in _VERBS


def can_head(word: str) -> bool:
    """Whether ``word`` (lower-case) can end a noun phrase."""
    if word in _NOUN_SUFFIX_EXCEPTIONS:
        return True
    if word.endswith("ing"):
        return True  # "genome editing", "calcium imaging": a gerund heads a phrase when one runs into it
    plural = word.endswith("s") and not word.endswith("ss") and word not in _VERBS  # "speed limits"
    return not word.endswith(_NOT_HEAD_SUFFIXES) and (plural or not is_verb(word))


def _runs(text: str) -> Iterator[list[tuple[str, bool]]]:
    """Maximal runs of candidate words, each as (token, whether it opens its sentence)."""
    found = _TOKEN.findall(text)
    run: list[tuple[str, bool]] = []
    previous, opening = "", True
    for k, token in enumerate(found):
        low = token.lower()
        following = found[k + 1].lower() if k + 1 < len(found) else ""
        # A plural noun looks like a verb's third person ("limits"). After a modifier, and not followed by
        # a word that could be its object ("speed limits reduce", "speed limits on"), it is the noun; at the
        # start of a run, or before a candidate word ("wage reduces employment"), the verb.
        plural_noun = (bool(run) and low.endswith("s") and not low.endswith(("ss", "ed"))
                       and not (following[:1].isalpha() and following not in _BREAK and not is_verb(following)))
        verb = is_verb(low) and not plural_noun
        if not token[0].isalpha() or low in _BREAK or low.endswith("ly") or verb or previous in _BEFORE_VERB:
            if run and low in _DETERMINERS and run[-1][0].lower().endswith("ing"):
                run.pop()
            if run:
                yield run
            run = []
        else:
            run.append((token, opening))
        previous, opening = low, token in _SENTENCE_END
    if run:
        yield run


def noun_phrases(text: str) -> list[Phrase]:
    """The noun phrases of ``text`` in order: each maximal run cut to its last word that can head a
    phrase, then to its last ``MAX_WORDS`` words; an opening "-ing" word that takes an object is cut
    off, and a lone one is left out (usually a verb), unless it is a known "-ing" noun. Words keep their
    capitals except a sentence's capitalised first word ("Dropout" → "dropout", "New Jersey" stays)."""
    out: list[Phrase] = []
    for run in _runs(text):
        end = len(run)
        while end and not can_head(run[end - 1][0].lower()):
            end -= 1
        words = run[max(0, end - MAX_WORDS): end]
        if len(words) > 1 and words[0][0].lower().endswith("ing") and words[0][0].lower() not in _ING_MODIFIERS:
            words = words[1:]
        lone_ing = len(words) == 1 and words[0][0].lower().endswith("ing") and words[0][0].lower() not in _ING_MODIFIERS
        if not words or lone_ing:
            continue
        if len(words) == 1 and len(words[0][0]) < 3:
            continue
        written = " ".join(w.lower() if first and w[:1].isupper() and w[1:].islower() else w for w, first in words)
        out.append(Phrase(written, " ".join(w.lower() for w, _ in words)))
    return out

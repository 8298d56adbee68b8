"""Filters of the miner: the paper's (negation, passive voice, argument length, duplicates) and
the ones a real corpus needs (boilerplate, over-long or garbage sentences, word-sense checks).

Every filter is a small pure function (or, for duplicates and boilerplate, a small stateful
object) that returns the :class:`DropReason` it drops a candidate for, or ``None``; the extractor
counts the reasons, so the statistics report says how many candidates each filter removed.

Passive voice, precisely
------------------------
A *causative verb* pattern (cause, lead to, bring about/on, give rise to, induce, prevent/stop ...
from) is dropped when its verb is a past participle governed by *be* or *get* within the two
preceding words ("was caused", "had been led to", "were brought about", "is prevented from").
In the passive the grammatical subject on the left is the *patient*, so reading it as the cause
inverts the pair ("He was led to the door" is not door-causing). ``caused by`` is a pattern of
its own (EPC) and is not dropped: the regex of ``cause`` excludes ``caused by``, and ``caused by``
encodes the passive's direction (effect *caused by* cause). Active perfects ("has led to",
"had given rise to") are not passive and are kept.

Examples
--------
>>> from causal_mining.patterns import find_matches
>>> s = "He was led to the door by a servant."
>>> drop_passive(s, find_matches(s)[0])
<DropReason.PASSIVE: 'passive'>
>>> s = "The storm did not cause any damage."
>>> drop_negated(s, find_matches(s)[0])
<DropReason.NEGATED: 'negated'>
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from enum import StrEnum
from itertools import pairwise

from causal_mining.patterns import PatternMatch, Shape
from causal_mining.sentences import words

__all__ = [
    "BoilerplateFilter",
    "Deduplicator",
    "DropReason",
    "drop_hypothetical",
    "drop_negated",
    "drop_parenthetical",
    "drop_passive",
    "drop_sense",
    "drop_sentence",
    "normalise_pair",
]


class DropReason(StrEnum):
    """Why a candidate (sentence, paragraph or pair) was dropped; the report counts each."""

    BOILERPLATE = "boilerplate"
    TOO_LONG = "too_long"
    GARBAGE = "garbage"
    QUESTION = "question"
    NEGATED = "negated"
    HYPOTHETICAL = "hypothetical"
    PARENTHETICAL = "parenthetical"
    PASSIVE = "passive"
    SENSE = "ambiguous_sense"
    NOT_A_VERB = "not_a_verb"
    NO_CLAUSE = "no_clause"
    NO_SPLIT = "no_split"
    DANGLING = "dangling_argument"
    SHORT_ARGUMENT = "short_argument"
    OVERLAP = "overlap"
    SYNTAX = "syntax_mismatch"
    DUPLICATE_EXACT = "duplicate_exact"
    DUPLICATE_NORMALISED = "duplicate_normalised"


_NEGATORS = frozenset(
    {"not", "never", "no", "nor", "neither", "cannot", "without", "hardly", "scarcely", "nothing",
     "lest", "fear", "avoid", "avoiding"}
)
# "not because X, but because Y": the first reason is denied even when "not" sits on the verb
# ("Man does not love because it is advantageous ..., but because love is ...").
_CONTRASTABLE = frozenset({"because", "because of", "as", "due to", "owing to", "on account of"})
_BUT_BECAUSE = re.compile(r"\bbut\s+(?:\w+\s+)?(?:because|due to|owing to|on account of)\b",
                          re.IGNORECASE)
_NEGATOR_WORD = re.compile(r"\b(?:not|never)\b|n['\u2019]t\b", re.IGNORECASE)
# Subordinators follow a whole clause: only the word right before them can negate them ("not
# because"); "He did not go because ..." negates the effect, not the relation.
_ONE_WORD_WINDOW = frozenset(
    {"because", "as", "so that", "in order to", "as long as", "for the purpose of"}
)
# "not only because", "not merely due to": the relation is asserted, not negated.
_NOT_NEGATING_NEXT = frozenset(
    {"only", "merely", "simply", "just", "solely", "entirely", "wholly", "altogether", "doubt"}
)
_BE_GET = frozenset(
    {"am", "is", "are", "was", "were", "be", "been", "being", "get", "gets", "got", "gotten",
     "getting", "'s", "'re", "isn't", "wasn't", "weren't", "aren't"}
)
_CLAUSE_CUT = re.compile(r"[;:]|--|\u2014")  # the ends of a clause


def _words_before(sentence: str, offset: int, n: int, cross_commas: bool = False) -> list[str]:
    """The last ``n`` lowercased words before ``offset`` in the same clause (or comma span)."""
    region = sentence[:offset]
    cut = max(region.rfind(";"), region.rfind(":"), region.rfind("("))
    if not cross_commas:
        cut = max(cut, region.rfind(","))
    return [w.lower() for w in words(region[cut + 1 :])[-n:]]


def _clause_before(sentence: str, offset: int) -> str:
    """Text from the start of the clause holding ``offset`` (after ; : or a dash) to it."""
    start = 0
    for cut in _CLAUSE_CUT.finditer(sentence, 0, offset):
        start = cut.end()
    return sentence[start:offset]


def drop_negated(sentence: str, match: PatternMatch) -> DropReason | None:
    """Drop explicitly negated relations: "not because", "did not cause", "never led to".

    A negator among the words just before the pattern (two for a verb, "did not cause"; one
    otherwise, "not because") negates the relation; "not only because" does not.
    Conditionals are not checked (a negated condition is still a condition).

    >>> from causal_mining.patterns import find_matches
    >>> [drop_negated(s, find_matches(s)[0]) for s in (
    ...     "He left not because of the rain but the cold.",
    ...     "It never led to any trouble at all.",
    ...     "She wept not only because she was tired.",
    ...     "She didn't cause the accident herself.")]
    [<DropReason.NEGATED: 'negated'>, <DropReason.NEGATED: 'negated'>, None,
     <DropReason.NEGATED: 'negated'>]
    """
    if match.pattern.shape is Shape.IF_THEN:
        return None
    if (match.pattern.name in _CONTRASTABLE and _BUT_BECAUSE.search(sentence, match.end)
            and _NEGATOR_WORD.search(_clause_before(sentence, match.start))):
        return DropReason.NEGATED  # "He does not love because X, but because Y"
    window = 1 if match.pattern.name in _ONE_WORD_WINDOW else 2
    before = _words_before(sentence, match.start, window)
    for i, word in enumerate(before):
        if word in _NEGATORS or word.endswith("n't") or word.endswith("n\u2019t"):
            if i + 1 < len(before) and before[i + 1] in _NOT_NEGATING_NEXT:
                continue  # "not only caused"
            return DropReason.NEGATED
    return None


# A modal before a causative verb makes the relation conditional or counterfactual ("might
# have led to", "which could, as he thought, lead to", "would cause"); "may" and "can" state
# a general (hedged) tendency and are kept ("smoking may cause cancer").
_HYPOTHETICAL_MODALS = frozenset({"might", "could", "would", "should"})
# An intention or attempt governs the verb: the relation is wanted, not asserted ("as though
# he meant to prevent them from ...", "determined to prevent Hatteras from ...").
_INTENTION = frozenset(
    {"meant", "mean", "means", "intended", "intend", "intends", "intending", "determined",
     "resolved", "tried", "try", "tries", "trying", "attempt", "attempts", "attempted",
     "attempting", "endeavour", "endeavoured", "endeavouring", "endeavor", "endeavored",
     "endeavoring", "wish", "wished", "wishes", "want", "wanted", "wants", "hope", "hoped",
     "hopes", "hoping", "plan", "planned", "plans", "planning", "seek", "seeks", "sought",
     "seeking", "going", "about", "threaten", "threatened", "threatens", "threatening",
     "ready", "eager", "anxious", "strove", "strive", "strives", "striving", "struggled"}
)
_CAUSATIVE_SENSES = frozenset({"verb", "lead_to"})


def drop_hypothetical(sentence: str, match: PatternMatch) -> DropReason | None:
    """Drop relations that are supposed, wished or compared rather than asserted.

    * ``as if`` / ``as though`` right before any pattern ("as if in response to an alarm");
    * before a causative verb (cause, lead to, result in, bring about, prevent ... from, ...):
      a conditional modal (might, could, would, should) among the four words before it in its
      clause ("might have led to", "which could, as he thought, lead to"), or an intention
      governing it ("meant to prevent", "tried to cause"). "may", "can" and "will" are kept:
      "Smoking may cause cancer" states a (hedged) causal tendency.

    >>> from causal_mining.patterns import find_matches
    >>> [drop_hypothetical(s, find_matches(s)[0]) for s in (
    ...     "Her presence might have led to instant results.",
    ...     "He came running, as if in response to an alarm.",
    ...     "He resolved to prevent the men from leaving.",
    ...     "The long war had led to a famine.")]
    [<DropReason.HYPOTHETICAL: 'hypothetical'>, <DropReason.HYPOTHETICAL: 'hypothetical'>,
     <DropReason.HYPOTHETICAL: 'hypothetical'>, None]
    """
    if match.pattern.shape is Shape.IF_THEN:
        return None
    near = _words_before(sentence, match.start, 3)
    for a, b in pairwise(near):
        if a == "as" and b in {"if", "though"}:
            return DropReason.HYPOTHETICAL
    if match.pattern.sense not in _CAUSATIVE_SENSES:
        return None
    before = _words_before(sentence, match.start, 4, cross_commas=True)
    if _HYPOTHETICAL_MODALS & set(before):
        return DropReason.HYPOTHETICAL
    if len(before) >= 2 and before[-1] == "to" and before[-2] in _INTENTION:
        return DropReason.HYPOTHETICAL
    return None


_PARENTHETICAL_NEXT = re.compile(r"\s*,\s*(?:and|or|but|nor)\b", re.IGNORECASE)


def drop_parenthetical(sentence: str, match: PatternMatch) -> DropReason | None:
    """Drop a connective adverb set off by commas inside one clause ("It is clear, therefore,
    that ...", "He entreated the king, therefore, to rest", "She reassured herself, therefore,
    and awaited the result"): its cause is in an earlier sentence, and the text around it is one
    clause, not a cause and an effect. After a conjunction ("and, therefore, he left") the adverb
    joins two clauses and is kept.

    >>> from causal_mining.patterns import find_matches
    >>> s = "She reassured herself, therefore, and awaited the result of the search."
    >>> drop_parenthetical(s, find_matches(s)[0])
    <DropReason.PARENTHETICAL: 'parenthetical'>
    >>> s = "It is clear, therefore, that there were many of them."
    >>> drop_parenthetical(s, find_matches(s)[0])
    <DropReason.PARENTHETICAL: 'parenthetical'>
    >>> s = "He was tired, and, therefore, he went to bed early."
    >>> drop_parenthetical(s, find_matches(s)[0]) is None
    True
    """
    if match.pattern.name not in {"therefore", "thus", "hence", "consequently", "accordingly"}:
        return None
    if _PARENTHETICAL_NEXT.match(sentence, match.end):
        return DropReason.PARENTHETICAL
    before = sentence[: match.start].rstrip()
    if before.endswith(",") and re.match(r"\s*,", sentence[match.end :]):
        previous = words(before[:-1])[-1:]
        if not previous or previous[0].lower() not in {"and", "or", "but", "nor"}:
            return DropReason.PARENTHETICAL  # "He ought, therefore, to practise": one clause
    return None


def drop_passive(sentence: str, match: PatternMatch) -> DropReason | None:
    """Drop a causative verb in the passive voice (see the module notes for the definition).

    >>> from causal_mining.patterns import find_matches
    >>> [drop_passive(s, find_matches(s)[0]) for s in (
    ...     "The war had led to a famine.",
    ...     "The change was brought about by the war.",
    ...     "The fire was caused by lightning.")]
    [None, <DropReason.PASSIVE: 'passive'>, None]
    """
    forms = match.pattern.passive_forms
    if not forms:
        return None
    verb = sentence[match.start : match.end].split()[0].lower()
    if verb not in forms:
        return None
    if any(w in _BE_GET for w in _words_before(sentence, match.start, 2)):
        return DropReason.PASSIVE
    if re.match(r"\s*by\b", sentence[match.end :]):
        return DropReason.PASSIVE  # reduced relative: "a scruple brought about by her memory"
    return None


# ---- word-sense checks for ambiguous patterns ---------------------------------------------------

_AS_VERBS = frozenset(
    {"was", "were", "is", "are", "had", "has", "have", "wasn't", "weren't", "isn't", "aren't",
     "hadn't", "hasn't", "haven't"}
)
_AS_MODALS = frozenset({"could", "did", "does", "do", "would", "should", "must", "can", "will"})
_DETERMINERS = frozenset(
    {"the", "a", "an", "his", "her", "my", "our", "their", "its", "your", "this", "these", "those",
     "no", "every", "each", "all", "one"}
)
# Words after "as SUBJ was/had" that make it temporal ("as he was leaving"), comparative or
# reportative ("as I had said"), not causal.
_AS_NOT_CAUSAL_NEXT = frozenset(
    {"about", "going", "if", "though", "it", "well", "usual", "before", "ever", "always", "often",
     "so", "such", "to", "said", "told", "done", "seen", "known", "thought", "shown", "given",
     "written", "foreseen", "taught", "heard", "now", "yet", "just", "still", "then", "once",
     "formerly", "sometimes", "generally", "usually", "the", "a", "called", "expected",
     "supposed", "described", "mentioned", "stated", "reported", "observed", "noted", "related",
     "explained", "represented", "termed", "named", "styled", "already", "likely", "here",
     "there", "wont", "accustomed", "feared", "hoped", "believed", "intended", "anticipated",
     "predicted", "promised", "agreed", "arranged", "planned", "proposed", "ordered",
     "directed", "requested", "desired", "suspected", "imagined", "guessed", "conjectured",
     "presumed", "assumed", "announced", "prophesied", "foretold", "settled", "decided",
     "customary", "prescribed", "required", "commanded", "instructed", "advised",
     "informed", "assured", "warned", "remarked", "afterwards"}
)


_AS_SKIPPED_ADVERBS = frozenset({"thus", "afterwards", "afterward", "first", "never", "always",
                                 "since", "often", "later", "long"})


def _causal_as(sentence: str, match: PatternMatch) -> bool:
    if {"as", "so", "such", "same"} & set(_words_before(sentence, match.start, 6, True)):
        return False  # comparative "as ... as", "so ... as", "such ... as", "the same ... as"
    # the clause after "as" up to its comma: "As it is, ..." and "As her brother Edwin, who
    # ..., had said" have no complete clause there
    segment = re.split(r"[,;:.!?\u2014]|--", sentence[match.end :], maxsplit=1)[0]
    after = [w.lower() for w in words(segment)[:8]]
    if len(after) < 3:
        return False
    i = 1
    if after[0] in _DETERMINERS:
        # noun phrase of up to three words before the verb
        while i < min(len(after), 4) and after[i] not in _AS_VERBS and after[i] not in _AS_MODALS:
            i += 1
    if i >= len(after) - 1:
        return False
    verb, nxt = after[i], after[i + 1]
    if (nxt.endswith("ly") or nxt in _AS_SKIPPED_ADVERBS) and i + 2 < len(after):
        nxt = after[i + 2]  # "as he was thus reflecting", "as Richard had casually remarked"
        i += 1
    if nxt == "been" and i + 2 < len(after) and after[i + 2] in _AS_NOT_CAUSAL_NEXT:
        return False  # "as I have been told by my mother"
    if after[0] == "it" and verb == "were":
        return False  # "as it were"
    if verb in _AS_MODALS:
        return nxt in {"not", "never"} or nxt.endswith("n't")
    if verb.endswith("n't"):
        return True
    if verb not in _AS_VERBS:
        return False
    if nxt in _AS_NOT_CAUSAL_NEXT or nxt.endswith("ing"):
        return False
    if verb.startswith("ha"):
        # (the adverbs of _AS_SKIPPED_ADVERBS and -ly ones are already skipped above)
        adverbs = {"already", "just", "often", "before", "previously", "once", "ever", "since",
                   "last", "so"}
        participle = after[i + 2] if nxt in adverbs and i + 2 < len(after) else nxt
        if participle != "been" and participle.endswith(("ed", "en", "own", "aid", "old", "ught")):
            return False  # "as he had promised", "as I have already said"
    return True


_DURATION = frozenset(
    {"live", "lived", "lives", "living", "life", "like", "liked", "please", "pleased", "possible",
     "ever", "remember", "remembered", "wish", "wished", "want", "wanted", "choose", "chose",
     "stay", "stayed", "remain", "remained", "last", "lasted", "can", "could", "may", "might",
     "will", "shall", "necessary", "needed", "necessity", "exist", "existed", "done", "been",
     "did", "wait", "waited", "lasts", "stays", "remains"}
)


def _as_long_as(sentence: str, match: PatternMatch) -> bool:
    before = _words_before(sentence, match.start, 2)
    if set(before) & _DURATION:
        return False  # "I have lived as long as ...", "stay as long as ..."
    if before and before[-1] in _BE_GET:
        return False  # comparative: "his teeth were as long as those of a horse"
    after = [w.lower() for w in words(sentence[match.end :])[:6]]
    if len(after) < 3:
        return False
    if after[0] not in _SUBJECT_WORDS and after[0] not in _DETERMINERS:
        return False
    return not any(w in _DURATION for w in after[1:5])


_SUBJECT_WORDS = frozenset(
    {"i", "we", "you", "he", "she", "it", "they", "there", "this", "that", "these", "those"}
)
_OWED = frozenset(
    {"respect", "honour", "honor", "deference", "homage", "reverence", "gratitude", "thanks",
     "credit", "justice", "attention", "consideration", "courtesy", "tribute", "regard",
     "allegiance", "obedience", "submission", "duty", "rent", "debt", "payment", "amount", "sum",
     "money", "interest", "praise", "acknowledgment", "acknowledgement", "compliment", "reward",
     "return", "balance", "fee", "fees", "dues", "was", "were", "is", "are", "be", "fell",
     "falls", "becomes", "became", "deemed", "apology", "explanation", "notice", "share",
     "portion", "wages", "salary", "tax", "taxes", "loyalty", "fidelity", "love", "affection",
     "confidence", "protection", "support", "reparation", "satisfaction", "recognition",
     "admiration", "politeness", "civility", "attentions", "honours", "honors", "worship"}
)
_OBJECT_PRONOUNS = frozenset({"him", "her", "them", "me", "you", "us", "it", "one", "himself",
                              "herself", "themselves", "myself", "yourself", "ourselves"})


def _due_to(sentence: str, match: PatternMatch) -> bool:
    before = _words_before(sentence, match.start, 1)
    after = words(sentence[match.end :])
    if before and before[0] in _OWED and before[0] not in {"was", "were", "is", "are", "be"}:
        return False  # "the respect due to his rank": owed, not caused
    if after and after[0].lower() in _OBJECT_PRONOUNS and (
            len(after) <= 2 or re.match(r"\s*\w+\s*[,;:.!?)]", sentence[match.end :])):
        return False  # "as much as was due to him", "the tribute which is due to it, let us"
    return True


_PATH_NOUNS = frozenset(
    {"path", "paths", "road", "roads", "way", "door", "doors", "stairs", "staircase", "stair",
     "steps", "passage", "passages", "corridor", "gate", "gates", "street", "lane", "track",
     "trail", "avenue", "route", "bridge", "ladder", "entrance", "opening", "doorway",
     "archway", "alley", "footpath", "highway", "tunnel", "stairway", "walk", "drive",
     "railway", "line", "window", "hall", "trap-door", "trapdoor", "shaft", "canal", "valley"}
)
_PLACE_NOUNS = frozenset(
    {"door", "room", "house", "street", "road", "path", "gate", "garden", "river", "sea", "village",
     "town", "city", "hall", "staircase", "stairs", "cellar", "chamber", "passage", "corridor",
     "court", "yard", "kitchen", "church", "castle", "bridge", "forest", "wood", "woods", "field",
     "fields", "hill", "hills", "valley", "mountain", "mountains", "shore", "beach", "entrance",
     "lane", "avenue", "square", "station", "top", "bottom", "edge", "interior", "outside",
     "front", "back", "rear", "left", "right", "north", "south", "east", "west", "upper",
     "lower", "gallery", "terrace", "tower", "summit", "lake", "camp", "cave", "grove", "lodge",
     "farm", "cottage", "palace", "temple", "parlour", "parlor", "drawing-room", "library",
     "study", "bedroom", "apartment", "apartments", "stable", "stables", "doorway",
     "landing", "roof", "attic", "vault", "dungeon", "well", "spring", "ford", "harbour",
     "harbor", "port", "coast", "plain", "plains", "meadow", "moor", "heath", "marsh", "crossing",
     "place", "spot", "inn", "quay", "wharf", "office", "shop", "market"}
)


def _lead_to(sentence: str, match: PatternMatch) -> bool:
    if not _finite_verb(sentence, match):
        return False
    left = [w.lower() for w in _words_before(sentence, match.start, 4)]
    right = [w.lower() for w in words(sentence[match.end :])[:4]]
    if any(w in _PATH_NOUNS for w in left):
        return False  # "the path led to ..."
    return not any(w in _PLACE_NOUNS for w in right)  # "... led to the river"


_REPORTING = frozenset(
    {"told", "tells", "tell", "said", "says", "say", "think", "thought", "hear", "heard",
     "believe", "believed", "suppose", "supposed", "understand", "understood", "write", "wrote"}
)


def _causal_so(sentence: str, match: PatternMatch) -> bool:
    rest = re.split(r"[,;:.!?]", sentence[match.end :], maxsplit=1)[0]
    after = [w.lower() for w in words(rest)]
    if len(after) <= 4 and _REPORTING & set(after):
        return False  # "so the historian told me"
    if len(after) <= 3 and after[-1:] and after[-1] in _EMPHATIC:
        return False  # "It's knocked me out, so it has."
    if _discourse_so(after):
        return False
    clause = re.split(r"[;:]|--|\u2014", sentence[: match.start])[-1]
    first = [w.lower() for w in words(clause)[:3]]
    return not ({"as"} & set(first))  # correlative "as ..., so ..."


_EMPHATIC = frozenset({"is", "was", "has", "have", "had", "did", "does", "do", "will", "would",
                       "am", "are", "were", "can", "could", "shall", "should"})
_PREPOSITIONS = frozenset({"in", "of", "for", "by", "from", "without", "with", "at", "on", "to",
                           "after", "before", "about", "upon", "against", "towards", "toward"})


def _finite_verb(sentence: str, match: PatternMatch) -> bool:
    verb = sentence[match.start : match.end].split()[0].lower()
    if not verb.endswith("ing"):
        return True
    before = _words_before(sentence, match.start, 1)
    return not (before and before[0] in _PREPOSITIONS)  # "the failure of X in causing terror"


def _purpose_so_that(sentence: str, match: PatternMatch) -> bool:
    after = [w.lower() for w in words(sentence[match.end :])[:3]]
    # "so that it were not one of my speeches": a proviso ("provided that"), not a purpose
    return not (len(after) >= 2 and after[1] == "were"
                and after[0] in {"it", "he", "she", "i", "this", "that", "there"})


def _discourse_so(after: list[str]) -> bool:
    """ "and so it turned out", "and so this is ...": "so" means "thus" / introduces a remark."""
    if after[:1] == ["it"] and {"turned", "proved", "happened", "fell", "chanced", "came",
                                "befell", "went"} & set(after[1:3]):
        return True  # "and so it turned out", "and so it has turned out"
    return len(after) >= 2 and after[0] in {"this", "here"} and after[1] in {"is", "was", "'s"}


_SENSE_CHECKS: dict[str, Callable[[str, PatternMatch], bool]] = {
    "so_that": _purpose_so_that,
    "causal_so": _causal_so,
    "verb": _finite_verb,
    "causal_as": _causal_as,
    "as_long_as": _as_long_as,
    "due_to": _due_to,
    "lead_to": _lead_to,
}


def drop_sense(sentence: str, match: PatternMatch) -> DropReason | None:
    """Drop non-causal senses of ambiguous patterns (lexical, no parser needed).

    ``as`` must open a clause with a stative or negated verb ("as it was late", "as he had no
    money", "as she could not come"), not a progressive or reportative one ("as he was leaving",
    "as I had said"). ``as long as`` must not be about duration ("as long as I live").
    ``due to`` must not mean *owed* ("the respect due to his rank"). ``lead to`` must not be
    spatial ("the path led to the river"). ``so that it were ...`` is a proviso, not a purpose;
    ``and so it turned out`` means *thus*.

    >>> from causal_mining.patterns import find_matches
    >>> [drop_sense(s, find_matches(s)[0]) for s in (
    ...     "He stayed at home, as it was raining hard.",
    ...     "He stayed at home, as he had no money left.",
    ...     "The path led to the river below the farm.",
    ...     "The drought led to a terrible famine.")]
    [<DropReason.SENSE: 'ambiguous_sense'>, None, <DropReason.SENSE: 'ambiguous_sense'>, None]
    """
    name = match.pattern.sense
    if name is None:
        return None
    return None if _SENSE_CHECKS[name](sentence, match) else DropReason.SENSE


# ---- sentence-level filters ---------------------------------------------------------------------

_URLISH = re.compile(r"https?:|www\.|\S@\S|\.(?:com|org|net|html?)\b|\ufffd|[|=_*#~<>{}\\]{3,}")


def drop_sentence(sentence: str, max_words: int = 80, max_chars: int = 600) -> DropReason | None:
    """Drop over-long or garbage sentences before any pattern work.

    Over-long: more than ``max_words`` words or ``max_chars`` characters (run-on text, tables,
    lists without punctuation). Garbage: URLs, e-mail addresses, replacement characters from
    invalid UTF-8, runs of markup symbols, less than 70% letters among non-space characters, or
    mostly capitals (headings, tables of contents).

    >>> drop_sentence("He left because it rained.") is None
    True
    >>> drop_sentence("SEE www.gutenberg.org FOR DETAILS BECAUSE IT IS FREE")
    <DropReason.GARBAGE: 'garbage'>
    >>> drop_sentence("word " * 100)
    <DropReason.TOO_LONG: 'too_long'>
    """
    if len(sentence) > max_chars:
        return DropReason.TOO_LONG
    letters = sum(c.isalpha() for c in sentence)
    visible = len(sentence) - sentence.count(" ")
    if visible == 0 or letters < 0.7 * visible:
        return DropReason.GARBAGE
    upper = sum(c.isupper() for c in sentence)
    if letters >= 12 and upper > 0.5 * letters:
        return DropReason.GARBAGE
    if _URLISH.search(sentence):
        return DropReason.GARBAGE
    if len(words(sentence)) > max_words:
        return DropReason.TOO_LONG
    return None


class BoilerplateFilter:
    """Skip licence, header and navigation text of one document, paragraph by paragraph.

    Project Gutenberg files (several books concatenated) are handled with their markers: text
    after ``*** END OF ... PROJECT GUTENBERG`` is skipped up to the next ``*** START OF``; any
    paragraph naming Project Gutenberg, or a header field ("Title:", "Release Date:", ...), is
    skipped. Web text: short paragraphs with navigation or legal phrases (cookies, privacy
    policy, all rights reserved, ...) are skipped.

    Examples
    --------
    >>> f = BoilerplateFilter()
    >>> [f.keep(p) for p in ["Title: Emma", "*** START OF THE PROJECT GUTENBERG EBOOK EMMA ***",
    ...  "Emma Woodhouse was handsome.", "*** END OF THE PROJECT GUTENBERG EBOOK EMMA ***",
    ...  "You may copy it because it is free.", "*** START OF THIS PROJECT GUTENBERG EBOOK X ***",
    ...  "Chapter one begins."]]
    [False, False, True, False, False, False, True]
    """

    _START = re.compile(r"\*\*\*\s*START OF (?:THE|THIS) PROJECT GUTENBERG", re.IGNORECASE)
    _END = re.compile(
        r"\*\*\*\s*END OF (?:THE|THIS) PROJECT GUTENBERG|^End of (?:the |this )?Project Gutenberg",
        re.IGNORECASE,
    )
    _LINE = re.compile(
        r"project gutenberg|gutenberg\.org|gutenberg-tm|^(?:title|author|release date|language|"
        r"character set encoding|produced by|posting date|last updated|e-?text prepared by|"
        r"transcriber's note|updated editions)\s*:",
        re.IGNORECASE,
    )
    _WEB = re.compile(
        r"cookies?\b|privacy policy|terms of (?:use|service)|all rights reserved|javascript|"
        r"click here|subscribe|sign up|log ?in\b|copyright \u00a9|\u00a9 ?\d{4}",
        re.IGNORECASE,
    )

    def __init__(self) -> None:
        self.skipping = False

    def keep(self, paragraph: str) -> bool:
        """Whether ``paragraph`` is content (``True``) or boilerplate (``False``)."""
        if self._START.search(paragraph):
            self.skipping = False
            return False
        if self._END.search(paragraph):
            self.skipping = True
            return False
        if self.skipping or self._LINE.search(paragraph):
            return False
        return not (len(paragraph) < 300 and self._WEB.search(paragraph))


_NON_WORD = re.compile(r"[^0-9a-z]+")


def normalise_pair(cause: str, effect: str) -> str:
    """Normalised form of a pair for near-duplicate detection: lowercase, punctuation dropped.

    >>> normalise_pair("The Rain,", "  we stayed IN!") == normalise_pair("the rain", "we stayed in")
    True
    """
    cause_key = _NON_WORD.sub(" ", cause.lower()).strip()
    return f"{cause_key}\t{_NON_WORD.sub(' ', effect.lower()).strip()}"


class Deduplicator:
    """Exact and normalised duplicate detection over 8-byte BLAKE2 digests.

    Memory is about 100 bytes per distinct pair (two Python sets of ``bytes``), so a single
    process deduplicates tens of millions of pairs; larger banks are deduplicated per hash
    partition by the Spark runner.

    Examples
    --------
    >>> d = Deduplicator()
    >>> d.check("The rain", "we stayed") is None
    True
    >>> d.check("The rain", "we stayed"), d.check("the rain.", "We stayed")
    (<DropReason.DUPLICATE_EXACT: 'duplicate_exact'>,
     <DropReason.DUPLICATE_NORMALISED: 'duplicate_normalised'>)
    """

    def __init__(self) -> None:
        self._exact: set[bytes] = set()
        self._normalised: set[bytes] = set()

    @staticmethod
    def _digest(text: str) -> bytes:
        return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest()

    def check(self, cause: str, effect: str) -> DropReason | None:
        """Record the pair; return the duplicate reason if it was seen before, else ``None``."""
        exact = self._digest(f"{cause}\t{effect}")
        if exact in self._exact:
            return DropReason.DUPLICATE_EXACT
        self._exact.add(exact)
        normalised = self._digest(normalise_pair(cause, effect))
        if normalised in self._normalised:
            return DropReason.DUPLICATE_NORMALISED
        self._normalised.add(normalised)
        return None

    def __len__(self) -> int:
        return len(self._normalised)

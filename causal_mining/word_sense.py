"""Word-sense checks: the non-causal senses of ambiguous patterns, told apart lexically.

Some patterns are causal in one sense only: ``as`` (causal "as it was late", temporal "as he was
leaving"), ``as long as`` (condition, or duration "as long as I live"), ``due to`` (caused by, or
owed "the respect due to his rank"), ``lead to`` (causes, or spatial "the path led to the river"),
``so`` and ``so that``, and the causative verbs (finite, not "in causing"). A pattern names its
check in :attr:`~causal_mining.patterns.Pattern.sense`; :func:`drop_sense` runs it. No parser is
needed: the checks read the words around the match.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from causal_mining.context import BE_GET, words_before
from causal_mining.filters import DropReason
from causal_mining.patterns import PatternMatch
from causal_mining.sentences import words

__all__ = ["drop_sense"]

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
    if {"as", "so", "such", "same"} & set(words_before(sentence, match.start, 6, True)):
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
    before = words_before(sentence, match.start, 2)
    if set(before) & _DURATION:
        return False  # "I have lived as long as ...", "stay as long as ..."
    if before and before[-1] in BE_GET:
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
    before = words_before(sentence, match.start, 1)
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
    left = [w.lower() for w in words_before(sentence, match.start, 4)]
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
    before = words_before(sentence, match.start, 1)
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

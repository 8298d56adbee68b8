"""Filters of the miner: the paper's lexical filters of a pattern match (negation, hypothetical,
parenthetical connectives, passive voice), the sentence filter a real corpus needs (over-long or
garbage sentences), and :class:`DropReason`, the reasons every filter of the miner reports.

Every filter is a small pure function that returns the :class:`DropReason` it drops a candidate
for, or ``None``; the extractor counts the reasons, so the statistics report says how many
candidates each filter removed. The other filters have modules of their own:
:mod:`~causal_mining.word_sense` (non-causal senses of ambiguous patterns),
:mod:`~causal_mining.boilerplate` (licence and navigation text) and :mod:`~causal_mining.dedup`
(duplicate pairs); the argument filters (short arguments, overlap) are in
:mod:`~causal_mining.extract`.

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

import re
from enum import StrEnum
from itertools import pairwise

from causal_mining.context import BE_GET, words_before
from causal_mining.patterns import PatternMatch, Shape
from causal_mining.sentences import words

__all__ = [
    "DropReason",
    "drop_hypothetical",
    "drop_negated",
    "drop_parenthetical",
    "drop_passive",
    "drop_sentence",
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
_CLAUSE_CUT = re.compile(r"[;:]|--|\u2014")  # the ends of a clause


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
    before = words_before(sentence, match.start, window)
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
    near = words_before(sentence, match.start, 3)
    for a, b in pairwise(near):
        if a == "as" and b in {"if", "though"}:
            return DropReason.HYPOTHETICAL
    if match.pattern.sense not in _CAUSATIVE_SENSES:
        return None
    before = words_before(sentence, match.start, 4, cross_commas=True)
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
    if any(w in BE_GET for w in words_before(sentence, match.start, 2)):
        return DropReason.PASSIVE
    if re.match(r"\s*by\b", sentence[match.end :]):
        return DropReason.PASSIVE  # reduced relative: "a scruple brought about by her memory"
    return None


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

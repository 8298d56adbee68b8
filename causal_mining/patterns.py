"""The causal pattern inventory of CausalBank (Li et al. 2020, Table 1) and the lexical matcher.

Every pattern is tagged with its *class*:

- **EPC** (effect–pattern–cause): the text before the pattern is the effect, the text after it
  the cause ("I am sad BECAUSE I lost my phone").
- **CPE** (cause–pattern–effect): the reverse ("The earthquake RESULTED IN many deaths").

and with a *category* (CAUSE, EXPLANATION, CONDITION, PURPOSE, PREVENTION). Morphological variants
(cause/causes/caused/causing, lead/leads/led/leading, result(s/ed/ing) in, ...) belong to the same
pattern, named by its base form. Two patterns are discontinuous: ``if ... then`` and
``prevent/stop ... from``.

Matching is lexical (compiled regular expressions) and case-insensitive; it is the fast first
stage. Which argument is cause and which is effect, and every filter, live in
:mod:`causal_mining.extract` and :mod:`causal_mining.filters` (with :mod:`causal_mining.word_sense`).

Examples
--------
>>> [m.pattern.name for m in find_matches("I am sad because I lost my phone.")]
['because']
>>> m = find_matches("The earthquake resulted in many deaths.")[0]
>>> m.pattern.name, m.pattern.cls.value, m.text
('result in', 'CPE', 'resulted in')
>>> PATTERNS_BY_NAME["because of"].category.value
'CAUSE'
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum

__all__ = [
    "PatternClass",
    "Category",
    "Shape",
    "Pattern",
    "PatternMatch",
    "PATTERNS",
    "PATTERNS_BY_NAME",
    "PRESCAN",
    "prescan",
    "find_matches",
]


class PatternClass(StrEnum):
    """Order of cause and effect around a pattern in the sentence."""

    EPC = "EPC"
    CPE = "CPE"


class Category(StrEnum):
    """Kind of causal relation a pattern expresses."""

    CAUSE = "CAUSE"
    EXPLANATION = "EXPLANATION"
    CONDITION = "CONDITION"
    PURPOSE = "PURPOSE"
    PREVENTION = "PREVENTION"


class Shape(StrEnum):
    """How the arguments sit around the pattern.

    ``INFIX``: ``X PATTERN Y`` (or fronted ``PATTERN Y, X`` for subordinators).
    ``IF_THEN``: ``if X, then Y``. ``PREVENT_FROM``: ``X prevented Y from Z``.
    """

    INFIX = "INFIX"
    IF_THEN = "IF_THEN"
    PREVENT_FROM = "PREVENT_FROM"


# Subjects that may open a clause after ", so" / ", as": pronouns, determiners, and
# (case-sensitively) a capitalised name.
_SUBJECT = (
    r"(?:i|we|you|he|she|it|they|there|this|these|those|the|a|an|his|her|my|our|their|its|your"
    r"|one|no|nothing|nobody|everyone|everybody|everything|someone|somebody|all|each|every"
    r"|(?-i:[A-Z][a-z]+))\b"
)
# A left clause boundary required before sentence connectives ("X, therefore Y"; "X and thus Y").
_BOUNDARY = r"(?:[,;:]\s*|\b(?:and|but)\s+|\s[-\u2014]+\s*)(?:and\s+)?"


@dataclass(frozen=True)
class Pattern:
    """One causal pattern with all its surface variants.

    Parameters
    ----------
    name
        Canonical base form, used as the ``pattern`` column of CausalBank files.
    cls
        :class:`PatternClass`: EPC or CPE.
    category
        :class:`Category` of the relation.
    variants
        Surface forms the regular expression accepts (documentation and tests).
    regex
        Case-insensitive expression; group ``pat`` spans the pattern words. Discontinuous shapes
        add group ``pat2`` (``then``, ``from``).
    shape
        :class:`Shape` of the arguments.
    frontable
        Subordinators that may open the sentence: ``Because X, Y`` gives cause X, effect Y.
    passive_forms
        Past participles of a causative verb: the match is passive (and dropped) when one of them
        follows a form of *be*/*get* ("he was led to the door").
    needs_tags
        The match is only kept after spaCy tags confirm it (``cause`` as a verb, not a noun;
        a connective whose left side is a clause with a finite verb).
    sense
        Name of an extra lexical sense check in :mod:`causal_mining.word_sense` (for ``as``,
        ``lead to``), or ``None``.
    """

    name: str
    cls: PatternClass
    category: Category
    variants: tuple[str, ...]
    regex: str
    shape: Shape = Shape.INFIX
    frontable: bool = False
    passive_forms: frozenset[str] = field(default_factory=frozenset)
    needs_tags: bool = False
    sense: str | None = None

    def compiled(self) -> re.Pattern[str]:
        """The compiled expression (cached module-wide).

        >>> PATTERNS_BY_NAME["due to"].compiled().search("late due to rain").group("pat")
        'due to'
        """
        return _COMPILED[self.name]


@dataclass(frozen=True, slots=True)
class PatternMatch:
    """One occurrence of a pattern in a sentence; character offsets into that sentence."""

    pattern: Pattern
    start: int
    end: int
    text: str
    start2: int = -1
    end2: int = -1


def _verb(forms: str, rest: str) -> str:
    return rf"\b(?P<pat>(?:{forms})\s+{rest})\b"


_E, _C = PatternClass.EPC, PatternClass.CPE
_CAUSE, _EXPL, _COND, _PURP, _PREV = (
    Category.CAUSE,
    Category.EXPLANATION,
    Category.CONDITION,
    Category.PURPOSE,
    Category.PREVENTION,
)

PATTERNS: tuple[Pattern, ...] = (
    # ---- EPC: effect PATTERN cause -------------------------------------------------------------
    Pattern("as a consequence of", _E, _CAUSE,
            ("as a consequence of", "as a direct consequence of", "in consequence of"),
            r"\b(?P<pat>(?:as an?\s+(?:direct\s+|natural\s+)?consequence|in\s+consequence)\s+of)\b",
            frontable=True),
    Pattern("as a result of", _E, _CAUSE, ("as a result of", "as a direct result of"),
            r"\b(?P<pat>as an?\s+(?:direct\s+|natural\s+)?result\s+of)\b", frontable=True),
    Pattern("as long as", _E, _COND, ("as long as", "so long as"),
            r"\b(?P<pat>(?:as|so)\s+long\s+as)\b",
            frontable=True, sense="as_long_as"),
    Pattern("as", _E, _EXPL, ("as",),
            rf"(?:^\W*|[,;]\s*|\b(?:and|but)\s+)(?P<pat>as)\s+(?={_SUBJECT})",
            frontable=True, sense="causal_as"),
    Pattern("because", _E, _EXPL, ("because",),
            r"\b(?P<pat>because)\b(?!\s+of\b)", frontable=True),
    Pattern("because of", _E, _CAUSE, ("because of",), r"\b(?P<pat>because\s+of)\b",
            frontable=True),
    Pattern("caused by", _E, _CAUSE, ("caused by",), r"\b(?P<pat>caused\s+by)\b"),
    Pattern("due to", _E, _CAUSE, ("due to",), r"\b(?P<pat>due\s+to)\b(?!\s+(?:be|have)\b)",
            frontable=True, sense="due_to"),
    Pattern("owing to", _E, _CAUSE, ("owing to",), r"\b(?P<pat>owing\s+to)\b", frontable=True),
    Pattern("in response to", _E, _EXPL, ("in response to",), r"\b(?P<pat>in\s+response\s+to)\b",
            frontable=True),
    Pattern("on account of", _E, _CAUSE, ("on account of",),
            r"\b(?P<pat>on\s+(?:the\s+)?account\s+of)\b(?!\s+(?:the\s+)?(?:its|their)\b)",
            frontable=True),
    Pattern("result from", _E, _CAUSE,
            ("result from", "results from", "resulted from", "resulting from"),
            _verb(r"result|results|resulted|resulting", "from"), needs_tags=True,
            sense="verb"),
    # ---- CPE: cause PATTERN effect -------------------------------------------------------------
    Pattern("accordingly", _C, _CAUSE, ("accordingly",),
            rf"{_BOUNDARY}(?P<pat>accordingly)\b", needs_tags=True),
    Pattern("consequently", _C, _CAUSE, ("consequently",),
            rf"{_BOUNDARY}(?P<pat>consequently)\b", needs_tags=True),
    Pattern("bring about", _C, _CAUSE,
            ("bring about", "brings about", "brought about", "bringing about"),
            _verb(r"bring|brings|brought|bringing", "about"),
            passive_forms=frozenset({"brought"}), sense="verb"),
    Pattern("bring on", _C, _CAUSE, ("bring on", "brings on", "brought on", "bringing on"),
            _verb(r"bring|brings|brought|bringing", "on"),
            passive_forms=frozenset({"brought"}), sense="verb"),
    Pattern("and for this reason", _C, _CAUSE, ("for this reason", "and for this reason"),
            rf"{_BOUNDARY}(?P<pat>for\s+this\s+reason)\b"),
    Pattern("give rise to", _C, _CAUSE,
            ("give rise to", "gives rise to", "gave rise to", "given rise to", "giving rise to"),
            _verb(r"give|gives|gave|given|giving", r"rise\s+to"),
            passive_forms=frozenset({"given"}), sense="verb"),
    Pattern("induce", _C, _CAUSE, ("induce", "induces", "induced", "inducing"),
            r"\b(?P<pat>induc(?:e|es|ed|ing))\b", passive_forms=frozenset({"induced"}),
            sense="verb"),
    Pattern("in order to", _C, _PURP, ("in order to",), r"\b(?P<pat>in\s+order\s+to)\b",
            frontable=True),
    Pattern("lead to", _C, _CAUSE, ("lead to", "leads to", "led to", "leading to"),
            _verb(r"lead|leads|led|leading", "to"),
            passive_forms=frozenset({"led"}), needs_tags=True, sense="lead_to"),
    Pattern("result in", _C, _CAUSE, ("result in", "results in", "resulted in", "resulting in"),
            _verb(r"result|results|resulted|resulting", "in"), needs_tags=True,
            sense="verb"),
    Pattern("prevent from", _C, _PREV,
            ("prevent ... from", "prevents ... from", "prevented ... from", "preventing ... from",
             "stop ... from", "stops ... from", "stopped ... from", "stopping ... from"),
            r"\b(?P<pat>prevent(?:s|ed|ing)?|stop(?:s|ped|ping)?)\s+"
            r"(?:[^\s,;:.!?]+\s+){0,5}?(?P<pat2>from)\s+(?=\w+ing\b)",
            shape=Shape.PREVENT_FROM, passive_forms=frozenset({"prevented", "stopped"}),
            sense="verb"),
    Pattern("cause", _C, _CAUSE, ("cause", "causes", "caused", "causing"),
            r"\b(?P<pat>caus(?:e|es|ed|ing))\b(?!\s+by\b)",
            passive_forms=frozenset({"caused"}), needs_tags=True, sense="verb"),
    Pattern("for the purpose of", _C, _PURP, ("for the purpose of", "for the purposes of"),
            r"\b(?P<pat>for\s+the\s+purposes?\s+of)\b", frontable=True),
    Pattern("if then", _C, _COND, ("if ... then",),
            r"(?<!\bas\s)(?<!\beven\s)\b(?P<pat>if)\s+(?:(?!\bif\b)[^;:])+?,\s*(?P<pat2>then)\b",
            shape=Shape.IF_THEN),
    Pattern(", so", _C, _CAUSE, (", so", "; so", "and so"),
            rf"(?:[,;]\s*(?:and\s+)?|\band\s+)(?P<pat>so)\s+(?!that\b|long\b|far\b|much\b|many\b|"
            rf"to\b|as\b|soon\b){_SUBJECT}",
            needs_tags=True, sense="causal_so"),
    Pattern("so that", _C, _PURP, ("so that",),
            r"(?<!\bnot\s)\b(?P<pat>so\s+that)\b(?!\s+(?:was|is|were|are|had|has|would|will|could|"
            r"should|might|must|may|can|did|does|do|'s|it's|all|much|many)\b)", sense="so_that"),
    Pattern("thereby", _C, _CAUSE, ("thereby",), rf"{_BOUNDARY}(?P<pat>thereby)\b"),
    Pattern("therefore", _C, _CAUSE, ("therefore",), rf"{_BOUNDARY}(?P<pat>therefore)\b",
            needs_tags=True),
    Pattern("thus", _C, _CAUSE, ("thus",), rf"(?<!:){_BOUNDARY}(?P<pat>thus)\b(?!\s+far\b)",
            needs_tags=True),
    Pattern("hence", _C, _CAUSE, ("hence",), rf"{_BOUNDARY}(?P<pat>hence)\b",
            needs_tags=True),
)

PATTERNS_BY_NAME: dict[str, Pattern] = {p.name: p for p in PATTERNS}
_COMPILED: dict[str, re.Pattern[str]] = {
    p.name: re.compile(p.regex, re.IGNORECASE) for p in PATTERNS
}

# Fast pre-scan: one alternation of trigger words. A paragraph or sentence without a hit cannot
# hold any pattern, so it never reaches the per-pattern expressions or spaCy. Case-insensitive
# via an explicit character class on the first letter keeps the regex engine on its fast path.
PRESCAN: re.Pattern[str] = re.compile(
    r"\b(?:because|caus|result|consequen|due to|owing to|in response|account of|accordingly|"
    r"(?:bring|brings|brought|bringing) (?:about|on)|for this reason|rise to|induc|in order to|"
    r"(?:lead|leads|led|leading) to|prevent|stop|purpose|thereby|therefore|thus|hence|long as|"
    r"so that)"
    r"|(?:^|[,;:.!?\"\u201c]\s*|\b(?:and|but) )(?:as|so)\b|,\s*then\b",
    re.IGNORECASE,
)


def prescan(text: str) -> bool:
    """Whether ``text`` contains any trigger word (a superset of every pattern).

    >>> prescan("The sky is blue."), prescan("He left because of the rain.")
    (False, True)
    """
    return PRESCAN.search(text) is not None


def find_matches(sentence: str) -> list[PatternMatch]:
    """All non-overlapping pattern occurrences in ``sentence``, left to right.

    Where two patterns overlap ("as a result of" contains "as"; "so that" contains "so"), the one
    starting first wins, and at equal start the longer one.

    Parameters
    ----------
    sentence
        One sentence (whitespace-normalised).

    Returns
    -------
    list[PatternMatch]
        Sorted by start offset.

    Examples
    --------
    >>> [(m.pattern.name, m.text) for m in find_matches("He ran, so he was late because of rain.")]
    [(', so', 'so'), ('because of', 'because of')]
    >>> m = find_matches("If you heat ice, then it melts.")[0]
    >>> m.pattern.name, m.start, m.start2
    ('if then', 0, 17)
    """
    found: list[PatternMatch] = []
    for pattern in PATTERNS:
        for found_match in _COMPILED[pattern.name].finditer(sentence):
            start, end = found_match.span("pat")
            if "pat2" in found_match.re.groupindex:
                start2, end2 = found_match.span("pat2")
                text = f"{sentence[start:end]} ... {sentence[start2:end2]}"
            else:
                start2 = end2 = -1
                text = sentence[start:end]
            found.append(PatternMatch(pattern, start, end, text, start2, end2))
    found.sort(key=lambda m: (m.start, -(max(m.end, m.end2) - m.start)))
    kept: list[PatternMatch] = []
    for match in found:
        if any(_overlaps(match, other) for other in kept):
            continue
        kept.append(match)
    return kept


def _overlaps(a: PatternMatch, b: PatternMatch) -> bool:
    spans_a = [(a.start, a.end)] + ([(a.start2, a.end2)] if a.start2 >= 0 else [])
    spans_b = [(b.start, b.end)] + ([(b.start2, b.end2)] if b.start2 >= 0 else [])
    return any(s1 < e2 and s2 < e1 for s1, e1 in spans_a for s2, e2 in spans_b)

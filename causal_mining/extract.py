"""Sentence-level extraction: from a sentence and its pattern matches to one (cause, effect) pair.

Arguments
---------
For an infix pattern the *host* clause is the text before the pattern and the *complement* the
text after it, each limited to its clause (``;``, ``:``, ``--`` and dashes end a clause; the
complement also ends at ", but", ", yet", ", though", ", while", ", whereas"). EPC: host = effect,
complement = cause. CPE: host = cause, complement = effect. A subordinator that opens its clause
(``Because X, Y``; ``In order to X, Y``) is *fronted* -- also at the start of a clause after
``;`` or a dash, after a relative pronoun (``who, because X, Y``) or after a short sentence
adverbial (``At any rate, so long as X, Y``): the complement runs to the first comma and
the host is the rest of the clause. An argument that runs on into a quotation, or a host
ending in a pro-form *so* (``I think so because ...``), is dangling and dropped.
``if X, then Y``: cause X, effect Y. ``X prevented Y from Z``: cause X, effect ``Y from Z``
(the whole span after the verb, so it stays contiguous).

Rules (the paper's): cause and effect come from the same sentence, are contiguous spans of it,
do not overlap, and have at least two words each. One pair per sentence: the first match (left
to right) that survives every filter.

Examples
--------
>>> extract_sentence("I am sad because I lost my phone.")[1:3]
('I lost my phone', 'I am sad')
>>> extract_sentence("Because he was tired, he went to bed early.")[1:3]
('he was tired', 'he went to bed early')
>>> extract_sentence("The earthquake resulted in many deaths.", use_tags=False)[1:3]
('The earthquake', 'many deaths')
>>> extract_sentence("He stayed, but not because he was ill.")
'negated'
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from causal_mining.errors import MiningConfigError
from causal_mining.filters import (
    DropReason,
    drop_hypothetical,
    drop_negated,
    drop_parenthetical,
    drop_passive,
    drop_sentence,
)
from causal_mining.pair import CausalPair
from causal_mining.patterns import PRESCAN, PatternClass, PatternMatch, Shape, find_matches
from causal_mining.sentences import words
from causal_mining.syntax import check_syntax, dangling_end, not_asserted
from causal_mining.tagging import SentenceTags, Tagger
from causal_mining.word_sense import drop_sense
from dpc_errors import check_int

__all__ = ["ExtractOptions", "Extraction", "Extractor", "extract_sentence"]


@dataclass(frozen=True)
class ExtractOptions:
    """Options of sentence-level extraction.

    Parameters
    ----------
    min_argument_words
        Fewest words in a cause or an effect (paper: 2).
    max_words, max_chars
        Longer sentences are dropped as ``too_long``.
    use_tags
        Confirm ``needs_tags`` patterns with spaCy tags. ``False`` accepts them lexically
        (faster, less precise; for tests and quick looks) and implies no parse.
    use_parse
        Parse every sentence that yields a lexical pair and keep the pair only when the parse
        agrees with its spans (:mod:`causal_mining.syntax`); a match the parse rejects lets the
        next match of the sentence be tried. About doubles the spaCy cost of a run.
    """

    min_argument_words: int = 2
    max_words: int = 80
    max_chars: int = 600
    use_tags: bool = True
    use_parse: bool = True

    def __post_init__(self) -> None:
        check_int("min_argument_words", self.min_argument_words, 1, error=MiningConfigError)
        check_int("max_chars", self.max_chars, 10, error=MiningConfigError)
        if self.max_words < 2 * self.min_argument_words:
            raise MiningConfigError(
                f"`max_words` (={self.max_words}) has to be at least twice "
                f"`min_argument_words` (={self.min_argument_words})"
            )

    @property
    def parses(self) -> bool:
        """Whether pairs are checked against a parse (``use_parse`` needs ``use_tags``).

        >>> ExtractOptions(use_tags=False).parses, ExtractOptions().parses
        (False, True)
        """
        return self.use_tags and self.use_parse


@dataclass(frozen=True, slots=True)
class Extraction:
    """A pair found in a sentence, as character spans of it."""

    match: PatternMatch
    cause: tuple[int, int]
    effect: tuple[int, int]


# Clause ends: semicolons, colons, dashes, and the edges of a quotation inside the sentence
# ('"I am tired," he said, "because ...').
_CLAUSE_CUT = re.compile(
    r";|:|--|\u2014|\u2013|(?<=[!?,.])[\"\u201d\u2019](?=\s)|(?<=\s)[\"\u201c](?=\w)"
)
# "..., and because X, Y" / "He said that, owing to X, Y": a fronted subordinator inside a
# conjunct or a complement clause.
_CONJOINED = re.compile(
    r"(?:[,;]\s*[\"\u201c]?\s*(?:and|but|yet|so)|\b(?:that|which|who|whom|when|where|while|since|though|although))"
    r"\s*,?\s+$",
    re.IGNORECASE,
)
_COMPLEMENT_CUT = re.compile(r",\s+(?:but|yet|though|although|while|whereas)\b|\(")
_EDGE = " \t\"'\u201c\u201d\u2018\u2019()[]{}_*,;:.!?-\u2014\u2013"
_TRAILING_FUNCTION = frozenset(
    {"and", "but", "or", "which", "that", "who", "whom", "is", "was", "are", "were", "be", "been",
     "being", "am", "has", "have", "had", "will", "would", "may", "might", "can", "could",
     "should", "must", "shall", "did", "does", "do", "to", "also", "often", "usually", "always",
     "probably", "certainly", "perhaps", "largely", "mainly", "partly", "chiefly", "simply",
     "only", "just", "eventually", "ultimately", "directly", "merely", "solely", "entirely",
     "wholly", "mostly", "doubtless", "possibly", "naturally", "necessarily", "all", "not",
     "so", "as", "very", "then", "therefore", "thus", "hence",
     "even", "precisely", "really", "either", "rather", "soon", "quickly", "already",
     "sometimes", "frequently", "generally", "commonly", "inevitably", "thereby", "immediately",
     "indirectly", "finally", "gradually", "presently", "first", "originally", "actually"}
)
_LEADING_OPENERS = frozenset(
    {"and", "but", "yet", "or", "so", "then", "partly", "chiefly", "mainly", "mostly", "perhaps",
     "probably", "only", "simply", "just", "merely", "largely", "now", "oh", "well", "no",
     "yes", "still", "possibly", "doubtless", "indeed", "also", "even", "precisely", "all",
     "again", "thus", "hence", "therefore", "however"}
)
_EDGE_QUOTES = " \"'\u201d\u2019)_*"
_OPENER = re.compile(r"[\s,]*(?:and|but|or|yet|then|nor)\b[\s,]*", re.IGNORECASE)
# A host that ends in a pronoun after trimming ("This is because ...", "it was because ... that")
# has its real argument in another sentence or clause.
_DANGLING = frozenset({"it", "this", "that", "which", "what", "why", "there", "so", "these",
                       "those", "he", "she", "they", "i", "we", "you", "one", "how"})
_SPEECH = frozenset(
    {"said", "says", "told", "asked", "replied", "answered", "exclaimed", "remarked",
     "rejoined", "retorted", "whispered", "muttered", "responded", "declared"}
)
# Only as the first word of an inverted dialogue tag ("cried Effie", "returned Mr. Hall").
_SPEECH_FIRST = _SPEECH | {"cried", "continued", "added", "returned", "observed", "repeated",
                           "shouted", "explained"}
_VERB_CHECKED = frozenset({"cause", "result in", "result from", "lead to"})
_CLAUSE_CHECKED = frozenset({"therefore", "thus", "hence", ", so", "consequently", "accordingly"})
_VERB_TAGS = frozenset({"VB", "VBD", "VBZ", "VBP", "MD", "VBN"})
_AND_BEFORE = re.compile(r"\band\s*,?\s*$", re.IGNORECASE)


def _trim(sentence: str, start: int, end: int, strip_function_words: bool) -> tuple[int, int]:
    """Shrink ``[start, end)`` over edge punctuation (and trailing function words)."""
    while True:
        while start < end and sentence[start] in _EDGE:
            start += 1
        while end > start and sentence[end - 1] in _EDGE:
            end -= 1
        if not strip_function_words or start >= end:
            return start, end
        cut = sentence.rfind(" ", start, end)
        last = sentence[cut + 1 : end].lower()
        if last not in _TRAILING_FUNCTION:
            return start, end
        end = cut + 1 if cut >= start else start


def _left_clause(sentence: str, end: int) -> tuple[int, int]:
    """The clause that ends at ``end``; a clause holding only openers ("; and") is skipped."""
    start = 0
    for cut in _CLAUSE_CUT.finditer(sentence, 0, end):
        if not _opens_clause(sentence, cut.end(), end):
            start = cut.end()
    return start, end


def _skip_openers(sentence: str, start: int, end: int) -> int:
    """Move ``start`` past leading conjunctions ("and", "but", "or", "yet", "then")."""
    while True:
        match = _OPENER.match(sentence, start, end)
        if match is None:
            return start
        start = match.end()


def _right_clause(sentence: str, start: int) -> int:
    cut = _CLAUSE_CUT.search(sentence, start)
    return cut.start() if cut else len(sentence)


def _opens_quote(sentence: str, offset: int) -> bool:
    """Whether a quotation opens at ``offset`` (an opening quote mark followed by a word)."""
    return (offset + 1 < len(sentence) and sentence[offset] in "\"\u201c"
            and sentence[offset + 1].isalnum())


def _opens_clause(sentence: str, start: int, end: int) -> bool:
    """Whether ``[start, end)`` holds nothing but openers ("And", "Partly", "But only")."""
    return all(w.lower() in _LEADING_OPENERS for w in words(sentence[start:end]))


# Sentence adverbials that may precede a fronted subordinator in its clause ("At any rate, so
# long as X, Y"; "Indeed, because X, Y").
_ADVERBIAL_WORDS = frozenset(
    {"at", "any", "rate", "all", "events", "however", "indeed", "now", "still", "besides",
     "moreover", "perhaps", "of", "course", "in", "fact", "truth", "short", "the", "same",
     "time", "first", "last", "length", "least", "nevertheless", "nonetheless", "anyway",
     "surely", "certainly", "doubtless", "alas", "again", "then", "well", "oh", "yes", "no",
     "sometimes", "often", "once", "meanwhile", "accordingly", "therefore", "thus", "hence",
     "and", "but", "yet", "so", "or", "nor", "on", "other", "hand", "whole", "fortunately",
     "unfortunately", "happily", "luckily", "naturally", "clearly", "obviously"}
)


def _fronted(sentence: str, start: int) -> bool:
    """Whether the subordinator at ``start`` opens its clause (the sentence, or the clause after
    ``;``, ``:`` or a dash), possibly after openers or a sentence adverbial set off by a comma
    ("; owing to X, Y", "At any rate, so long as X, Y")."""
    clause_start = 0
    for cut in _CLAUSE_CUT.finditer(sentence, 0, start):
        clause_start = cut.end()
    if _opens_clause(sentence, clause_start, start):
        return True
    prefix = sentence[clause_start:start].rstrip()
    if not prefix.endswith(","):
        return False
    prefix_words = [w.lower() for w in words(prefix)]
    return len(prefix_words) <= 4 and all(w in _ADVERBIAL_WORDS for w in prefix_words)


def arguments(
    sentence: str, match: PatternMatch
) -> tuple[tuple[int, int], tuple[int, int]] | DropReason:
    """Spans ``(cause, effect)`` of ``match`` in ``sentence``, or why there are none.

    >>> s = "The earthquake resulted in many deaths."
    >>> cause, effect = arguments(s, find_matches(s)[0])
    >>> s[slice(*cause)], s[slice(*effect)]
    ('The earthquake', 'many deaths')
    >>> s = "If you heat the ice, then it melts."
    >>> cause, effect = arguments(s, find_matches(s)[0])
    >>> s[slice(*cause)], s[slice(*effect)]
    ('you heat the ice', 'it melts')
    """
    pattern = match.pattern
    if pattern.shape is Shape.IF_THEN:
        cause = _trim(sentence, match.end, match.start2, False)
        effect = _trim(sentence, match.end2, _right_clause(sentence, match.end2), False)
        return cause, effect
    clause_end = _right_clause(sentence, match.end)
    conjoined = pattern.frontable and _CONJOINED.search(sentence, 0, match.start) is not None
    if conjoined and sentence.find(",", match.end, clause_end) < 0:
        return DropReason.NO_SPLIT  # "..., and as X Y": no comma ends the subordinate clause
    if pattern.frontable and (conjoined or _fronted(sentence, match.start)):
        # "Because X, Y" and "..., and because X, Y": X up to the comma, Y after it
        comma = sentence.find(",", match.end, clause_end)
        if comma < 0:
            return DropReason.NO_SPLIT
        complement = _trim(sentence, match.end, comma, False)
        host = _trim(sentence, _skip_openers(sentence, comma + 1, clause_end), clause_end, False)
        if _opens_quote(sentence, clause_end):
            return DropReason.DANGLING  # the host runs on inside a quotation
    else:
        host_start, host_end = _left_clause(sentence, match.start)
        raw_last = words(sentence[host_start:host_end])[-1:]
        if raw_last and raw_last[0].lower() == "so" and pattern.frontable:
            return DropReason.DANGLING  # "I think so because ...": "so" stands for another clause
        host = _trim(sentence, _skip_openers(sentence, host_start, host_end), host_end, True)
        last = sentence[host[0] : host[1]].rsplit(" ", 1)[-1].lower().replace("\u2019", "'")
        if last.split("'")[0] in _DANGLING:
            return DropReason.DANGLING
        host_words = [w.lower() for w in words(sentence[host[0] : host[1]])]
        if host_words and (host_words[0] in _SPEECH_FIRST or (
                len(host_words) <= 5 and _SPEECH & set(host_words))):
            return DropReason.DANGLING  # a dialogue tag: '"...," Rob told them, "because ..."'

        cut = _COMPLEMENT_CUT.search(sentence, match.end, clause_end)
        if cut is None and _opens_quote(sentence, clause_end):
            # 'they would say "baa"', 'a situation better than an "armed neutrality"': the
            # argument runs on inside the quotation, and the span cut before it is a fragment
            return DropReason.DANGLING
        complement = _trim(sentence, match.end, cut.start() if cut else clause_end, False)
    if pattern.cls is PatternClass.EPC:
        return complement, host
    return host, complement


def _check_tags(
    sentence: str, match: PatternMatch, spans: tuple[tuple[int, int], tuple[int, int]],
    tags: SentenceTags,
) -> DropReason | None:
    name = match.pattern.name
    if name in _VERB_CHECKED:
        tag = tags.tag_at(match.start)
        if tag is None or not tag.startswith("VB"):
            return DropReason.NOT_A_VERB
    if name in _CLAUSE_CHECKED:
        cause, effect = spans  # CPE: host (cause) is on the left
        if not tags.has_finite_verb(*cause):
            return DropReason.NO_CLAUSE
        if name == ", so" and not tags.has_main_verb(*effect):
            return DropReason.NO_CLAUSE  # "and so they would 999 times out of a thousand"
        if not tags.has_verb(*effect):
            # "..., and therefore the same summer temperature": an elliptical effect
            return DropReason.NO_CLAUSE
        first = tags.tag_at(effect[0])
        if (
            first in _VERB_TAGS
            and _AND_BEFORE.search(sentence, 0, match.start) is None
        ):
            # "The differences, consequently, must have ...": a parenthetical adverb inside one
            # clause, not a connective between two
            return DropReason.NO_CLAUSE
    return None


class _Deferred:
    """Marker: the sentence needs spaCy tags before it can be decided."""


_NEEDS_TAGS = _Deferred()


def _evaluate(
    sentence: str,
    matches: Sequence[PatternMatch],
    tags: SentenceTags | None,
    options: ExtractOptions,
    drops: list[DropReason],
) -> Extraction | _Deferred | None:
    """First surviving match of ``sentence``; ``_NEEDS_TAGS`` when tags are needed to decide."""
    for match in matches:
        reason = (
            drop_negated(sentence, match)
            or drop_hypothetical(sentence, match)
            or drop_parenthetical(sentence, match)
            or drop_passive(sentence, match)
            or drop_sense(sentence, match)
        )
        if reason is not None:
            drops.append(reason)
            continue
        spans = arguments(sentence, match)
        if isinstance(spans, DropReason):
            drops.append(spans)
            continue
        (cs, ce), (es, ee) = spans
        if cs < ee and es < ce:
            drops.append(DropReason.OVERLAP)
            continue
        if (
            len(words(sentence[cs:ce])) < options.min_argument_words
            or len(words(sentence[es:ee])) < options.min_argument_words
        ):
            drops.append(DropReason.SHORT_ARGUMENT)
            continue
        if options.use_tags and (match.pattern.needs_tags or options.parses):
            if tags is None:
                return _NEEDS_TAGS
            reason = _check_tags(sentence, match, spans, tags) if match.pattern.needs_tags else None
            if reason is None and options.parses:
                fitted = _fit_to_parse(sentence, match, spans, tags, options)
                if isinstance(fitted, DropReason):
                    reason = fitted
                else:
                    spans = fitted
            if reason is not None:
                drops.append(reason)
                continue
        return Extraction(match, spans[0], spans[1])
    return None


def _fit_to_parse(
    sentence: str, match: PatternMatch, spans: tuple[tuple[int, int], tuple[int, int]],
    tags: SentenceTags, options: ExtractOptions,
) -> tuple[tuple[int, int], tuple[int, int]] | DropReason:
    """``spans`` checked against the parse, the complement cut where it leaves its clause."""
    if not_asserted(sentence, tags, match):
        return DropReason.HYPOTHETICAL
    end = check_syntax(sentence, match, spans[0], spans[1], tags)
    if isinstance(end, DropReason):
        return end
    cause, effect = spans
    complement_is_cause = (
        match.pattern.cls is PatternClass.EPC or match.pattern.shape is Shape.IF_THEN
    )
    start, old_end = cause if complement_is_cause else effect
    if end < old_end:
        cut = _trim(sentence, start, end, True)
        if len(words(sentence[slice(*cut)])) < options.min_argument_words:
            return DropReason.SYNTAX
        cause, effect = (cut, effect) if complement_is_cause else (cause, cut)
    if dangling_end(tags, cause) or dangling_end(tags, effect):
        return DropReason.DANGLING
    return cause, effect


class Extractor:
    """Extract pairs from batches of sentences, tagging with spaCy only where needed.

    Parameters
    ----------
    options
        :class:`ExtractOptions`.
    tagger
        spaCy wrapper; created lazily when ``options.use_tags`` and a sentence needs it. It has
        to parse (``Tagger(parse=True)``) when ``options.parses``.

    Attributes
    ----------
    drops
        Counter of :class:`DropReason` values (as strings) over everything seen so far.
    tagged
        Number of sentences sent to spaCy.
    candidates
        Number of sentences with at least one pattern match.

    Examples
    --------
    >>> ex = Extractor(ExtractOptions(use_tags=False))
    >>> pairs = ex.extract([("t:1", "The war never led to peace."),
    ...                     ("t:2", "It rained, so we stayed in.")])
    >>> [(p.cause, p.effect, p.pattern) for p in pairs], dict(ex.drops)
    ([('It rained', 'we stayed in', ', so')], {'negated': 1})
    """

    def __init__(self, options: ExtractOptions | None = None, tagger: Tagger | None = None):
        self.options = options or ExtractOptions()
        if tagger is not None and self.options.parses and not tagger.parse:
            raise MiningConfigError(
                "ExtractOptions(use_parse=True) needs a parsing tagger: Tagger(parse=True)"
            )
        self._tagger = tagger
        self.drops: Counter[str] = Counter()
        self.tagged = 0
        self.candidates = 0

    @property
    def tagger(self) -> Tagger:
        if self._tagger is None:
            self._tagger = Tagger(parse=self.options.parses)
        return self._tagger

    def extract(self, sentences: Iterable[tuple[str, str]]) -> list[CausalPair]:
        """Pairs from ``(source, sentence)`` items, in input order (at most one per sentence).

        Sentences are expected whitespace-normalised. The sentence filters (too long, garbage)
        run first, then the pattern matcher; a sentence with no pattern costs one regex search.
        """
        results: list[Extraction | _Deferred | None] = []
        items: list[tuple[str, str]] = []
        deferred: list[int] = []
        for source, sentence in sentences:
            if not PRESCAN.search(sentence):
                continue
            matches = find_matches(sentence)
            if not matches:
                continue
            self.candidates += 1
            reason = drop_sentence(sentence, self.options.max_words, self.options.max_chars)
            if reason is None and sentence.rstrip(_EDGE_QUOTES).endswith("?"):
                reason = DropReason.QUESTION  # a question asks about a relation, asserts none
            if reason is not None:
                self.drops[reason.value] += 1
                continue
            drops: list[DropReason] = []
            outcome = _evaluate(sentence, matches, None, self.options, drops)
            items.append((source, sentence))
            if isinstance(outcome, _Deferred):
                deferred.append(len(results))
                results.append(None)
                continue
            self.drops.update(d.value for d in drops)
            results.append(outcome)
        if deferred:
            texts = [items[i][1] for i in deferred]
            self.tagged += len(texts)
            for i, tags in zip(deferred, self.tagger.tag(texts), strict=True):
                drops = []
                sentence = items[i][1]
                outcome = _evaluate(sentence, find_matches(sentence), tags, self.options, drops)
                self.drops.update(d.value for d in drops)
                results[i] = outcome
        pairs: list[CausalPair] = []
        for (source, sentence), found in zip(items, results, strict=True):
            if not isinstance(found, Extraction):
                continue
            pattern = found.match.pattern
            pairs.append(
                CausalPair(
                    cause=sentence[slice(*found.cause)],
                    effect=sentence[slice(*found.effect)],
                    pattern=pattern.name,
                    cls=pattern.cls.value,
                    category=pattern.category.value,
                    source=source,
                    sentence=sentence,
                )
            )
        return pairs


_SHARED_TAGGERS = {False: Tagger(), True: Tagger(parse=True)}  # spaCy loads on first use only


def extract_sentence(
    sentence: str, use_tags: bool = True, use_parse: bool = True
) -> tuple[str, str, str, str] | str | None:
    """Convenience for one sentence: ``(pattern, cause, effect, class)``, a drop reason, or None.

    Parameters
    ----------
    sentence
        Raw sentence text.
    use_tags
        Whether to confirm tag-dependent patterns with spaCy.
    use_parse
        Whether to check the pair against a dependency parse (needs ``use_tags``).

    Returns
    -------
    tuple or str or None
        The pair; else the last drop reason recorded for the sentence; else ``None`` (no
        pattern at all).

    Examples
    --------
    >>> extract_sentence("The fire was caused by a stray spark.")
    ('caused by', 'a stray spark', 'The fire', 'EPC')
    >>> extract_sentence("It was a fine day.") is None
    True
    """
    options = ExtractOptions(use_tags=use_tags, use_parse=use_parse)
    extractor = Extractor(options, _SHARED_TAGGERS[options.parses])
    pairs = extractor.extract([("-", " ".join(sentence.split()))])
    if pairs:
        p = pairs[0]
        return p.pattern, p.cause, p.effect, p.cls
    if extractor.drops:
        return list(extractor.drops)[-1]
    return None

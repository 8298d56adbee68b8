"""Check a lexically extracted pair against the dependency parse of its sentence.

The lexical extractor (:mod:`causal_mining.extract`) cuts a sentence at its pattern and at
punctuation. That is fast and right for most sentences, but wrong where the clause structure is
not what the punctuation suggests: a *because*-clause that explains a verb outside the span
taken as the effect, a cause cut off at a dash before its verb, a connective that sits inside
one clause ("It is clear, therefore, that ..."). The parse says which words the pattern
connects; the pair is kept only when its spans contain them.

Anchors
-------
Each pattern occurrence has two sets of *anchor* tokens, one for each side of the pattern:

- **Marker** patterns (a subordinator or a connective adverb with no dependents of its own:
  *because*, *as*, *so that*, *if*, *therefore*, *thus*, *so*): the connective depends on the
  head of the clause it introduces, which is the complement's anchor (the cause of *because*,
  the effect of *therefore*). The host's anchors are that clause head's own head (the verb a
  *because*-clause modifies) and, for a clause head that governs the previous clause ("It
  rained, so we stayed in": *rained* depends on *stayed*), its clausal dependents before the
  pattern.
- **Phrase** patterns (the pattern words govern their complement: *because of X*, *due to X*,
  *in order to X*, *as long as X*, and the verbs *cause*, *lead to*, *result in*, *caused by*,
  *prevent ... from*): the complement's anchors are the pattern's dependents to its right (the
  object), the host's anchors the word the phrase attaches to, that word's subject, and the
  pattern's dependents to its left (a verb's subject).

The pair is kept when the host span contains a host anchor and the complement span contains a
complement anchor before any word outside the complement's subtree; a complement that runs on
into a coordinated clause is cut there, one that runs on into anything else (or that was cut at
a parenthesis, dash, colon or quotation inside its clause) is dropped. ``if X, then Y``: the
head of the *if*-clause must be in the cause, the word it modifies in the effect.

Two more checks need the parse. A span that ends in a word whose phrase lies outside it (a
preposition without its object, a conjunction, a determiner: "The sentence is imprisonment
for") is a fragment (``DropReason.DANGLING``). A causative verb that is not asserted is
``DropReason.HYPOTHETICAL``: under a conditional modal (*might*, *could*, *would*, *should*:
"that might be caused by"; generic *may*/*can* stay), an infinitive under a verb of intention
("determined to prevent", unlike "began to cause"), or inside a *whether* clause ("the question
whether the disease gives rise to the crime"); so is any pattern right after an adverb that
disowns the reason ("ostensibly for the purpose of", "apparently because"; a mere "perhaps"
stays).

What this does not do: decide sense (temporal *as*, comparative *so that*) or the scope of
negation. The lexical filters of :mod:`causal_mining.filters` keep doing that.

Examples
--------
>>> from causal_mining.patterns import find_matches
>>> from causal_mining.tagging import SentenceTags
>>> s = "I am sad because I lost my phone."
>>> tags = SentenceTags(
...     [(0, "PRP"), (2, "VBP"), (5, "JJ"), (9, "IN"), (17, "PRP"), (19, "VBD"), (24, "PRP$"),
...      (27, "NN"), (32, ".")],
...     heads=[1, 1, 1, 5, 5, 1, 7, 5, 1],
...     deps=["nsubj", "ROOT", "acomp", "mark", "nsubj", "advcl", "poss", "dobj", "punct"])
>>> check_syntax(s, find_matches(s)[0], (17, 32), (0, 8), tags)  # the cause keeps its end
32
>>> check_syntax(s, find_matches(s)[0], (17, 32), (5, 8), tags)  # effect misses "am"
<DropReason.SYNTAX: 'syntax_mismatch'>
"""

from __future__ import annotations

import re

from causal_mining.filters import DropReason
from causal_mining.patterns import PatternClass, PatternMatch, Shape
from causal_mining.tagging import SentenceTags

__all__ = ["anchors", "check_syntax", "dangling_end", "not_asserted"]

_SUBJECTS = frozenset({"nsubj", "nsubjpass", "csubj", "csubjpass", "expl"})
_CLAUSES = frozenset({"ccomp", "conj", "parataxis", "advcl", "xcomp", "ROOT"})
# A dependent of the pattern words that is part of the pattern's own syntax, not an argument.
_NOT_ARGUMENT = frozenset({"punct", "cc", "aux", "auxpass", "neg", "advmod", "det", "prt"})
# Where the subject of a verb is found when the verb has none of its own: the word a relative or
# participial clause modifies, or the clause a conjunct, complement or participle depends on.
_BORROWS_SUBJECT = frozenset({"relcl", "acl", "conj", "xcomp", "advcl", "ccomp", "pcomp"})


# Last words that leave their phrase open: a preposition's object, a conjunction's conjunct, a
# determiner's noun lie outside the span.
_OPEN_ENDED = frozenset({"cc", "det", "poss", "mark", "aux", "auxpass", "case", "preconj",
                         "predet"})
_PREPOSITIONS = frozenset({"prep", "agent", "dative"})
# A complement cut here (a parenthesis, a dash, a colon, a quotation) may stop inside its clause.
_PUNCTUATION_CUT = re.compile(r"\s*(?:\(|\[|--|\u2014|\u2013|:|[\"\u201c])")
_HEDGE_BEFORE = re.compile(
    r"\b(?:ostensibly|apparently|presumably|supposedly|allegedly|professedly)"
    r"[\s,]*$", re.IGNORECASE,
)
_HEDGING_MODALS = frozenset({"might", "could", "would", "should", "ought"})
# Verbs an infinitive can follow and still be asserted ("began to cause", "helped to bring about").
_ASPECTUAL = frozenset({"begin", "began", "begun", "begins", "beginning", "start", "started",
                        "starts", "starting", "continue", "continued", "continues",
                        "continuing", "help", "helped", "helps", "helping", "serve", "served",
                        "serves", "serving", "tend", "tended", "tends", "go", "went", "goes",
                        "going", "used", "came", "come", "comes"})


def _is_word(tags: SentenceTags, index: int) -> bool:
    tag = tags.tag(index)
    return tag[:1].isalpha() and tag != "_SP"


def _subjects(tags: SentenceTags, index: int) -> set[int]:
    """Subject tokens of the word at ``index``, borrowed from its head where it has none."""
    found: set[int] = set()
    for _ in range(4):  # a short climb: conjuncts of conjuncts, participles of relatives
        own = {c for c in tags.children(index) if tags.deps[c] in _SUBJECTS}
        found |= own
        head = tags.heads[index]
        if own or head == index or tags.deps[index] not in _BORROWS_SUBJECT:
            return found
        found.add(head)
        index = head
    return found


def _clauses_before(tags: SentenceTags, node: int, first: int, in_pattern: set[int]) -> set[int]:
    """Clausal dependents of ``node`` that come before the pattern (which starts at ``first``)."""
    return {c for c in tags.children(node)
            if c < first and tags.deps[c] in _CLAUSES and c not in in_pattern}


def anchors(
    tags: SentenceTags, pattern_tokens: list[int]
) -> tuple[set[int], set[int], set[int]]:
    """``(host anchors, complement anchors, complement scope)`` of a pattern occurrence.

    ``pattern_tokens`` are the indices of the pattern's words (one part of a discontinuous
    pattern). The scope is the set of tokens the complement may cover.

    >>> from causal_mining.tagging import SentenceTags
    >>> tags = SentenceTags(  # "The war led to famine ."
    ...     [(0, "DT"), (4, "NN"), (8, "VBD"), (12, "IN"), (15, "NN"), (21, ".")],
    ...     heads=[1, 2, 2, 2, 3, 2], deps=["det", "nsubj", "ROOT", "prep", "pobj", "punct"])
    >>> anchors(tags, [2, 3])  # phrase "led to": subject "war", object "famine"
    ({1}, {4}, {4})
    """
    in_pattern = set(pattern_tokens)
    first = min(pattern_tokens)
    marks = [i for i in pattern_tokens if tags.deps[i] == "mark"]
    dependents = [
        c for i in pattern_tokens for c in tags.children(i)
        if c not in in_pattern and tags.deps[c] not in _NOT_ARGUMENT and _is_word(tags, c)
    ]
    if marks or not dependents:
        # marker: the pattern hangs on the head of the clause it introduces
        top = marks[0] if marks else next(
            (i for i in pattern_tokens if tags.heads[i] not in in_pattern), pattern_tokens[0]
        )
        if tags.deps[top] == "cc":
            # coordinating "so": it hangs on the first conjunct; the clause it opens is the
            # next conjunct of that head ("X, so Y" parsed as Y conj X)
            head = tags.heads[top]
            nxt = [c for c in tags.children(head) if c > top and tags.deps[c] in _CLAUSES]
            if not nxt:
                return set(), set(), set()
            clause = nxt[0]
            return {head}, {clause}, tags.subtree(clause)
        clause = tags.heads[top]
        if clause in in_pattern:
            return set(), set(), set()
        host = _clauses_before(tags, clause, first, in_pattern)
        above = tags.heads[clause]
        while above in in_pattern and tags.heads[above] != above:
            above = tags.heads[above]  # "so long as": past "long" to the word it modifies
        if above != clause and above not in in_pattern:
            host.add(above)
            # "X but Y, so Z": Z hangs on X, the clause before the pattern is Y, a sibling
            host |= _clauses_before(tags, above, first, in_pattern)
        elif above == clause:
            # the parser made the clause the pattern opens the root ("X; so that Y"): the
            # clause before the pattern is one of its dependents
            host |= {
                c for c in tags.children(clause)
                if c < first and tags.tag(c).startswith("VB") and c not in in_pattern
            }
        scope = tags.subtree(clause)
        for h in host:
            if h in scope:
                scope -= tags.subtree(h)
        return host, {clause}, scope
    # phrase: the pattern words govern their complement
    top = next((i for i in pattern_tokens if tags.heads[i] not in in_pattern), pattern_tokens[0])
    host = {c for c in dependents if c < first}
    right = [c for c in dependents if c > first]
    head = tags.heads[top]
    if head != top:
        host.add(head)
        host |= _subjects(tags, head)
    host |= _subjects(tags, top)
    covered: set[int] = set()
    for c in right:
        covered |= tags.subtree(c)
    return host, set(right), covered


def _words_in(tags: SentenceTags, span: tuple[int, int]) -> list[int]:
    return [i for i in tags.indices_in(*span) if _is_word(tags, i)]


def check_syntax(
    sentence: str,
    match: PatternMatch,
    cause: tuple[int, int],
    effect: tuple[int, int],
    tags: SentenceTags,
) -> DropReason | int:
    """Where the complement span should end, or ``DropReason.SYNTAX`` if the parse contradicts
    the pair.

    The complement (the side after the pattern) may run on past its subtree: when the first
    word outside it is a coordinating conjunction ("because he was ill, and we left") the
    complement is cut before it (the caller trims the cut span); past anything else the pair is
    dropped, as it is when either side misses its anchor or the complement was cut at a
    parenthesis, dash, colon or quotation inside its clause. A comparative or
    reportative *as* is ``DropReason.SENSE``.

    Parameters
    ----------
    sentence
        The sentence the pair was cut from.
    match
        The pattern occurrence the pair was cut at.
    cause, effect
        Character spans of the pair in the sentence.
    tags
        The sentence's tags with a dependency parse (``SentenceTags.parsed``).

    Returns
    -------
    int or DropReason
        The complement's new end offset (its old end when nothing is cut), or the drop reason.
    """
    if not tags.parsed:
        raise ValueError("check_syntax needs a parsed sentence (Tagger(parse=True))")
    host_side, complement_side = (
        (cause, effect) if match.pattern.cls is PatternClass.CPE
        and match.pattern.shape is not Shape.IF_THEN else (effect, cause)
    )
    pattern_tokens = [i for i in tags.indices_in(match.start, match.end) if _is_word(tags, i)]
    if not pattern_tokens:
        return complement_side[1]  # the tokeniser split the pattern otherwise: no evidence
    if match.pattern.shape is Shape.PREVENT_FROM and match.start2 >= 0:
        pattern_tokens += [
            i for i in tags.indices_in(match.start2, match.end2) if _is_word(tags, i)
        ]
    host, complement, scope = anchors(tags, pattern_tokens)
    host_words = set(_words_in(tags, host_side))
    complement_words = _words_in(tags, complement_side)
    if not host & host_words:
        return DropReason.SYNTAX
    if match.pattern.name == "as" and _comparative_as(sentence, tags, pattern_tokens, host,
                                                      complement, host_side):
        return DropReason.SENSE
    scope = scope | set(pattern_tokens)
    outside = next((i for i in complement_words if i not in scope), None)
    kept = [i for i in complement_words if outside is None or i < outside]
    if not complement & set(kept):
        return DropReason.SYNTAX
    end = kept[-1]
    if (_PUNCTUATION_CUT.match(sentence, complement_side[1]) is not None
            and any(i > end and _is_word(tags, i) and (outside is None or i < outside)
                    for i in scope)):
        # the span was cut at punctuation inside its clause ("she was glad that the only
        # other person who knew (himself excepted) was now silenced"; "because I wired: ...")
        return DropReason.SYNTAX
    if outside is None:
        return complement_side[1]
    if tags.deps[outside] != "cc":
        # only a coordinated clause is cut off ("because he was ill, and we left"); a
        # complement running on into anything else is a misparse or a misread span
        return DropReason.SYNTAX
    return tags.offset(outside)


_TOKEN_TEXT = re.compile(r"[^\W_]+(?:['\u2019][^\W_]+)*|\S")


def _text(sentence: str, tags: SentenceTags, index: int) -> str:
    """Lower-cased word at token ``index`` (no trailing punctuation)."""
    found = _TOKEN_TEXT.match(sentence, tags.offset(index))
    return found.group().lower() if found else ""


def dangling_end(tags: SentenceTags, span: tuple[int, int]) -> bool:
    """Whether the last word of ``span`` leaves its phrase open outside the span.

    A preposition whose object is not in the span, or a conjunction, determiner, possessive,
    subordinator or auxiliary as the last word ("imprisonment for", "alone--and").

    >>> from causal_mining.tagging import SentenceTags
    >>> tags = SentenceTags(  # "It is for him"
    ...     [(0, "PRP"), (3, "VBZ"), (6, "IN"), (10, "PRP")],
    ...     heads=[1, 1, 1, 2], deps=["nsubj", "ROOT", "prep", "pobj"])
    >>> dangling_end(tags, (0, 9)), dangling_end(tags, (0, 13))
    (True, False)
    """
    words = _words_in(tags, span)
    if not words:
        return False
    last = words[-1]
    dep = tags.deps[last]
    if dep in _OPEN_ENDED:
        return True
    if dep in _PREPOSITIONS:
        inside = set(words)
        return not any(c in inside for c in tags.children(last))
    return False


def not_asserted(sentence: str, tags: SentenceTags, match: PatternMatch) -> bool:
    """Whether the relation is hedged, intended or embedded in a *whether* clause.

    Any pattern right after an adverb that disowns the reason ("ostensibly for the purpose
    of"); a causative verb (``cause``, ``lead to``, ``prevent ... from``, ...) under a
    conditional modal, as an intended infinitive or inside a *whether* clause. The modality of
    subordinate clauses is the lexical filters' business.

    >>> from causal_mining.patterns import find_matches
    >>> from causal_mining.tagging import SentenceTags
    >>> s = "It might cause pain"
    >>> tags = SentenceTags([(0, "PRP"), (3, "MD"), (9, "VB"), (15, "NN")],
    ...                     heads=[2, 2, 2, 2], deps=["nsubj", "aux", "ROOT", "dobj"])
    >>> not_asserted(s, tags, find_matches(s)[0])
    True
    """
    if _HEDGE_BEFORE.search(sentence, 0, match.start):
        return True
    verbs = [i for i in tags.indices_in(match.start, match.end) if tags.tag(i).startswith("VB")]
    if not verbs:
        return False
    verb = verbs[0]
    children = tags.children(verb)
    if any(tags.deps[c] in ("aux", "auxpass") and _text(sentence, tags, c) in _HEDGING_MODALS
           for c in children):
        return True
    head = tags.heads[verb]
    if (tags.deps[verb] == "xcomp" and head != verb
            and any(tags.deps[c] == "aux" and _text(sentence, tags, c) == "to" for c in children)
            and _text(sentence, tags, head) not in _ASPECTUAL):
        return True
    node, steps = verb, 0
    while steps < 40:
        if any(tags.deps[c] == "mark" and _text(sentence, tags, c) == "whether"
               for c in tags.children(node)):
            return True
        if tags.heads[node] == node:
            return False
        node, steps = tags.heads[node], steps + 1
    return False


_BE_HAVE_DO = frozenset({"is", "are", "was", "were", "be", "been", "being", "am", "'s", "'re",
                         "has", "have", "had", "having", "do", "does", "did"})
_PREDICATES = frozenset({"acomp", "attr", "dobj", "xcomp", "ccomp", "oprd", "dative", "auxpass",
                         "expl", "npadvmod", "nsubjpass", "pobj", "agent"})
_REPORTING = frozenset(
    {"expected", "supposed", "thought", "feared", "said", "told", "known", "seen", "heard",
     "believed", "observed", "remarked", "mentioned", "noted", "predicted", "foreseen",
     "imagined", "hoped", "intended", "anticipated", "guessed", "suspected", "shown", "stated",
     "explained", "described", "reported", "promised", "agreed", "expect", "suppose", "think",
     "fear", "say", "says", "know", "knows", "see", "sees", "hear", "believe", "observe",
     "remark", "imagine", "hope", "guess", "suspect", "assume", "assumed", "assumes",
     "writes", "wrote", "written", "reckoned", "calculated"}
)


def _comparative_as(
    sentence: str, tags: SentenceTags, pattern_tokens: list[int], host: set[int],
    complement: set[int], host_side: tuple[int, int],
) -> bool:
    """Whether an *as* occurrence compares or reports rather than explains.

    Not a subordinator of a clause ("as one on whom ..."), the clause repeats the host's
    predicate ("not often revealed, as it was revealed to Babette"), its predicate is elided
    ("as he had been when ...", "as it is in the country"), it reports ("as I had half
    expected"), or a correlative *so* answers it ("As he had ..., so he had ...").
    """
    if tags.deps[pattern_tokens[0]] != "mark" or not complement:
        return True
    clause = min(complement)
    if not tags.tag(clause).startswith("VB"):
        return True
    word = _text(sentence, tags, clause)
    if word not in _BE_HAVE_DO and any(_text(sentence, tags, h) == word for h in host):
        return True
    children = tags.children(clause)
    if word in _BE_HAVE_DO and not any(tags.deps[c] in _PREDICATES for c in children):
        return True
    if word in _REPORTING and not any(tags.deps[c] in ("dobj", "ccomp") for c in children):
        return True
    before = sentence[:host_side[0]].rstrip(" ,").lower()
    return before.endswith((" so", ",so")) or before == "so"

"""The left context of a pattern match: the last few words before it, inside its clause.

The lexical filters (:mod:`causal_mining.filters`) and the word-sense checks
(:mod:`causal_mining.word_sense`) decide from the words just before a pattern; reading them only
inside the pattern's clause (or comma span) keeps a word of the previous clause from negating or
disambiguating it.

Examples
--------
>>> s = "He was ill; the storm had not caused it."
>>> words_before(s, s.index("caused"), 2)
['had', 'not']
>>> words_before(s, s.index("caused"), 9)
['the', 'storm', 'had', 'not']
"""

from __future__ import annotations

from causal_mining.sentences import words

__all__ = ["BE_GET", "words_before"]

# Forms of *be* and *get*: before a past participle they make it passive ("was caused"), right
# before "as long as" a comparison ("were as long as those of a horse").
BE_GET = frozenset(
    {"am", "is", "are", "was", "were", "be", "been", "being", "get", "gets", "got", "gotten",
     "getting", "'s", "'re", "isn't", "wasn't", "weren't", "aren't"}
)


def words_before(sentence: str, offset: int, n: int, cross_commas: bool = False) -> list[str]:
    """The last ``n`` lowercased words before ``offset`` in the same clause (or comma span)."""
    region = sentence[:offset]
    cut = max(region.rfind(";"), region.rfind(":"), region.rfind("("))
    if not cross_commas:
        cut = max(cut, region.rfind(","))
    return [w.lower() for w in words(region[cut + 1 :])[-n:]]

"""Sentence splitting and word tokens: the hot path, in plain regular expressions.

spaCy's sentence segmentation would cost more than the whole rest of the miner; prose split on
``.!?`` followed by a capital, with abbreviations ("Mr.", "St.", initials) re-joined, is what
pattern mining needs.

Examples
--------
>>> split_sentences('Mr. Brown was late. "Why?" she asked. He had missed the train.')
['Mr. Brown was late.', '"Why?" she asked.', 'He had missed the train.']
>>> word_count("It's raining -- isn't it?")
4
"""

from __future__ import annotations

import re

__all__ = ["split_sentences", "count_sentences", "normalise_space", "words", "word_count"]

_SPACE = re.compile(r"\s+")
_BOUNDARY = re.compile(r"(?<=[.!?])[\"'\u201d\u2019)\]_]*\s+(?=[\"'\u201c\u2018(\[_]*[A-Z0-9])")
_ABBREVIATION = re.compile(
    r"(?:\b(?:Mr|Mrs|Ms|Messrs|Dr|St|Sr|Jr|Mme|Mlle|Capt|Col|Gen|Lt|Sgt|Rev|Prof|Hon|Gov|Pres|"
    r"vs|etc|viz|cf|No|Nos|Vol|Ch|Fig|Mt|Ft|Co|Bros|Inc|Ltd|esq|Esq)|\b[A-Z]|\be\.g|\bi\.e)\.$"
)
_WORD = re.compile(r"[^\W_]+(?:['\u2019-][^\W_]+)*")
_COUNTABLE_END = re.compile(r"[.!?][\"'\u201d\u2019)\]_]*\s+[\"'\u201c\u2018(\[_]*[A-Z0-9]")


def normalise_space(text: str) -> str:
    """Collapse every run of whitespace (line breaks included) into one space, and strip.

    >>> normalise_space("  a\\n  b\\tc ")
    'a b c'
    """
    return _SPACE.sub(" ", text).strip()


def split_sentences(paragraph: str) -> list[str]:
    """Split a whitespace-normalised paragraph into sentences.

    Parameters
    ----------
    paragraph
        Text with single spaces (see :func:`normalise_space`).

    Returns
    -------
    list[str]
        The sentences in order; empty pieces are dropped.

    Examples
    --------
    >>> split_sentences("He met J. R. Smith at St. Paul's. Then he left!")
    ["He met J. R. Smith at St. Paul's.", 'Then he left!']
    """
    pieces: list[str] = []
    start = 0
    for match in _BOUNDARY.finditer(paragraph):
        head = paragraph[start : match.start()]
        if _ABBREVIATION.search(head[-12:]):
            continue
        if head.strip():
            pieces.append(head.strip())
        start = match.end()
    tail = paragraph[start:].strip()
    if tail:
        pieces.append(tail)
    return pieces


def count_sentences(paragraph: str) -> int:
    """Approximate sentence count without splitting (abbreviations not re-joined).

    Used for paragraphs that the pre-scan rejects, where only the statistics need the number.

    >>> count_sentences("One. Two! Three")
    3
    """
    return len(_COUNTABLE_END.findall(paragraph)) + 1 if paragraph else 0


def words(text: str) -> list[str]:
    """Word tokens (letters/digits, inner apostrophes and hyphens kept), punctuation dropped.

    >>> words("He didn't go, because -- well -- it rained from over-application.")
    ['He', "didn't", 'go', 'because', 'well', 'it', 'rained', 'from', 'over-application']
    """
    return _WORD.findall(text)


def word_count(text: str) -> int:
    """Number of :func:`words` in ``text``."""
    return len(_WORD.findall(text))

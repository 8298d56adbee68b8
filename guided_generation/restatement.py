"""Outputs that restate the input: "my body cast a shadow on the grass" as the cause of "my body
cast a shadow over the grass".

A cause or an effect that repeats the input says nothing, yet the model finds it likely (it has
just read those words) and a reverse score finds the input likely after it. An output *restates*
the input when it holds most of the input's content words (:data:`THRESHOLD` of them, stop words
and case aside, in any inflection: "the baby is crying" restates "babies cry"; lemminflect's
lemmas of every part of speech, so no tagger is run); such outputs go to the end of a ranking,
after every other output, so they are shown only when nothing else is left.

>>> restates("my body cast a shadow on the grass", "My body cast a shadow over the grass.")
True
>>> restates("the baby is crying", "babies cry"), restates("the baby is hungry", "babies cry")
(True, False)
>>> restates("the sun was rising", "My body cast a shadow over the grass.")
False
>>> restates("he went to sleep late", "the man fell asleep")
False
>>> [o for o in demote_restatements(["the car broke down again", "the battery died"],
...                                 "the car broke down")]
['the battery died', 'the car broke down again']
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import TypeVar

__all__ = ["THRESHOLD", "content_words", "demote_restatements", "restates"]

T = TypeVar("T")
#: Share of the input's content words an output must hold to restate it.
THRESHOLD = 0.75
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


@lru_cache(maxsize=1)
def _stop_words() -> frozenset[str]:
    from spacy.lang.en.stop_words import STOP_WORDS  # a word list: no pipeline is loaded

    return frozenset(STOP_WORDS)


def content_words(text: str) -> frozenset[str]:
    """The lower-cased words of ``text`` that are not stop words.

    >>> sorted(content_words("The car broke down."))
    ['broke', 'car']
    """
    stop = _stop_words()
    return frozenset(w for w in _WORD.findall(text.lower()) if w not in stop)


@lru_cache(maxsize=65536)
def _forms(word: str) -> frozenset[str]:
    """The word and its lemmas under every part of speech ("fell" → fell, fall)."""
    from lemminflect import getAllLemmas

    return frozenset({word, *(lemma for lemmas in getAllLemmas(word).values() for lemma in lemmas)})


def restates(output: str, text: str, threshold: float = THRESHOLD) -> bool:
    """Whether ``output`` holds at least ``threshold`` of ``text``'s content words, each in any
    inflection (an input without content words is restated by nothing)."""
    source = content_words(text)
    if not source:
        return False
    said = frozenset().union(*(_forms(w) for w in content_words(output)))
    held = sum(bool(_forms(w) & said) for w in source)
    return held >= threshold * len(source)


def demote_restatements(ranked: Sequence[T], text: str,
                        key: Callable[[T], str] = lambda o: getattr(o, "text", o)) -> list[T]:
    """``ranked`` with the outputs that restate ``text`` moved to the end (both parts keep
    their order); ``key`` reads an output's text (default: its ``text`` attribute, or the
    output itself when it is a string)."""
    restated = [restates(key(o), text) for o in ranked]
    return ([o for o, r in zip(ranked, restated) if not r]
            + [o for o, r in zip(ranked, restated) if r])

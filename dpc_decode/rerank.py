"""Merge, deduplicate and rerank outputs gathered from many decodes.

Works on anything with a ``text`` and a mean negative log-likelihood ``nll`` (a
:class:`~dpc_decode.outputs.GeneratedSequence`, or the pipeline's own output type).

* :func:`normalise` - the key two outputs are duplicates under: case, spacing and a final
  punctuation mark ignored.
* :func:`deduplicate` - keep the most likely output (lowest ``nll``) of each key, first seen on ties.
* :func:`rank_by_nll` - lowest mean NLL per token first (length-normalised, so short outputs gain
  nothing from being short).
* :func:`mmr` - maximal marginal relevance (Carbonell & Goldstein 1998): greedily pick the output
  maximising ``λ·relevance − (1 − λ)·max similarity to those already picked``, with relevance the
  NLL rescaled to [0, 1] over the candidates and similarity the Jaccard overlap of word sets.
* :func:`limit_templates` - the first ``k`` of a ranking in which no word n-gram is shared by more
  than ``limit`` outputs ("they are too young to ..." ten times over reads as one answer); the
  outputs it passes over fill the list only when too few are left.

>>> from types import SimpleNamespace as O
>>> outs = [O(text="I was hungry", nll=1.0), O(text="i was  hungry.", nll=0.9),
...         O(text="I was tired", nll=1.2), O(text="the baby was tired", nll=1.1)]
>>> [o.text for o in rank_by_nll(deduplicate(outs))]
['i was  hungry.', 'the baby was tired', 'I was tired']
>>> [o.text for o in mmr(deduplicate(outs), 2, lam=0.3)]
['i was  hungry.', 'the baby was tired']
>>> same = [O(text=f"they are too young to {w}", nll=1.0) for w in ("eat", "walk", "talk")]
>>> [o.text for o in limit_templates([*same, O(text="they are hungry", nll=2.0)], 3)]
['they are too young to eat', 'they are too young to walk', 'they are hungry']
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Protocol, TypeVar

from dpc_decode.errors import DpcError
from dpc_errors import check_int

__all__ = ["deduplicate", "jaccard", "limit_templates", "mmr", "normalise", "rank_by_nll",
           "word_ngrams", "word_set"]


class _Scored(Protocol):
    @property
    def text(self) -> str | None: ...

    @property
    def nll(self) -> float: ...


T = TypeVar("T", bound=_Scored)

_WORD = re.compile(r"\w+(?:'\w+)?")
#: A word of :func:`word_ngrams`: also across a typographic apostrophe ("didn’t" is one word),
#: which pretrained LMs write.
_NGRAM_WORD = re.compile(r"\w+(?:['’]\w+)?")


def normalise(text: str | None) -> str:
    """The deduplication key of a text.

    >>> normalise("  The baby was  HUNGRY. ")
    'the baby was hungry'
    """
    text = " ".join((text or "").lower().split())
    return text.rstrip(".!?;,: ").strip()


def deduplicate(outputs: Iterable[T]) -> list[T]:
    """One output per :func:`normalise` key: the lowest ``nll``; order of first appearance."""
    best: dict[str, T] = {}
    for out in outputs:
        key = normalise(out.text)
        if key not in best or out.nll < best[key].nll:
            best[key] = out
    return list(best.values())


def rank_by_nll(outputs: Iterable[T]) -> list[T]:
    """Lowest mean NLL first; ties by text, so the order is deterministic."""
    return sorted(outputs, key=lambda o: (o.nll, o.text or ""))


def word_set(text: str | None) -> frozenset[str]:
    """Lower-cased words of a text.

    >>> sorted(word_set("The baby's crying, the BABY."))
    ['baby', "baby's", 'crying', 'the']
    """
    return frozenset(_WORD.findall((text or "").lower()))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """``|a ∩ b| / |a ∪ b|`` (0 for two empty sets).

    >>> jaccard(frozenset("ab"), frozenset("bc"))
    0.3333333333333333
    """
    union = len(a | b)
    return len(a & b) / union if union else 0.0


def mmr(outputs: Sequence[T], k: int, lam: float = 0.7) -> list[T]:
    """``k`` outputs chosen by maximal marginal relevance (see the module docstring).

    ``lam=1`` is :func:`rank_by_nll`; lower values prefer outputs that share fewer words with
    those already chosen.
    """
    if not 0 <= lam <= 1:
        raise DpcError(f"`lam` (={lam!r}) must be in [0, 1]")
    pool = rank_by_nll(outputs)
    if not pool:
        return []
    low, high = pool[0].nll, pool[-1].nll
    span = (high - low) or 1.0
    relevance = [1.0 - (o.nll - low) / span for o in pool]
    words = [word_set(o.text) for o in pool]
    nearest = [0.0] * len(pool)  # max similarity to the chosen outputs
    chosen: list[int] = []
    left = set(range(len(pool)))
    while left and len(chosen) < k:
        i = max(left, key=lambda j: (lam * relevance[j] - (1 - lam) * nearest[j], -j))
        chosen.append(i)
        left.discard(i)
        for j in left:
            nearest[j] = max(nearest[j], jaccard(words[i], words[j]))
    return [pool[i] for i in chosen]


def word_ngrams(text: str | None, n: int = 3) -> frozenset[tuple[str, ...]]:
    """The lower-cased word ``n``-grams of a text (what a repeated template shares; also the
    measure of templates, :func:`tasks.copa.plausibility.template_share`).

    >>> sorted(word_ngrams("They are too young.", 3))
    [('are', 'too', 'young'), ('they', 'are', 'too')]
    >>> sorted(word_ngrams("She didn’t go", 3))
    [('she', 'didn’t', 'go')]
    """
    words = _NGRAM_WORD.findall((text or "").lower())
    return frozenset(tuple(words[i:i + n]) for i in range(len(words) - n + 1))


def limit_templates(ranked: Sequence[T], k: int, limit: int = 2, n: int = 3) -> list[T]:
    """The first ``k`` outputs of ``ranked`` (best first) such that no word ``n``-gram occurs in
    more than ``limit`` of them: an output that would be the ``limit + 1``-th to share one is
    passed over. When fewer than ``k`` outputs pass, the passed-over ones fill the rest, in their
    order (the list is never shorter than ``min(k, len(ranked))``).
    """
    check_int("limit", limit, 1)
    check_int("n", n, 1)
    counts: dict[tuple[str, ...], int] = {}
    chosen: list[T] = []
    passed: list[T] = []
    for out in ranked:
        if len(chosen) == k:
            break
        grams = word_ngrams(out.text, n)
        if any(counts.get(g, 0) >= limit for g in grams):
            passed.append(out)
            continue
        chosen.append(out)
        for g in grams:
            counts[g] = counts.get(g, 0) + 1
    return chosen + passed[: k - len(chosen)]

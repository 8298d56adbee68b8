"""Edge counts of (cause lemmas, effect lemmas) pairs: what a graph is built from.

For every pair, every (cause lemma, effect lemma) combination counts once (as in CausalNet and
Li et al. 2020), and lemmas are counted per pair as node frequencies. The mined bank's counts
(:mod:`cause_effect_graph.build`) and the everyday sources' counts
(:mod:`cause_effect_graph.everyday`) are both :class:`EdgeCounts`, and :func:`merge_counts`
weighs and adds them into one.

>>> counts = count_lemma_pairs([(["rain"], ["wet", "cold"]), (["rain", "wind"], ["wet"])])
>>> counts.vocab, counts.pairs, counts.total
(['rain', 'wet', 'cold', 'wind'], 2, 4)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from cause_effect_graph.errors import GraphError
from dpc_errors import check_int

__all__ = ["EdgeCounts", "count_lemma_pairs", "merge_counts"]

_SHIFT = np.int64(1 << 32)


@dataclass
class EdgeCounts:
    """Counts of a bank: lemma vocabulary, node frequencies, distinct edges with their counts.

    ``cause_freq[i]``/``effect_freq[i]``: pairs whose cause/effect holds lemma ``i``;
    ``src``/``dst``/``weight``: one row per distinct edge; ``pairs``: pairs read; ``total``: sum
    of all edge counts (CausalNet's N).
    """

    vocab: list[str]
    cause_freq: np.ndarray
    effect_freq: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    weight: np.ndarray
    pairs: int

    @property
    def total(self) -> int:
        return int(self.weight.sum())


class _Counter:
    def __init__(self) -> None:
        self.ids: dict[str, int] = {}
        self.cause: list[int] = []
        self.effect: list[int] = []
        self.pending: list[int] = []
        self.keys = np.zeros(0, np.int64)
        self.counts = np.zeros(0, np.int64)
        self.pairs = 0

    def _id(self, lemma: str) -> int:
        i = self.ids.get(lemma)
        if i is None:
            i = self.ids[lemma] = len(self.ids)
            self.cause.append(0)
            self.effect.append(0)
        return i

    def add(self, cause: Iterable[str], effect: Iterable[str]) -> None:
        self.pairs += 1
        cids = [self._id(x) for x in dict.fromkeys(cause)]
        eids = [self._id(x) for x in dict.fromkeys(effect)]
        for c in cids:
            self.cause[c] += 1
        for e in eids:
            self.effect[e] += 1
        self.pending += [(c << 32) | e for c in cids for e in eids]
        if len(self.pending) > 2_000_000:
            self.flush()

    def flush(self) -> None:
        if not self.pending:
            return
        keys = np.concatenate([self.keys, np.asarray(self.pending, np.int64)])
        counts = np.concatenate([self.counts, np.ones(len(self.pending), np.int64)])
        self.keys, inverse = np.unique(keys, return_inverse=True)
        self.counts = np.bincount(inverse, weights=counts).astype(np.int64)
        self.pending = []

    def result(self) -> EdgeCounts:
        self.flush()
        return EdgeCounts(
            vocab=list(self.ids),
            cause_freq=np.asarray(self.cause, np.int64),
            effect_freq=np.asarray(self.effect, np.int64),
            src=(self.keys >> 32).astype(np.int64),
            dst=(self.keys & (_SHIFT - 1)).astype(np.int64),
            weight=self.counts,
            pairs=self.pairs,
        )


def count_lemma_pairs(pairs: Iterable[tuple[Sequence[str], Sequence[str]]]) -> EdgeCounts:
    """Count the edges of ``(cause lemmas, effect lemmas)`` pairs (each lemma once per side).

    >>> c = count_lemma_pairs([(["rain", "rain"], ["wet"])])
    >>> c.vocab, c.weight.tolist(), c.cause_freq.tolist()
    (['rain', 'wet'], [1], [1, 0])
    """
    counter = _Counter()
    for cause, effect in pairs:
        counter.add(cause, effect)
    return counter.result()


def merge_counts(parts: Sequence[tuple[EdgeCounts, int]]) -> EdgeCounts:
    """One :class:`EdgeCounts` of several, each counted ``weight`` times.

    A part of weight ``w`` counts as if each of its pairs had been seen ``w`` times: its edge
    counts and node frequencies are multiplied by ``w`` (so causal strength stays a function of
    one set of counts). ``pairs`` is the number of pairs actually read (not weighted). The
    vocabulary keeps the order of first appearance.

    >>> a = count_lemma_pairs([(["rain"], ["wet"])])
    >>> b = count_lemma_pairs([(["rain"], ["wet", "flood"])])
    >>> m = merge_counts([(a, 1), (b, 3)])
    >>> m.vocab, sorted(zip(m.src.tolist(), m.dst.tolist(), m.weight.tolist()))
    (['rain', 'wet', 'flood'], [(0, 1, 4), (0, 2, 3)])
    >>> m.cause_freq.tolist(), m.pairs, m.total
    ([4, 0, 0], 2, 7)
    """
    ids: dict[str, int] = {}
    for counts, weight in parts:
        check_int("a count weight", weight, 1, error=GraphError, quote=False)
        for lemma in counts.vocab:
            ids.setdefault(lemma, len(ids))
    cause = np.zeros(len(ids), np.int64)
    effect = np.zeros(len(ids), np.int64)
    keys, weights = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)]
    for counts, weight in parts:
        where = np.asarray([ids[lemma] for lemma in counts.vocab], np.int64)
        if len(where):
            np.add.at(cause, where, counts.cause_freq * weight)
            np.add.at(effect, where, counts.effect_freq * weight)
            keys.append((where[counts.src] << 32) | where[counts.dst])
            weights.append(counts.weight * weight)
    unique, inverse = np.unique(np.concatenate(keys), return_inverse=True)
    summed = np.bincount(inverse, weights=np.concatenate(weights)).astype(np.int64)
    return EdgeCounts(vocab=list(ids), cause_freq=cause, effect_freq=effect,
                      src=(unique >> 32).astype(np.int64),
                      dst=(unique & (_SHIFT - 1)).astype(np.int64),
                      weight=summed, pairs=sum(counts.pairs for counts, _ in parts))

"""The two baselines AFLite is compared with in WinoGrande (Sakaguchi et al. 2020, Table 1):
random reduction to the same size, and PMI filtering.

PMI filtering follows Gururangan et al. 2018: the pointwise mutual information of each word with
each label, ``PMI(w, c) = log p(w | c) / p(w)``, over word tokens (lower-cased ``\\w+``), with
add-``alpha`` smoothing of the counts (Gururangan et al. used add-100 on SNLI's 550k pairs; on
10k sentences that washes every count out, so the default here is add-1). An instance's
*own-label association* is the mean PMI of its words with its label. WinoGrande keeps the twins
(two problems that differ in a trigger word and have opposite answers) whose associations differ
little: for an instance in a group of two or more (``groups``), its key is the spread (max - min)
of the group's associations; an instance alone is keyed by the absolute difference between its
association with its own label and its mean association with the other labels. The ``size``
instances with the smallest keys are kept (a group's members stay together except at the cut).

>>> texts = ["the cat sat", "the dog ran", "a cat sat", "a dog ran"]
>>> kept = pmi_filter(texts, [0, 1, 0, 1], 2, groups=["a", "a", "b", "b"])
>>> len(kept)
2
>>> random_reduction(10, 3, seed=0).tolist()
[5, 6, 9]
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

import numpy as np

from tasks.errors import TaskError

__all__ = ["pmi_filter", "pmi_keys", "random_reduction", "word_label_pmi", "words"]

_WORD = re.compile(r"\w+")


def words(text: str) -> list[str]:
    """Lower-cased word tokens of ``text``.

    >>> words("Ian ate Dennis's menudo.")
    ['ian', 'ate', 'dennis', 's', 'menudo']
    """
    return _WORD.findall(text.lower())


def _check_size(size: int, total: int) -> None:
    if not isinstance(size, (int, np.integer)) or not 0 <= size <= total:
        raise TaskError(f"`size` (={size!r}) must be an integer from 0 to the number of "
                        f"instances ({total})")


def random_reduction(total: int, size: int, *, seed: int = 0) -> np.ndarray:
    """``size`` indices out of ``total`` drawn uniformly without replacement (ascending)."""
    _check_size(size, total)
    return np.sort(np.random.default_rng(seed).choice(total, size, replace=False))


def word_label_pmi(texts: Sequence[str], labels: Sequence[int], *,
                   alpha: float = 1.0) -> tuple[dict[str, int], np.ndarray, np.ndarray]:
    """``(vocabulary, classes, pmi)``: ``pmi[word_id, class_index]`` over word tokens with
    add-``alpha`` smoothing; ``classes`` the sorted distinct labels."""
    if len(texts) != len(labels):
        raise TaskError(f"texts and labels have different lengths ({len(texts)} texts, "
                        f"{len(labels)} labels)")
    classes = np.unique(np.asarray(labels))
    column = {int(c): j for j, c in enumerate(classes)}
    counts: Counter[tuple[str, int]] = Counter()
    for text, label in zip(texts, labels):
        for word in words(text):
            counts[word, column[int(label)]] += 1
    vocabulary = {w: i for i, w in enumerate(sorted({w for w, _ in counts}))}
    table = np.full((len(vocabulary), len(classes)), float(alpha))   # (V, C) smoothed counts
    for (word, j), count in counts.items():
        table[vocabulary[word], j] += count
    p_word_given_class = table / table.sum(axis=0, keepdims=True)   # (V, C)
    p_word = table.sum(axis=1) / table.sum()                         # (V,)
    return vocabulary, classes, np.log(p_word_given_class / p_word[:, None])


def _associations(texts: Sequence[str], labels: Sequence[int],
                  alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Each instance's mean word PMI with its own label, and with the other labels (mean)."""
    vocabulary, classes, pmi = word_label_pmi(texts, labels, alpha=alpha)
    column = {int(c): j for j, c in enumerate(classes)}
    own = np.zeros(len(texts))
    other = np.zeros(len(texts))
    for i, (text, label) in enumerate(zip(texts, labels)):
        ids = [vocabulary[w] for w in set(words(text))]
        if not ids:
            continue
        mean = pmi[ids].mean(axis=0)                                 # (C,)
        j = column[int(label)]
        own[i] = mean[j]
        other[i] = (mean.sum() - mean[j]) / max(1, len(classes) - 1)
    return own, other


def pmi_keys(texts: Sequence[str], labels: Sequence[int], *,
             groups: Sequence[str | None] | None = None, alpha: float = 1.0) -> np.ndarray:
    """Each instance's PMI key (small = little word-label evidence); see the module notes."""
    own, other = _associations(texts, labels, alpha)
    keys = np.abs(own - other)
    if groups is not None:
        if len(groups) != len(texts):
            raise TaskError(f"groups and texts have different lengths ({len(groups)} groups, "
                            f"{len(texts)} texts)")
        members: dict[str, list[int]] = {}
        for i, g in enumerate(groups):
            if g is not None:
                members.setdefault(g, []).append(i)
        for ids in members.values():
            if len(ids) > 1:
                keys[ids] = own[ids].max() - own[ids].min()
    return keys


def pmi_filter(texts: Sequence[str], labels: Sequence[int], size: int, *,
               groups: Sequence[str | None] | None = None, alpha: float = 1.0,
               seed: int = 0) -> np.ndarray:
    """The ``size`` instances (ascending indices) with the smallest :func:`pmi_keys`; ties in
    a seeded random order, the members of a group next to each other."""
    _check_size(size, len(texts))
    keys = pmi_keys(texts, labels, groups=groups, alpha=alpha)
    names = [f"#{i}" if groups is None or groups[i] is None else str(groups[i])
             for i in range(len(texts))]
    tie = np.random.default_rng(seed).random(len(texts))
    group_tie = {}
    for i, name in enumerate(names):
        group_tie.setdefault(name, tie[i])
    tie_of = np.array([group_tie[name] for name in names])
    order = np.lexsort((np.arange(len(texts)), tie_of, keys))
    return np.sort(order[:size])

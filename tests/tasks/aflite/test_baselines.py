"""The baselines: random reduction and PMI filtering (Gururangan et al. word-label PMI)."""

from __future__ import annotations

import numpy as np
import pytest

from tasks.aflite.baselines import pmi_filter, pmi_keys, random_reduction, word_label_pmi
from tasks.errors import TaskError


def test_random_reduction_is_a_seeded_uniform_subset() -> None:
    kept = random_reduction(1000, 300, seed=4)
    assert len(kept) == len(set(kept.tolist())) == 300
    assert np.all(np.diff(kept) > 0) and kept.max() < 1000
    assert np.array_equal(kept, random_reduction(1000, 300, seed=4))
    assert not np.array_equal(kept, random_reduction(1000, 300, seed=5))
    with pytest.raises(TaskError, match=r"`size` \(=1001\)"):
        random_reduction(1000, 1001)


def test_word_label_pmi_finds_the_giveaway_word() -> None:
    texts = ["the sky is never blue"] * 5 + ["the sky is blue"] * 5
    vocabulary, classes, pmi = word_label_pmi(texts, [1] * 5 + [0] * 5)
    assert classes.tolist() == [0, 1]
    assert pmi[vocabulary["never"], 1] > 0.3 and pmi[vocabulary["never"], 0] < -1.0
    assert abs(pmi[vocabulary["sky"], 0]) < 0.1                       # in both: no evidence


def test_pmi_filter_drops_the_instances_whose_words_give_the_label_away() -> None:
    rng = np.random.default_rng(0)
    fillers = ["cat", "dog", "tree", "house", "road", "lamp", "cup", "door"]
    texts, labels = [], []
    for i in range(200):
        label = int(rng.integers(0, 2))
        words = list(rng.choice(fillers, 4))
        if i < 50:                                                    # a cue word per label
            words.append("never" if label else "always")
        texts.append(" ".join(words))
        labels.append(label)
    kept = pmi_filter(texts, labels, 150)
    assert len(kept) == 150
    assert np.isin(np.arange(50), kept).mean() < 0.2                  # the cued ones went


def test_twins_are_kept_or_dropped_together() -> None:
    texts = ["he ran because he was late", "he ran because he was early",
             "she sang because she was happy", "she sang because she was sad",
             "it fell because it was heavy", "it fell because it was light"]
    groups = ["a", "a", "b", "b", "c", "c"]
    labels = [0, 1, 0, 1, 1, 0]
    keys = pmi_keys(texts, labels, groups=groups)
    assert keys[0] == keys[1] and keys[2] == keys[3]
    kept = pmi_filter(texts, labels, 4, groups=groups)
    assert len({groups[i] for i in kept}) == 2                       # 2 whole pairs, not 4 halves
    with pytest.raises(TaskError, match="5 groups"):
        pmi_keys(texts, labels, groups=groups[:5])

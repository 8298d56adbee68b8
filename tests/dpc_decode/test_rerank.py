"""Merge, deduplicate and rerank (dpc_decode.rerank)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from dpc_decode.errors import DpcError
from dpc_decode.rerank import (
    deduplicate,
    jaccard,
    limit_templates,
    mmr,
    normalise,
    rank_by_nll,
    word_set,
)


@dataclass(frozen=True)
class Out:
    text: str
    nll: float


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("The baby was hungry.", "the baby  was hungry", True),   # case, spacing, final period
        ("the baby was hungry!", "the baby was hungry?", True),
        ("the baby was hungry", "the babies were hungry", False),
        ("it rained, so", "it rained so", False),                  # inner punctuation counts
    ],
)
def test_normalise(a, b, same):
    assert (normalise(a) == normalise(b)) is same


def test_deduplicate_keeps_the_most_likely_copy_in_first_seen_order():
    outs = [Out("b", 2.0), Out("A.", 1.5), Out("a", 1.0), Out("B", 3.0), Out("c", 0.5)]
    assert deduplicate(outs) == [Out("b", 2.0), Out("a", 1.0), Out("c", 0.5)]


def test_rank_by_nll_breaks_ties_by_text():
    outs = [Out("z", 1.0), Out("a", 1.0), Out("m", 0.5)]
    assert [o.text for o in rank_by_nll(outs)] == ["m", "a", "z"]


def test_mmr_trades_likelihood_for_new_words():
    outs = [Out("the baby was hungry", 1.0), Out("the baby was very hungry", 1.1),
            Out("a storm came", 1.5)]
    assert [o.text for o in mmr(outs, 2, lam=1.0)] == ["the baby was hungry", "the baby was very hungry"]
    assert [o.text for o in mmr(outs, 2, lam=0.3)] == ["the baby was hungry", "a storm came"]
    assert mmr([], 3) == []
    assert len(mmr(outs, 10)) == 3


def test_mmr_rejects_a_bad_lambda():
    with pytest.raises(DpcError, match=r"`lam` \(=2\) must be in \[0, 1\]"):
        mmr([Out("a", 1.0)], 1, lam=2)


def test_jaccard_and_word_set():
    assert jaccard(word_set("a b c"), word_set("b c d")) == pytest.approx(2 / 4)
    assert jaccard(frozenset(), frozenset()) == 0.0


@pytest.mark.parametrize(("texts", "k", "limit", "expected"), [
    # the third "they are too young" output is passed over for the next one
    (["they are too young to eat", "they are too young to walk", "they are too young to talk",
      "they are hungry"], 3, 2, [0, 1, 3]),
    # limit 1: every shared trigram is a repeat; the passed-over outputs fill the list
    (["they are too young to eat", "they are too young to walk", "it rained"], 3, 1, [0, 2, 1]),
    # nothing shared: the ranking itself, cut to k
    (["a b c", "d e f", "g h i"], 2, 2, [0, 1]),
    # too few outputs: all of them, none lost
    (["x y z w", "x y z v", "x y z u"], 5, 2, [0, 1, 2]),
    # outputs under three words have no trigram and are never passed over
    (["cry", "cry a", "cry b"], 3, 1, [0, 1, 2]),
])
def test_limit_templates(texts, k, limit, expected):
    outs = [Out(t, float(i)) for i, t in enumerate(texts)]
    chosen = limit_templates(outs, k, limit)
    assert [outs.index(o) for o in chosen] == expected
    if len(texts) >= k:
        assert len(chosen) == k


def test_limit_templates_rejects_a_bad_limit():
    with pytest.raises(DpcError, match="`limit` \\(=0\\)"):
        limit_templates([], 3, 0)

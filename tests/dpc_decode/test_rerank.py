"""Merge, deduplicate and rerank (dpc_decode.rerank)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from dpc_decode.errors import DpcError
from dpc_decode.rerank import deduplicate, jaccard, mmr, normalise, rank_by_nll, word_set


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

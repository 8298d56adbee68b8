"""Metrics of generated causes/effects: hand-computed tables, nan cases and input checks."""

from __future__ import annotations

import math

import pytest

from dpc_errors import DpcError
from guided_generation.metrics import (
    constraint_coverage,
    distinct_n,
    div_bleu1,
    keyword_hit_rate,
    mean_distinct_n,
    words,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Babies cry.", ["babies", "cry", "."]),  # lower-cased, full stop split off
        ("don't  stop", ["don't", "stop"]),  # inner apostrophe kept, runs of spaces ignored
        ("wet—cold, 3 days", ["wet", "—", "cold", ",", "3", "days"]),  # dash and comma are tokens
        ("?!", ["?", "!"]),  # each mark alone
        ("", []),
    ],
)
def test_words(text: str, expected: list[str]) -> None:
    assert words(text) == expected


@pytest.mark.parametrize(
    ("outputs", "golds", "kwargs", "expected"),
    [
        # a, b matched out of a b c d
        ([["a b c d"]], ["a b x"], {}, 50.0),
        # fully matching but shorter than the gold: no brevity penalty (with it: 100 * e^-2)
        ([["a"]], ["a b c"], {}, 100.0),
        # clipped: the gold has one a
        ([["a a a a"]], ["a b"], {}, 25.0),
        # pooled over the corpus (2 + 0) / (2 + 4), not the mean of 100 and 0
        ([["a b"], ["x y z w"]], ["a b", "a"], {}, 100 * 2 / 6),
        # only the first `top` outputs count
        ([["x y", "a b", "a b"]], ["a b"], {"top": 1}, 0.0),
        ([["x y", "a b", "a b"]], ["a b"], {"top": 2}, 50.0),
        ([["x y", "a b", "a b", "x y"]], ["a b"], {}, 100 * 4 / 6),
        # an input without outputs contributes nothing
        ([[], ["a b"]], ["q", "a b"], {}, 100.0),
        # each output is its own hypothesis against the same gold (clipping per hypothesis)
        ([["a", "a"]], ["a b"], {}, 100.0),
        # 13a tokenisation splits the full stop off: a b . against a b
        ([["a b."]], ["a b"], {}, 100 * 2 / 3),
        # case-sensitive unless asked
        ([["A b"]], ["a b"], {}, 50.0),
        ([["A b"]], ["a b"], {"lowercase": True}, 100.0),
    ],
)
def test_div_bleu1(outputs: list[list[str]], golds: list[str], kwargs: dict[str, object],
                   expected: float) -> None:
    assert div_bleu1(outputs, golds, **kwargs) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("outputs", "golds"),
    [
        ([], []),  # no input
        ([[], []], ["a", "b"]),  # no output
        ([["", "  "]], ["a b"]),  # outputs without a token
    ],
)
def test_div_bleu1_is_nan_without_hypothesis_tokens(outputs: list[list[str]],
                                                    golds: list[str]) -> None:
    assert math.isnan(div_bleu1(outputs, golds))


@pytest.mark.parametrize(
    ("outputs", "golds", "kwargs", "match"),
    [
        ([["a"], ["b"]], ["a"], {}, r"2 output lists but 1 gold texts"),
        ([["a"]], ["a", "b"], {}, r"1 output lists but 2 gold texts"),
        ([["a"]], ["a"], {"top": 0}, r"`top` \(=0\) must be an integer >= 1"),
        ([["a"]], ["a"], {"top": 2.5}, r"`top` \(=2.5\)"),
        (["a b", "c"], ["a b", "c"], {}, r"`outputs\[0\]` \(='a b'\) is a string"),
        ("a b", ["a b"], {}, r"`outputs` is a string"),
    ],
)
def test_div_bleu1_rejects_bad_input(outputs: object, golds: list[str],
                                     kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(DpcError, match=match):
        div_bleu1(outputs, golds, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("texts", "n", "expected"),
    [
        (["the cat sat", "the cat ran"], 1, 4 / 6),  # the, cat, sat, ran of 6 tokens
        (["the cat sat", "the cat ran"], 2, 3 / 4),  # "the cat" twice
        (["the cat sat", "the cat ran"], 3, 2 / 2),
        (["a a a a"], 1, 1 / 4),
        (["a a a a"], 2, 1 / 3),
        # n-grams stay inside a text: (x a), (b x), (x a); pooled as one text it would be 3/4
        (["x a", "b x a"], 2, 2 / 3),
        # case folded, punctuation are tokens: rain ! rain .
        (["Rain!", "rain ."], 1, 3 / 4),
        # a text shorter than n adds nothing
        (["a b", "c"], 2, 1.0),
    ],
)
def test_distinct_n(texts: list[str], n: int, expected: float) -> None:
    assert distinct_n(texts, n) == pytest.approx(expected)


@pytest.mark.parametrize(("texts", "n"), [([], 1), (["one"], 2), (["", "  "], 1)])
def test_distinct_n_is_nan_without_ngrams(texts: list[str], n: int) -> None:
    assert math.isnan(distinct_n(texts, n))


@pytest.mark.parametrize(
    ("n", "match"),
    [(0, r"`n` \(=0\) must be an integer >= 1"), (-2, r"`n` \(=-2\)"),
     (1.5, r"`n` \(=1.5\)"), (True, r"`n` \(=True\)")],
)
def test_distinct_n_rejects_bad_n(n: object, match: str) -> None:
    with pytest.raises(DpcError, match=match):
        distinct_n(["a b"], n)  # type: ignore[arg-type]
    with pytest.raises(DpcError, match=match):
        mean_distinct_n([["a b"]], n)  # type: ignore[arg-type]


def test_distinct_n_rejects_a_string() -> None:
    with pytest.raises(DpcError, match=r"`texts` \(='a b'\) is a string"):
        distinct_n("a b", 1)


@pytest.mark.parametrize(
    ("outputs", "n", "expected"),
    [
        ([["a b", "a b"], ["a b", "b c"]], 2, (1 / 2 + 2 / 2) / 2),
        ([["a b", "a b"], ["x"], []], 2, 1 / 2),  # inputs without a bigram are left out
        ([["a a"], ["a b"]], 1, (1 / 2 + 1) / 2),  # per input, not pooled (pooled: 2/4)
    ],
)
def test_mean_distinct_n(outputs: list[list[str]], n: int, expected: float) -> None:
    assert mean_distinct_n(outputs, n) == pytest.approx(expected)


def test_mean_distinct_n_nan_and_bad_input() -> None:
    assert math.isnan(mean_distinct_n([], 1))
    assert math.isnan(mean_distinct_n([["x"], []], 2))
    with pytest.raises(DpcError, match=r"`outputs\[1\]` \(='b'\) is a string"):
        mean_distinct_n([["a"], "b"], 1)  # type: ignore[list-item]


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        ([True, False, True, True], 0.75),
        ((flag for flag in [False, False]), 0.0),  # any iterable, read once
        ([1, 0, 0, 0, 1], 0.4),  # truthiness
    ],
)
def test_constraint_coverage(flags: object, expected: float) -> None:
    assert constraint_coverage(flags) == pytest.approx(expected)  # type: ignore[arg-type]


def test_constraint_coverage_of_nothing_is_nan() -> None:
    assert math.isnan(constraint_coverage([]))


LEMMAS = {
    "she was hungry": ["hungry"],
    "it was late": ["late"],
    "he fell": ["fall"],
    "Paris burned": ["Paris", "burn"],
}


@pytest.mark.parametrize(
    ("outputs", "golds", "expected"),
    [
        # the second output of input 0 hits; input 1 misses
        ([["it was late", "she was hungry"], ["he fell"]], [{"hungry"}, {"rain"}], 1 / 2),
        # case-insensitive on both sides
        ([["Paris burned"]], [{"PARIS"}], 1.0),
        # no outputs, or no gold lemma: a miss that still counts
        ([[], ["he fell"], ["he fell"]], [{"fall"}, set(), {"fall"}], 1 / 3),
        ([["he fell"], ["he fell"]], [{"fall", "rain"}, ["rain", "fall"]], 1.0),
    ],
)
def test_keyword_hit_rate(outputs: list[list[str]], golds: list[set[str]],
                          expected: float) -> None:
    assert keyword_hit_rate(outputs, golds, LEMMAS.__getitem__) == pytest.approx(expected)


def test_keyword_hit_rate_nan_and_bad_input() -> None:
    assert math.isnan(keyword_hit_rate([], [], LEMMAS.__getitem__))
    with pytest.raises(DpcError, match=r"1 output lists but 2 gold lemma sets"):
        keyword_hit_rate([["he fell"]], [{"fall"}, {"x"}], LEMMAS.__getitem__)
    with pytest.raises(DpcError, match=r"`outputs\[0\]` \(='he fell'\) is a string"):
        keyword_hit_rate(["he fell"], [{"fall"}], LEMMAS.__getitem__)  # type: ignore[list-item]

"""Causal strength and PMI against hand-computed values."""

from __future__ import annotations

import math

import pytest

from cause_effect_graph.errors import GraphError
from cause_effect_graph.strength import (
    causal_strength,
    necessity,
    phrase_pmi,
    phrase_strength,
    pmi,
    sufficiency,
)


def test_lemma_strength_matches_the_formula(small_graph):
    # hungry -> cry: f = 9, f(hungry_c) = 11, f(cry_e) = 16, N = 27
    nec = (9 / 27) / ((11 / 27) ** 0.66 * (16 / 27))
    suf = (9 / 27) / ((11 / 27) * (16 / 27) ** 0.66)
    assert necessity(small_graph, "hungry", "cry") == pytest.approx(nec)
    assert sufficiency(small_graph, "hungry", "cry") == pytest.approx(suf)
    assert causal_strength(small_graph, "hungry", "cry") == pytest.approx(nec**0.9 * suf**0.1)
    assert causal_strength(small_graph, "hungry", "cry", alpha=1.0, lam=1.0) == pytest.approx(
        (9 / 27) / ((11 / 27) * (16 / 27)))
    assert pmi(small_graph, "hungry", "cry") == pytest.approx(math.log(9 * 27 / (11 * 16)))


def test_direction_and_unknown_pairs(small_graph):
    assert causal_strength(small_graph, "cry", "hungry") == 0.0
    assert causal_strength(small_graph, "nope", "cry") == 0.0
    assert pmi(small_graph, "cry", "hungry") is None


def test_phrase_scores(small_graph):
    one = causal_strength(small_graph, "hungry", "cry")
    two = causal_strength(small_graph, "hungry", "baby")
    assert phrase_strength(small_graph, ["hungry"], ["baby", "cry"]) == pytest.approx(
        (one + two) / 3)
    assert phrase_strength(small_graph, [], ["cry"]) == 0.0
    assert phrase_pmi(small_graph, ["hungry"], ["cry"]) == pytest.approx(
        max(0.0, math.log(9 * 27 / (11 * 16))) / 2)


def test_bad_parameters(small_graph):
    with pytest.raises(GraphError, match=r"`alpha` \(=0\)"):
        causal_strength(small_graph, "hungry", "cry", alpha=0)
    with pytest.raises(GraphError, match=r"`lam` \(=2\)"):
        causal_strength(small_graph, "hungry", "cry", lam=2)
    del small_graph.graph["total"]
    with pytest.raises(GraphError, match="total"):
        causal_strength(small_graph, "hungry", "cry")

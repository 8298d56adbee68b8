"""Inflections and derived forms."""

from __future__ import annotations

import pytest

from cause_effect_graph.variants import derived_forms, inflections, variants


@pytest.mark.parametrize("lemma, forms", [
    ("love", ["love", "loved", "loves", "loving"]),         # noun + verb
    ("child", ["child", "children"]),                       # irregular plural
    ("be", ["am", "are", "be", "been", "being", "is", "was", "were"]),
    ("big", ["big", "bigger", "biggest"]),                  # adjective grades
    ("quickly", ["quickly"]),                               # adverb: no inflection
])
def test_inflections(lemma, forms):
    assert inflections(lemma) == forms


def test_case_options_and_empty():
    assert variants("rain", capitalized=True, upper=True)[-8:] == [
        "Rain", "Rained", "Raining", "Rains", "RAIN", "RAINED", "RAINING", "RAINS"]
    assert variants("  ") == []


@pytest.mark.parametrize("lemma, vocabulary, found", [
    ("rain", {"rainy", "brain", "rainbow"}, ["rainy"]),       # compounds are not derivations
    ("happy", {"happiness", "happily", "unhappy"}, ["happily", "happiness"]),
    ("nerve", {"nervous"}, ["nervous"]),                       # silent e dropped
    ("sun", {"sunny"}, ["sunny"]),                             # doubled consonant
    ("gentle", {"gently"}, ["gently"]),
    ("rain", set(), []),                                       # nothing attested, nothing made
])
def test_derived_forms_need_the_vocabulary(lemma, vocabulary, found):
    assert derived_forms(lemma, vocabulary) == found


def test_derived_forms_join_variants():
    forms = variants("rain", derived={"rainy"})
    assert {"rainy", "rainier", "rainiest", "rained"} <= set(forms)


def test_the_graph_is_a_vocabulary():
    import networkx as nx

    G = nx.DiGraph([("cloud", "rainy"), ("rain", "wet")])
    assert derived_forms("rain", G) == ["rainy"]

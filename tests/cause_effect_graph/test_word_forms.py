"""Inflections and derived forms."""

from __future__ import annotations

import pytest

from cause_effect_graph.errors import GraphError
from cause_effect_graph.word_forms import derived_forms, inflections, variants


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


@pytest.mark.parametrize("lemma, pos, forms", [
    ("purse", ("NOUN",), ["purse", "purses"]),               # no verb slot for a noun
    ("purse", ("VERB",), ["purse", "pursed", "purses", "pursing"]),
    ("purse", "NOUN", ["purse", "purses"]),                  # one tag as a string
    ("purse", ("NOUN", "VERB"), ["purse", "pursed", "purses", "pursing"]),
    ("purse", (), ["purse", "pursed", "purses", "pursing"]),  # empty: every part of speech
    ("purse", None, ["purse", "pursed", "purses", "pursing"]),
    ("fast", ("ADV",), ["fast", "faster", "fastest"]),
    ("hungry", ("NOUN",), ["hungry"]),                       # none of that POS: the lemma alone
    ("xyzzy", ("NOUN",), ["xyzzies", "xyzzy"]),              # unknown word: OOV rules of NOUN
    ("xyzzy", ("ADJ",), ["xyzzy"]),                          # OOV rules only for nouns, verbs
])
def test_inflections_of_some_parts_of_speech(lemma, pos, forms):
    assert inflections(lemma, pos=pos) == forms


def test_variants_keep_the_pos_and_check_it():
    assert variants("purse", capitalized=True, pos=["NOUN"]) == [
        "purse", "purses", "Purse", "Purses"]
    assert variants("purse", pos=[]) == variants("purse")
    assert "lovely" in variants("love", derived={"lovely"}, pos=["VERB"])  # derived forms stay
    with pytest.raises(GraphError, match=r"part of speech 'PROPN' \(in pos=\['PROPN'\]\)"):
        variants("purse", pos=["PROPN"])
    with pytest.raises(GraphError, match="part of speech 'noun'"):
        inflections("purse", pos=("noun",))

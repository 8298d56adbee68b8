"""Constraint lemmas for a sentence: ranking, exclusions, bad input, latency."""

from __future__ import annotations

import math

import networkx as nx
import pytest

from cause_effect_graph.errors import GraphError
from cause_effect_graph.query import RANKS, CandidateOptions, candidates
from cause_effect_graph.strength import causal_strength

from .conftest import bundled_or_skip


def test_spacy_lemmatises_the_input(small_graph):
    result = candidates(small_graph, "The babies cried.", "cause", 10)
    assert result.lemmas == ["baby", "cry"]
    # hungry: 9 (cry) + 2 (baby); tired 6; love 4. baby itself is left out (it is an input lemma)
    assert result.items == [("hungry", 11.0), ("tired", 6.0), ("love", 4.0)]
    assert result.message is None
    assert candidates(small_graph, "The babies cried.", "effect").keywords == ["tear"]


def test_strength_ranking_differs_from_weight(small_graph):
    by_weight = candidates(small_graph, "babies", "cause", rank="weight").keywords
    by_strength = candidates(small_graph, "babies", "cause", rank="strength").keywords
    assert by_weight == ["love", "hungry"]
    assert by_strength == ["love", "hungry"]
    s = candidates(small_graph, "babies", "cause", rank="strength").scores
    assert s[0] > s[1] > 0
    assert s == [causal_strength(small_graph, "love", "baby"),
                 causal_strength(small_graph, "hungry", "baby")]
    e = candidates(small_graph, "hungry babies", "effect", rank="strength").items
    assert e == [("cry", pytest.approx(causal_strength(small_graph, "hungry", "cry")
                                       + causal_strength(small_graph, "baby", "cry")))]


def test_n_limits(small_graph):
    assert candidates(small_graph, "babies cry", "cause", 1).keywords == ["hungry"]


@pytest.mark.parametrize("sentence, message", [
    ("", "the sentence is empty"),
    ("   ", "the sentence is empty"),
    ("of the and", "has no content word"),
    ("The telescope broke.", "no cause of telescope, break is in the graph"),
    ("Die Kinder weinen laut", "does not look like English text (unknown words: weinen, laut)"),
    ("xyzzy quux", "does not look like English text (unknown words: xyzzy, quux)"),
    ("赤ちゃんが泣く", "does not look like English"),
])
def test_bad_input_gives_an_empty_result_with_a_message(small_graph, sentence, message):
    result = candidates(small_graph, sentence, "cause")
    assert result.items == [] and message in (result.message or "")


def test_partly_known_input(small_graph):
    result = candidates(small_graph, "babies cry about the telescope", "cause")
    assert result.keywords[0] == "hungry"
    assert result.message == "no cause known for telescope"


def test_bad_arguments(small_graph):
    with pytest.raises(GraphError, match=r"`direction` \(='why'\)"):
        candidates(small_graph, "babies", "why")  # type: ignore[arg-type]
    with pytest.raises(GraphError, match=r"`n` \(=0\)"):
        candidates(small_graph, "babies", "cause", 0)
    with pytest.raises(GraphError, match=r"`rank` \(='x'\)"):
        candidates(small_graph, "babies", "cause", rank="x")  # type: ignore[arg-type]


def test_bundled_graph_answers_the_paper_example():
    # (its speed is benchmarks/graph_query.py's row, not a timed assertion here)
    G = bundled_or_skip()
    result = candidates(G, "babies cry", "cause", 20)
    assert len(result) == 20
    assert "baby" not in result.keywords and "cry" not in result.keywords
    assert len(candidates(G, "babies cry", "cause", 300, rank="strength")) == 300


# ---------------------------------------------------------------- ranks and filters (issue 18)


def with_marginals(edges: list[tuple[str, str, int]], extra: dict[str, int] | None = None,
                   freq: int = 10) -> nx.DiGraph:
    """A graph whose node weights are the sums of its edge counts (plus ``extra`` cause weight),
    with every lemma in ``freq`` pairs on both sides."""
    G = nx.DiGraph()
    G.add_weighted_edges_from(edges)
    for n in G:
        G.nodes[n].update(cause_weight=G.out_degree(n, "weight") + (extra or {}).get(n, 0),
                          effect_weight=G.in_degree(n, "weight"), cause_freq=freq,
                          effect_freq=freq)
    G.graph["total"] = sum(w for _, _, w in edges) + sum((extra or {}).values())
    return G


def test_ranks_are_the_names_candidates_takes(small_graph):
    assert RANKS == ("weight", "strength", "pmi", "mix")
    for rank in RANKS:
        assert candidates(small_graph, "babies", "cause", rank=rank,
                          options=CandidateOptions(min_freq=0)).keywords


def test_pmi_and_mix_by_hand():
    # hungry -> cry 9 but hungry also causes 49 other counts; colic -> cry once
    G = with_marginals([("hungry", "cry", 9), ("tired", "cry", 6), ("colic", "cry", 1)],
                       extra={"hungry": 49})
    N, f_cry = 65, 16
    def lemmas(s):
        return ["cry"]
    pmi = candidates(G, "cry", "cause", rank="pmi", lemmatizer=lemmas).items
    # log f(k, cry) N / (f(k) f(cry)): colic log(65/16), tired log(6*65/(6*16)), hungry < 0
    assert pmi == [("colic", pytest.approx(math.log(N / f_cry))),
                   ("tired", pytest.approx(math.log(N / f_cry)))]
    mix = candidates(G, "cry", "cause", rank="mix", lemmatizer=lemmas).items
    # p(k | cry) x PMI: tired 6/16, colic 1/16 of the same PMI; hungry's PMI is negative
    assert mix == [("tired", pytest.approx(6 / f_cry * math.log(N / f_cry))),
                   ("colic", pytest.approx(1 / f_cry * math.log(N / f_cry)))]
    assert candidates(G, "cry", "cause", rank="weight", lemmatizer=lemmas).keywords == [
        "hungry", "tired", "colic"]


def test_mix_gives_every_input_lemma_an_equal_say():
    # "man" is common (100 counts from work), "asleep" rare (4 counts from tired, 1 from dream)
    G = with_marginals([("man", "work", 100), ("man", "dream", 1), ("asleep", "dream", 4),
                        ("asleep", "snore", 1), ("rest", "snore", 50), ("rest", "work", 1),
                        ("eat", "work", 40)])
    def lemmas(s):
        return ["man", "asleep"]
    by_weight = candidates(G, "babies cry", "effect", rank="weight", lemmatizer=lemmas)
    by_mix = candidates(G, "babies cry", "effect", rank="mix", lemmatizer=lemmas)
    assert by_weight.keywords[0] == "work" and by_mix.keywords[0] == "dream"


def test_hubs_rare_lemmas_and_near_duplicates_are_left_out():
    # 1,200 lemmas: "thing" causes 1,000 of them, so it is the one hub at 0.1%
    edges = [("thing", f"x{i}", 1) for i in range(999)] + [
        ("thing", "cry", 20), ("hungry", "cry", 9), ("tire", "cry", 5), ("tired", "cry", 4),
        ("colic", "cry", 3)] + [(f"y{i}", f"z{i}", 1) for i in range(100)]
    G = with_marginals(edges)
    G.nodes["colic"]["cause_freq"] = 5  # seen in 5 pairs only
    def lemmas(s):
        return ["cry"]
    assert len(G) >= 1000
    found = candidates(G, "babies cry", "cause", lemmatizer=lemmas)
    assert found.keywords == ["hungry", "tire", "colic"]
    assert candidates(G, "babies cry", "cause", lemmatizer=lemmas,
                      options=CandidateOptions(hub_share=0, diversify=False)).keywords == [
        "thing", "hungry", "tire", "tired", "colic"]
    # the floor is for the specificity ranks only, and 0 turns it off
    by_pmi = candidates(G, "babies cry", "cause", rank="pmi", lemmatizer=lemmas)
    assert "colic" not in by_pmi.keywords
    assert "colic" in candidates(G, "babies cry", "cause", rank="pmi", lemmatizer=lemmas,
                                 options=CandidateOptions(min_freq=0)).keywords
    # a graph without node frequencies (an edge list) is not filtered
    G.nodes["colic"]["cause_freq"] = 0
    assert "colic" in candidates(G, "babies cry", "cause", rank="pmi", lemmatizer=lemmas).keywords


def test_forms_of_the_input_lemmas_are_no_keywords(small_graph):
    G = small_graph.copy()
    G.add_edge("crying", "baby", weight=50)  # spaCy's noun "crying": a form of the input's "cry"
    def lemmas(s):
        return ["baby", "cry"]
    assert "crying" not in candidates(G, "babies cry", "cause", lemmatizer=lemmas).keywords
    assert candidates(G, "babies cry", "cause", lemmatizer=lemmas,
                      options=CandidateOptions(diversify=False)).keywords[0] == "crying"


def test_hub_cache_follows_the_graph():
    G = with_marginals([(f"a{i}", "cry", 1) for i in range(997)] + [("b", "cry", 1)])
    def lemmas(s):
        return ["cry"]
    assert len(G) == 999  # fewer than 1,000 lemmas: no hub at 0.1%
    assert len(candidates(G, "babies cry", "cause", 2000, lemmatizer=lemmas)) == 998
    G.add_weighted_edges_from([("b", f"c{i}", 1) for i in range(10)])  # b: the one hub now
    G.graph["total"] += 10
    found = candidates(G, "babies cry", "cause", 2000, lemmatizer=lemmas)
    assert len(found) == 997 and "b" not in found.keywords
    # lemmas tied at the border are not hubs: 1,009 lemmas, one hub, all causes of degree 1
    G.remove_edges_from([("b", f"c{i}", 1) for i in range(10)])
    G.add_edges_from([(f"c{i}", "d", {"weight": 1}) for i in range(10)])
    G.graph["total"] += 1
    assert "b" in candidates(G, "babies cry", "cause", 2000, lemmatizer=lemmas).keywords


@pytest.mark.parametrize("kwargs, message", [
    ({"hub_share": 1.0}, r"`hub_share` \(=1.0\) has to be in \[0, 1\)"),
    ({"hub_share": -0.1}, r"`hub_share` \(=-0.1\)"),
    ({"min_freq": -1}, r"`min_freq` \(=-1\) must be an integer >= 0"),
    ({"rank": "tfidf"}, r"`rank` \(='tfidf'\) has to be one of weight, strength, pmi, mix"),
])
def test_bad_filter_arguments(small_graph, kwargs, message):
    rank = kwargs.pop("rank", "weight")
    with pytest.raises(GraphError, match=message):
        candidates(small_graph, "babies", "cause", rank=rank, options=CandidateOptions(**kwargs))


def test_bundled_graph_knows_everyday_causes_and_drops_hubs():
    G = bundled_or_skip()
    assert "ecare" in G.graph.get("everyday", "") and "conceptnet" in G.graph["everyday"]
    for rank in RANKS:
        rained = candidates(G, "it rained", "effect", 15, rank).keywords
        assert len(rained) == 15
        assert not {"man", "time", "know", "come"} & set(rained)
    assert {"wet", "flood"} <= set(candidates(G, "it rained", "effect", 15, "mix").keywords)
    assert "late" in candidates(G, "she missed the bus", "effect", 15, "mix").keywords

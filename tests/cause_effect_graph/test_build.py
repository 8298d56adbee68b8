"""Building: counting rules, pruning, resumption, release input, Spark."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from cause_effect_graph.build import (
    BuildOptions,
    _top_k_mask,
    bank_units,
    build_graph,
    counts_to_graph,
    prune,
)
from cause_effect_graph.counts import count_lemma_pairs
from cause_effect_graph.errors import GraphError


def test_counts_every_combination_once_per_pair():
    counts = count_lemma_pairs([(["a", "b", "a"], ["x", "y"]), (["a"], ["x"]), ([], ["z"])])
    G = counts_to_graph(counts, min_count=1)
    assert {(u, v): w for u, v, w in G.edges(data="weight")} == {
        ("a", "x"): 2, ("a", "y"): 1, ("b", "x"): 1, ("b", "y"): 1}
    assert counts.pairs == 3 and counts.total == 5
    # node frequencies count pairs; weights are marginals of the edge counts
    assert G.nodes["a"]["cause_freq"] == 2 and G.nodes["a"]["cause_weight"] == 3
    assert G.nodes["x"]["effect_freq"] == 2 and G.nodes["x"]["effect_weight"] == 3
    assert "z" not in G  # effect_freq of z counted, but z has no edge


@pytest.mark.parametrize("min_count, edges", [(1, 4), (2, 1), (3, 0)])
def test_min_count(min_count, edges):
    counts = count_lemma_pairs([(["a", "b"], ["x", "y"]), (["a"], ["x"])])
    G = counts_to_graph(counts, min_count=min_count)
    assert G.number_of_edges() == edges
    assert G.graph["edges_before"] == 4 and G.graph["total"] == 5


def test_top_k_keeps_the_heaviest_of_either_end():
    # edges: a->x 5, a->y 3, a->z 1, b->z 4
    src, dst = np.array([0, 0, 0, 1]), np.array([10, 11, 12, 12])
    weight = np.array([5, 3, 1, 4])
    assert _top_k_mask(src, dst, weight, 1).tolist() == [True, True, False, True]
    #         a->x: top of a; a->y: top in-edge of y; a->z: neither; b->z: top of b and z


def test_prune_keeps_node_weights(small_graph):
    H = prune(small_graph, min_count=5)
    assert sorted(H.edges) == [("cry", "tear"), ("hungry", "cry"), ("tired", "cry")]
    assert H.nodes["hungry"]["cause_weight"] == 11
    assert H.graph["total"] == 27


def test_build_resume_and_manifest(bank, tmp_path):
    options = BuildOptions(bank=(str(bank),), work=str(tmp_path / "work"), min_count=1,
                           chunk_pairs=2, progress=False)
    G, report = build_graph(options)
    assert report.pairs == 6 and not report.resumed
    assert G["hungry"]["cry"]["weight"] == 2
    assert G["tired"]["cry"]["weight"] == 1
    assert G.has_edge("rain", "flood") and not G.has_edge("cry", "hungry")
    assert "the" not in G and "be" not in G  # stop words
    files = sorted((tmp_path / "work" / "lemmas").glob("*.tsv"))
    assert [f.name for f in files] == ["00000-00000.tsv", "00000-00001.tsv", "00001-00000.tsv"]
    files[1].unlink()
    G2, report2 = build_graph(options)
    assert report2.resumed
    assert sorted(G2.edges(data="weight")) == sorted(G.edges(data="weight"))
    other = BuildOptions(options.bank, options.work, chunk_pairs=3, progress=False)
    with pytest.raises(GraphError, match="chunk_pairs 2 != 3"):
        build_graph(other)


def test_release_layout_input(bank, tmp_path):
    from causal_mining.release import write_release
    from causal_mining.shards import read_bank

    write_release(read_bank(bank), tmp_path / "release")
    assert [k for k, _ in bank_units([tmp_path / "release"])] == ["EPC", "CPE"]  # an empty CPE file
    G, _ = build_graph(BuildOptions((str(tmp_path / "release"),), str(tmp_path / "w"),
                                    min_count=1, progress=False))
    assert G["hungry"]["cry"]["weight"] == 2


def test_bad_options(tmp_path):
    with pytest.raises(GraphError, match=r"`min_count` \(=0\)"):
        BuildOptions(("x",), "w", min_count=0)
    with pytest.raises(GraphError, match="does not exist"):
        bank_units([tmp_path / "nope"])
    with pytest.raises(GraphError, match="holds no causalbank"):
        bank_units([tmp_path])


def test_spark_engine_writes_the_same_graph(bank, tmp_path):
    pytest.importorskip("pyspark")
    if shutil.which("java") is None:
        pytest.skip("Spark needs java on PATH")
    local, _ = build_graph(BuildOptions((str(bank),), str(tmp_path / "a"), min_count=1,
                                        progress=False))
    spark, _ = build_graph(BuildOptions((str(bank),), str(tmp_path / "b"), min_count=1,
                                        engine="spark", spark_master="local[1]",
                                        progress=False))
    assert sorted(spark.edges(data="weight")) == sorted(local.edges(data="weight"))

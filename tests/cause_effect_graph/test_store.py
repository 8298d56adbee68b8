"""The .ceg format, the text formats and their errors."""

from __future__ import annotations

import gzip
import struct

import pytest

from cause_effect_graph.errors import GraphFormatError, GraphVersionError
from cause_effect_graph.store import (
    MAGIC,
    graph_info,
    load_graph,
    read_edgelist,
    read_release_graph,
    save_graph,
    write_edgelist,
    write_release_graph,
)


@pytest.mark.parametrize("compression", ["xz", "zlib"])
def test_roundtrip_keeps_everything(small_graph, tmp_path, compression):
    small_graph.graph["source"] = "test"
    small_graph.graph["not_kept"] = {"a": 1}  # only scalar graph attributes are stored
    save_graph(small_graph, tmp_path / "g.ceg", compression=compression)
    G = load_graph(tmp_path / "g.ceg")
    assert sorted(G.edges(data="weight")) == sorted(small_graph.edges(data="weight"))
    assert dict(G.nodes(data=True)) == dict(small_graph.nodes(data=True))
    assert G.graph == {"total": 27, "pairs": 27, "source": "test"}
    assert graph_info(tmp_path / "g.ceg")["edges"] == 6


def test_heaviest_edges_first(small_graph, tmp_path):
    save_graph(small_graph, tmp_path / "g.ceg")
    G = load_graph(tmp_path / "g.ceg")
    assert list(G.succ["hungry"]) == ["cry", "baby"]


def test_corruption_is_detected(small_graph, tmp_path):
    path = tmp_path / "g.ceg"
    save_graph(small_graph, path)
    data = bytearray(path.read_bytes())
    data[-5] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(GraphFormatError, match="is corrupted: its payload does not match"):
        load_graph(path)


def test_wrong_version(small_graph, tmp_path):
    path = tmp_path / "g.ceg"
    save_graph(small_graph, path)
    data = path.read_bytes()
    path.write_bytes(MAGIC + struct.pack("<I", 99) + data[len(MAGIC) + 4:])
    with pytest.raises(GraphVersionError, match="format version 99; this dpc reads version 1"):
        load_graph(path)


def test_truncated_and_missing(small_graph, tmp_path):
    path = tmp_path / "g.ceg"
    save_graph(small_graph, path)
    path.write_bytes(path.read_bytes()[:30])
    with pytest.raises(GraphFormatError, match="g.ceg"):
        load_graph(path)
    with pytest.raises(GraphFormatError, match="does not exist"):
        load_graph(tmp_path / "missing.ceg")


def test_edgelist_and_release_roundtrips(small_graph, tmp_path):
    assert write_edgelist(small_graph, tmp_path / "g.tsv") == 6
    lines = (tmp_path / "g.tsv").read_text().splitlines()
    assert lines[:2] == ["cause\teffect\tcount", "hungry\tcry\t9"]
    for G in (read_edgelist(tmp_path / "g.tsv"), load_graph(tmp_path / "g.tsv")):
        assert sorted(G.edges(data="weight")) == sorted(small_graph.edges(data="weight"))
    write_release_graph(small_graph, tmp_path / "ceg.txt")
    assert (tmp_path / "ceg.txt").read_text().splitlines()[0] == "hungry->cry\t9"
    R = load_graph(tmp_path / "ceg.txt")
    assert sorted(R.edges(data="weight")) == sorted(small_graph.edges(data="weight"))
    assert R.nodes["hungry"]["cause_weight"] == 11 and R.graph["total"] == 27
    for name in ("g.tsv", "ceg.txt"):  # a byte-order mark is no part of the first lemma
        marked = tmp_path / f"marked-{name}"
        marked.write_bytes(b"\xef\xbb\xbf" + (tmp_path / name).read_bytes())
        M = load_graph(marked)
        assert sorted(M.edges(data="weight")) == sorted(small_graph.edges(data="weight"))


def test_release_format_extra_columns_compression_and_errors(tmp_path):
    path = tmp_path / "ceg.gz"
    with gzip.open(path, "wt") as f:
        f.write("rain->wet\t12\t0.5\nrain->wet\t3\n\nsun->dry\t2\n")
    G = read_release_graph(path)
    assert G["rain"]["wet"]["weight"] == 15 and G["sun"]["dry"]["weight"] == 2
    bad = tmp_path / "bad.txt"
    bad.write_text("rain->wet\t12\nrain->cold\tmany\n")
    with pytest.raises(GraphFormatError, match=r"bad.txt':2: count 'many' is not a positive"):
        read_release_graph(bad)
    bad.write_text("rain wet 12\n")
    with pytest.raises(GraphFormatError, match="is not a Cause Effect Graph file"):
        load_graph(bad)

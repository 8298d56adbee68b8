"""``dpc graph ...`` through its argument parser."""

from __future__ import annotations

import argparse

import pytest

from cause_effect_graph.cli import add_graph_parser
from cause_effect_graph.store import load_graph, save_graph


def run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="dpc")
    add_graph_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return int(args.func(args))


@pytest.fixture
def graph_file(small_graph, tmp_path):
    save_graph(small_graph, tmp_path / "g.ceg")
    return str(tmp_path / "g.ceg")


def test_query(graph_file, capsys):
    assert run(["graph", "query", "babies cry", "--direction", "cause", "--graph", graph_file,
                "-n", "2", "--variants"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "hungry\t11\thungrier|hungriest|hungry", "tired\t6\ttired"]


def test_query_bad_input_prints_a_message(graph_file, capsys):
    assert run(["graph", "query", "", "--graph", graph_file]) == 0
    out = capsys.readouterr()
    assert out.out == "" and "the sentence is empty" in out.err


def test_missing_graph_is_an_error(tmp_path, capsys):
    assert run(["graph", "stats", "--graph", str(tmp_path / "no.ceg")]) == 2
    assert "dpc graph: error: graph file" in capsys.readouterr().err


def test_stats_show_export(graph_file, tmp_path, capsys):
    assert run(["graph", "stats", "--graph", graph_file, "--top", "1"]) == 0
    out = capsys.readouterr().out
    assert "nodes 6  edges 6" in out and "hungry->cry (9)" in out
    assert run(["graph", "show", "cry", "--out", str(tmp_path / "cry.png"),
                "--graph", graph_file]) == 0
    assert (tmp_path / "cry.png").read_bytes()[:4] == b"\x89PNG"
    assert run(["graph", "show", "nope", "--out", str(tmp_path / "x.png"),
                "--graph", graph_file]) == 2
    assert "lemma 'nope' is not in the graph" in capsys.readouterr().err
    assert run(["graph", "export", "--graph", graph_file, "--out", str(tmp_path / "g.txt"),
                "--format", "release"]) == 0
    assert load_graph(tmp_path / "g.txt").number_of_edges() == 6


def test_build(bank, tmp_path, capsys):
    out = tmp_path / "g.ceg"
    assert run(["graph", "build", str(bank), "--out", str(out), "--min-count", "2",
                "--no-progress", "--tsv", str(tmp_path / "g.tsv")]) == 0
    assert "6 pairs" in capsys.readouterr().out
    assert sorted(load_graph(out).edges) == sorted(load_graph(tmp_path / "g.tsv").edges)
    assert load_graph(out)["hungry"]["cry"]["weight"] == 2
    assert run(["graph", "build", str(tmp_path / "nope"), "--out", str(out)]) == 2
    # without --work the lemma files live in OUT.work, removed when the build ends or is
    # refused: nothing is left beside the graph (issue 60)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bank", "g.ceg", "g.tsv"]


def test_build_keeps_and_resumes_its_work_folder(bank, tmp_path, capsys):
    args = ["graph", "build", str(bank), "--min-count", "2", "--no-progress",
            "--work", str(tmp_path / "work")]
    assert run([*args, "--out", str(tmp_path / "a.ceg")]) == 0
    assert (tmp_path / "work" / "manifest.json").is_file()  # kept: a rerun resumes from it
    assert run([*args, "--out", str(tmp_path / "b.ceg")]) == 0
    assert "(resumed)" in capsys.readouterr().out
    assert (tmp_path / "a.ceg").read_bytes() == (tmp_path / "b.ceg").read_bytes()


def test_an_interrupted_build_says_whether_it_kept_its_lemma_files():
    from argparse import Namespace

    from cause_effect_graph.cli import _build_interrupted

    assert "kept in g.ceg.work" in _build_interrupted(Namespace(work=None, out="g.ceg"))
    assert "kept in w" in _build_interrupted(Namespace(work="w", out="g.ceg"))


def test_query_ranks_and_filters(graph_file, capsys):
    for rank in ("pmi", "mix"):
        assert run(["graph", "query", "babies cry", "--graph", graph_file, "--rank", rank,
                    "--min-freq", "0"]) == 0
        assert capsys.readouterr().out.splitlines()[0].startswith("love\t")
    assert run(["graph", "query", "babies", "--graph", graph_file, "--hub-share", "0",
                "--no-diversify"]) == 0
    assert [line.split("\t")[0] for line in capsys.readouterr().out.splitlines()] == [
        "love", "hungry"]
    with pytest.raises(SystemExit):
        run(["graph", "query", "babies", "--rank", "tfidf"])
    assert run(["graph", "query", "babies", "--graph", graph_file, "--hub-share", "2"]) == 2
    assert "`hub_share` (=2.0)" in capsys.readouterr().err


def test_parts_of_speech(tmp_path, capsys):
    from cause_effect_graph.parts_of_speech import PartsOfSpeech
    from tests.cause_effect_graph.conftest import fake_data

    data, out = fake_data(tmp_path / "data"), tmp_path / "pos.tsv.gz"
    argv = ["graph", "parts-of-speech", "--data", str(data), "--out", str(out),
            "--gutenberg-lines", "5", "--min-count", "1", "--no-progress"]
    assert run(argv) == 0
    assert "lemmas seen at least 1 times" in capsys.readouterr().out
    assert PartsOfSpeech.load(out).of("purse") == ("NOUN",)
    assert run(argv) == 2                                     # an existing --out is kept
    assert "already exists; pass --overwrite" in capsys.readouterr().err
    assert run([*argv, "--overwrite", "--min-count", "2"]) == 0
    assert "purse" not in PartsOfSpeech.load(out)
    assert run(["graph", "parts-of-speech", "--data", str(tmp_path / "none"),
                "--out", str(tmp_path / "x.tsv.gz")]) == 2
    assert "no Gutenberg text (*.txt.xz) in '" in capsys.readouterr().err
    assert run([*argv, "--overwrite", "--min-count", "0"]) == 2
    assert "`--min-count` (=0) must be an integer >= 1" in capsys.readouterr().err

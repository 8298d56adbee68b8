"""Window co-occurrence counts, their file format, the window-PMI and back-off COPA scorers."""

from __future__ import annotations

import gzip
import lzma
import math
from pathlib import Path

import networkx as nx
import pytest

from cause_effect_graph.cooccurrence import (
    WindowCounts,
    count_windows,
    load_counts,
    save_counts,
    window_pmi,
)
from cause_effect_graph.errors import GraphError
from cause_effect_graph.lemmas import dictionary_lemmas as content_lemmas
from cli import main as dpc_main
from tasks.copa import CopaItem, accuracy
from tasks.copa.window import GraphWindowScorer, WindowPmiScorer

from .conftest import COPA_DEV


@pytest.mark.parametrize("texts, first, second, window, expected", [
    (["rain wet"], "rain", "wet", 5, 1),                      # adjacent, in order
    (["rain wet"], "wet", "rain", 5, 0),                      # the order counts
    (["rain a b c d wet"], "rain", "wet", 5, 1),              # 5 words apart: inside
    (["rain a b c d e wet"], "rain", "wet", 5, 0),            # 6 apart: outside
    (["rain the the the wet"], "rain", "wet", 3, 0),          # stop words keep their place
    (["rain", "wet"], "rain", "wet", 5, 0),                   # windows do not cross texts
    (["Rains made it wet, raining"], "rain", "wet", 5, 1),    # forms are lemmatised
    (["rain wet wet"], "rain", "wet", 5, 2),                  # every later occurrence counts
])
def test_window_pair_counts(texts, first, second, window, expected) -> None:
    counts = WindowCounts.from_texts(texts, {"rain", "wet"}, window)
    assert counts.pair(first, second) == expected


def test_pmi_formula_and_unseen_pairs() -> None:
    counts = WindowCounts.from_texts(["rain wet x y z", "sun dry"], {"rain", "wet", "sun", "dry"})
    # c(rain before wet) = 1, N = 7 words, c(rain) = c(wet) = 1, window 5
    assert window_pmi(counts, "rain", "wet") == pytest.approx(math.log(1 * 7 / (1 * 1 * 5)))
    assert window_pmi(counts, "wet", "rain") == 0.0
    assert window_pmi(counts, "rain", "dry") == 0.0
    # either order: c = 1 + 0 over twice the window spans
    assert window_pmi(counts, "wet", "rain", ordered=False) == pytest.approx(
        math.log(1 * 7 / (1 * 1 * 10)))


def test_scorer_puts_the_cause_words_first() -> None:
    counts = WindowCounts.from_texts(["rain then the floor wet"] * 3 + ["sun shone dry"]
                                     + ["word " * 200], {"rain", "floor", "wet", "sun", "shine",
                                                          "dry"})
    scorer = WindowPmiScorer(counts)
    assert content_lemmas("The floor was wet.") == ["floor", "wet"]
    # asks for the cause of the wet ground: the alternative must precede the premise
    assert scorer.score("The floor was wet.", "cause", "It rained.") > \
        scorer.score("The floor was wet.", "cause", "The sun shone.")
    # asks for the effect of the rain: the premise precedes the alternative
    assert scorer.score("It rained.", "effect", "The floor was wet.") > 0
    assert scorer.score("The floor was wet.", "effect", "It rained.") == 0.0


def test_graph_window_backs_off_only_when_the_graph_cannot_decide() -> None:
    G = nx.DiGraph([("rain", "wet", {"weight": 8}), ("sun", "dry", {"weight": 5})])
    G.graph["total"] = 13
    filler = ["word " * 200]  # a corpus large enough for seen pairs to be above chance
    counts = WindowCounts.from_texts(["storm flood"] * 3 + ["wet dry"] + filler,
                                     {"storm", "flood", "wet", "dry", "calm"})
    scorer = GraphWindowScorer(G, counts)
    scorer.graph._lemmatize = str.split  # the hand-made graph holds bare words
    items = [
        # the graph decides (it knows rain -> wet) ...
        CopaItem("1", "wet", "cause", "rain", "calm", 1),
        # ... and has no pair for either alternative here: the window PMI decides
        CopaItem("2", "flood", "cause", "calm", "storm", 2),
    ]
    assert accuracy(scorer, items) == 1.0
    assert scorer.score("flood", "cause", "storm")[0] == 0.0


def test_counts_file_round_trip_and_errors(tmp_path: Path) -> None:
    counts = WindowCounts.from_texts(["rain made the grass wet"], {"rain", "grass", "wet"})
    save_counts(counts, tmp_path / "c.json.gz")
    again = load_counts(tmp_path / "c.json.gz")
    assert (again.pairs, again.unigrams, again.tokens, again.window) == (
        counts.pairs, counts.unigrams, counts.tokens, counts.window)
    (tmp_path / "bad.json.gz").write_bytes(b"not gzip")
    with pytest.raises(GraphError, match="bad.json.gz.*not a co-occurrence counts file"):
        load_counts(tmp_path / "bad.json.gz")
    with gzip.open(tmp_path / "other.json.gz", "wt") as f:
        f.write('{"format": "something-else"}')
    with pytest.raises(GraphError, match="other.json.gz"):
        load_counts(tmp_path / "other.json.gz")
    with gzip.open(tmp_path / "v9.json.gz", "wt") as f:
        f.write('{"format": "dpc-window-counts", "version": 9}')
    with pytest.raises(GraphError, match="version 9"):
        load_counts(tmp_path / "v9.json.gz")
    with pytest.raises(GraphError, match="do not exist"):
        load_counts(tmp_path / "missing.json.gz")


def test_count_windows_over_files_and_bad_arguments(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("The rain made the grass wet.\n\nRain, rain, wet.\n")
    with lzma.open(tmp_path / "b.txt.xz", "wt") as f:
        f.write("Heavy rain. The grass was wet.\n")
    counts = count_windows([tmp_path], {"rain", "wet", "grass"}, workers=2, progress=False)
    assert counts.pair("rain", "wet") == 1 + 2 + 1
    assert counts.unigrams["rain"] == 4 and len(counts.sources) == 2
    with pytest.raises(GraphError, match="vocabulary to count is empty"):
        count_windows([tmp_path], set(), progress=False)
    with pytest.raises(GraphError, match="`window` \\(=0\\)"):
        count_windows([tmp_path], {"rain"}, window=0, progress=False)


@pytest.mark.skipif(not COPA_DEV.is_file(), reason="shared COPA data not present")
def test_cli_cooccur_and_eval(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("The man fell because he tripped over the rock.\n\n"
                      "It rained and the ground got wet.\n")
    out = tmp_path / "counts.json.gz"
    assert dpc_main(["graph", "cooccur", str(corpus), "--vocab-copa", str(COPA_DEV),
                     "--out", str(out), "--no-progress", "--workers", "1"]) == 0
    assert "lemma pairs of" in capsys.readouterr().out
    assert load_counts(out).tokens == 16
    assert dpc_main(["eval", "copa", str(COPA_DEV), "--scorer", "window-pmi",
                     "--counts", str(out)]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert 0.3 < float(last) < 0.7
    assert dpc_main(["eval", "copa", str(COPA_DEV), "--scorer", "window-pmi"]) == 2
    assert "--counts PATH" in capsys.readouterr().err

"""COPA scorers: direction handling, registry, and accuracy on the real dev set."""

from __future__ import annotations

import pytest

from tasks.copa import CopaItem, accuracy, make_scorer, read_copa
from tasks.copa.graph import CausalStrengthScorer, PmiScorer

from .conftest import COPA_DEV, bundled_or_skip


def test_direction_decides_which_side_is_the_cause(small_graph):
    scorer = CausalStrengthScorer(small_graph, lemmatizer=str.split)
    # asks for the cause: alternative -> premise
    assert scorer.score("cry", "cause", "hungry") > 0
    assert scorer.score("hungry", "cause", "cry") == 0
    # asks for the effect: premise -> alternative
    assert scorer.score("hungry", "effect", "cry") > 0
    items = [CopaItem("1", "cry", "cause", "tear", "hungry", 2),
             CopaItem("2", "cry", "effect", "tear", "hungry", 1)]
    assert accuracy(scorer, items) == 1.0
    assert accuracy(PmiScorer(small_graph, lemmatizer=str.split), items) == 1.0


def test_factories_accept_the_cli_options(small_graph, tmp_path):
    from cause_effect_graph.store import save_graph

    save_graph(small_graph, tmp_path / "g.ceg")
    for name in ("graph", "pmi"):
        scorer = make_scorer(name, graph=str(tmp_path / "g.ceg"), seed=0)
        assert scorer.score("The baby cried.", "cause", "The baby was hungry.") > 0


@pytest.mark.skipif(not COPA_DEV.is_file(), reason="../shared/data/copa is not present")
@pytest.mark.parametrize("name, floor", [("graph", 0.515), ("pmi", 0.505)])
def test_copa_dev_accuracy_on_the_bundled_graph(name, floor):
    # Regression floors just under the measured 52.2% / 51.2% (benchmarks/graph/RESULTS.md);
    # the 60% target is not reached with 119k Gutenberg pairs.
    bundled_or_skip()
    items = read_copa(COPA_DEV)
    assert accuracy(make_scorer(name), items) >= floor

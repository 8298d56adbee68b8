"""COPA scorers over window co-occurrence counts (Roemmele et al. 2011's baseline), and the
back-off from the Cause Effect Graph to them.

* ``--scorer window-pmi`` (:class:`WindowPmiScorer`) gives an alternative the
  :func:`~cause_effect_graph.cooccurrence.phrase_window_pmi` of (cause, effect) in the asked
  direction: for ``asks-for="cause"`` the alternative is the cause. The cause words must come
  *before* the effect words; ``--scorer window-pmi-any-order`` counts the pairs in either order.
* ``--scorer graph-window`` (:class:`GraphWindowScorer`) answers with the graph's causal strength
  when the graph knows a lemma pair of either alternative, and with the window PMI otherwise (a
  back-off decided before looking at the results).

The counts come from ``dpc graph cooccur CORPUS... --vocab-copa COPA.xml --out FILE``, restricted
to the content lemmas of the COPA files (:func:`copa_vocabulary`).

>>> from cause_effect_graph.cooccurrence import WindowCounts
>>> counts = WindowCounts.from_texts(["the rain made the floor wet"], vocab={"rain", "wet"})
>>> scorer = WindowPmiScorer(counts)
>>> scorer.score("The floor was wet.", "cause", "It rained.") > scorer.score(
...     "It rained.", "cause", "The floor was wet.")
True
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from cause_effect_graph.cooccurrence import (
    WindowCounts,
    load_counts,
    phrase_window_pmi,
    text_vocabulary,
)
from cause_effect_graph.errors import GraphError
from tasks.copa.dataset import copa_texts
from tasks.copa.graph import CausalStrengthScorer

__all__ = ["GraphWindowScorer", "WindowPmiScorer", "copa_vocabulary", "make_graph_window_scorer",
           "make_window_pmi_scorer"]


class WindowPmiScorer:
    """COPA scorer: mean window PMI of (cause lemma, effect lemma) pairs, cause words first."""

    def __init__(self, counts: WindowCounts | str | os.PathLike[str], ordered: bool = True) -> None:
        self.counts = counts if isinstance(counts, WindowCounts) else load_counts(counts)
        self.ordered = ordered

    def phrase(self, cause: str, effect: str) -> float:
        """Mean window PMI over the lemma pairs of two phrases (0.0 without any)."""
        return phrase_window_pmi(self.counts, cause, effect, self.ordered)

    def score(self, premise: str, asks_for: str, alternative: str) -> float:
        if asks_for == "cause":
            return self.phrase(alternative, premise)
        return self.phrase(premise, alternative)


class GraphWindowScorer:
    """Causal strength from the graph, window PMI where the graph cannot decide
    (``--scorer graph-window``).

    The score is the pair (causal strength, window PMI), compared lexicographically: when the
    graph scores the two alternatives differently it decides; when it cannot (no known lemma
    pair for either, both 0.0) the window PMI does.
    """

    def __init__(self, graph: Any, counts: WindowCounts | str | os.PathLike[str]) -> None:
        self.graph = CausalStrengthScorer(graph)
        self.window = WindowPmiScorer(counts)

    def score(self, premise: str, asks_for: str, alternative: str) -> tuple[float, float]:
        return (self.graph.score(premise, asks_for, alternative),
                self.window.score(premise, asks_for, alternative))


def copa_vocabulary(paths: Sequence[str | os.PathLike[str]]) -> set[str]:
    """Content lemmas of every premise and alternative of COPA files (what the scorer looks up)."""
    return text_vocabulary(copa_texts(paths))


def _counts_option(counts: str | None) -> str:
    if counts is None:
        raise GraphError("window-PMI scorers need co-occurrence counts: --counts PATH "
                         "(make them with dpc graph cooccur)")
    return counts


def make_window_pmi_scorer(counts: str | None = None, ordered: bool = True,
                           **_: Any) -> WindowPmiScorer:
    """Factory for ``--scorer window-pmi`` (``ordered``) and ``window-pmi-any-order``."""
    return WindowPmiScorer(_counts_option(counts), ordered=ordered)


def make_graph_window_scorer(graph: str | None = None, counts: str | None = None,
                             **_: Any) -> GraphWindowScorer:
    """Factory for ``--scorer graph-window``: the bundled graph unless ``graph`` is given."""
    return GraphWindowScorer(graph, _counts_option(counts))

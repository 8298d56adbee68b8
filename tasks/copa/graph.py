"""COPA scorers over a Cause Effect Graph: ``--scorer graph`` and ``--scorer pmi``.

``dpc eval copa FILE --scorer graph [--graph PATH]`` picks, for every question, the alternative
with the higher causal strength to the premise in the asked direction (Luo et al. 2016): for
``asks-for="cause"`` the alternative is the cause and the premise the effect, for ``"effect"``
the reverse. ``--scorer pmi`` does the same with :func:`~cause_effect_graph.strength.phrase_pmi`:
positive pointwise mutual information between cause and effect lemmas, estimated from the same
CausalBank co-occurrence counts (our baseline; Roemmele et al. 2011 used word co-occurrence in a
5-word window over Gutenberg instead). Both use the bundled graph unless ``--graph`` is given.
When neither alternative has a known lemma pair, both score 0 and the first alternative wins.

Examples
--------
>>> G = nx.DiGraph([("rain", "wet", {"weight": 8}), ("sun", "dry", {"weight": 5})])
>>> G.graph["total"] = 13
>>> scorer = CausalStrengthScorer(G, lemmatizer=str.split)
>>> scorer.score("wet", "cause", "rain") > scorer.score("wet", "cause", "sun")
True
>>> PmiScorer(G, lemmatizer=str.split).score("rain", "effect", "wet") > 0
True
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any

import networkx as nx

from cause_effect_graph.lemmas import default_lemmatizer
from cause_effect_graph.store import graph_from_option
from cause_effect_graph.strength import ALPHA, LAMBDA, phrase_pmi, phrase_strength

__all__ = ["CausalStrengthScorer", "PmiScorer", "make_pmi_scorer", "make_strength_scorer"]


class _GraphScorer:
    def __init__(self, graph: nx.DiGraph | str | None = None,
                 lemmatizer: Callable[[str], list[str]] | None = None) -> None:
        self.graph = graph_from_option(graph)
        self._lemmatize = lemmatizer or default_lemmatizer()
        self.lemmas = lru_cache(maxsize=4096)(self._lemmas)

    def _lemmas(self, text: str) -> tuple[str, ...]:
        return tuple(self._lemmatize(text))

    def _phrase(self, cause: tuple[str, ...], effect: tuple[str, ...]) -> float:
        raise NotImplementedError

    def score(self, premise: str, asks_for: str, alternative: str) -> float:
        """Strength of alternative → premise (``"cause"``) or premise → alternative."""
        p, a = self.lemmas(premise), self.lemmas(alternative)
        return self._phrase(a, p) if asks_for == "cause" else self._phrase(p, a)


class CausalStrengthScorer(_GraphScorer):
    """COPA scorer: phrase causal strength (α = 0.66, λ = 0.9 unless given)."""

    def __init__(self, graph: nx.DiGraph | str | None = None,
                 lemmatizer: Callable[[str], list[str]] | None = None,
                 alpha: float = ALPHA, lam: float = LAMBDA) -> None:
        super().__init__(graph, lemmatizer)
        self.alpha, self.lam = alpha, lam

    def _phrase(self, cause: tuple[str, ...], effect: tuple[str, ...]) -> float:
        return phrase_strength(self.graph, cause, effect, self.alpha, self.lam)


class PmiScorer(_GraphScorer):
    """COPA scorer: summed positive PMI of cause/effect lemma pairs (our baseline)."""

    def _phrase(self, cause: tuple[str, ...], effect: tuple[str, ...]) -> float:
        return phrase_pmi(self.graph, cause, effect)


def make_strength_scorer(graph: str | None = None, **_: Any) -> CausalStrengthScorer:
    """Factory for ``--scorer graph``: the bundled graph unless ``graph`` is given."""
    return CausalStrengthScorer(graph)


def make_pmi_scorer(graph: str | None = None, **_: Any) -> PmiScorer:
    """Factory for ``--scorer pmi``: the bundled graph unless ``graph`` is given."""
    return PmiScorer(graph)

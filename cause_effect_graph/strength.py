"""Causal strength (Luo et al. 2016, CausalNet) and a PMI baseline over a Cause Effect Graph.

With f(i, j) the count of edge i → j, f(i_c) = Σ_w f(i, w) and f(j_e) = Σ_w f(w, j) (the
``cause_weight`` / ``effect_weight`` node attributes, taken *before* pruning) and N the sum of
all counts (``G.graph["total"]``):

- necessity causal strength  CS_nec(i, j) = p(i, j) / (p(i)^α p(j))
- sufficiency causal strength CS_suf(i, j) = p(i, j) / (p(i) p(j)^α)
- CS(i, j) = CS_nec(i, j)^λ · CS_suf(i, j)^(1−λ), with α = 0.66 and λ = 0.9 as in the paper,
- between two phrases, CS(T1, T2) = Σ_{i∈T1} Σ_{j∈T2} CS(i, j) / (|T1| + |T2|).

A pair that is not an edge (pruned or never seen) has strength 0.

The PMI baseline is log p(i, j) / (p(i) p(j)) from the same counts (CS with α = 1, in log
space), positive values only, summed over the pairs and normalised the same way.

Examples
--------
>>> G = nx.DiGraph([("rain", "wet", {"weight": 8}), ("rain", "cold", {"weight": 2}),
...                 ("sun", "wet", {"weight": 2})])
>>> for n, cw, ew in [("rain", 10, 0), ("sun", 2, 0), ("wet", 0, 10), ("cold", 0, 2)]:
...     G.nodes[n].update(cause_weight=cw, effect_weight=ew)
>>> G.graph["total"] = 12
>>> round(causal_strength(G, "rain", "wet"), 3), causal_strength(G, "wet", "rain")
(0.902, 0.0)
>>> round(pmi(G, "rain", "wet"), 3)
-0.041
>>> phrase_strength(G, ["rain"], ["wet", "cold"]) > phrase_strength(G, ["sun"], ["wet", "cold"])
True
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import networkx as nx

from cause_effect_graph.errors import GraphError
from dpc_errors import check_float

__all__ = [
    "ALPHA",
    "LAMBDA",
    "causal_strength",
    "necessity",
    "phrase_pmi",
    "phrase_strength",
    "pmi",
    "sufficiency",
]

ALPHA = 0.66
LAMBDA = 0.9


def _counts(G: nx.DiGraph, cause: str, effect: str) -> tuple[int, int, int, int] | None:
    """(f(i,j), f(i_c), f(j_e), N), or ``None`` when i → j is not an edge."""
    data = G.succ.get(cause, {}).get(effect) if cause in G else None
    if data is None:
        return None
    f_ij = data.get("weight", 1)
    f_i = G.nodes[cause].get("cause_weight") or f_ij
    f_j = G.nodes[effect].get("effect_weight") or f_ij
    total = G.graph.get("total")
    if not total:
        raise GraphError("the graph has no G.graph['total'] (sum of all edge counts)")
    return f_ij, f_i, f_j, total


def _check(alpha: float, lam: float) -> None:
    check_float("alpha", alpha, 0, 1, open_min=True, error=GraphError)
    check_float("lam", lam, 0, 1, error=GraphError)


def _necessity(f_ij: int, f_i: int, f_j: int, n: int, alpha: float) -> float:
    return f_ij * n**alpha / (f_i**alpha * f_j)


def _sufficiency(f_ij: int, f_i: int, f_j: int, n: int, alpha: float) -> float:
    return f_ij * n**alpha / (f_i * f_j**alpha)


def necessity(G: nx.DiGraph, cause: str, effect: str, alpha: float = ALPHA) -> float:
    """CS_nec(cause, effect) = f(i,j) N^α / (f(i_c)^α f(j_e)); 0 if there is no edge."""
    c = _counts(G, cause, effect)
    return 0.0 if c is None else _necessity(*c, alpha)


def sufficiency(G: nx.DiGraph, cause: str, effect: str, alpha: float = ALPHA) -> float:
    """CS_suf(cause, effect) = f(i,j) N^α / (f(i_c) f(j_e)^α); 0 if there is no edge."""
    c = _counts(G, cause, effect)
    return 0.0 if c is None else _sufficiency(*c, alpha)


def causal_strength(G: nx.DiGraph, cause: str, effect: str, alpha: float = ALPHA,
                    lam: float = LAMBDA) -> float:
    """CS(cause, effect) = CS_nec^λ · CS_suf^(1−λ) between two lemmas (the edge's counts read
    once for both)."""
    _check(alpha, lam)
    c = _counts(G, cause, effect)
    if c is None:
        return 0.0
    return float(_necessity(*c, alpha) ** lam * _sufficiency(*c, alpha) ** (1 - lam))


def pmi(G: nx.DiGraph, cause: str, effect: str) -> float | None:
    """log f(i,j) N / (f(i_c) f(j_e)); ``None`` if there is no edge."""
    c = _counts(G, cause, effect)
    if c is None:
        return None
    f_ij, f_i, f_j, n = c
    return math.log(f_ij * n / (f_i * f_j))


def phrase_strength(G: nx.DiGraph, cause: Sequence[str], effect: Sequence[str],
                    alpha: float = ALPHA, lam: float = LAMBDA) -> float:
    """CS(T1, T2): summed lemma strengths over |T1| + |T2|; 0 if either side is empty."""
    if not cause or not effect:
        return 0.0
    total = sum(causal_strength(G, i, j, alpha, lam) for i in cause for j in effect)
    return total / (len(cause) + len(effect))


def phrase_pmi(G: nx.DiGraph, cause: Sequence[str], effect: Sequence[str]) -> float:
    """Summed positive PMI over all lemma pairs, over |T1| + |T2|; 0 if either side is empty."""
    if not cause or not effect:
        return 0.0
    total = sum(max(pmi(G, i, j) or 0.0, 0.0) for i in cause for j in effect)
    return total / (len(cause) + len(effect))

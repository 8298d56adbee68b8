"""A picture of a lemma's neighbourhood: its strongest causes on the left, effects on the right.

>>> import tempfile, pathlib
>>> G = nx.DiGraph()
>>> G.add_weighted_edges_from([("cloud", "rain", 5), ("rain", "wet", 9), ("rain", "flood", 3)])
>>> out = pathlib.Path(tempfile.mkdtemp()) / "rain.png"
>>> sorted(draw_neighbourhood(G, "rain", out, n=2).nodes)
['cloud', 'flood', 'rain', 'wet']
>>> out.read_bytes()[:4]
b'\\x89PNG'
"""

from __future__ import annotations

import io
import math
from pathlib import Path
from typing import Any

import networkx as nx

from cause_effect_graph.errors import GraphError
from dpc_errors import check_int
from dpc_files import atomic_write_bytes

__all__ = ["draw_neighbourhood", "neighbourhood"]


def neighbourhood(G: nx.DiGraph, lemma: str, n: int = 10) -> nx.DiGraph:
    """The subgraph of ``lemma``, its ``n`` heaviest causes and its ``n`` heaviest effects.

    >>> G = nx.DiGraph([("a", "b", {"weight": 2}), ("c", "b", {"weight": 1})])
    >>> sorted(neighbourhood(G, "b", 1).edges)
    [('a', 'b')]
    """
    if lemma not in G:
        raise GraphError(f"lemma {lemma!r} is not in the graph")
    check_int("n", n, 1, error=GraphError)

    def top(items: dict[str, dict[str, int]]) -> list[str]:
        return [k for k, _ in sorted(items.items(), key=lambda kv: (-kv[1].get("weight", 1),
                                                                    kv[0]))[:n]]

    causes, effects = top(G.pred[lemma]), top(G.succ[lemma])
    H = nx.DiGraph()
    H.add_node(lemma)
    H.add_edges_from((c, lemma, G[c][lemma]) for c in causes)
    H.add_edges_from((lemma, e, G[lemma][e]) for e in effects)
    return H


def draw_neighbourhood(G: nx.DiGraph, lemma: str, out: str | Path, n: int = 10) -> nx.DiGraph:
    """Draw :func:`neighbourhood` to ``out`` (PNG, SVG or PDF by the suffix); return it.

    Edge widths grow with the log of the edge count; labels carry the counts.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    H = neighbourhood(G, lemma, n)
    causes = list(H.predecessors(lemma))
    effects = [e for e in H.successors(lemma) if e not in causes]
    pos: dict[str, tuple[float, float]] = {lemma: (0.0, 0.0)}
    for x, column in ((-1.0, causes), (1.0, effects)):
        for i, node in enumerate(column):
            pos[node] = (x, (len(column) - 1) / 2 - i)
    for node in H:  # a lemma both cause and effect of itself's neighbours, or a self-loop
        pos.setdefault(node, (0.0, 1.0))
    height = max(len(causes), len(effects), 3) * 0.5 + 1
    fig, ax = plt.subplots(figsize=(8, height))
    widths = [0.5 + math.log1p(d.get("weight", 1)) for _, _, d in H.edges(data=True)]
    colors = ["#c0392b" if v == lemma else "#2471a3" for _, v in H.edges]
    nx.draw_networkx_edges(H, pos, ax=ax, width=widths, edge_color=colors, arrows=True,
                           arrowsize=12, alpha=0.7, node_size=1500)
    nx.draw_networkx_nodes(H, pos, ax=ax, node_color=["#f5b041" if v == lemma else "#eaeded"
                                                      for v in H], node_size=1500)
    nx.draw_networkx_labels(H, pos, ax=ax, font_size=9)
    nx.draw_networkx_edge_labels(H, pos, ax=ax, font_size=7, label_pos=0.3,
                                 edge_labels={(u, v): d.get("weight", 1)
                                              for u, v, d in H.edges(data=True)})
    ax.set_title(f"causes of '{lemma}' (left, red) and its effects (right, blue)")
    ax.axis("off")
    fig.tight_layout()
    _save_atomically(fig, Path(out))
    plt.close(fig)
    return H


def _save_atomically(fig: Any, out: Path) -> None:
    """Draw ``fig`` in the format its suffix names, then write it atomically: an interrupted or
    failed drawing leaves no half picture, and an old one whole."""
    buffer = io.BytesIO()
    fig.savefig(buffer, dpi=120, format=out.suffix[1:] or None)
    atomic_write_bytes(out, buffer.getvalue())

"""The Cause Effect Graph (CEG): lemma-level causal knowledge as a networkx ``DiGraph``.

Edges run cause lemma → effect lemma with a ``weight`` (how many CausalBank pairs had the cause
lemma in the cause and the effect lemma in the effect); nodes carry how often each lemma was a
cause or an effect. One module per concept:

- :mod:`~cause_effect_graph.lemmas`: text → content lemmas (spaCy, or lemminflect's dictionary)
- :mod:`~cause_effect_graph.build`: CausalBank → graph (resumable, local or Spark, pruning)
- :mod:`~cause_effect_graph.everyday`: e-CARE and ConceptNet pairs as weighted counts beside it
- :mod:`~cause_effect_graph.store`: the ``.ceg`` file, edge-list TSV, the official release format
- :mod:`~cause_effect_graph.query`: top-N constraint lemmas for a sentence, by one of
  :data:`~cause_effect_graph.query.RANKS`
- :mod:`~cause_effect_graph.word_forms`: inflections and derived forms of a lemma
- :mod:`~cause_effect_graph.strength`: causal strength (Luo et al. 2016) and PMI
- :mod:`~cause_effect_graph.cooccurrence`: window co-occurrence counts over raw text, window PMI
- :mod:`~cause_effect_graph.show`: a picture of a lemma's neighbourhood
- :mod:`~cause_effect_graph.cli`: ``dpc graph ...``

>>> from cause_effect_graph import candidates, load_graph, variants
>>> variants("cry")
['cried', 'cries', 'cry', 'crying']
"""

from __future__ import annotations

from cause_effect_graph.build import BuildOptions, build_graph, prune
from cause_effect_graph.errors import GraphError, GraphFormatError, GraphVersionError
from cause_effect_graph.query import RANKS, Candidates, candidates
from cause_effect_graph.store import (
    DEFAULT_GRAPH,
    default_graph,
    load_graph,
    read_release_graph,
    save_graph,
    write_edgelist,
)
from cause_effect_graph.strength import causal_strength, phrase_strength, pmi
from cause_effect_graph.word_forms import derived_forms, variants

__all__ = [
    "DEFAULT_GRAPH",
    "BuildOptions",
    "Candidates",
    "GraphError",
    "GraphFormatError",
    "GraphVersionError",
    "RANKS",
    "build_graph",
    "candidates",
    "causal_strength",
    "default_graph",
    "derived_forms",
    "load_graph",
    "phrase_strength",
    "pmi",
    "prune",
    "read_release_graph",
    "save_graph",
    "variants",
    "write_edgelist",
]

"""COPA (Roemmele et al. 2011) on the knowledge this project builds: the dataset, answering it
with a scorer, and every scorer family, one module each.

- :mod:`tasks.copa.dataset`: :class:`CopaItem`, :func:`read_copa`, :func:`as_clause`
- :mod:`tasks.copa.scoring`: the scorer protocol, :func:`decide_all`, :func:`accuracy`
- :mod:`tasks.copa.scorers`: the table of named scorers (``dpc eval copa --scorer NAME``)
- :mod:`tasks.copa.graph`: causal strength and PMI over the Cause Effect Graph
- :mod:`tasks.copa.window`: window PMI over raw text, and the graph-then-window back-off
- :mod:`tasks.copa.generator`: PMI-style scores of the trained cause/effect generator
- :mod:`tasks.copa.causal_bert`: CausalBERT margin-ranked on COPA
- :mod:`tasks.copa.generation`: ``dpc eval generation``, the paper's Table 3 on COPA premises

>>> items = [CopaItem("1", "The sun rose.", "cause", "Dawn came.", "The rooster was fed.", 1)]
>>> accuracy(make_scorer("length"), items)
1.0
"""

from __future__ import annotations

from tasks.copa.dataset import CopaItem, Relation, as_clause, copa_texts, read_copa
from tasks.copa.scorers import available_scorers, make_scorer, register_scorer
from tasks.copa.scoring import CopaScorer, LengthScorer, accuracy, decide, decide_all, predict

__all__ = [
    "CopaItem",
    "CopaScorer",
    "LengthScorer",
    "Relation",
    "accuracy",
    "as_clause",
    "available_scorers",
    "copa_texts",
    "decide",
    "decide_all",
    "make_scorer",
    "predict",
    "read_copa",
    "register_scorer",
]

"""The table of COPA scorers: ``dpc eval copa --scorer NAME`` and :func:`make_scorer` pick one by
its name here, and nowhere else.

Each entry names the module and the factory that builds the scorer, and the options the name
fixes. The module is imported only when its scorer is built: the model-backed scorers import
torch and transformers (about 2.5 s on 2 cores), which the graph and window scorers never need.
A scorer of your own is added with :func:`register_scorer`.

>>> available_scorers()[:4]
['causal-bert', 'generator', 'generator-forward', 'generator-pmi']
>>> make_scorer("length").score("The sun rose.", "cause", "Dawn came.")
-2.0
>>> make_scorer("rouge")
Traceback (most recent call last):
...
dpc_errors.DpcError: unknown COPA scorer 'rouge'; choices: causal-bert, generator, ...
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dpc_errors import DpcError
from tasks.copa.scoring import CopaScorer

__all__ = ["SCORERS", "ScorerEntry", "available_scorers", "make_scorer", "register_scorer"]


@dataclass(frozen=True)
class ScorerEntry:
    """Where a scorer's factory lives: ``module.factory(**fixed, **options)`` builds it."""

    module: str
    factory: str
    fixed: Mapping[str, Any] = field(default_factory=dict)

    def load(self) -> Callable[..., CopaScorer]:
        factory: Callable[..., CopaScorer] = getattr(importlib.import_module(self.module),
                                                    self.factory)
        return factory


#: Every built-in scorer, by the name ``--scorer`` takes.
SCORERS: dict[str, ScorerEntry] = {
    "length": ScorerEntry("tasks.copa.scoring", "make_length_scorer"),
    # The Cause Effect Graph: causal strength (Luo et al. 2016) and positive PMI.
    "graph": ScorerEntry("tasks.copa.graph", "make_strength_scorer"),
    "pmi": ScorerEntry("tasks.copa.graph", "make_pmi_scorer"),
    # Word co-occurrence in a window over raw text (Roemmele et al. 2011), and the back-off.
    "window-pmi": ScorerEntry("tasks.copa.window", "make_window_pmi_scorer"),
    "window-pmi-any-order": ScorerEntry("tasks.copa.window", "make_window_pmi_scorer",
                                        {"ordered": False}),
    "graph-window": ScorerEntry("tasks.copa.window", "make_graph_window_scorer"),
    # The trained cause/effect generator.
    "generator": ScorerEntry("tasks.copa.generator", "make_generator_scorer"),
    "generator-forward": ScorerEntry("tasks.copa.generator", "make_generator_scorer",
                                     {"mode": "forward"}),
    # A pretrained causal LM (default SmolLM2-135M), zero-shot: "premise because" / ", so".
    "lm": ScorerEntry("tasks.copa.generator", "make_lm_scorer", {"mode": "forward"}),
    "lm-pmi": ScorerEntry("tasks.copa.generator", "make_lm_scorer", {"mode": "pmi"}),
    "generator-pmi": ScorerEntry("tasks.copa.generator", "make_generator_scorer",
                                 {"mode": "pmi"}),
    # CausalBERT, margin-ranked on a COPA training file.
    "causal-bert": ScorerEntry("tasks.copa.causal_bert", "make_causal_bert_scorer"),
}

_REGISTERED: dict[str, Callable[..., CopaScorer]] = {}


def register_scorer(name: str, factory: Callable[..., CopaScorer]) -> None:
    """Make ``factory(**options)`` available as ``make_scorer(name)`` in this process (a scorer
    of your own; the built-in ones are in :data:`SCORERS`)."""
    _REGISTERED[name] = factory


def available_scorers() -> Sequence[str]:
    return sorted({*SCORERS, *_REGISTERED})


def make_scorer(name: str, **options: Any) -> CopaScorer:
    """Build a scorer by name; an unknown name gets an error listing the choices."""
    if name in _REGISTERED:
        return _REGISTERED[name](**options)
    if name not in SCORERS:
        raise DpcError(f"unknown COPA scorer {name!r}; choices: {', '.join(available_scorers())}")
    entry = SCORERS[name]
    return entry.load()(**{**entry.fixed, **options})

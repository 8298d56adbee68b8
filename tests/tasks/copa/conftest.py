"""Fixtures of the layers the COPA scorers read: the graph's small hand-made graph and paths."""

from __future__ import annotations

from tests.cause_effect_graph.conftest import COPA_DEV, bundled_or_skip, small_graph

__all__ = ["COPA_DEV", "bundled_or_skip", "small_graph"]

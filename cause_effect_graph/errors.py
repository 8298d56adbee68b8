"""Exception types of the Cause Effect Graph.

Every error a user can cause is a :class:`GraphError`, a :class:`~dpc_errors.DpcError`
(so a ``ValueError``); its message names the offending value or file.

>>> raise GraphFormatError("'x.ceg' is not a Cause Effect Graph file")
Traceback (most recent call last):
...
cause_effect_graph.errors.GraphFormatError: 'x.ceg' is not a Cause Effect Graph file
"""

from __future__ import annotations

from dpc_errors import DpcError

__all__ = ["GraphError", "GraphFormatError", "GraphVersionError"]


class GraphError(DpcError):
    """Base class of the errors :mod:`cause_effect_graph` raises for bad input."""


class GraphFormatError(GraphError):
    """A graph file is missing, truncated, corrupted or not a graph file at all."""


class GraphVersionError(GraphFormatError):
    """A graph file was written in a format version this code cannot read."""

"""The one root of every error dpc raises for bad input: :class:`DpcError`.

Every package derives its own errors from it (``MiningError``, ``GraphError``, ``TrainError``,
``ConstraintError``, ``GuidedGenerationError``, ...), so a caller catches one type and shows the
message as is; each message names the offending value. This module imports nothing, so the
packages below the engine (the miner, the graph, training) need not import the engine, torch or
transformers to raise or catch it.

>>> from causal_mining.errors import MiningConfigError
>>> try:
...     raise MiningConfigError("`workers` (=0) has to be a positive integer")
... except DpcError as error:
...     print(error)
`workers` (=0) has to be a positive integer
"""

from __future__ import annotations

__all__ = ["DpcError"]


class DpcError(ValueError):
    """Base class of the errors every dpc package raises for bad input (a ``ValueError``)."""

"""Exception types raised by :mod:`train` for bad input (all :class:`~dpc_errors.DpcError`).

>>> raise TrainDataError("shard 'x.tsv' holds no pair")
Traceback (most recent call last):
...
train.errors.TrainDataError: shard 'x.tsv' holds no pair
"""

from __future__ import annotations

from dpc_errors import DpcError

__all__ = ["ModelFolderError", "TrainConfigError", "TrainDataError", "TrainError"]


class TrainError(DpcError):
    """Base class of the training errors."""


class TrainConfigError(TrainError):
    """A training option is out of range; the message names it and its value."""


class TrainDataError(TrainError):
    """A CausalBank shard or folder is missing, empty or malformed."""


class ModelFolderError(TrainError):
    """A tokenizer or model folder is missing, incomplete or of the wrong architecture."""

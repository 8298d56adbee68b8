"""Exception types of the CausalBank miner.

Every error the miner raises for bad user input is a :class:`MiningError` (a
:class:`~dpc_errors.DpcError`, the root of every dpc error), so a caller can catch the whole family
at once; each message names the offending value.

Examples
--------
>>> try:
...     raise MiningConfigError("`workers` (=0) has to be a positive integer")
... except MiningError as error:
...     print(error)
`workers` (=0) has to be a positive integer
"""

from __future__ import annotations

from dpc_errors import DpcError

__all__ = ["MiningError", "MiningConfigError", "MiningInputError", "BankFormatError", "ResumeError"]


class MiningError(DpcError):
    """Base class of every error raised by :mod:`causal_mining`."""


class MiningConfigError(MiningError):
    """An option of a mining run is out of range or inconsistent."""


class MiningInputError(MiningError, FileNotFoundError):
    """An input path or glob names nothing that can be read."""


class BankFormatError(MiningError):
    """A CausalBank file (ours or the official release layout) is malformed."""


class ResumeError(MiningError, RuntimeError):
    """An output folder holds a run whose configuration differs from the requested one."""

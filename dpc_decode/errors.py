"""Exception types raised by :mod:`dpc_decode`.

Every error a user can cause by passing bad input is a :class:`~dpc_errors.DpcError` (a
``ValueError``, the root every dpc package derives from; re-exported here), and its message names
the offending value, so callers can catch one type and show the message as is.
"""

from __future__ import annotations

from dpc_errors import DpcError

__all__ = ["ConstraintError", "DpcError", "UnsatisfiableConstraintsError"]


class ConstraintError(DpcError):
    """A constraint is malformed: an empty set, an empty alternative, an id outside the vocabulary,
    a text that tokenises to nothing, a value of the wrong type, ...

    >>> raise ConstraintError("set 0 is empty")
    Traceback (most recent call last):
    ...
    dpc_decode.errors.ConstraintError: set 0 is empty
    """


class UnsatisfiableConstraintsError(DpcError):
    """Raised in strict mode when a constraint set cannot be (or was not) met.

    Attributes
    ----------
    input_index : int
        Which input of the batch the set belongs to.
    set_index : int
        Which constraint set (position in that input's list of sets).
    """

    def __init__(self, message: str, *, input_index: int, set_index: int) -> None:
        super().__init__(message)
        self.input_index = input_index
        self.set_index = set_index

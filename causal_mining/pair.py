"""The unit of CausalBank: one (cause, effect) pair and the sentence it was mined from, and the
two directions of a causal question (:data:`DIRECTIONS`): every package above asks for the
``"cause"`` or the ``"effect"`` side of a pair with these names.

Examples
--------
>>> p = CausalPair("I lost my phone", "I am sad", "because", "EPC", "EXPLANATION", "a.txt:3",
...                "I am sad because I lost my phone.")
>>> p.to_row()[:3]
['I lost my phone', 'I am sad', 'because']
>>> CausalPair.from_row(p.to_row()) == p
True
>>> p.side("cause"), opposite("cause")
('I lost my phone', 'effect')
"""

from __future__ import annotations

from dataclasses import astuple, dataclass, fields
from typing import Literal

from dpc_errors import DpcError

__all__ = ["CausalPair", "COLUMNS", "DIRECTIONS", "Direction", "check_direction", "opposite"]

#: Which side of a (cause, effect) pair a question asks for: the causes of an input, or its
#: effects.
Direction = Literal["cause", "effect"]
DIRECTIONS: tuple[Direction, ...] = ("cause", "effect")


def check_direction(direction: object, error: type[DpcError] = DpcError,
                    option: str = "`direction`") -> Direction:
    """``direction`` if it is ``"cause"`` or ``"effect"``; otherwise ``error`` naming the value
    and the choices, in the words of the caller's user: for a command-line flag (``option``
    starting with ``--``) the choices are words, for a Python argument they are literals.

    >>> check_direction("effect")
    'effect'
    >>> check_direction("why", option="--direction")
    Traceback (most recent call last):
    ...
    dpc_errors.DpcError: --direction 'why' is not one of cause, effect
    >>> check_direction(None)
    Traceback (most recent call last):
    ...
    dpc_errors.DpcError: `direction` (=None) is not one of 'cause', 'effect'
    """
    if direction in DIRECTIONS:
        return direction  # type: ignore[return-value]
    if option.startswith("--"):
        raise error(f"{option} {direction!r} is not one of {', '.join(DIRECTIONS)}")
    raise error(f"{option} (={direction!r}) is not one of {', '.join(map(repr, DIRECTIONS))}")


def opposite(direction: Direction) -> Direction:
    """The other side: ``"effect"`` for ``"cause"`` and the reverse."""
    return "effect" if direction == "cause" else "cause"


@dataclass(frozen=True, slots=True)
class CausalPair:
    """One mined pair; fields are the columns of a CausalBank shard, in order.

    Attributes
    ----------
    cause, effect
        The two arguments, contiguous spans of ``sentence``.
    pattern
        Canonical pattern name (see :data:`causal_mining.patterns.PATTERNS`).
    cls
        ``"EPC"`` or ``"CPE"`` (column ``class``).
    category
        ``CAUSE``, ``EXPLANATION``, ``CONDITION``, ``PURPOSE`` or ``PREVENTION``.
    source
        Where the sentence came from: ``path:line`` or ``path#record-id``.
    sentence
        The whole sentence (whitespace-normalised).
    """

    cause: str
    effect: str
    pattern: str
    cls: str
    category: str
    source: str
    sentence: str

    def side(self, direction: Direction) -> str:
        """The ``cause`` or the ``effect`` of the pair."""
        return self.cause if direction == "cause" else self.effect

    def to_row(self) -> list[str]:
        """The pair as a list of column values (no tabs or newlines can occur in them)."""
        return list(astuple(self))

    @classmethod
    def from_row(cls, row: list[str]) -> CausalPair:
        """Inverse of :meth:`to_row`."""
        return cls(*row)


COLUMNS: tuple[str, ...] = tuple(
    "class" if f.name == "cls" else f.name for f in fields(CausalPair)
)

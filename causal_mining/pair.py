"""The unit of CausalBank: one (cause, effect) pair and the sentence it was mined from.

Examples
--------
>>> p = CausalPair("I lost my phone", "I am sad", "because", "EPC", "EXPLANATION", "a.txt:3",
...                "I am sad because I lost my phone.")
>>> p.to_row()[:3]
['I lost my phone', 'I am sad', 'because']
>>> CausalPair.from_row(p.to_row()) == p
True
"""

from __future__ import annotations

from dataclasses import astuple, dataclass, fields

__all__ = ["CausalPair", "COLUMNS"]


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

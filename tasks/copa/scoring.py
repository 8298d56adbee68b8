"""Answering COPA with a scorer: a scorer maps a premise, the relation asked for and one
alternative to a plausibility score; the alternative with the higher score is the answer.

>>> items = [CopaItem("1", "The sun rose.", "cause", "Dawn came.", "The rooster was fed.", 1)]
>>> accuracy(LengthScorer(), items)
1.0
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

from dpc_errors import DpcError
from tasks.copa.dataset import CopaItem, Relation

__all__ = ["CopaScorer", "LengthScorer", "accuracy", "decide", "decide_all", "make_length_scorer", "predict"]


class CopaScorer(Protocol):
    """Scores how plausible ``alternative`` is as the ``asks_for`` of ``premise``; a tuple is
    compared lexicographically (a back-off: later parts decide only ties of earlier ones).

    A scorer may also have ``prepare(items)``, called by :func:`decide_all` (hence by
    :func:`accuracy` and ``dpc eval copa``) with all items before any ``score`` call."""

    def score(self, premise: str, asks_for: Relation,
              alternative: str) -> float | tuple[float, ...]: ...


class LengthScorer:
    """A trivial reference scorer: prefers the shorter alternative (a sanity baseline)."""

    def score(self, premise: str, asks_for: Relation, alternative: str) -> float:
        return -float(len(alternative.split()))


def make_length_scorer(**_: object) -> LengthScorer:
    """Factory for ``--scorer length``."""
    return LengthScorer()


def decide(scorer: CopaScorer, item: CopaItem) -> tuple[int, bool]:
    """The alternative the scorer prefers (1 or 2; ties go to 1), and whether it was a tie
    (the scorer could not tell the alternatives apart, e.g. no evidence for either)."""
    s1 = scorer.score(item.premise, item.asks_for, item.alternative1)
    s2 = scorer.score(item.premise, item.asks_for, item.alternative2)
    return (1 if s1 >= s2 else 2), s1 == s2


def decide_all(scorer: CopaScorer, items: Sequence[CopaItem]) -> list[tuple[int, bool]]:
    """:func:`decide` for every item; a scorer with a ``prepare(items)`` method (e.g. one that
    batches its model calls) gets to see all items first."""
    prepare = getattr(scorer, "prepare", None)
    if callable(prepare):
        prepare(items)
    return [decide(scorer, it) for it in items]


def predict(scorer: CopaScorer, item: CopaItem) -> int:
    """1 or 2: the alternative the scorer prefers (ties go to 1)."""
    return decide(scorer, item)[0]


def accuracy(scorer: CopaScorer, items: Iterable[CopaItem]) -> float:
    """Share of items answered correctly."""
    items = list(items)
    if not items:
        raise DpcError("no COPA items to score")
    return sum(p == it.answer for it, (p, _) in zip(items, decide_all(scorer, items))) / len(items)

"""COPA (Roemmele et al. 2011): reading the XML release, scoring alternatives, accuracy.

A *scorer* maps a premise, the relation asked for and one alternative to a plausibility score;
the alternative with the higher score is the answer. Scorers come from several packages (the Cause
Effect Graph's causal strength and PMI, the trained generators, CausalBERT); each registers a
factory under a name with :func:`register_scorer`, and ``dpc eval copa FILE --scorer NAME`` picks
it by that name.

>>> items = [CopaItem("1", "The sun rose.", "cause", "Dawn came.", "The rooster was fed.", 1)]
>>> accuracy(LengthScorer(), items)
1.0
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from dpc_decode.errors import DpcError

__all__ = [
    "CopaItem",
    "CopaScorer",
    "LengthScorer",
    "accuracy",
    "available_scorers",
    "decide",
    "decide_all",
    "make_scorer",
    "predict",
    "read_copa",
    "register_scorer",
]

Relation = Literal["cause", "effect"]


@dataclass(frozen=True)
class CopaItem:
    """One COPA question: which alternative is the more plausible cause/effect of the premise."""

    id: str
    premise: str
    asks_for: Relation
    alternative1: str
    alternative2: str
    answer: int  # 1 or 2

    @property
    def alternatives(self) -> tuple[str, str]:
        return self.alternative1, self.alternative2


def read_copa(path: str | Path) -> list[CopaItem]:
    """Read a COPA XML file (the official release format).

    Raises :class:`~dpc_decode.errors.DpcError` naming the file and the faulty item.
    """
    file = Path(path)
    if not file.is_file():
        raise DpcError(f"COPA file {str(path)!r} does not exist")
    try:
        root = ET.parse(file).getroot()
    except ET.ParseError as err:
        raise DpcError(f"COPA file {str(path)!r} is not valid XML: {err}") from None
    items = []
    for node in root.iter("item"):
        ident = node.get("id", "?")
        asks = node.get("asks-for")
        answer = node.get("most-plausible-alternative")
        texts = [node.findtext(tag) for tag in ("p", "a1", "a2")]
        if asks not in ("cause", "effect") or answer not in ("1", "2") or None in texts:
            raise DpcError(
                f"COPA file {str(path)!r}: item {ident} lacks asks-for=cause|effect, "
                "most-plausible-alternative=1|2 or one of <p>, <a1>, <a2>"
            )
        p, a1, a2 = (t.strip() for t in texts)  # type: ignore[union-attr]
        items.append(CopaItem(ident, p, asks, a1, a2, int(answer)))  # type: ignore[arg-type]
    if not items:
        raise DpcError(f"COPA file {str(path)!r} holds no <item>")
    return items


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


_SCORERS: dict[str, Callable[..., CopaScorer]] = {"length": lambda **_: LengthScorer()}


def register_scorer(name: str, factory: Callable[..., CopaScorer]) -> None:
    """Make ``factory(**options)`` available as ``dpc eval copa --scorer NAME``."""
    _SCORERS[name] = factory


def available_scorers() -> Sequence[str]:
    return sorted(_SCORERS)


def make_scorer(name: str, **options: Any) -> CopaScorer:
    """Build a registered scorer; an unknown name gets an error listing the choices."""
    if name not in _SCORERS:
        raise DpcError(f"unknown COPA scorer {name!r}; choices: {', '.join(available_scorers())}")
    return _SCORERS[name](**options)

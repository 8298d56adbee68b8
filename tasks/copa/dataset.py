"""COPA (Roemmele et al. 2011): the XML release read into :class:`CopaItem`s, and its sentences
as CausalBank-style clauses.

>>> item = CopaItem("1", "The sun rose.", "cause", "Dawn came.", "The rooster was fed.", 1)
>>> item.alternatives
('Dawn came.', 'The rooster was fed.')
>>> as_clause(item.premise)
'the sun rose'
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from causal_mining.pair import Direction
from dpc_errors import DpcError
from dpc_inputs import check_input_file

__all__ = ["CopaItem", "Relation", "as_clause", "copa_texts", "read_copa"]

#: What a COPA question asks for: the cause or the effect of its premise.
Relation = Direction


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

    Raises :class:`~dpc_errors.DpcError` naming the file and the faulty item.
    """
    file = check_input_file(path, "COPA file")  # missing, a directory, unreadable: said as such
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


def copa_texts(paths: Sequence[str | Path]) -> Iterator[str]:
    """Every premise and alternative of COPA files, in order (e.g. the vocabulary to count for
    ``dpc graph cooccur --vocab-copa``)."""
    for path in paths:
        for item in read_copa(path):
            yield item.premise
            yield from item.alternatives


def as_clause(sentence: str) -> str:
    """A COPA sentence as a CausalBank-style clause: the final period dropped, a sentence-initial
    capital lowered (CausalBank arguments are clauses, COPA's are sentences).

    >>> as_clause("The man fell.")
    'the man fell'
    >>> as_clause("I knocked on the door.")
    'I knocked on the door'
    """
    text = " ".join(sentence.split()).rstrip(".!?")
    if len(text) > 1 and text[0].isupper() and text[1].islower():
        text = text[0].lower() + text[1:]
    return text

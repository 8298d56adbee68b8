"""Duplicate pairs: exact and normalised (case, punctuation) duplicates, detected over short
digests; the worker deduplicates within a batch, :mod:`causal_mining.merge` across the run.
"""

from __future__ import annotations

import hashlib
import re

from causal_mining.filters import DropReason

__all__ = ["Deduplicator", "normalise_pair"]


_NON_WORD = re.compile(r"[^0-9a-z]+")


def normalise_pair(cause: str, effect: str) -> str:
    """Normalised form of a pair for near-duplicate detection: lowercase, punctuation dropped.

    >>> normalise_pair("The Rain,", "  we stayed IN!") == normalise_pair("the rain", "we stayed in")
    True
    """
    cause_key = _NON_WORD.sub(" ", cause.lower()).strip()
    return f"{cause_key}\t{_NON_WORD.sub(' ', effect.lower()).strip()}"


class Deduplicator:
    """Exact and normalised duplicate detection over 8-byte BLAKE2 digests.

    Memory is about 100 bytes per distinct pair (two Python sets of ``bytes``), so a single
    process deduplicates tens of millions of pairs; larger banks are deduplicated per hash
    partition by the Spark runner.

    Examples
    --------
    >>> d = Deduplicator()
    >>> d.check("The rain", "we stayed") is None
    True
    >>> d.check("The rain", "we stayed"), d.check("the rain.", "We stayed")
    (<DropReason.DUPLICATE_EXACT: 'duplicate_exact'>,
     <DropReason.DUPLICATE_NORMALISED: 'duplicate_normalised'>)
    """

    def __init__(self) -> None:
        self._exact: set[bytes] = set()
        self._normalised: set[bytes] = set()

    @staticmethod
    def _digest(text: str) -> bytes:
        return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest()

    def check(self, cause: str, effect: str) -> DropReason | None:
        """Record the pair; return the duplicate reason if it was seen before, else ``None``."""
        exact = self._digest(f"{cause}\t{effect}")
        if exact in self._exact:
            return DropReason.DUPLICATE_EXACT
        self._exact.add(exact)
        normalised = self._digest(normalise_pair(cause, effect))
        if normalised in self._normalised:
            return DropReason.DUPLICATE_NORMALISED
        self._normalised.add(normalised)
        return None

    def __len__(self) -> int:
        return len(self._normalised)

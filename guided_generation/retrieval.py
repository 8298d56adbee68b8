"""The paper's KNN retrieval baseline: causes or effects looked up in a CausalBank, not generated.

Given an input sentence and a direction, :meth:`KnnRetriever.retrieve` finds the bank pairs whose
one side is nearest to the input and returns their *other* side:

- ``"cause"`` (causes of the input): the **effect** side is searched, the causes are returned;
- ``"effect"`` (effects of the input): the **cause** side is searched, the effects are returned.

Each side is a TF-IDF index over word unigrams and bigrams (scikit-learn's default token pattern,
lower-cased: words of two or more letters or digits; sublinear tf ``1 + log(tf)``, smoothed idf,
rows L2-normalised), so the score of a pair is the cosine between the input and its searched
side, counting only terms the bank knows. The index is built on first use of a side, as a sparse
term × pair matrix (an inverted index): a query touches only the pairs that share a term with it.
The weights are those of ``TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True)`` (the tests
check it); the counting is done here because the vectoriser's alphabetical sort of a vocabulary
of half a million bigrams more than doubles the build time.

*Sentences containing the input* (the paper's wording): with ``require_all=True`` (the default)
only pairs whose searched side contains every **content word** of the input compete, when at
least one such pair exists; otherwise every pair sharing a term competes. The content words are
the input's unigram terms that the index knows and that are not English stop words (spaCy's
list, the one the Cause Effect Graph uses, :func:`cause_effect_graph.lemmas.is_stop_word`; not
scikit-learn's ``ENGLISH_STOP_WORDS``, which holds words such as *cry*, *fire* and *thick*); an
input with none is ranked by plain cosine. Matching is on whole tokens, without lemmatising, so
``rain`` does not match ``rained`` nor ``babies`` match ``baby``.

Results are best first, ties broken by pair index (bank order), and hold distinct texts only:
a returned text equal to a better one up to case and spacing is skipped, as is an empty one, so
fewer than ``k`` results can come back. An empty input, or one made only of words the bank does
not know, gives an empty list.

Examples
--------
>>> bank = KnnRetriever.from_pairs([
...     ("the baby was hungry", "the baby cried all night"),
...     ("the dog barked", "the baby woke up"),
...     ("it rained all day", "the streets were wet"),
...     ("The baby was  Hungry", "the baby cried"),
...     ("a storm came", "it rained"),
... ])
>>> [(r.text, round(r.score, 2)) for r in bank.retrieve("the baby cried", "cause", 3)]
[('The baby was  Hungry', 1.0)]

Pairs 3 and 0 hold both content words (*baby*, *cried*); pair 0's cause is pair 3's up to case
and spacing, so it is skipped. Without the restriction, pairs sharing a word compete too:

>>> [r.index for r in bank.retrieve("the baby cried", "cause", 3, require_all=False)]
[3, 1, 2]
>>> best = bank.retrieve("it rained", "effect", 1)[0]
>>> best.text, best.matched, best.index, round(best.score, 3)
('the streets were wet', 'it rained all day', 2, 0.655)
>>> bank.retrieve("zebras", "cause", 3), bank.retrieve("   ", "cause", 3)
([], [])
"""

from __future__ import annotations

import itertools
import os
import re
from array import array
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from causal_mining.errors import BankFormatError
from causal_mining.pair import DIRECTIONS, CausalPair, Direction, check_direction, opposite
from causal_mining.shards import read_bank
from cause_effect_graph.lemmas import is_stop_word
from dpc_errors import check_int
from guided_generation.errors import GuidedGenerationError

if TYPE_CHECKING:
    from scipy.sparse import csr_matrix

__all__ = ["KnnRetriever", "Retrieved"]

_TOKEN = re.compile(r"(?u)\b\w\w+\b")  # scikit-learn's default token_pattern


@dataclass(frozen=True, slots=True)
class Retrieved:
    """One retrieved answer.

    Attributes
    ----------
    text
        The returned side of the pair: a cause for direction ``"cause"``, an effect for
        ``"effect"``.
    matched
        The other side of the same pair, the one that matched the input.
    score
        Cosine similarity of the input and ``matched`` (TF-IDF), in ``(0, 1]``.
    index
        Position of the pair in the bank (reading order of the shards).
    """

    text: str
    matched: str
    score: float
    index: int


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def _terms(tokens: list[str]) -> list[str]:
    """Unigrams then bigrams, as ``TfidfVectorizer(ngram_range=(1, 2))`` analyses them."""
    return tokens + [f"{a} {b}" for a, b in zip(tokens, tokens[1:])]


def _dedupe_key(text: str) -> str:
    return " ".join(text.lower().split())


class _SideIndex:
    """TF-IDF inverted index of one side of the bank.

    ``postings`` is ``(terms, pairs)`` CSR: row ``t`` lists the pairs containing term ``t`` with
    their weights, so ``query @ postings`` gives every cosine and touches only the query's rows.
    """

    def __init__(self, texts: Sequence[str]) -> None:
        from scipy.sparse import csr_matrix
        from sklearn.feature_extraction.text import TfidfTransformer

        self.vocabulary: dict[str, int] = {}
        column = self.vocabulary.setdefault
        indices = array("q")
        indptr = array("q", [0])
        for text in texts:
            indices.extend(column(term, len(self.vocabulary)) for term in _terms(_tokens(text)))
            indptr.append(len(indices))
        if not self.vocabulary:
            raise GuidedGenerationError(
                "no pair of the bank holds a word of two or more letters or digits on this side"
            )
        cols = np.frombuffer(indices, dtype=np.int64)
        counts = csr_matrix(
            (np.ones(len(cols), dtype=np.float32), cols, np.frombuffer(indptr, dtype=np.int64)),
            shape=(len(texts), len(self.vocabulary)),
        )  # (pairs, terms)
        counts.sum_duplicates()
        self.transformer = TfidfTransformer(sublinear_tf=True)
        weights = self.transformer.fit_transform(counts)  # (pairs, terms), rows L2-normalised
        self.postings: csr_matrix = weights.T.tocsr()  # (terms, pairs)
        self.postings.sort_indices()
        is_stop_word("the")  # loads spaCy's stop list now rather than in the first query

    def vector(self, tokens: list[str]) -> csr_matrix | None:
        """The L2-normalised TF-IDF row ``(1, terms)`` of a query; ``None`` if no term is known."""
        from scipy.sparse import csr_matrix

        cols = [self.vocabulary[t] for t in _terms(tokens) if t in self.vocabulary]
        if not cols:
            return None
        counts = csr_matrix(
            (np.ones(len(cols), dtype=np.float32), (np.zeros(len(cols), dtype=np.int64), cols)),
            shape=(1, len(self.vocabulary)),
        )  # duplicates are summed by the conversion
        return self.transformer.transform(counts)

    def containing_all(self, tokens: list[str]) -> np.ndarray | None:
        """Sorted ids of the pairs holding every known non-stop-word unigram of the query.

        ``None`` when the query has no such content word (no restriction applies).
        """
        content = {self.vocabulary[t] for t in tokens
                   if t in self.vocabulary and not is_stop_word(t)}
        if not content:
            return None
        ptr, ids = self.postings.indptr, self.postings.indices
        lists = sorted((ids[ptr[c]:ptr[c + 1]] for c in content), key=len)
        found = lists[0]
        for other in lists[1:]:
            found = np.intersect1d(found, other, assume_unique=True)
        return found


class KnnRetriever:
    """Nearest-neighbour retrieval of causes and effects over (cause, effect) pairs.

    Build it with :meth:`from_bank` (CausalBank shards) or :meth:`from_pairs` (in memory). The
    TF-IDF index of each side is built on its first use (or by :meth:`fit`); a direction uses
    one side, so a retriever used in one direction builds one index. See the module docstring
    for the scoring, the ``require_all`` rule and deduplication.

    Parameters
    ----------
    causes, effects
        The two sides, aligned: pair ``i`` is ``(causes[i], effects[i])``.

    Raises
    ------
    GuidedGenerationError
        (a :class:`~dpc_errors.DpcError`) if the sides differ in length or are empty.
    """

    def __init__(self, causes: Sequence[str], effects: Sequence[str]) -> None:
        if len(causes) != len(effects):
            raise GuidedGenerationError(
                f"{len(causes)} causes but {len(effects)} effects: the sides have to be aligned"
            )
        if not causes:
            raise GuidedGenerationError("the bank holds no (cause, effect) pair")
        self._sides: dict[str, list[str]] = {"cause": list(causes), "effect": list(effects)}
        self._indexes: dict[str, _SideIndex] = {}

    @classmethod
    def from_pairs(cls, pairs: Iterable[tuple[str, str]]) -> KnnRetriever:
        """A retriever over in-memory ``(cause, effect)`` pairs, in order.

        Raises
        ------
        GuidedGenerationError
            If an item is not a pair of strings (the message gives its position), or there is
            no pair.
        """
        causes: list[str] = []
        effects: list[str] = []
        for i, pair in enumerate(pairs):
            if not (isinstance(pair, (tuple, list)) and len(pair) == 2
                    and all(isinstance(side, str) for side in pair)):
                raise GuidedGenerationError(
                    f"pair {i} (={pair!r}) is not a (cause, effect) pair of strings"
                )
            causes.append(pair[0])
            effects.append(pair[1])
        return cls(causes, effects)

    @classmethod
    def from_bank(cls, paths: str | Path | Sequence[str | Path],
                  max_pairs: int | None = None) -> KnnRetriever:
        """A retriever over the pairs of CausalBank shards, read in order.

        Parameters
        ----------
        paths
            Shard files (``causalbank-*.tsv``), bank folders holding shards, or mining output
            folders holding ``causalbank/`` (see :func:`causal_mining.shards.read_bank`); one
            path or a sequence of them.
        max_pairs
            Read at most this many pairs in all (the first ones); default all.

        Raises
        ------
        GuidedGenerationError
            If a path does not exist, a folder holds no shard, a shard is malformed, the paths
            hold no pair, or ``max_pairs`` is not a positive integer.
        """
        if isinstance(paths, (str, os.PathLike)):
            paths = [paths]
        folders = [Path(path) for path in paths]
        if max_pairs is not None:
            check_int("max_pairs", max_pairs, 1, error=GuidedGenerationError)
        for path in folders:
            if not path.exists():
                raise GuidedGenerationError(f"CausalBank path {os.fspath(path)!r} does not exist")
        causes: list[str] = []
        effects: list[str] = []
        try:
            for pair in itertools.islice(_read_all(folders), max_pairs):
                causes.append(pair.cause)
                effects.append(pair.effect)
        except BankFormatError as error:
            raise GuidedGenerationError(str(error)) from error
        if not causes:
            names = ", ".join(repr(os.fspath(path)) for path in folders) or "(no path given)"
            raise GuidedGenerationError(f"the CausalBank at {names} holds no pair")
        return cls(causes, effects)

    def __len__(self) -> int:
        """Number of pairs."""
        return len(self._sides["cause"])

    def fit(self, direction: str | None = None) -> KnnRetriever:
        """Build now the index ``direction`` uses (both when ``None``); return ``self``."""
        for name in DIRECTIONS if direction is None else (_check_direction(direction),):
            self._index(opposite(name))
        return self

    def _index(self, side: str) -> _SideIndex:
        if side not in self._indexes:
            self._indexes[side] = _SideIndex(self._sides[side])
        return self._indexes[side]

    def retrieve(self, sentence: str, direction: str, k: int, *,
                 require_all: bool = True) -> list[Retrieved]:
        """The ``k`` best distinct causes (or effects) of ``sentence`` found in the bank.

        Parameters
        ----------
        sentence
            The input, e.g. ``"babies cry"``.
        direction
            ``"cause"`` (search effects, return their causes) or ``"effect"`` (search causes,
            return their effects).
        k
            How many results at most.
        require_all
            Restrict to pairs containing every content word of the input when one exists
            (see the module docstring); ``False`` ranks every pair by cosine alone.

        Returns
        -------
        list[Retrieved]
            Best first (score, then bank order); distinct texts; possibly fewer than ``k``, and
            empty for an empty input or one with no term the bank knows.

        Raises
        ------
        GuidedGenerationError
            If ``direction`` is not ``"cause"`` or ``"effect"``, ``k`` is not a positive
            integer, or ``sentence`` is not a string.
        """
        searched = opposite(_check_direction(direction))
        check_int("k", k, 1, error=GuidedGenerationError)
        if not isinstance(sentence, str):
            raise GuidedGenerationError(f"`sentence` (={sentence!r}) has to be a string")
        tokens = _tokens(sentence)
        if not tokens:
            return []
        index = self._index(searched)
        query = index.vector(tokens)
        if query is None:
            return []
        cosines = query @ index.postings  # (1, pairs), only the pairs sharing a term
        pairs = cosines.indices.astype(np.int64)
        scores = cosines.data
        if require_all:
            allowed = index.containing_all(tokens)
            if allowed is not None:
                keep = np.isin(pairs, allowed, assume_unique=True)
                if keep.any():
                    pairs, scores = pairs[keep], scores[keep]
        order = np.lexsort((pairs, -scores.astype(np.float64)))  # best score, then bank order
        returned, matched = self._sides[direction], self._sides[searched]
        results: list[Retrieved] = []
        seen: set[str] = set()
        for i in order:
            pair = int(pairs[i])
            key = _dedupe_key(returned[pair])
            if not key or key in seen:
                continue
            seen.add(key)
            results.append(Retrieved(returned[pair], matched[pair], float(scores[i]), pair))
            if len(results) == k:
                break
        return results


def _check_direction(direction: Any) -> Direction:
    return check_direction(direction, GuidedGenerationError)


def _read_all(paths: list[Path]) -> Iterator[CausalPair]:
    for path in paths:
        yield from read_bank(path)

"""Constraint keywords for guided generation: the top-N graph neighbours of a sentence.

:func:`candidates` lemmatises the input (:mod:`cause_effect_graph.lemmas`), looks up each lemma's
neighbours in the asked direction (``"cause"``: lemmas that cause it, the predecessors;
``"effect"``: the successors), adds up their scores over the input's lemmas, leaves out the
input's own lemmas and stop words, and returns the N best, ranked by edge count (``"weight"``)
or by causal strength (``"strength"``, :mod:`cause_effect_graph.strength`).

Bad input never raises: an empty sentence, a sentence without content words, words the graph
does not know, or non-English text give an empty result whose ``message`` says why.

Examples
--------
>>> G = nx.DiGraph()
>>> G.add_weighted_edges_from([("hungry", "cry", 9), ("tired", "cry", 6), ("hungry", "baby", 2),
...                            ("love", "baby", 4), ("cry", "tear", 5)])
>>> G.graph["total"] = 26
>>> result = candidates(G, "babies cry", "cause", 3, lemmatizer=lambda s: ["baby", "cry"])
>>> result.keywords
['hungry', 'tired', 'love']
>>> result.scores
[11.0, 6.0, 4.0]
>>> candidates(G, "babies cry", "effect", lemmatizer=lambda s: ["baby", "cry"]).keywords
['tear']
>>> empty = candidates(G, "   ", "cause")
>>> empty.keywords, empty.message
([], 'the sentence is empty')
"""

from __future__ import annotations

import heapq
import re
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Literal

import networkx as nx

from causal_mining.pair import Direction, check_direction
from cause_effect_graph.errors import GraphError
from cause_effect_graph.lemmas import default_lemmatizer, is_stop_word
from cause_effect_graph.strength import ALPHA, LAMBDA, causal_strength
from cause_effect_graph.variants import variants

__all__ = ["Candidates", "candidates", "constraint_sets", "looks_english", "neighbours",
           "unknown_words"]

Rank = Literal["weight", "strength"]


@dataclass(frozen=True)
class Candidates:
    """The result of :func:`candidates`: ``(lemma, score)`` best first, and what happened.

    Attributes
    ----------
    items
        ``(lemma, score)`` pairs, best first.
    lemmas
        The input's content lemmas.
    known
        Those of them that have a neighbour in the asked direction.
    message
        Why the result is empty (or partial); ``None`` when every lemma was known.
    """

    items: list[tuple[str, float]]
    lemmas: list[str] = field(default_factory=list)
    known: list[str] = field(default_factory=list)
    message: str | None = None

    @property
    def keywords(self) -> list[str]:
        return [lemma for lemma, _ in self.items]

    @property
    def scores(self) -> list[float]:
        return [score for _, score in self.items]

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Iterator[tuple[str, float]]:
        return iter(self.items)


_WORDS = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")


def unknown_words(text: str) -> list[str]:
    """The words of ``text`` that are neither English words (lemminflect's dictionary) nor stop
    words; a word in another script is always unknown.

    >>> unknown_words("Die Kinder weinen laut")
    ['weinen', 'laut']
    >>> unknown_words("The babies cried.")
    []
    """
    from lemminflect import getAllLemmas

    out = []
    for word in _WORDS.findall(text):
        low = word.lower()
        if not low.isascii() or not (is_stop_word(low) or getAllLemmas(low)):
            out.append(word)
    return out


def looks_english(text: str) -> bool:
    """Whether most letters are Latin and more than half of the words are English words.

    >>> looks_english("babies cry"), looks_english("赤ちゃんが泣く"), looks_english("дети плачут")
    (True, False, False)
    >>> looks_english("Die Kinder weinen laut"), looks_english("Le bébé pleure")
    (False, False)
    """
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return False
    latin = sum(1 for c in letters if c.isascii() or "LATIN" in unicodedata.name(c, ""))
    if latin < 0.8 * len(letters):
        return False
    words = _WORDS.findall(text)
    return 2 * len(unknown_words(text)) < len(words)


def neighbours(G: nx.DiGraph, lemma: str, direction: Direction) -> dict[str, dict[str, int]]:
    """The lemma's causes (``"cause"``: predecessors) or effects (``"effect"``: successors)."""
    if check_direction(direction, GraphError) == "cause":
        return G.pred[lemma] if lemma in G else {}
    return G.succ[lemma] if lemma in G else {}


def candidates(
    G: nx.DiGraph,
    sentence: str,
    direction: Direction = "cause",
    n: int = 10,
    rank: Rank = "weight",
    lemmatizer: Callable[[str], list[str]] | None = None,
    alpha: float = ALPHA,
    lam: float = LAMBDA,
) -> Candidates:
    """The top-``n`` lemmas that cause (or are caused by) ``sentence``.

    Parameters
    ----------
    G
        A Cause Effect Graph (edges cause → effect with a ``weight``).
    sentence
        Any text; it is lemmatised with ``lemmatizer`` (default: spaCy, the same rules as the
        build).
    direction
        ``"cause"`` for the causes of the sentence, ``"effect"`` for its effects.
    n
        How many lemmas to return at most.
    rank
        ``"weight"``: sum of edge counts over the input's lemmas; ``"strength"``: sum of causal
        strengths (which favours specific over merely frequent neighbours).

    Raises
    ------
    GraphError
        For a bad ``direction``, ``n`` or ``rank`` (bad *sentences* give an empty result).
    """
    check_direction(direction, GraphError)
    if n < 1:
        raise GraphError(f"`n` (={n}) has to be at least 1")
    if rank not in ("weight", "strength"):
        raise GraphError(f"`rank` (={rank!r}) has to be 'weight' or 'strength'")
    if not sentence.strip():
        return Candidates([], message="the sentence is empty")
    if not looks_english(sentence):
        unknown = unknown_words(sentence)
        return Candidates([], message=f"{sentence[:40]!r} does not look like English text "
                                      f"(unknown words: {', '.join(unknown[:5])})")
    lemmas = (lemmatizer or default_lemmatizer())(sentence)
    if not lemmas:
        return Candidates([], message=f"{sentence[:40]!r} has no content word (noun, verb, "
                                      "adjective or adverb that is not a stop word)")
    if rank == "strength":
        causal_strength(G, "", "", alpha, lam)  # checks alpha and lam
    own = set(lemmas)
    scores: dict[str, float] = {}
    known = []
    for lemma in lemmas:
        near = neighbours(G, lemma, direction)
        if not near:
            continue
        known.append(lemma)
        for other, data in near.items():
            if other in own:
                continue
            if rank == "weight":
                score = float(data.get("weight", 1))
            elif direction == "cause":
                score = causal_strength(G, other, lemma, alpha, lam)
            else:
                score = causal_strength(G, lemma, other, alpha, lam)
            scores[other] = scores.get(other, 0.0) + score
    best = heapq.nsmallest(n + len(own), scores.items(), key=lambda kv: (-kv[1], kv[0]))
    items = [(lemma, score) for lemma, score in best if not is_stop_word(lemma)][:n]
    unknown = [lemma for lemma in lemmas if lemma not in known]
    message = None
    if not known:
        message = (f"no {direction} of {', '.join(lemmas)} is in the graph "
                   "(unknown words, or not English)")
    elif unknown:
        message = f"no {direction} known for {', '.join(unknown)}"
    return Candidates(items, lemmas, known, message)


def constraint_sets(result: Candidates | list[str], capitalized: bool = False) -> list[list[str]]:
    """One disjunctive constraint set per keyword: its surface forms (for ``dpc_decode``).

    >>> constraint_sets(["hungry", "love"])
    [['hungrier', 'hungriest', 'hungry'], ['love', 'loved', 'loves', 'loving']]
    """
    keywords = result.keywords if isinstance(result, Candidates) else result
    return [variants(k, capitalized=capitalized) for k in keywords]

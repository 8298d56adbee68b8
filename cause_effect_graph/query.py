"""Constraint keywords for guided generation: the top-N graph neighbours of a sentence.

:func:`candidates` lemmatises the input (:mod:`cause_effect_graph.lemmas`), looks up each lemma's
neighbours in the asked direction (``"cause"``: lemmas that cause it, the predecessors;
``"effect"``: the successors), adds up their scores over the input's lemmas and returns the N
best. The ranks (:data:`RANKS`) score a neighbour ``k`` of an input lemma ``l`` by

- ``"weight"``: the edge count f(k, l), the paper's rank (frequent lemmas first);
- ``"strength"``: causal strength CS (:mod:`cause_effect_graph.strength`, Luo et al. 2016);
- ``"pmi"``: positive PMI, log f(k, l) N / (f(k) f(l)): the edge count normalised by how often
  the keyword occurs at all, so specific lemmas come first;
- ``"mix"``: p(k | l) × positive PMI, with p(k | l) = f(k, l) / f(l) the keyword's share of the
  input lemma's edges: frequent *and* specific (the local mutual information of Evert 2005,
  f × PMI, divided by f(l)), neither a lemma that goes with everything nor one seen once; the
  division gives every input lemma an equal say, so a common one (*man* in "the man fell
  asleep") does not drown a rarer one (*asleep*).

The best-first list is then filtered, whatever the rank: the input's own lemmas and stop words
are left out; so are **hubs**, the ``hub_share`` most connected lemmas of the graph in the asked
direction (:data:`HUB_SHARE`: 0.1%, on the bundled graph the 14 lemmas such as *man*, *time*,
*know*, *find* that cause, or are caused by, 7-15% of all its lemmas; a graph of fewer than
1,000 lemmas has none, and lemmas tied at the border are not hubs); and, with ``diversify``,
**near-duplicates**: a lemma sharing an inflected form with one already chosen (*tired* after
*tire*, *loving* after *love*) or with an input lemma (*crying* for "babies cry"). For ``"pmi"`` and ``"mix"``, lemmas seen in fewer than
``min_freq`` pairs on their side are left out too (:data:`MIN_FREQ`: 10 mined pairs, or 2
everyday ones): a misspelling seen once has the highest PMI of all. These filters are
:class:`CandidateOptions`; ``CandidateOptions(hub_share=0, diversify=False)`` gives the plain
``"weight"`` and ``"strength"`` lists, unfiltered.

Bad input never raises: an empty sentence, a sentence without content words, words the graph
does not know, or non-English text give an empty result whose ``message`` says why.

Examples
--------
>>> G = nx.DiGraph()
>>> G.add_weighted_edges_from([("hungry", "cry", 9), ("tired", "cry", 6), ("hungry", "baby", 2),
...                            ("love", "baby", 4), ("cry", "tear", 5), ("colic", "cry", 1)])
>>> for lemma in G:  # node weights: sums of the edge counts ...
...     G.nodes[lemma].update(cause_weight=G.out_degree(lemma, "weight"),
...                           effect_weight=G.in_degree(lemma, "weight"))
>>> G.nodes["hungry"]["cause_weight"] += 49  # ... and hungry causes much else
>>> G.graph["total"] = 76
>>> result = candidates(G, "babies cry", "cause", 3, lemmatizer=lambda s: ["baby", "cry"])
>>> result.keywords
['hungry', 'tired', 'love']
>>> result.scores
[11.0, 6.0, 4.0]
>>> for rank in ("pmi", "mix"):
...     print(rank, candidates(G, "babies cry", "cause", 3, rank,
...                            lemmatizer=lambda s: ["baby", "cry"],
...                            options=CandidateOptions(min_freq=0)).keywords)
pmi ['love', 'colic', 'tired']
mix ['love', 'tired', 'colic']
>>> candidates(G, "babies cry", "effect", lemmatizer=lambda s: ["baby", "cry"]).keywords
['tear']
>>> empty = candidates(G, "   ", "cause")
>>> empty.keywords, empty.message
([], 'the sentence is empty')
"""

from __future__ import annotations

import heapq
import math
import re
import unicodedata
import weakref
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Literal

import networkx as nx

from causal_mining.pair import Direction, check_direction
from cause_effect_graph.errors import GraphError
from cause_effect_graph.lemmas import default_lemmatizer, is_stop_word
from cause_effect_graph.strength import ALPHA, LAMBDA, causal_strength, pmi
from cause_effect_graph.word_forms import inflections, variants
from dpc_errors import check_int

__all__ = ["HUB_SHARE", "MIN_FREQ", "RANKS", "CandidateOptions", "Candidates", "candidates", "constraint_sets",
           "looks_english", "neighbours", "unknown_words"]

Rank = Literal["weight", "strength", "pmi", "mix"]
#: The names :func:`candidates` takes as ``rank``.
RANKS: tuple[str, ...] = ("weight", "strength", "pmi", "mix")
#: Default ``hub_share``: this share of the graph's lemmas, the most connected in the asked
#: direction (most effects when asking for causes, most causes when asking for effects), are hubs
#: and never keywords.
HUB_SHARE = 0.001
#: Default ``min_freq`` (``"pmi"`` and ``"mix"``): a keyword has to occur on its side in at least
#: this many pairs, an everyday pair counting as its weight (:mod:`cause_effect_graph.everyday`).
MIN_FREQ = 10


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
    """The lemma's causes (``"cause"``: predecessors) or effects (``"effect"``: successors).
    ``direction`` is not checked again here: :func:`candidates` checked it once per query."""
    if direction == "cause":
        return G.pred[lemma] if lemma in G else {}
    return G.succ[lemma] if lemma in G else {}


@dataclass(frozen=True)
class CandidateOptions:
    """How :func:`candidates` scores and filters the neighbours, beside its ``n`` and ``rank``.

    Attributes
    ----------
    alpha, lam
        Causal strength's α and λ (``rank="strength"``).
    hub_share
        The share of the graph's lemmas, most connected in the asked direction first, that are
        never keywords (0: none).
    min_freq
        ``"pmi"`` and ``"mix"``: leave out lemmas in fewer pairs than this on their side
        (``cause_freq`` for causes, ``effect_freq`` for effects; graphs without node frequencies,
        read from an edge list, are not filtered).
    diversify
        Leave out a lemma that shares an inflected form with a better one or with an input
        lemma (*crying* for "babies cry").

    Raises
    ------
    GraphError
        For a bad ``hub_share`` or ``min_freq`` (``alpha`` and ``lam`` are checked where the
        strength rank reads them).
    """

    alpha: float = ALPHA
    lam: float = LAMBDA
    hub_share: float = HUB_SHARE
    min_freq: int = MIN_FREQ
    diversify: bool = True

    def __post_init__(self) -> None:
        if not 0 <= self.hub_share < 1:
            raise GraphError(f"`hub_share` (={self.hub_share}) has to be in [0, 1)")
        check_int("min_freq", self.min_freq, 0, error=GraphError)


def candidates(
    G: nx.DiGraph,
    sentence: str,
    direction: Direction = "cause",
    n: int = 10,
    rank: Rank = "weight",
    lemmatizer: Callable[[str], list[str]] | None = None,
    options: CandidateOptions = CandidateOptions(),
) -> Candidates:
    """The top-``n`` lemmas that cause (or are caused by) ``sentence``.

    In steps: check the arguments (:func:`_check_query`), lemmatise the sentence unless it is
    unusable (:func:`_unusable`), add up each neighbour's scores over the input's lemmas
    (:func:`_neighbour_scores`), keep the best that pass the filters (:func:`_keep_best`), and
    say which lemmas the graph did not know (:func:`_coverage`).

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
        One of :data:`RANKS`, summed over the input's lemmas: ``"weight"`` (edge counts),
        ``"strength"`` (causal strength), ``"pmi"`` (positive PMI) or ``"mix"`` (the keyword's
        share of the input lemma's edge counts × positive PMI); see the module's description.
    options
        Causal strength's parameters and the filters (:class:`CandidateOptions`).

    Raises
    ------
    GraphError
        For a bad ``direction``, ``n``, ``rank``, or strength's ``alpha`` or ``lam`` (bad
        *sentences* give an empty result).

    Examples
    --------
    >>> G = nx.DiGraph([("tire", "cry", {"weight": 5}), ("tired", "cry", {"weight": 4}),
    ...                 ("hungry", "cry", {"weight": 3}), ("crying", "cry", {"weight": 2})])
    >>> lemmas = lambda s: ["cry"]
    >>> candidates(G, "babies cry", "cause", lemmatizer=lemmas).keywords
    ['tire', 'hungry']
    >>> candidates(G, "babies cry", "cause", lemmatizer=lemmas,
    ...            options=CandidateOptions(diversify=False)).keywords
    ['tire', 'tired', 'hungry', 'crying']
    """
    _check_query(direction, n, rank)
    why = _unusable(sentence)
    if why:
        return Candidates([], message=why)
    lemmas = (lemmatizer or default_lemmatizer())(sentence)
    if not lemmas:
        return Candidates([], message=f"{sentence[:40]!r} has no content word (noun, verb, "
                                      "adjective or adverb that is not a stop word)")
    if rank == "strength":
        causal_strength(G, "", "", options.alpha, options.lam)  # checks alpha and lam
    scores, known = _neighbour_scores(G, lemmas, direction, rank, options)
    items = _keep_best(G, scores, lemmas, direction, n, rank, options)
    return Candidates(items, lemmas, known, _coverage(lemmas, known, direction))


def _check_query(direction: str, n: int, rank: str) -> None:
    """:class:`GraphError` for a bad direction, ``n`` or rank."""
    check_direction(direction, GraphError)
    check_int("n", n, 1, error=GraphError)
    if rank not in RANKS:
        raise GraphError(f"`rank` (={rank!r}) has to be one of {', '.join(RANKS)}")


def _unusable(sentence: str) -> str | None:
    """Why the sentence gives no keywords before it is lemmatised (empty, or not English), or
    ``None``."""
    if not sentence.strip():
        return "the sentence is empty"
    if not looks_english(sentence):
        unknown = unknown_words(sentence)
        return (f"{sentence[:40]!r} does not look like English text "
                f"(unknown words: {', '.join(unknown[:5])})")
    return None


def _neighbour_scores(G: nx.DiGraph, lemmas: list[str], direction: Direction, rank: str,
                      options: CandidateOptions) -> tuple[dict[str, float], list[str]]:
    """Each neighbour's score (:func:`_score`) summed over the input's lemmas, the input's own
    lemmas left out; and the input lemmas that have a neighbour (``known``)."""
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
            score = float(data.get("weight", 1))
            if rank != "weight":
                cause, effect = (other, lemma) if direction == "cause" else (lemma, other)
                score = _score(G, rank, cause, effect, direction, score, options.alpha,
                               options.lam)
            scores[other] = scores.get(other, 0.0) + score
    return scores, known


def _keep_best(G: nx.DiGraph, scores: dict[str, float], lemmas: list[str], direction: str,
               n: int, rank: str, options: CandidateOptions) -> list[tuple[str, float]]:
    """The ``n`` best ``(lemma, score)`` that pass the filters (a positive score, no stop word,
    no hub, ``min_freq`` for ``"pmi"`` and ``"mix"``, ``diversify``), best first."""
    side = "cause" if direction == "cause" else "effect"
    hub_degree = _hub_degree(G, direction, options.hub_share)
    degree = G.succ if direction == "cause" else G.pred
    floor = options.min_freq if rank in ("pmi", "mix") else 0
    items: list[tuple[str, float]] = []
    taken: set[str] = set().union(*map(_forms, lemmas)) if options.diversify else set()
    room = 2 * n + len(set(lemmas)) + 20  # for the filters
    for lemma, score in _best_first(scores, room):
        if len(items) == n:
            break
        if score <= 0 or is_stop_word(lemma) or len(degree[lemma]) > hub_degree:
            continue
        if floor and 0 < G.nodes[lemma].get(f"{side}_freq", 0) < floor:
            continue
        if options.diversify:
            forms = _forms(lemma)
            if forms & taken:
                continue
            taken |= forms
        items.append((lemma, score))
    return items


def _coverage(lemmas: list[str], known: list[str], direction: str) -> str | None:
    """The result's message: which input lemmas have no neighbour in the graph, or ``None``."""
    if not known:
        return (f"no {direction} of {', '.join(lemmas)} is in the graph "
                "(unknown words, or not English)")
    unknown = [lemma for lemma in lemmas if lemma not in known]
    if unknown:
        return f"no {direction} known for {', '.join(unknown)}"
    return None


def _score(G: nx.DiGraph, rank: str, cause: str, effect: str, direction: str, weight: float,
           alpha: float, lam: float) -> float:
    """One edge's score under a rank other than ``"weight"`` (summed over the input's lemmas by
    the caller); the input lemma is ``effect`` when asking for causes, ``cause`` when asking for
    effects."""
    if rank == "strength":
        return causal_strength(G, cause, effect, alpha, lam)
    positive = max(pmi(G, cause, effect) or 0.0, 0.0)
    if rank == "pmi":
        return positive
    given = (G.nodes[effect].get("effect_weight") if direction == "cause"
             else G.nodes[cause].get("cause_weight")) or weight  # f(l), as strength reads it
    return weight / given * positive


def _best_first(scores: dict[str, float], k: int) -> Iterable[tuple[str, float]]:
    """``scores`` by score, best first (ties by lemma): the first ``k`` without a full sort."""
    def key(kv: tuple[str, float]) -> tuple[float, str]:
        return -kv[1], kv[0]

    head = heapq.nsmallest(k, scores.items(), key=key)
    yield from head
    if len(head) < len(scores):
        yield from sorted(scores.items(), key=key)[len(head):]


_HUB_DEGREES: weakref.WeakKeyDictionary[
    nx.DiGraph, dict[tuple[str, float], tuple[tuple[object, ...], float]]
] = weakref.WeakKeyDictionary()


def _hub_degree(G: nx.DiGraph, direction: str, share: float) -> float:
    """The out-degree (``"cause"``) or in-degree (``"effect"``) a hub has to exceed: that of the
    lemma just after the ``floor(share * len(G))`` most connected ones (so lemmas tied at the
    border are not hubs); infinite when there are none.

    Cached per graph object, direction and share while the graph's size and ``total`` stay the
    same.
    """
    hubs = math.floor(share * len(G))
    if hubs < 1:
        return math.inf
    stamp = (len(G), G.graph.get("total"))
    cache = _HUB_DEGREES.setdefault(G, {})
    cached = cache.get((direction, share))
    if cached is not None and cached[0] == stamp:
        return cached[1]
    adjacency = G._succ if direction == "cause" else G._pred  # plain dicts: no view per node
    degrees = sorted(map(len, adjacency.values()), reverse=True)
    threshold = float(degrees[hubs]) if hubs < len(degrees) else math.inf
    cache[(direction, share)] = (stamp, threshold)
    return threshold


@lru_cache(maxsize=65536)
def _forms(lemma: str) -> frozenset[str]:
    """The lemma's inflected forms (lemminflect's dictionary; itself if unknown)."""
    return frozenset(inflections(lemma, oov=False))


def constraint_sets(result: Candidates | list[str], capitalized: bool = False) -> list[list[str]]:
    """One disjunctive constraint set per keyword: its surface forms (for ``dpc_decode``).

    >>> constraint_sets(["hungry", "love"])
    [['hungrier', 'hungriest', 'hungry'], ['love', 'loved', 'loves', 'loving']]
    """
    keywords = result.keywords if isinstance(result, Candidates) else result
    return [variants(k, capitalized=capitalized) for k in keywords]

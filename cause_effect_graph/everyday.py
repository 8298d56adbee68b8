"""Everyday causal knowledge as graph edges: e-CARE and ConceptNet pairs beside the mined bank.

The mined CausalBank comes from 19th-century novels; COPA-style inputs ("the car broke down")
are modern and everyday. Two small hand-made resources hold that kind of knowledge as
(cause, effect) pairs, and this module turns them into the same counts the build makes of mined
pairs:

``ecare``
    e-CARE (Du et al. 2022, MIT): ``explanation_generation_*.jsonl`` rows
    ``{"cause", "effect", ...}``, or ``causal_reasoning_*.jsonl`` rows whose correct hypothesis
    and premise form the pair by ``"ask-for"``. The training split's two files hold the same
    13,905 distinct pairs; a pair repeated within a source counts once, so giving both files
    (or their folder) changes nothing.
``conceptnet``
    ConceptNet 5.7 ``Causes`` edges (CC BY-SA 4.0) grouped by cause, one cause a line:
    ``cause,["effect", "effect", ...]`` (the list is JSON; ``_`` stands for a space).

Each pair is lemmatised exactly as a mined pair is (:class:`~cause_effect_graph.lemmas.Lemmatizer`,
the build's model and content-word rules), and every (cause lemma, effect lemma) combination
counts once (:func:`~cause_effect_graph.counts.count_lemma_pairs`). A source of weight ``w``
counts each of its pairs ``w`` times (:func:`~cause_effect_graph.counts.merge_counts`): its
edge counts, node frequencies, node weights and the graph's total grow together, so causal
strength and PMI stay functions of one set of counts.

**Why the default weight is 5** (:data:`DEFAULT_WEIGHTS`). An everyday pair is one cause and
its effect, written by a person in a short sentence or phrase: 11.7 (cause lemma, effect lemma)
combinations a pair in e-CARE and 2.8 in ConceptNet, against 21 in a pair mined from Gutenberg,
whose long clauses pair every content word with every other, and of which about 80% are truly
causal (``benchmarks/mining/RESULTS.md``). If a pair states one causal link between lemmas, a
combination is that link with probability 1/11.7 (e-CARE), 1/2.8 (ConceptNet) and 0.8/21
(mined): 2.2 and 9.4 times the mined rate, 4.6 as a geometric mean, so 5. At 5, one everyday
attestation counts as much as a mined edge at the 90th percentile of the Gutenberg graph's
edge counts (2 / 3 / 5 / 15 at the 50th / 75th / 90th / 99th), it survives any pruning up to
``min_count`` 5, and the everyday sources hold 30% of the bundled graph's total count, so the
mined bank still decides where it has much evidence (*rain* → *wet*).
``--everyday-weight N`` or ``NAME=N`` changes it.

COPA is never an everyday source: its development set is the project's evaluation set (none of
its 500 gold pairs is an e-CARE pair; one sentence, "The bomb exploded.", occurs in both).

Examples
--------
>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> _ = (folder / "cn.txt").write_text('rain,["wet_ground", "flood"]\\n', encoding="utf-8")
>>> source = EverydaySource("conceptnet", str(folder / "cn.txt"), weight=3)
>>> source.pairs()
[('rain', 'wet ground'), ('rain', 'flood')]
>>> counts = everyday_counts([source], lemmatizer=_Split())
>>> sorted(zip(counts.src.tolist(), counts.dst.tolist(), counts.weight.tolist()))
[(0, 1, 3), (0, 2, 3), (0, 3, 3)]
>>> counts.vocab, counts.pairs
(['rain', 'wet', 'ground', 'flood'], 2)
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import networkx as nx
import numpy as np

from causal_mining import curated_pairs
from causal_mining.errors import BankFormatError
from cause_effect_graph import lemmas as lemma_module
from cause_effect_graph.counts import EdgeCounts, count_lemma_pairs, merge_counts
from cause_effect_graph.errors import GraphError
from cause_effect_graph.lemmas import SPACY_MODEL, Lemmatizer
from dpc_errors import check_int
from dpc_files import atomic_open

__all__ = [
    "DEFAULT_WEIGHTS",
    "READERS",
    "EverydaySource",
    "add_counts",
    "add_everyday",
    "describe_sources",
    "everyday_counts",
    "everyday_parts",
    "lemma_pairs",
    "parse_sources",
    "read_conceptnet",
    "read_ecare",
]

#: Weight of one everyday pair in units of one mined pair (see the module docstring).
DEFAULT_WEIGHTS: dict[str, int] = {"ecare": 5, "conceptnet": 5}


class TextLemmatizer(Protocol):
    """What :func:`lemma_pairs` needs: content lemmas of many texts, in order."""

    def lemmas(self, texts: Sequence[str]) -> list[list[str]]: ...


class _Split:
    """A stand-in lemmatizer for examples: lower-cased words (no spaCy)."""

    def lemmas(self, texts: Sequence[str]) -> list[list[str]]:
        return [t.lower().split() for t in texts]


# ---------------------------------------------------------------- readers


def _where(path: Path, line: int) -> str:
    return f"{os.fspath(path)}:{line}"


def read_ecare(path: str | Path) -> Iterator[tuple[str, str]]:
    """``(cause, effect)`` of every row of an e-CARE JSON-lines file (either task's format):
    :func:`causal_mining.curated_pairs.read_ecare`, with its errors as :class:`GraphError`.

    Raises
    ------
    GraphError
        Naming the file and line of a row that is not JSON or not an e-CARE row.

    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "e.jsonl"
    >>> _ = f.write_text('{"cause": "rain"}\\n')
    >>> list(read_ecare(f))
    Traceback (most recent call last):
    ...
    cause_effect_graph.errors.GraphError: ...e.jsonl:1: not an e-CARE row (... it has cause)
    """
    try:
        yield from curated_pairs.read_ecare(path)
    except BankFormatError as err:
        raise GraphError(str(err)) from None


def read_conceptnet(path: str | Path) -> Iterator[tuple[str, str]]:
    """``(cause, effect)`` of every ``cause,["effect", ...]`` line, ``_`` read as a space.

    Raises
    ------
    GraphError
        Naming the file and line of a line of another shape.

    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "c.txt"
    >>> _ = f.write_text('eat_too_much,["stomach_ache", "gain_weight"]\\n')
    >>> list(read_conceptnet(f))
    [('eat too much', 'stomach ache'), ('eat too much', 'gain weight')]
    >>> _ = f.write_text('eat_too_much stomach_ache\\n')
    >>> list(read_conceptnet(f))
    Traceback (most recent call last):
    ...
    cause_effect_graph.errors.GraphError: ...c.txt:1: not a ConceptNet cause line ...
    """
    try:
        yield from curated_pairs.read_conceptnet(path)
    except BankFormatError as err:
        raise GraphError(str(err)) from None


#: name → (reader of one file, glob of the files to read in a folder).
READERS: dict[str, tuple[Callable[[Path], Iterator[tuple[str, str]]], str]] = {
    "ecare": (read_ecare, "*.jsonl"),
    "conceptnet": (read_conceptnet, "*.txt"),
}


# ---------------------------------------------------------------- sources


@dataclass(frozen=True)
class EverydaySource:
    """One everyday source: its kind (a key of :data:`READERS`), a file or folder, and how many
    mined pairs one of its pairs counts as (:data:`DEFAULT_WEIGHTS` holds the defaults).

    A folder stands for its files of the kind (``*.jsonl`` for e-CARE, ``*.txt`` except
    licence and read-me files for ConceptNet), read in name order.

    >>> EverydaySource("copa", "copa-dev.xml", 5)
    Traceback (most recent call last):
    ...
    cause_effect_graph.errors.GraphError: everyday source 'copa' is not one of ecare, conceptnet...
    """

    name: str
    path: str
    weight: int

    def __post_init__(self) -> None:
        if self.name not in READERS:
            extra = (" (COPA is the evaluation set and never goes into the graph)"
                     if "copa" in self.name.lower() else "")
            raise GraphError(f"everyday source {self.name!r} is not one of "
                             f"{', '.join(READERS)}{extra}")
        check_int(f"the weight of everyday source {self.name!r}", self.weight, 1,
                  error=GraphError, quote=False)

    def files(self) -> list[Path]:
        """The files this source reads.

        Raises
        ------
        GraphError
            If the path does not exist or a folder holds no file of the kind.
        """
        path = Path(self.path)
        if path.is_file():
            return [path]
        if not path.is_dir():
            raise GraphError(f"everyday source {self.name}={self.path!r} does not exist")
        pattern = READERS[self.name][1]
        found = [p for p in sorted(path.glob(pattern)) if p.is_file()
                 and not p.name.upper().startswith(("LICENSE", "README"))]
        if not found:
            raise GraphError(f"everyday source {self.name}={self.path!r} holds no {pattern} file")
        return found

    def pairs(self) -> list[tuple[str, str]]:
        """Its distinct ``(cause, effect)`` texts, in order of first appearance (empty sides
        dropped)."""
        reader = READERS[self.name][0]
        seen: dict[tuple[str, str], None] = {}
        for path in self.files():
            for cause, effect in reader(path):
                if cause and effect:
                    seen.setdefault((cause, effect), None)
        return list(seen)


def parse_sources(specs: Sequence[str], weights: Sequence[str] = ()) -> tuple[EverydaySource, ...]:
    """Sources from ``NAME=PATH`` options, with ``N`` (every source) or ``NAME=N`` weights.

    >>> [(s.name, s.path, s.weight) for s in parse_sources(["ecare=e/", "conceptnet=c.txt"],
    ...                                                    ["2", "conceptnet=1"])]
    [('ecare', 'e/', 2), ('conceptnet', 'c.txt', 1)]
    >>> parse_sources(["ecare"])
    Traceback (most recent call last):
    ...
    cause_effect_graph.errors.GraphError: `--everyday` (='ecare') has to be NAME=PATH ...
    """
    every: int | None = None  # None: the source's default weight
    named: dict[str, int] = {}
    for text in weights:
        name, sep, value = text.rpartition("=")
        try:
            number = int(value)
        except ValueError:
            number = -1
        if number < 1 or (sep and name not in READERS):
            raise GraphError(f"`--everyday-weight` (={text!r}) has to be N or NAME=N with N a "
                             f"positive integer and NAME one of {', '.join(READERS)}")
        if sep:
            named[name] = number
        else:
            every = number
    sources = []
    for text in specs:
        name, sep, path = text.partition("=")
        if not sep or not path:
            raise GraphError(f"`--everyday` (={text!r}) has to be NAME=PATH with NAME one of "
                             f"{', '.join(READERS)}")
        default = every if every is not None else DEFAULT_WEIGHTS.get(name, 1)
        sources.append(EverydaySource(name, path, named.get(name, default)))
    unused = sorted(set(named) - {s.name for s in sources})
    if unused:
        raise GraphError(f"`--everyday-weight` (={unused[0]}=...) names a source no `--everyday` "
                         "gives")
    return tuple(sources)


def describe_sources(sources: Sequence[EverydaySource], pairs: Sequence[int]) -> str:
    """``"ecare:13905x5, conceptnet:16567x5"`` (distinct pairs × weight per source): what
    ``G.graph["everyday"]`` records.

    >>> describe_sources([EverydaySource("ecare", "x", 5)], [10])
    'ecare:10x5'
    """
    return ", ".join(f"{s.name}:{n}x{s.weight}" for s, n in zip(sources, pairs))


# ---------------------------------------------------------------- lemmas and counts


def _cache_name(source: EverydaySource, model: str) -> str:
    digest = hashlib.blake2b(digest_size=8)
    for path in source.files():
        digest.update(os.fspath(path.name).encode() + b"\0" + path.read_bytes() + b"\0")
    digest.update(model.encode() + b"\0" + Path(lemma_module.__file__).read_bytes())
    return f"{source.name}-{digest.hexdigest()}.tsv"


def lemma_pairs(source: EverydaySource, lemmatizer: TextLemmatizer | None = None,
                cache: str | Path | None = None, model: str = SPACY_MODEL,
                batch_size: int = 1000) -> list[tuple[list[str], list[str]]]:
    """``(cause lemmas, effect lemmas)`` of the source's distinct pairs.

    Lemmatised as mined pairs are (``Lemmatizer(model)`` unless ``lemmatizer`` is given), each
    distinct text once. With ``cache`` (and no ``lemmatizer`` of the caller's, whose output the
    digest could not name), the lemmas are kept in ``CACHE/NAME-DIGEST.tsv``, the digest
    covering the files' bytes, the model and the lemmatisation code, so a rebuild reads them
    back instead of running spaCy again.
    """
    target = None
    if cache is not None and lemmatizer is None:
        target = Path(cache) / _cache_name(source, model)
        if target.is_file():
            with open(target, encoding="utf-8") as handle:
                return [(c.split(), e.split()) for c, _, e in
                        (line.rstrip("\n").partition("\t") for line in handle)]
    pairs = source.pairs()
    texts = list(dict.fromkeys(t for pair in pairs for t in pair))
    lemmatized = (lemmatizer or Lemmatizer(model, batch_size)).lemmas(texts)
    of = dict(zip(texts, lemmatized))
    result = [(of[c], of[e]) for c, e in pairs]
    if target is not None:
        with atomic_open(target) as handle:
            for c_lemmas, e_lemmas in result:
                handle.write(f"{' '.join(c_lemmas)}\t{' '.join(e_lemmas)}\n")
    return result


def everyday_parts(sources: Sequence[EverydaySource], lemmatizer: TextLemmatizer | None = None,
                   cache: str | Path | None = None, model: str = SPACY_MODEL,
                   batch_size: int = 1000) -> list[tuple[EdgeCounts, int]]:
    """``(counts, weight)`` of every source, unweighted counts (for
    :func:`~cause_effect_graph.counts.merge_counts`)."""
    return [(count_lemma_pairs(lemma_pairs(s, lemmatizer, cache, model, batch_size)), s.weight)
            for s in sources]


def everyday_counts(sources: Sequence[EverydaySource], lemmatizer: TextLemmatizer | None = None,
                    cache: str | Path | None = None, model: str = SPACY_MODEL,
                    batch_size: int = 1000) -> EdgeCounts:
    """The weighted counts of all ``sources`` (``pairs``: distinct pairs read, not weighted)."""
    return merge_counts(everyday_parts(sources, lemmatizer, cache, model, batch_size))


def add_everyday(G: nx.DiGraph, sources: Sequence[EverydaySource], min_count: int | None = None,
                 lemmatizer: TextLemmatizer | None = None, cache: str | Path | None = None,
                 model: str = SPACY_MODEL, batch_size: int = 1000) -> nx.DiGraph:
    """``dpc graph add-pairs``: :func:`add_counts` of the sources' weighted counts, with
    ``G.graph["everyday"]`` (:func:`describe_sources`) and ``G.graph["everyday_pairs"]`` set.

    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "cn.txt"
    >>> _ = f.write_text('rain,["wet"]\\n', encoding="utf-8")
    >>> G = nx.DiGraph([("rain", "wet", {"weight": 2})])
    >>> G.graph.update(total=2, pairs=2, min_count=2)
    >>> H = add_everyday(G, [EverydaySource("conceptnet", str(f), 5)], lemmatizer=_Split())
    >>> H["rain"]["wet"]["weight"], H.graph["everyday"], H.graph["pairs"], H.graph["total"]
    (7, 'conceptnet:1x5', 3, 7)
    """
    parts = everyday_parts(sources, lemmatizer, cache, model, batch_size)
    H = add_counts(G, merge_counts(parts), min_count)
    H.graph["everyday"] = describe_sources(sources, [c.pairs for c, _ in parts])
    H.graph["everyday_pairs"] = sum(c.pairs for c, _ in parts)
    H.graph["everyday_route"] = (f"add-pairs onto a graph pruned at min count "
                                 f"{G.graph.get('min_count') or 1}")
    return H


_NODE_ATTRS = ("cause_freq", "effect_freq", "cause_weight", "effect_weight")


def add_counts(G: nx.DiGraph, counts: EdgeCounts, min_count: int | None = None) -> nx.DiGraph:
    """A copy of ``G`` with ``counts`` added to its edge and node counts (``G`` is unchanged).

    For a graph whose bank is not at hand: edge counts are summed, node frequencies and
    weights (the marginals causal strength uses) and ``G.graph["total"]`` grow by the new
    counts, then every edge whose sum is below ``min_count`` (default: ``G.graph["min_count"]``,
    else 1) is left out, and so is every lemma left without an edge. The result equals a full
    rebuild with the same ``min_count`` except on the edges ``G``'s own pruning had dropped:
    their mined count (below ``G.graph["min_count"]``) is missing from the sum.

    >>> G = nx.DiGraph([("rain", "wet", {"weight": 4}), ("rain", "cold", {"weight": 2})])
    >>> G.nodes["rain"].update(cause_freq=4, effect_freq=0, cause_weight=7, effect_weight=0)
    >>> G.graph.update(total=10, pairs=4, min_count=2)
    >>> H = add_counts(G, merge_counts([(count_lemma_pairs([(["rain"], ["wet", "mud"])]), 3)]),
    ...                min_count=3)
    >>> sorted(H.edges(data="weight")), H.graph["total"], H.nodes["rain"]["cause_weight"]
    ([('rain', 'mud', 3), ('rain', 'wet', 7)], 16, 13)
    >>> G["rain"]["wet"]["weight"], H.graph["min_count"]
    (4, 3)
    """
    if min_count is None:
        min_count = int(G.graph.get("min_count") or 1)
    check_int("min_count", min_count, 1, error=GraphError)
    summed = {(u, v): int(w) for u, v, w in G.edges(data="weight", default=1)}
    vocab = counts.vocab
    for s, d, w in zip(counts.src.tolist(), counts.dst.tolist(), counts.weight.tolist()):
        key = (vocab[s], vocab[d])
        summed[key] = summed.get(key, 0) + w
    H = nx.DiGraph()
    H.graph.update(G.graph)
    H.add_weighted_edges_from((u, v, w) for (u, v), w in summed.items() if w >= min_count)
    cause_weight = np.bincount(counts.src, weights=counts.weight,
                               minlength=len(vocab)).astype(np.int64)
    effect_weight = np.bincount(counts.dst, weights=counts.weight,
                                minlength=len(vocab)).astype(np.int64)
    added = {"cause_freq": counts.cause_freq, "effect_freq": counts.effect_freq,
             "cause_weight": cause_weight, "effect_weight": effect_weight}
    position = {lemma: i for i, lemma in enumerate(vocab)}
    for lemma, node in H.nodes(data=True):
        old = G.nodes[lemma] if lemma in G else {}
        i = position.get(lemma)
        for attr in _NODE_ATTRS:
            node[attr] = int(old.get(attr, 0)) + (int(added[attr][i]) if i is not None else 0)
    H.graph["total"] = int(G.graph.get("total", 0)) + counts.total
    H.graph["pairs"] = int(G.graph.get("pairs", 0)) + counts.pairs
    H.graph["min_count"] = max(min_count, int(G.graph.get("min_count") or 1))
    return H

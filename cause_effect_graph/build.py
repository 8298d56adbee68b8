"""Build a Cause Effect Graph from CausalBank shards, resumably, locally or on Spark.

The build has two stages:

1. **Lemmatise** (the expensive part). The bank is split into *units* (one shard file each: our
   ``causalbank-*.tsv`` shards, or the files of the official release's ``because_mode/`` and
   ``therefore_mode/``) and every unit into chunks of ``chunk_pairs`` pairs. Each chunk's content
   lemmas (:mod:`cause_effect_graph.lemmas`) are written atomically to
   ``WORK/lemmas/UUUUU-CCCCC.tsv`` (``cause lemmas<TAB>effect lemmas``), so an interrupted build
   resumes at the first missing chunk. ``WORK/manifest.json`` records the inputs and options; a
   build into a folder made with other ones is refused. With ``engine="spark"`` every unit is one
   Spark task (like :mod:`causal_mining.spark_runner`); the files written are the same.
2. **Count**. For every pair, every (cause lemma, effect lemma) combination counts once (as in
   CausalNet and Li et al. 2020), lemmas are counted per pair as node frequencies, and the
   marginals of the edge counts are kept for causal strength. Edges seen fewer than
   ``min_count`` times are then pruned (the paper removes frequencies <= 5: ``min_count=6``);
   lemmas left without an edge are dropped. Counting streams the lemma files into integer
   arrays (:func:`cause_effect_graph.counts.count_lemma_pairs`), so memory grows with the
   number of distinct edges, not of pairs.

Examples
--------
>>> from cause_effect_graph.counts import count_lemma_pairs
>>> counts = count_lemma_pairs([(["rain"], ["wet", "cold"]), (["rain", "wind"], ["wet"])])
>>> counts.pairs, counts.total
(2, 4)
>>> G = counts_to_graph(counts, min_count=2)
>>> sorted(G.edges(data="weight"))
[('rain', 'wet', 2)]
>>> G.nodes["rain"]["cause_freq"], G.nodes["rain"]["cause_weight"], G.graph["edges_before"]
(2, 3, 3)
"""

from __future__ import annotations

import dataclasses
import io
import itertools
import json
import os
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import networkx as nx
import numpy as np

from causal_mining.readers import open_decompressed
from causal_mining.release import MODES
from causal_mining.shards import bank_files, read_pairs
from causal_mining.spark_runner import spark_python_env
from cause_effect_graph import lemmas as lemma_module
from cause_effect_graph.counts import EdgeCounts, count_lemma_pairs, merge_counts
from cause_effect_graph.errors import GraphError
from cause_effect_graph.everyday import EverydaySource, describe_sources, everyday_parts
from cause_effect_graph.lemmas import SPACY_MODEL, Lemmatizer
from cause_effect_graph.store import digraph_from_arrays
from dpc_errors import check_choice, check_int
from dpc_files import atomic_open, claim_output_folder, read_json, write_json

__all__ = [
    "BuildOptions",
    "BuildReport",
    "bank_units",
    "build_graph",
    "count_lemma_files",
    "counts_to_graph",
    "lemmatise_bank",
    "lemmatise_unit",
    "prune",
]

Engine = Literal["local", "spark"]


@dataclass(frozen=True)
class BuildOptions:
    """What a build is made of; one definition for the CLI and the Python API.

    Attributes
    ----------
    bank
        CausalBank locations: mining output folders, ``causalbank-*.tsv`` shards or folders of
        them, or official release folders (holding ``because_mode/``/``therefore_mode/``).
    work
        Folder for the resumable lemma files and the manifest.
    min_count
        Keep edges seen at least this often (paper: 6, i.e. drop frequencies <= 5).
    top_k
        If set, keep only the ``top_k`` heaviest out-edges and in-edges of every lemma (an edge
        survives if it is among the top of either end).
    chunk_pairs
        Pairs per lemma file (the unit of resumption).
    engine
        ``"local"`` or ``"spark"``.
    everyday
        Everyday pairs counted beside the bank, each source with its weight
        (:mod:`cause_effect_graph.everyday`); their lemmas are kept in ``WORK/everyday/``.
    """

    bank: tuple[str, ...]
    work: str
    min_count: int = 6
    top_k: int | None = None
    chunk_pairs: int = 10_000
    engine: Engine = "local"
    spark_master: str = "local[2]"
    batch_size: int = 1000
    model: str = SPACY_MODEL
    progress: bool = True
    everyday: tuple[EverydaySource, ...] = ()

    def __post_init__(self) -> None:
        if not self.bank:
            raise GraphError("no CausalBank given to build the graph from")
        check_int("min_count", self.min_count, 1, error=GraphError)
        if self.top_k is not None:
            check_int("top_k", self.top_k, 1, error=GraphError)
        check_int("chunk_pairs", self.chunk_pairs, 1, error=GraphError)
        check_choice("engine", self.engine, ("local", "spark"), error=GraphError)

    def identity(self) -> dict[str, Any]:
        """The options that decide the lemma files (a resumed build must match them)."""
        return {"chunk_pairs": self.chunk_pairs, "model": self.model}


# ---------------------------------------------------------------- units: which files, read how


def bank_units(paths: Sequence[str | Path]) -> list[tuple[str, str]]:
    """``(kind, file)`` for every file of the given banks, in a fixed order.

    ``kind`` is ``"bank"`` (our TSV shards), ``"EPC"`` (release ``because_mode``: effect, cause)
    or ``"CPE"`` (release ``therefore_mode``: cause, effect).

    Raises
    ------
    GraphError
        If a path does not exist or holds no CausalBank file.
    """
    units: list[tuple[str, str]] = []
    for raw in paths:
        path = Path(raw)
        if path.is_file():
            units.append(("bank", os.fspath(path)))
            continue
        if not path.is_dir():
            raise GraphError(f"CausalBank {os.fspath(path)!r} does not exist")
        found: list[tuple[str, str]] = []
        for mode, cls in MODES.items():
            if (path / mode).is_dir():
                found += [(cls, os.fspath(p)) for p in sorted((path / mode).rglob("*"))
                          if p.is_file() and not p.name.startswith(".")]
        shard_folder = path / "causalbank" if (path / "causalbank").is_dir() else path
        found += [("bank", os.fspath(p)) for p in bank_files(shard_folder)]
        if not found:
            raise GraphError(
                f"{os.fspath(path)!r} holds no causalbank-*.tsv shard and no "
                "because_mode/ or therefore_mode/ folder"
            )
        units += found
    return units


def _read_unit(kind: str, path: str) -> Iterator[tuple[str, str]]:
    """``(cause, effect)`` texts of one unit file."""
    if kind == "bank":
        for pair in read_pairs(Path(path)):
            yield pair.cause, pair.effect
        return

    buffered, _, raw = open_decompressed(Path(path))
    try:
        for line in io.TextIOWrapper(buffered, encoding="utf-8", errors="replace"):
            columns = line.rstrip("\r\n").split("\t")
            if len(columns) < 2 or not columns[0].strip() or not columns[1].strip():
                continue
            first, second = columns[0].strip(), columns[1].strip()
            yield (second, first) if kind == "EPC" else (first, second)
    finally:
        raw.close()


# ---------------------------------------------------------------- stage 1: lemmatise


def _chunk_path(work: Path, unit: int, chunk: int) -> Path:
    return work / "lemmas" / f"{unit:05d}-{chunk:05d}.tsv"


def lemmatise_unit(
    index: int,
    kind: str,
    path: str,
    work: str,
    chunk_pairs: int,
    model: str = SPACY_MODEL,
    batch_size: int = 1000,
    on_chunk: Callable[[int], None] | None = None,
) -> int:
    """Write the lemma files of one unit, skipping chunks already written; return its pairs.

    ``on_chunk(n)`` is called after each chunk with its number of pairs (for progress bars).
    """
    lemmatizer = Lemmatizer(model, batch_size)
    total = 0
    pairs = _read_unit(kind, path)
    for chunk in itertools.count():
        batch = list(itertools.islice(pairs, chunk_pairs))
        if not batch:
            break
        total += len(batch)
        target = _chunk_path(Path(work), index, chunk)
        if not target.exists():
            lemmas = lemmatizer.lemmas([c for c, _ in batch] + [e for _, e in batch])
            with atomic_open(target) as handle:
                for c, e in zip(lemmas[: len(batch)], lemmas[len(batch):]):
                    handle.write(f"{' '.join(c)}\t{' '.join(e)}\n")
        if on_chunk is not None:
            on_chunk(len(batch))
    return total


def _check_manifest(options: BuildOptions, units: list[tuple[str, str]]) -> bool:
    """Write ``WORK/manifest.json`` or check it; return whether the build resumes."""
    work = Path(options.work)

    manifest: dict[str, Any] = {
        "version": 1,
        "identity": options.identity()
        | {"lemmas_code": _fingerprint(Path(lemma_module.__file__))},
        "inputs": [
            {"kind": k, "path": p, "size": os.stat(p).st_size, "mtime_ns": os.stat(p).st_mtime_ns}
            for k, p in units
        ],
    }
    path = work / "manifest.json"
    if not path.exists():
        claim_output_folder(work, "dpc graph build", "--work")
        write_json(path, manifest)
        return False
    old = read_json(path)
    identity: dict[str, Any] = manifest["identity"]
    problems = [f"{key} {old.get('identity', {}).get(key)!r} != {value!r}"
                for key, value in identity.items()
                if old.get("identity", {}).get(key) != value]
    if old.get("inputs") != manifest["inputs"]:
        problems.append("the CausalBank files differ (names, sizes or modification times)")
    if problems:
        raise GraphError(
            f"{os.fspath(work)!r} holds a build with other inputs or options: "
            f"{'; '.join(problems)}; use another work folder or delete it"
        )
    return True


def _fingerprint(path: Path) -> str:
    import hashlib

    return hashlib.blake2b(path.read_bytes(), digest_size=8).hexdigest()


def _spark_lemmatise(units: list[tuple[str, str]], options: BuildOptions, bar: Any) -> int:
    os.environ.update(spark_python_env())
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    session = active or (
        SparkSession.builder.master(options.spark_master)
        .appName("dpc-graph")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    try:
        work = os.fspath(Path(options.work).resolve())
        opts = options
        tasks = [(i, kind, path) for i, (kind, path) in enumerate(units)]
        rdd = session.sparkContext.parallelize(tasks, numSlices=max(1, len(tasks)))
        done = rdd.map(lambda t: lemmatise_unit(t[0], t[1], t[2], work, opts.chunk_pairs,
                                                opts.model, opts.batch_size))
        total = 0
        for n in done.toLocalIterator():
            total += n
            bar.update(n)
        return total
    finally:
        if active is None:
            session.stop()


def lemmatise_bank(options: BuildOptions) -> tuple[int, bool]:
    """Stage 1: write every lemma file not written yet; return (pairs, resumed)."""
    from tqdm.auto import tqdm

    units = bank_units(options.bank)
    resumed = _check_manifest(options, units)
    bar = tqdm(unit=" pairs", desc="lemmatising", disable=not options.progress)
    try:
        if options.engine == "spark":
            return _spark_lemmatise(units, options, bar), resumed
        total = 0
        for index, (kind, path) in enumerate(units):
            total += lemmatise_unit(index, kind, path, options.work, options.chunk_pairs,
                                    options.model, options.batch_size, on_chunk=bar.update)
        return total, resumed
    finally:
        bar.close()


# ---------------------------------------------------------------- stage 2: count


def _lemma_file_pairs(files: Iterable[Path]) -> Iterator[tuple[list[str], list[str]]]:
    for path in files:
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                cause, _, effect = line.rstrip("\n").partition("\t")
                yield cause.split(), effect.split()


def count_lemma_files(work: str | Path) -> EdgeCounts:
    """Stage 2: count the lemma files of a work folder."""
    files = sorted((Path(work) / "lemmas").glob("*.tsv"))
    return count_lemma_pairs(_lemma_file_pairs(files))


def counts_to_graph(counts: EdgeCounts, min_count: int = 6,
                    top_k: int | None = None) -> nx.DiGraph:
    """The pruned graph of ``counts``.

    Node attributes: ``cause_freq``, ``effect_freq`` (pairs), ``cause_weight``,
    ``effect_weight`` (sums of the lemma's out-/in-edge counts before pruning: CausalNet's
    f(i_c), f(j_e)). Edge attribute ``weight``. ``G.graph`` holds ``pairs``, ``total``
    (N, before pruning), ``nodes_before``, ``edges_before``, ``min_count`` and ``top_k``.
    """
    cause_weight = np.bincount(counts.src, weights=counts.weight,
                               minlength=len(counts.vocab)).astype(np.int64)
    effect_weight = np.bincount(counts.dst, weights=counts.weight,
                                minlength=len(counts.vocab)).astype(np.int64)
    keep = counts.weight >= min_count
    if top_k is not None:
        keep &= _top_k_mask(counts.src, counts.dst, counts.weight, top_k)
    src, dst, weight = counts.src[keep], counts.dst[keep], counts.weight[keep]
    used = np.unique(np.concatenate([src, dst]))
    graph = {
        "pairs": counts.pairs, "total": counts.total, "nodes_before": int(np.count_nonzero(
            (cause_weight > 0) | (effect_weight > 0))),
        "edges_before": len(counts.weight), "min_count": min_count, "top_k": top_k,
    }
    attrs = {"cause_freq": counts.cause_freq[used], "effect_freq": counts.effect_freq[used],
             "cause_weight": cause_weight[used], "effect_weight": effect_weight[used]}
    position = np.full(len(counts.vocab), -1, np.int64)
    position[used] = np.arange(len(used))
    vocab = [counts.vocab[i] for i in used.tolist()]
    G = digraph_from_arrays(vocab, attrs, position[src], position[dst], weight)
    G.graph.update(graph)
    return G


def _top_k_mask(src: np.ndarray, dst: np.ndarray, weight: np.ndarray, k: int) -> np.ndarray:
    """Edges among the ``k`` heaviest out-edges of their cause or in-edges of their effect."""
    keep = np.zeros(len(weight), bool)
    for group in (src, dst):
        order = np.lexsort((-weight, group))  # by node, heaviest first
        g = group[order]
        starts = np.r_[0, np.flatnonzero(g[1:] != g[:-1]) + 1]
        rank = np.arange(len(g)) - np.repeat(starts, np.diff(np.r_[starts, len(g)]))
        keep[order[rank < k]] = True
    return keep


def prune(G: nx.DiGraph, min_count: int = 6, top_k: int | None = None) -> nx.DiGraph:
    """A copy of ``G`` without edges seen fewer than ``min_count`` times (and, with ``top_k``,
    outside the ``top_k`` heaviest of both ends); lemmas left without edges are dropped.

    Node attributes and ``total`` are kept, so causal strength is unchanged on the edges left.

    >>> G = nx.DiGraph([("a", "b", {"weight": 3}), ("a", "c", {"weight": 1})])
    >>> sorted(prune(G, min_count=2).edges)
    [('a', 'b')]
    """
    edges = list(G.edges(data="weight", default=1))
    src = np.arange(len(edges))
    weight = np.asarray([w for _, _, w in edges], np.int64)
    keep = weight >= min_count
    if top_k is not None and edges:
        names = {n: i for i, n in enumerate(G)}
        s = np.asarray([names[u] for u, _, _ in edges], np.int64)
        d = np.asarray([names[v] for _, v, _ in edges], np.int64)
        keep &= _top_k_mask(s, d, weight, top_k)
    H = nx.DiGraph()
    H.graph.update(G.graph, min_count=max(min_count, G.graph.get("min_count", 1)),
                   top_k=top_k if top_k is not None else G.graph.get("top_k"))
    kept = [edges[i] for i in src[keep].tolist()]
    H.add_nodes_from((n, G.nodes[n]) for n in dict.fromkeys(x for u, v, _ in kept for x in (u, v)))
    H.add_weighted_edges_from(kept)
    return H


# ---------------------------------------------------------------- the whole build


@dataclass
class BuildReport:
    """What a build did and how long each stage took (seconds)."""

    pairs: int = 0
    resumed: bool = False
    nodes_before: int = 0
    edges_before: int = 0
    nodes: int = 0
    edges: int = 0
    lemmatise_s: float = 0.0
    count_s: float = 0.0
    graph_s: float = 0.0
    options: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def __str__(self) -> str:
        return json.dumps(self.to_dict(), indent=1)


def build_graph(options: BuildOptions) -> tuple[nx.DiGraph, BuildReport]:
    """Lemmatise (resumably), count and prune; return the graph and a report."""
    report = BuildReport(options=dataclasses.asdict(options))
    t0 = time.perf_counter()
    report.pairs, report.resumed = lemmatise_bank(options)
    t1 = time.perf_counter()
    counts = count_lemma_files(options.work)
    described = None
    if options.everyday:
        parts = everyday_parts(options.everyday, cache=Path(options.work) / "everyday",
                               model=options.model, batch_size=options.batch_size)
        counts = merge_counts([(counts, 1), *parts])
        described = (describe_sources(options.everyday, [c.pairs for c, _ in parts]),
                     sum(c.pairs for c, _ in parts))
    t2 = time.perf_counter()
    G = counts_to_graph(counts, options.min_count, options.top_k)
    G.graph["source"] = ", ".join(os.fspath(Path(b)) for b in options.bank)
    G.graph["spacy_model"] = options.model
    if described is not None:
        G.graph["everyday"], G.graph["everyday_pairs"] = described
    t3 = time.perf_counter()
    report.lemmatise_s, report.count_s, report.graph_s = t1 - t0, t2 - t1, t3 - t2
    report.nodes_before, report.edges_before = G.graph["nodes_before"], G.graph["edges_before"]
    report.nodes, report.edges = G.number_of_nodes(), G.number_of_edges()
    return G, report

"""On-disk formats of the Cause Effect Graph: ours (``.ceg``), edge-list TSV, official release.

``.ceg`` (format version 1) is compact, versioned and fast to load::

    b"DPC-CEG\\n"                      magic (8 bytes)
    uint32 little-endian              format version
    uint32 little-endian              header length H
    H bytes                           header: UTF-8 JSON (counts, section sizes, G.graph,
                                      compression, BLAKE2b digest of the compressed payload)
    payload                           zlib or xz: vocabulary (UTF-8, one lemma a line), then
                                      int64 node arrays (cause_freq, effect_freq, cause_weight,
                                      effect_weight), then int32 src, int32 dst and int64 weight
                                      of every edge (edges grouped by cause, heaviest first)

The header's fields (:data:`HEADER_FIELDS`) are checked before the payload is read: ``format``
is ``"dpc-cause-effect-graph"``; ``nodes`` (at most 2**31 - 1: edges name nodes by int32),
``edges``, ``vocab_bytes``, ``raw_bytes`` and ``payload_bytes`` are integers from 0 to 2**63 - 1
whose section sizes add up (``raw_bytes = vocab_bytes + 32 * nodes + 16 * edges``);
``compression`` is ``"xz"`` or ``"zlib"``; ``blake2b`` is 32 hex digits; ``graph`` is an object
of strings, numbers, booleans and nulls whose counts (:data:`GRAPH_COUNTS`) are integers. A file
that is truncated, altered (digest mismatch), of another format or of a newer version, or whose
header has a missing field or one of the wrong JSON type or range, raises
:class:`~cause_effect_graph.errors.GraphFormatError` /
:class:`~cause_effect_graph.errors.GraphVersionError` naming the file (and the field and its
value). The payload is decompressed to ``raw_bytes`` at most.

Counts are int64 in a ``.ceg`` file, so every format refuses a count above
:data:`MAX_COUNT` (2**63 - 1), or counts that add up to more, with a
:class:`~cause_effect_graph.errors.GraphFormatError` naming the value: a 40-digit count in a
release file is damage, not a count of sentences.

The **edge-list TSV** (:func:`write_edgelist`) is ``cause<TAB>effect<TAB>count`` with a header
row. The **official CEG release** (Li et al. 2020) has one edge per line,
``cause->effect<TAB>count`` (any further columns are ignored); :func:`read_release_graph` reads
it, plain or compressed, and derives node weights from the edges it holds.

Examples
--------
>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> G = nx.DiGraph([("rain", "wet", {"weight": 7}), ("rain", "flood", {"weight": 2})])
>>> G.graph["total"] = 9
>>> save_graph(G, folder / "g.ceg")
>>> H = load_graph(folder / "g.ceg")
>>> sorted(H.edges(data="weight")), H.graph["total"]
([('rain', 'flood', 2), ('rain', 'wet', 7)], 9)
>>> _ = (folder / "bad.ceg").write_bytes(b"hello")
>>> load_graph(folder / "bad.ceg")
Traceback (most recent call last):
...
cause_effect_graph.errors.GraphFormatError: '...bad.ceg' is not a Cause Effect Graph file (.ceg), ...
>>> data = (folder / "g.ceg").read_bytes()
>>> _ = (folder / "cut.ceg").write_bytes(data[:-10])
>>> load_graph(folder / "cut.ceg")
Traceback (most recent call last):
...
cause_effect_graph.errors.GraphFormatError: '...cut.ceg' is truncated or has trailing bytes: ...
"""

from __future__ import annotations

import hashlib
import io
import json
import lzma
import math
import os
import struct
import zlib
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

import networkx as nx
import numpy as np

from causal_mining.readers import open_decompressed
from cause_effect_graph.errors import GraphFormatError, GraphVersionError
from dpc_errors import DpcError, check_int
from dpc_files import atomic_open, atomic_write_bytes

__all__ = [
    "DEFAULT_GRAPH",
    "FORMAT_VERSION",
    "GRAPH_COUNTS",
    "HEADER_FIELDS",
    "MAGIC",
    "MAX_COUNT",
    "check_header",
    "default_graph",
    "graph_from_option",
    "graph_info",
    "load_graph",
    "read_edgelist",
    "read_release_graph",
    "save_graph",
    "write_edgelist",
    "write_release_graph",
]

MAGIC = b"DPC-CEG\n"
FORMAT_VERSION = 1
#: The bundled graph: the Gutenberg CausalBank with e-CARE and ConceptNet pairs added
#: (``benchmarks/graph/RESULTS.md`` has the commands that made it).
DEFAULT_GRAPH = Path(__file__).resolve().parent / "data" / "default.ceg"
_NODE_ARRAYS = ("cause_freq", "effect_freq", "cause_weight", "effect_weight")
Compression = Literal["zlib", "xz"]
FORMAT_NAME = "dpc-cause-effect-graph"
#: Every field of a ``.ceg`` header (all are required).
HEADER_FIELDS = ("format", "nodes", "edges", "vocab_bytes", "raw_bytes", "payload_bytes",
                 "compression", "blake2b", "graph")
#: The largest count (and sum of counts) a graph holds: counts are int64 in a ``.ceg`` file.
MAX_COUNT = 2**63 - 1
#: The largest number of nodes: edges name their ends by int32 index.
MAX_NODES = 2**31 - 1
#: ``G.graph`` values that are counts: integers from 0 to :data:`MAX_COUNT` (``None`` allowed
#: for those of :data:`_OPTIONAL_COUNTS`).
GRAPH_COUNTS = ("total", "pairs", "nodes_before", "edges_before", "everyday_pairs", "min_count",
                "top_k")
_OPTIONAL_COUNTS = ("min_count", "top_k")


def _graph_attrs(G: nx.DiGraph) -> dict[str, Any]:
    return {k: v for k, v in G.graph.items() if isinstance(v, (str, int, float, bool, type(None)))}


def save_graph(G: nx.DiGraph, path: str | Path, compression: Compression = "xz") -> None:
    """Write ``G`` to ``path`` in the ``.ceg`` format (atomically).

    Missing node attributes are written as 0, missing edge weights as 1; ``G.graph`` values that
    are strings, numbers, booleans or ``None`` are kept. Node attributes and weights that are not
    int64 integers, or a ``G.graph`` that :func:`load_graph` would refuse (a count that is not an
    integer, nan), raise :class:`GraphFormatError` naming the value; nothing is written.
    """
    if compression not in ("zlib", "xz"):
        raise GraphFormatError(f"`compression` (={compression!r}) has to be 'zlib' or 'xz'")
    nodes = list(G)
    for n in nodes:
        if not isinstance(n, str) or "\n" in n or not n:
            raise GraphFormatError(f"node {n!r} is not a non-empty one-line string")
    index = {n: i for i, n in enumerate(nodes)}
    vocab = "\n".join(nodes).encode("utf-8")
    node_arrays = [_int64_column([G.nodes[n].get(a, 0) for n in nodes], f"node attribute {a!r}")
                   for a in _NODE_ARRAYS]
    weights = _int64_column([w for _, _, w in G.edges(data="weight", default=1)], "edge weight")
    edges = sorted(((index[u], -int(w), index[v]) for (u, v), w in zip(G.edges, weights.tolist())))
    src = np.asarray([e[0] for e in edges], "<i4")
    dst = np.asarray([e[2] for e in edges], "<i4")
    weight = np.asarray([-e[1] for e in edges], "<i8")
    raw = b"".join([vocab, *(a.tobytes() for a in node_arrays), src.tobytes(), dst.tobytes(),
                    weight.tobytes()])
    payload = (lzma.compress(raw, preset=9) if compression == "xz"
               else zlib.compress(raw, 9))
    fields = {
        "format": FORMAT_NAME,
        "nodes": len(nodes),
        "edges": len(edges),
        "vocab_bytes": len(vocab),
        "raw_bytes": len(raw),
        "payload_bytes": len(payload),
        "compression": compression,
        "blake2b": hashlib.blake2b(payload, digest_size=16).hexdigest(),
        "graph": _graph_attrs(G),
    }
    try:
        check_header(fields)  # what load_graph will check: never write a file it refuses
    except GraphFormatError as err:
        raise GraphFormatError(f"cannot save the graph to {os.fspath(path)!r}: {err}") from None
    header = json.dumps(fields, sort_keys=True).encode("utf-8")
    atomic_write_bytes(Path(path),
                        MAGIC + struct.pack("<II", FORMAT_VERSION, len(header)) + header + payload)


def _int64_column(values: list[Any], what: str) -> np.ndarray:
    """``values`` as int64; a :class:`GraphFormatError` naming the first that is not an integer
    a ``.ceg`` file can hold (the fast path converts and checks nothing more)."""
    try:
        return np.asarray(values, "<i8")
    except (OverflowError, TypeError, ValueError):
        pass
    for value in values:
        try:
            fits = isinstance(value, (int, np.integer, float)) and not isinstance(value, bool) \
                and math.isfinite(value) and -MAX_COUNT - 1 <= value <= MAX_COUNT
        except (OverflowError, TypeError):
            fits = False
        if not fits:
            raise GraphFormatError(f"{what} (={value!r}) is not an integer a graph file holds "
                                   f"(-2**63 to {MAX_COUNT})")
    raise GraphFormatError(f"{what}s are not integers a graph file holds")  # pragma: no cover


def _read_header(path: Path, handle: io.BufferedReader) -> dict[str, Any]:
    name = repr(os.fspath(path))
    start = handle.read(len(MAGIC) + 8)
    if not start.startswith(MAGIC):
        raise GraphFormatError(
            f"{name} is not a Cause Effect Graph file (it does not start with {MAGIC!r})"
        )
    if len(start) < len(MAGIC) + 8:
        raise GraphFormatError(f"{name} is truncated (no header)")
    version, length = struct.unpack("<II", start[len(MAGIC):])
    if version != FORMAT_VERSION:
        raise GraphVersionError(
            f"{name} has format version {version}; this dpc reads version {FORMAT_VERSION} "
            "(rebuild it with `dpc graph build`, or use the dpc that wrote it)"
        )
    try:
        header = json.loads(handle.read(length).decode("utf-8"))
    except (ValueError, RecursionError) as err:  # not UTF-8, not JSON, a 5,000-digit number
        raise GraphFormatError(f"{name} has a corrupted header ({err})") from None
    try:
        return check_header(header)
    except DpcError as err:
        raise GraphFormatError(f"{name} has a corrupted header: {err}") from None


def check_header(header: Any) -> dict[str, Any]:
    """``header`` if every field of :data:`HEADER_FIELDS` is there, of its JSON type and in its
    range (see the module's docstring); else a :class:`GraphFormatError` naming the field and
    its value.

    >>> check_header({"format": "dpc-cause-effect-graph", "nodes": 2.5})
    Traceback (most recent call last):
    ...
    cause_effect_graph.errors.GraphFormatError: `nodes` (=2.5) must be an integer from 0 to 2147483647
    """
    if not isinstance(header, dict):
        raise GraphFormatError(f"it is a JSON {type(header).__name__}, not an object")
    if header.get("format", FORMAT_NAME) != FORMAT_NAME:
        raise GraphFormatError(f"`format` (={header['format']!r}) is not {FORMAT_NAME!r}")
    for field in ("nodes", "edges", "vocab_bytes", "raw_bytes", "payload_bytes"):
        if field in header:
            check_int(field, header[field], 0, MAX_NODES if field == "nodes" else MAX_COUNT,
                      error=GraphFormatError)
    missing = [field for field in HEADER_FIELDS if field not in header]
    if missing:
        raise GraphFormatError(f"no `{missing[0]}` field")
    if header["compression"] not in ("xz", "zlib"):
        raise GraphFormatError(f"`compression` (={header['compression']!r}) is not 'xz' or "
                               "'zlib'")
    digest = header["blake2b"]
    if not (isinstance(digest, str) and len(digest) == 32
            and all(c in "0123456789abcdef" for c in digest)):
        raise GraphFormatError(f"`blake2b` (={digest!r}) is not 32 hex digits")
    sections = header["vocab_bytes"] + 32 * header["nodes"] + 16 * header["edges"]
    if sections != header["raw_bytes"]:
        raise GraphFormatError(
            f"`raw_bytes` (={header['raw_bytes']}) is not `vocab_bytes` + 32 x `nodes` + 16 x "
            f"`edges` (={sections})")
    _check_graph_attrs(header["graph"])
    return header


def _check_graph_attrs(attrs: Any) -> None:
    """``G.graph`` as a header holds it: an object of scalars, its counts integers."""
    if not isinstance(attrs, dict):
        raise GraphFormatError(f"`graph` (={_short(attrs)}) is not a JSON object")
    for key, value in attrs.items():
        field = f"graph.{key}"
        if key in GRAPH_COUNTS and not (value is None and key in _OPTIONAL_COUNTS):
            check_int(field, value, 0, MAX_COUNT, error=GraphFormatError)
        elif value is not None and not isinstance(value, (str, int, float, bool)):
            raise GraphFormatError(f"`{field}` (={_short(value)}) is not a string, number, "
                                   "boolean or null")
        elif isinstance(value, float) and not math.isfinite(value):
            raise GraphFormatError(f"`{field}` (={value!r}) is not a finite number")


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def graph_info(path: str | Path) -> dict[str, Any]:
    """The header of a ``.ceg`` file (counts and ``G.graph``) without loading the graph.

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "g.ceg"
    >>> save_graph(nx.DiGraph([("rain", "wet")]), path)
    >>> info = graph_info(path)
    >>> info["format"], info["nodes"], info["edges"]
    ('dpc-cause-effect-graph', 2, 1)
    """
    path = Path(path)
    _exists(path)
    with open(path, "rb") as handle:
        return _read_header(path, handle)  # type: ignore[arg-type]


def _exists(path: Path) -> None:
    if not path.is_file():
        raise GraphFormatError(f"graph file {os.fspath(path)!r} does not exist")


def load_graph(path: str | Path) -> nx.DiGraph:
    """Load a graph file: ``.ceg``, an edge-list TSV, or the official release format.

    The format is recognised from the content (magic bytes; ``->`` in the first column; a
    ``cause<TAB>effect`` header).

    Raises
    ------
    GraphFormatError
        If the file is missing, truncated, corrupted or in no known format.
    GraphVersionError
        If it is a ``.ceg`` of another format version.
    """
    path = Path(path)
    _exists(path)
    with open(path, "rb") as handle:
        head = handle.read(len(MAGIC))
    if head == MAGIC:
        return _load_ceg(path)
    first = _first_line(path)
    if first.startswith("cause\teffect"):
        return read_edgelist(path)
    if "->" in first.split("\t", 1)[0]:
        return read_release_graph(path)
    raise GraphFormatError(
        f"{os.fspath(path)!r} is not a Cause Effect Graph file (.ceg), an edge-list TSV "
        f"(header 'cause<TAB>effect<TAB>count') or a CEG release file (cause->effect<TAB>count); "
        f"it starts with {first[:40]!r}"
    )


def _first_line(path: Path) -> str:
    buffered, _, raw = open_decompressed(path)
    try:
        return (buffered.readline(1000).decode("utf-8", errors="replace").rstrip("\r\n")
                .removeprefix("\ufeff"))  # a byte-order mark is no text, as everywhere
    except (OSError, EOFError, lzma.LZMAError, zlib.error):
        return ""
    finally:
        raw.close()


def _load_ceg(path: Path) -> nx.DiGraph:
    name = repr(os.fspath(path))
    with open(path, "rb") as handle:
        header = _read_header(path, handle)  # type: ignore[arg-type]
        payload = handle.read()
    if len(payload) != header["payload_bytes"]:
        raise GraphFormatError(
            f"{name} is truncated or has trailing bytes: payload of {len(payload)} bytes, "
            f"header says {header['payload_bytes']}"
        )
    if hashlib.blake2b(payload, digest_size=16).hexdigest() != header.get("blake2b"):
        raise GraphFormatError(f"{name} is corrupted: its payload does not match its digest")
    try:
        raw = _decompress(payload, header["compression"], header["raw_bytes"])
        n, m, vb = header["nodes"], header["edges"], header["vocab_bytes"]
        if len(raw) != header["raw_bytes"]:
            more = "more" if len(raw) > header["raw_bytes"] else "less"
            raise ValueError(f"the payload holds {more} than the header's raw_bytes "
                             f"(={header['raw_bytes']})")
        vocab = raw[:vb].decode("utf-8").split("\n") if n else []
        offset = vb
        arrays = []
        for _ in _NODE_ARRAYS:
            arrays.append(np.frombuffer(raw, "<i8", n, offset))
            offset += 8 * n
        src = np.frombuffer(raw, "<i4", m, offset)
        dst = np.frombuffer(raw, "<i4", m, offset + 4 * m)
        weight = np.frombuffer(raw, "<i8", m, offset + 8 * m)
        if len(vocab) != n or offset + 16 * m != len(raw):
            raise ValueError("section sizes do not add up")
        _check_edge_indices(src, dst, n)
    except (lzma.LZMAError, zlib.error, ValueError, KeyError, UnicodeDecodeError) as err:
        raise GraphFormatError(f"{name} is corrupted ({err})") from None
    G = digraph_from_arrays(vocab, dict(zip(_NODE_ARRAYS, arrays)), src, dst, weight)
    G.graph.update(header["graph"])
    return G


def _decompress(payload: bytes, compression: str, size: int) -> bytes:
    """``payload`` decompressed, to ``size + 1`` bytes at most (one more than the header
    promises, so a payload that holds more is seen without inflating all of it)."""
    if compression == "xz":
        return lzma.LZMADecompressor().decompress(payload, max_length=size + 1)
    return zlib.decompressobj().decompress(payload, size + 1)


def _check_edge_indices(src: np.ndarray, dst: np.ndarray, nodes: int) -> None:
    """``ValueError`` naming the first edge whose end is not a node number (0 to nodes - 1): a
    negative one would silently name a node from the end of the vocabulary."""
    for name, ends in (("cause", src), ("effect", dst)):
        bad = np.flatnonzero((ends < 0) | (ends >= nodes))
        if bad.size:
            k = int(bad[0])
            raise ValueError(f"edge {k} has {name} index {int(ends[k])}, outside the {nodes} "
                             f"nodes (0 to {nodes - 1}); {bad.size} such edges")


def digraph_from_arrays(vocab: list[str], node_attrs: dict[str, np.ndarray], src: np.ndarray,
                        dst: np.ndarray, weight: np.ndarray) -> nx.DiGraph:
    """A ``DiGraph`` over ``vocab`` with edges ``vocab[src[k]] -> vocab[dst[k]]`` of ``weight``.

    Fills networkx's adjacency dicts directly (the layout ``DiGraph`` documents: one data dict
    shared by ``G.succ[u][v]`` and ``G.pred[v][u]``), about twice as fast as
    ``add_weighted_edges_from``; nodes keep the order of ``vocab``.

    >>> G = digraph_from_arrays(["a", "b"], {"cause_freq": np.array([1, 0])},
    ...                         np.array([0]), np.array([1]), np.array([4]))
    >>> list(G.edges(data=True)), G.nodes["a"]
    ([('a', 'b', {'weight': 4})], {'cause_freq': 1})
    """
    columns = {k: v.tolist() for k, v in node_attrs.items()}
    names = list(columns)
    nodes = {lemma: dict(zip(names, values)) for lemma, *values in
             zip(vocab, *columns.values())} if names else {lemma: {} for lemma in vocab}
    succ: dict[str, dict[str, dict[str, int]]] = {lemma: {} for lemma in vocab}
    pred: dict[str, dict[str, dict[str, int]]] = {lemma: {} for lemma in vocab}
    for s, d, w in zip(src.tolist(), dst.tolist(), weight.tolist()):
        data = {"weight": w}
        succ[vocab[s]][vocab[d]] = data
        pred[vocab[d]][vocab[s]] = data
    G = nx.DiGraph()
    G._node = nodes
    G._succ = G._adj = succ
    G._pred = pred
    return G


@lru_cache(maxsize=1)
def _default() -> nx.DiGraph:
    return load_graph(DEFAULT_GRAPH)


def default_graph() -> nx.DiGraph:
    """The bundled graph (the Gutenberg CausalBank and everyday pairs), loaded once per process.

    Treat it as read-only: it is shared by every caller in the process.
    """
    if not DEFAULT_GRAPH.is_file():
        raise GraphFormatError(
            f"the bundled graph {os.fspath(DEFAULT_GRAPH)!r} is missing from this installation; "
            "pass a graph file or build one with `dpc graph build`"
        )
    return _default()


def graph_from_option(graph: nx.DiGraph | str | os.PathLike[str] | None) -> nx.DiGraph:
    """A graph object as is, a path to load, or ``None`` for the bundled graph (what every
    ``--graph`` option takes)."""
    if graph is None:
        return default_graph()
    if isinstance(graph, nx.DiGraph):
        return graph
    return load_graph(Path(graph))


# ---------------------------------------------------------------- text formats


def write_edgelist(G: nx.DiGraph, path: str | Path) -> int:
    """Write ``cause<TAB>effect<TAB>count`` lines (with a header row); return the edge count.

    Edges are grouped by cause, heaviest first.
    """
    n = 0
    with atomic_open(Path(path)) as handle:
        handle.write("cause\teffect\tcount\n")
        for u, v, w in _sorted_edges(G):
            handle.write(f"{u}\t{v}\t{w}\n")
            n += 1
    return n


def write_release_graph(G: nx.DiGraph, path: str | Path) -> int:
    """Write the official release format, ``cause->effect<TAB>count``; return the edge count."""
    n = 0
    with atomic_open(Path(path)) as handle:
        for u, v, w in _sorted_edges(G):
            handle.write(f"{u}->{v}\t{w}\n")
            n += 1
    return n


def _sorted_edges(G: nx.DiGraph) -> Iterator[tuple[str, str, int]]:
    for u in G:
        for v, w in sorted(((v, d.get("weight", 1)) for v, d in G.succ[u].items()),
                           key=lambda x: (-x[1], x[0])):
            yield u, v, w


def _text_lines(path: Path) -> Iterator[tuple[int, str]]:
    buffered, _, raw = open_decompressed(path)
    try:
        text = io.TextIOWrapper(buffered, encoding="utf-8-sig", errors="replace")  # BOM dropped
        for number, line in enumerate(text, start=1):
            yield number, line.rstrip("\r\n")
    except (EOFError, lzma.LZMAError, zlib.error) as err:
        raise GraphFormatError(f"{os.fspath(path)!r} is truncated or corrupted ({err})") from None
    finally:
        raw.close()


def _from_edges(edges: dict[tuple[str, str], int], source: str) -> nx.DiGraph:
    total = sum(edges.values())
    if total > MAX_COUNT:
        raise GraphFormatError(f"{source!r}: the counts add up to {total}, more than a graph "
                               f"holds ({MAX_COUNT}, 2**63 - 1)")
    G = nx.DiGraph()
    for (u, v), w in edges.items():
        G.add_edge(u, v, weight=w)
    for n in G:
        cw = sum(d["weight"] for d in G.succ[n].values())
        ew = sum(d["weight"] for d in G.pred[n].values())
        G.nodes[n].update(cause_weight=cw, effect_weight=ew, cause_freq=0, effect_freq=0)
    G.graph.update(total=total, source=source, pairs=0,
                   nodes_before=G.number_of_nodes(), edges_before=G.number_of_edges())
    return G


def _count(path: Path, number: int, text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 1:
        raise GraphFormatError(
            f"{os.fspath(path)!r}:{number}: count {text!r} is not a positive integer"
        )
    if value > MAX_COUNT:
        raise GraphFormatError(
            f"{os.fspath(path)!r}:{number}: count {text!r} is larger than a graph holds "
            f"({MAX_COUNT}, 2**63 - 1)"
        )
    return value


def read_edgelist(path: str | Path) -> nx.DiGraph:
    """Read a TSV written by :func:`write_edgelist` (node frequencies are not in it: 0)."""
    path = Path(path)
    _exists(path)
    edges: dict[tuple[str, str], int] = {}
    for number, line in _text_lines(path):
        if number == 1 and line.startswith("cause\teffect"):
            continue
        if not line:
            continue
        cols = line.split("\t")
        if len(cols) < 3 or not cols[0] or not cols[1]:
            raise GraphFormatError(
                f"{os.fspath(path)!r}:{number}: expected cause<TAB>effect<TAB>count, "
                f"got {line[:60]!r}"
            )
        key = (cols[0], cols[1])
        edges[key] = edges.get(key, 0) + _count(path, number, cols[2])
    return _from_edges(edges, os.fspath(path))


def read_release_graph(path: str | Path) -> nx.DiGraph:
    """Read the official CEG release format: ``cause->effect<TAB>count[<TAB>...]`` lines.

    Plain or compressed (gzip, bzip2, xz, zstd). Node weights are the sums of the counts of the
    edges in the file (the release prunes edges, so they are lower than the paper's).

    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "ceg.txt"
    >>> _ = f.write_text("rain->wet\\t12\\nrain->flood\\t6\\n")
    >>> G = read_release_graph(f)
    >>> G["rain"]["wet"]["weight"], G.nodes["rain"]["cause_weight"], G.graph["total"]
    (12, 18, 18)
    """
    path = Path(path)
    _exists(path)
    edges: dict[tuple[str, str], int] = {}
    for number, line in _text_lines(path):
        if not line.strip():
            continue
        pair, _, rest = line.partition("\t")
        cause, arrow, effect = pair.partition("->")
        if not arrow or not cause.strip() or not effect.strip() or not rest:
            raise GraphFormatError(
                f"{os.fspath(path)!r}:{number}: expected cause->effect<TAB>count, "
                f"got {line[:60]!r}"
            )
        key = (cause.strip(), effect.strip())
        edges[key] = edges.get(key, 0) + _count(path, number, rest.split("\t", 1)[0].strip())
    return _from_edges(edges, os.fspath(path))

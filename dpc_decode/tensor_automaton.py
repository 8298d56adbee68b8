"""The constraint automata of a whole batch, compiled into tensors for the decoding hot path.

Every input row has its own :class:`~dpc_decode.automaton.Automaton`; rows with the same
constraints share one object (:class:`~dpc_decode.batch.DecodeBatch` makes sure of it), and each
*distinct* automaton is laid out once: its nodes take a range of one global numbering, and every
row that uses it points at that range (``root``). Each distinct automaton has a small *local
alphabet*: the sorted distinct tokens of its phrases. A transition is a gather in
``next_node[node, symbol]`` where ``symbol`` is the token's position in the alphabet, or the extra
last column for any other token (which always leads back to the root). Tables stay
``nodes × (alphabet + 1)`` instead of ``nodes × vocabulary``, so 300 rows of constraints over a 32k
vocabulary cost kilobytes. A token's symbol is one lookup in ``symbol_table`` (distinct automata ×
token ids, small integers) while that table stays under :data:`SYMBOL_TABLE_BUDGET` entries, else a
binary search of the sorted alphabet.

Compiling does a fixed number of tensor operations whatever the number of rows or of distinct
automata: the tables of every distinct automaton are written into Python lists first and become
tensors in one call each (on a GPU, each tensor operation is a kernel launch or a copy).

Per-hypothesis state is two tensors: ``node`` and ``met`` (booleans, one column per set). Sets are
columns of a boolean matrix rather than bits of an integer, so there is no limit on their number.
Rows with fewer sets than the widest row have their padding columns met from the start, and so do
*impossible* sets (every alternative contains a banned phrase): they can never be met, must not
hold back EOS, and are reported unmet by the Python reference after decoding.

Whole-word alternatives (:mod:`dpc_decode.word_boundary`) add no state: the sets *pending* at a
node (a whole-word alternative has just ended there) are a table, ``pending[node]``, and a token
confirms them into ``met`` when ``continues[token]`` is false. ``met`` holds confirmed sets only;
:meth:`TensorAutomaton.met_if_ended` adds the pending ones, as EOS or the end of the output does.
Automata without whole-word alternatives skip every one of these operations.

>>> import torch
>>> from dpc_decode.automaton import Automaton
>>> ta = TensorAutomaton.compile([Automaton([[[5, 6]], [[7]]]), Automaton([[[9]]])])
>>> rows = torch.tensor([0, 0, 1])
>>> node, met = ta.initial_state(rows)
>>> node, met = ta.advance(rows, node, met, torch.tensor([5, 7, 9]))
>>> node, met = ta.advance(rows, node, met, torch.tensor([6, 1, 2]))
>>> met.tolist()
[[True, False], [False, True], [True, True]]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import chain
from typing import Literal

import numpy as np
import torch
import torch.nn.functional as F

from dpc_decode.automaton import Automaton, need_over_budget
from dpc_decode.errors import DpcError

__all__ = ["SYMBOL_TABLE_BUDGET", "RowTables", "Successors", "TensorAutomaton", "rows_at"]

#: Largest ``distinct automata × token ids`` for which symbols are looked up in a dense table
#: (of int8 while every alphabet has fewer than 128 letters: 2**24 entries are 16 MiB; int16 or
#: int32 beyond). Beyond it, a binary search of the sorted alphabet.
SYMBOL_TABLE_BUDGET = 2**24


def rows_at(table: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """``table[index]`` for an index into the first dimension of a 1-D or 2-D table: shape
    ``index.shape + table.shape[1:]``. One operation, as indexing is, but on a CPU a row gather
    (``torch.nn.functional.embedding``) is faster than advanced indexing for the (beams x
    candidates) lookups of a step, and so is ``take`` for a 1-D table (``python
    benchmarks/engine_micro.py``: ``rows_at_2d_ms`` and ``rows_at_1d_ms`` against
    ``index_2d_ms`` and ``index_1d_ms``).

    >>> import torch
    >>> rows_at(torch.tensor([[1, 2], [3, 4]]), torch.tensor([[1, 1, 0]])).tolist()
    [[[3, 4], [3, 4], [1, 2]]]
    """
    if table.dim() == 1:
        return table.take(index)
    if table.dim() == 2:
        return F.embedding(index, table)
    return table[index]


def _bit_matrix(masks: list[int], width: int) -> torch.Tensor:
    """(len(masks), width) booleans: bit s of masks[i]."""
    if width <= 62:
        values = torch.from_numpy(np.array(masks, dtype=np.int64)).unsqueeze(1)
        return ((values >> torch.arange(width)) & 1).bool()
    return torch.tensor([[bool((m >> s) & 1) for s in range(width)] for m in masks], dtype=torch.bool)


def _to_device(tensors: dict[str, torch.Tensor | None], device: torch.device) -> dict[str, torch.Tensor | None]:
    """The tables on ``device`` in one host-to-device copy (each copy from pageable memory is a
    host synchronisation): packed into one int64 buffer, split there, cast back."""
    if device.type == "cpu":
        return tensors
    names = [k for k, v in tensors.items() if v is not None]
    parts = [tensors[k] for k in names]
    flat = torch.cat([p.reshape(-1).long() for p in parts]).to(device)  # type: ignore[union-attr]
    pieces = flat.split([p.numel() for p in parts])  # type: ignore[union-attr]
    moved: dict[str, torch.Tensor | None] = dict.fromkeys(tensors)
    for name, part, piece in zip(names, parts, pieces):
        moved[name] = piece.view(part.shape).to(part.dtype)  # type: ignore[union-attr]
    return moved


def _leaving_positions(moves: np.ndarray) -> np.ndarray:
    """Per row of ``moves`` (nodes, A) bool, the columns that are set, in order, padded to the
    widest row's count with the row's first one (0 when none is set): (nodes, M) int64."""
    counts = moves.sum(1)
    width = max(int(counts.max(initial=0)), 1)
    # a stable sort of "not set" puts each row's set columns first, in column order
    first = np.argsort(~moves, axis=1, kind="stable")[:, :width]
    fill = np.where(counts > 0, first[:, 0], 0)[:, None]
    slots = np.arange(width)[None, :] < counts[:, None]
    return np.where(slots, first, fill).astype(np.int64).reshape(-1, width)


@dataclass
class _Tables:
    """The tables of every distinct automaton, node ids global, as numpy arrays (the met-masks
    stay Python ints, as wide as the sets are many): each field is gathered from the automata
    into one flat Python list (``list.extend``, no per-automaton array) and laid out for all of
    them at once, so compiling 300 distinct automata costs a handful of numpy calls, not a few
    per automaton."""

    offsets: np.ndarray  # (D,) global id of each distinct automaton's root
    node_auto: np.ndarray  # (N,) distinct automaton of each node
    letters: np.ndarray  # (D, A) each automaton's sorted tokens; padding repeats the first
    letter_count: np.ndarray  # (D,) tokens in each alphabet (k)
    next_node: np.ndarray  # (N, A + 1) int64 global ids; padding letters mirror letter 0, the
    #                        last column (a token outside the alphabet) is the root
    leaving: np.ndarray  # (N, A) bool: a letter's transition leaves the root
    completes: list[int]  # (N,) met-masks: Python ints (more than 63 sets do not fit an int64)
    pending: list[int]
    useful: list[int]
    violation: np.ndarray  # (N,) bool
    depth: np.ndarray  # (N,) int64
    gain: np.ndarray  # (N, S) int16
    min_length: np.ndarray  # (D, S) int16: 0 for padding and impossible sets
    initial_met: np.ndarray  # (D, S) bool: padding and impossible sets start met
    exact: np.ndarray  # (D,) bool: the automaton has an exact need table
    # Exact need (Automaton.exact_need_table): entry 0 is a 0 that every node of an automaton
    # without a table points at (its met weights are 0, so it is the only entry read there).
    need_table: np.ndarray  # (entries,) int16
    need_base: np.ndarray  # (N,) int64: where the node's row of the table starts
    completes_bits: np.ndarray  # (N,) int64 met-bits completed on reaching the node (0: no table)
    pending_bits: np.ndarray  # (N,) int64 met-bits pending there (0: no table)
    met_weight: np.ndarray  # (D, S) int64: each set's met-bit (0: padding, impossible, no table)

    @classmethod
    def build(cls, distinct: Sequence[Automaton], num_sets: int) -> _Tables:
        """The tables of ``distinct`` (each automaton once, in the order of its ``offsets``), every
        set-indexed table ``num_sets`` wide (padding sets are met from the start).

        The steps: gather every automaton's lists (:meth:`_Lists.gather`); number nodes and edges
        globally; lay out the alphabets (:func:`_alphabets`) and the transition table
        (:func:`_transitions`); work out the exact need tables (:func:`_solve_exact_needs`,
        :meth:`_NeedLists.gather`); convert the lists to arrays, clipped to int16.
        """
        cap = 2**15 - 1  # gains, lengths, needs are int16; an impossible set's "remaining" is huge
        lists = _Lists.gather(distinct, num_sets)
        count_d = len(distinct)
        size = np.array(lists.sizes, dtype=np.int64)
        offsets = np.cumsum(size) - size
        node_auto = np.repeat(np.arange(count_d), size)
        total = int(size.sum())
        local = np.arange(total, dtype=np.int64) - offsets[node_auto]
        depth = np.array(lists.depth, dtype=np.int64)
        root_of = offsets[node_auto]  # (N,)

        edge_auto = np.repeat(np.arange(count_d), lists.edge_count)
        parent = np.array(lists.edge_parent, dtype=np.int64) + offsets[edge_auto]
        child = np.array(lists.edge_child, dtype=np.int64) + offsets[edge_auto]
        token = np.array(lists.edge_token, dtype=np.int64)
        letters, k, column, padded = _alphabets(edge_auto, token, count_d)
        fail = np.array(lists.fail, dtype=np.int64) + root_of
        nxt, leaving = _transitions(root_of, depth, fail, parent, column, child, padded[node_auto])

        _solve_exact_needs(distinct, nxt, node_auto, lists.completes)
        needs = _NeedLists.gather(distinct, num_sets)

        live = np.array(lists.live, dtype=bool).reshape(count_d, num_sets)
        length = np.minimum(np.array(lists.lengths, dtype=np.int64).reshape(count_d, num_sets), cap)
        rem = np.minimum(np.array(lists.remaining, dtype=np.int64).reshape(total, num_sets), cap)
        gain = np.where(live[node_auto], length[node_auto] - rem, 0).astype(np.int16)
        start = np.array(needs.need_start, dtype=np.int64)
        need_width = np.array(needs.need_width, dtype=np.int64)
        return cls(
            offsets=offsets,
            node_auto=node_auto,
            letters=letters,
            letter_count=k,
            next_node=nxt,
            leaving=leaving,
            completes=lists.completes,
            pending=lists.pending,
            useful=lists.useful,
            violation=np.array(lists.violation, dtype=bool),
            depth=depth,
            gain=gain,
            min_length=np.where(live, length, 0).astype(np.int16),
            initial_met=~live,
            exact=need_width > 0,
            need_table=np.minimum(np.array(needs.need, dtype=np.int64), cap).astype(np.int16),
            need_base=start[node_auto] + local * need_width[node_auto],
            completes_bits=np.array(needs.completes_bits, dtype=np.int64),
            pending_bits=np.array(needs.pending_bits, dtype=np.int64),
            met_weight=np.array(needs.met_weight, dtype=np.int64).reshape(count_d, num_sets),
        )


@dataclass
class _Lists:
    """What every distinct automaton contributes to :class:`_Tables`, gathered into flat Python
    lists (:meth:`gather`): node ids local, one automaton after another."""

    sizes: list[int]  # (D,) nodes of each automaton
    fail: list[int]  # (N,) local failure targets
    depth: list[int]  # (N,)
    completes: list[int]  # (N,) met-masks
    pending: list[int]  # (N,) met-masks
    useful: list[int]  # (N,) met-masks
    violation: list[bool]  # (N,)
    remaining: list[int]  # (N, S) flat, impossible and padding sets as they come
    edge_parent: list[int]  # (E,) local ids
    edge_token: list[int]  # (E,)
    edge_child: list[int]  # (E,) local ids
    edge_count: list[int]  # (D,) edges of each automaton
    live: list[bool]  # (D, S) flat: the set is possible (padding is not)
    lengths: list[int]  # (D, S) flat: shortest live alternative (0 for padding)

    @classmethod
    def gather(cls, distinct: Sequence[Automaton], num_sets: int) -> _Lists:
        """The lists of ``distinct``, each automaton's sets padded to ``num_sets``: one pass of
        ``list.extend``, no per-automaton array."""
        sizes: list[int] = []
        fail: list[int] = []
        depth: list[int] = []
        completes: list[int] = []
        pending: list[int] = []
        useful: list[int] = []
        violation: list[bool] = []
        remaining: list[int] = []
        edge_parent: list[int] = []
        edge_token: list[int] = []
        edge_child: list[int] = []
        edge_count: list[int] = []
        live: list[bool] = []
        lengths: list[int] = []
        for a in distinct:
            n, pad = a.num_nodes, num_sets - a.num_sets
            sizes.append(n)
            fail.extend(a.fail)
            depth.extend(a.depth)
            completes.extend(a.completes)
            pending.extend(a.pending)
            useful.extend(a.useful)
            violation.extend(a.violation)
            if pad:
                for row in a.remaining:
                    remaining.extend(row)
                    remaining.extend([0] * pad)
            else:
                remaining.extend(chain.from_iterable(a.remaining))
            count = 0
            for v, children in enumerate(a.children):
                if children:
                    edge_parent.extend([v] * len(children))
                    edge_token.extend(children)
                    edge_child.extend(children.values())
                    count += len(children)
            edge_count.append(count)
            ok = [s not in a.impossible_sets for s in range(a.num_sets)]
            live.extend(ok)
            live.extend([False] * pad)
            lengths.extend(a.min_length)
            lengths.extend([0] * pad)
        return cls(sizes, fail, depth, completes, pending, useful, violation, remaining,
                   edge_parent, edge_token, edge_child, edge_count, live, lengths)


@dataclass
class _NeedLists:
    """The exact need tables of every distinct automaton, gathered as :class:`_Lists` are
    (:meth:`gather`). Entry 0 of ``need`` is the 0 every automaton without a table points at."""

    need: list[int]  # (entries,)
    need_start: list[int]  # (D,): where the automaton's table starts; 0 without a table
    need_width: list[int]  # (D,): met-bit states per node; 0 without a table
    completes_bits: list[int]  # (N,)
    pending_bits: list[int]  # (N,)
    met_weight: list[int]  # (D, S) flat

    @classmethod
    def gather(cls, distinct: Sequence[Automaton], num_sets: int) -> _NeedLists:
        """The tables of ``distinct`` (:attr:`Automaton.exact_need_table`, worked out by
        :func:`_solve_exact_needs` first), with each node's met-bits and each set's weight."""
        need: list[int] = [0]
        need_start: list[int] = []
        need_width: list[int] = []
        completes_bits: list[int] = []
        pending_bits: list[int] = []
        met_weight: list[int] = []
        for a in distinct:
            n, pad = a.num_nodes, num_sets - a.num_sets
            table = a.exact_need_table
            if table is None:
                need_start.append(0)
                need_width.append(0)
                completes_bits.extend([0] * n)
                pending_bits.extend([0] * n)
                met_weight.extend([0] * num_sets)
                continue
            need_start.append(len(need))
            need_width.append(1 << (a.num_sets - len(a.impossible_sets)))
            need.extend(table)
            if a.impossible_sets:
                completes_bits.extend(a.met_bits(c) for c in a.completes)
                pending_bits.extend(a.met_bits(p) for p in a.pending)
            else:  # met_bits is the identity
                completes_bits.extend(a.completes)
                pending_bits.extend(a.pending)
            met_weight.extend(a.live_bit)
            met_weight.extend([0] * pad)
        return cls(need, need_start, need_width, completes_bits, pending_bits, met_weight)


def _alphabets(edge_auto: np.ndarray, token: np.ndarray, count_d: int
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Each automaton's alphabet, the sorted distinct tokens of its edges, in one ``np.unique`` of
    (automaton, token) keys; an edge's letter column is its key's rank within its automaton.

    ``edge_auto``, ``token``: (E,). Returns the letters (D, A), padding repeating the first; the
    number of letters of each (D,); each edge's column (E,); and which columns are padding
    (D, A) bool."""
    span = int(token.max(initial=0)) + 1
    keys, column = np.unique(edge_auto * span + token, return_inverse=True)
    key_auto = keys // span
    k = np.bincount(key_auto, minlength=count_d)
    first_key = np.cumsum(k) - k
    column = column.reshape(-1) - first_key[edge_auto]
    width = max(int(k.max(initial=0)), 1)
    key_column = np.arange(len(keys)) - first_key[key_auto]
    letters = np.zeros((count_d, width), dtype=np.int64)
    letters[key_auto, key_column] = keys % span
    padded = np.arange(width)[None, :] >= k[:, None]  # (D, A)
    letters = np.where(padded, letters[:, :1], letters)
    return letters, k, column, padded


def _transitions(root_of: np.ndarray, depth: np.ndarray, fail: np.ndarray, parent: np.ndarray,
                 column: np.ndarray, child: np.ndarray, node_padded: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
    """The DFA's rows in breadth-first layers (a failure target is shallower): a node's row is its
    failure target's row with its own children written over it; a root's row leads home.

    ``root_of``, ``depth``, ``fail`` (global ids): (N,); the edges ``parent``, ``column``,
    ``child``: (E,); ``node_padded``: (N, A), the padding letters of each node's alphabet.
    Returns ``next_node`` (N, A + 1), padding letters mirroring letter 0 and the last column
    (a token outside the alphabet) the root, and ``leaving`` (N, A) bool: the letter's
    transition leaves the root."""
    total, width = node_padded.shape
    nxt = np.empty((total, width + 1), dtype=np.int64)
    edge_depth = depth[parent]
    for level in range(int(depth.max(initial=0)) + 1):
        nodes = np.flatnonzero(depth == level)
        if level == 0:
            nxt[nodes] = root_of[nodes, None]
        else:
            nxt[nodes] = nxt[fail[nodes]]
        at = edge_depth == level
        nxt[parent[at], column[at]] = child[at]
    letter_next = nxt[:, :width]
    leaving = (letter_next != root_of[:, None]) & ~node_padded
    nxt[:, :width] = np.where(node_padded, letter_next[:, :1], letter_next)
    nxt[:, width] = root_of
    return nxt, leaving


#: Most entries (nodes x letters x met-bits) one vectorised pass of :func:`_solve_exact_needs`
#: relaxes at once (int64: 2**22 are 32 MiB); larger groups are split, and one automaton over it
#: is left to :attr:`Automaton.exact_need_table`.
_SOLVE_ENTRIES = 2**22


def _solve_exact_needs(distinct: Sequence[Automaton], nxt: np.ndarray, node_auto: np.ndarray,
                       completes: list[int]) -> None:
    """Work out :attr:`Automaton.exact_need_table` for the automata of a batch that have not yet,
    all at once: the fewest tokens to meet every set from each (node, met-bits) state, relaxed
    over the compiled transitions (``nxt``, global ids, its last column any other token)
    until nothing changes, one numpy pass per round for every automaton with the same number
    of sets, instead of a Python search per automaton (``python benchmarks/engine_micro.py``:
    ``need_compile_ms`` against ``need_python_ms``, 300 new one-set automata).

    Only for automata without banned phrases or whole-word alternatives: there every set is
    possible, its met-bits are its own bits, every state can meet every set, and the relaxation
    reaches the same shortest distances the Python search finds (the tests compare them on random
    automata). The others, and those over :data:`~dpc_decode.automaton.EXACT_NEED_BUDGET` (their
    table is ``None``, decided by the same test), are left to the property.
    """
    groups: dict[int, list[int]] = {}
    for d, a in enumerate(distinct):
        if "exact_need_table" not in a.__dict__ and not a.banned and not a.has_whole_word:
            groups.setdefault(a.num_sets, []).append(d)
    if not groups:
        return
    columns = nxt.shape[1]
    # distinct targets of each node's transitions (the root's column is one of them): the edges
    # the budget counts
    ordered = np.sort(nxt, axis=1)
    targets = 1 + (ordered[:, 1:] != ordered[:, :-1]).sum(1)
    edges = np.bincount(node_auto, weights=targets, minlength=len(distinct)).astype(np.int64)
    for live, members in groups.items():
        states = 1 << live
        chunk: list[int] = []
        entries = 0
        for d in members:
            a = distinct[d]
            if need_over_budget(a.num_nodes, live) or need_over_budget(int(edges[d]), live):
                a.__dict__["exact_need_table"] = None  # as the property decides it
                continue
            size = a.num_nodes * columns * states
            if size > _SOLVE_ENTRIES:
                continue  # the property works it out when asked
            if entries + size > _SOLVE_ENTRIES:
                _relax(distinct, chunk, nxt, node_auto, completes, live)
                chunk, entries = [], 0
            chunk.append(d)
            entries += size
        if chunk:
            _relax(distinct, chunk, nxt, node_auto, completes, live)


def _relax(distinct: Sequence[Automaton], chunk: list[int], nxt: np.ndarray,
           node_auto: np.ndarray, completes: list[int], live: int) -> None:
    """:func:`_solve_exact_needs` for the automata ``chunk`` (indices into ``distinct``), each
    with ``live`` sets, every one possible."""
    chosen = np.zeros(len(distinct), dtype=bool)
    chosen[chunk] = True
    nodes = np.flatnonzero(chosen[node_auto])  # global ids, each automaton's together
    local = np.full(nxt.shape[0], -1, dtype=np.int64)
    local[nodes] = np.arange(len(nodes))
    to = local[nxt[nodes]]  # (n, C): targets within the chunk
    got = np.array([completes[v] for v in nodes.tolist()], dtype=np.int64)[to]  # (n, C) met-bits
    full = (1 << live) - 1
    # the state each transition leads to, as a flat index of dist: (n, 2**live, C), the
    # transitions last so that the minimum over them runs along contiguous memory
    state = (to << live)[:, None, :] + (got[:, None, :] | np.arange(full + 1)[None, :, None])
    far = np.iinfo(np.int64).max // 2
    dist = np.full((len(nodes), full + 1), far, dtype=np.int64)
    dist[:, full] = 0
    while True:
        step = np.minimum(dist, dist.ravel().take(state).min(axis=2) + 1)
        step[:, full] = 0
        if np.array_equal(step, dist):
            break
        dist = step
    start = 0
    for d in chunk:
        n = distinct[d].num_nodes
        distinct[d].__dict__["exact_need_table"] = tuple(dist[start:start + n].ravel().tolist())
        start += n


@dataclass(frozen=True)
class RowTables:
    """The row constants of every hypothesis of one decode, looked up once
    (:meth:`TensorAutomaton.for_rows`): a hypothesis never changes row while decoding."""

    rows: torch.Tensor  # (hyps,)
    letters: torch.Tensor  # (hyps, A)
    min_length: torch.Tensor  # (hyps, S)
    met_weight: torch.Tensor  # (hyps, S)
    root_base: torch.Tensor  # (hyps,): need_base of the row's root
    letter_continues: torch.Tensor | None = None  # (hyps, A): the letter continues a word
    length_base: torch.Tensor | None = None  # (hyps,): the row's block of ``length_bytes``
    total_length: torch.Tensor | None = None  # (hyps,) int32: min_length added up


@dataclass(frozen=True)
class Successors:
    """The letters of each hypothesis and where they lead (see :meth:`TensorAutomaton.successors`).

    ``met`` is worked out on first use: the exact need reads only ``nodes``, so a tight step
    of automata with exact tables never runs its operations."""

    letters: torch.Tensor  # (hyps, A) token ids
    nodes: torch.Tensor  # (hyps, A) next node of each letter
    automaton: TensorAutomaton = field(repr=False)
    tables: RowTables | None = field(repr=False)  # with whole-word alternatives
    before: tuple[torch.Tensor, torch.Tensor] = field(repr=False)  # node (hyps,), met (hyps, S)

    @cached_property
    def met(self) -> torch.Tensor:
        """(hyps, A, S): the sets met after each letter."""
        a, (nodes, met) = self.automaton, self.before
        after = met.unsqueeze(1) | rows_at(a.completes, self.nodes)
        if self.tables is None:
            return after
        assert a.pending is not None and self.tables.letter_continues is not None
        # letters that do not continue the word confirm the pending sets
        confirmed = rows_at(a.pending, nodes).unsqueeze(1) & ~self.tables.letter_continues.unsqueeze(-1)
        return after | confirmed


@dataclass(frozen=True)
class TensorAutomaton:
    """Batched, compiled automata. Build with :meth:`compile`; all tensors live on one device.

    Tables indexed by node (``next_node``, ``completes``, ...) hold every *distinct* automaton
    once; tables indexed by row (``alphabet``, ``root``, ...) hold every row.
    """

    automata: tuple[Automaton, ...]
    block: torch.Tensor  # (rows,) int64: which distinct automaton each row uses
    alphabet: torch.Tensor  # (rows, A) int64; padding repeats the row's first token
    alphabet_valid: torch.Tensor  # (rows, A) bool
    next_node: torch.Tensor  # (nodes, A + 1) int64 global ids; column A: a token outside the alphabet
    letter_next: torch.Tensor  # (nodes, A): next_node without its last column, contiguous
    leaving: torch.Tensor  # (nodes, M) int64: the tokens whose transition leaves the root from
    # the node, in alphabet order, padded with the first of them (M: the most any node has); a
    # node's alphabet is its automaton's, so a beam's letters are one row gather
    completes: torch.Tensor  # (nodes, S) bool: sets completed on reaching the node
    pending: torch.Tensor | None  # (nodes, S) bool: sets met if the token after the node starts
    #                               a word (None without whole-word rows: nothing is pending)
    useful: torch.Tensor  # (nodes, S) bool: the node is on the way to a live alternative of the set
    violation: torch.Tensor  # (nodes,) bool: reaching the node completes a banned phrase
    depth: torch.Tensor  # (nodes,) int64
    partial_depth: torch.Tensor  # (nodes, S) int64: depth where useful for the set, else 0
    gain: torch.Tensor  # (nodes, S) int16: min_length[s] - tokens still needed for s from here
    min_length: torch.Tensor  # (rows, S) int16: shortest live alternative; 0 for padding/impossible
    root: torch.Tensor  # (rows,) int64
    initial_met: torch.Tensor  # (rows, S) bool: padding and impossible sets start met
    need_table: torch.Tensor  # (entries,) int16: exact need of (node, met-bits) at need_base[node] + bits
    need_base: torch.Tensor  # (nodes,) int64: start of the node's row of need_table
    completes_bits: torch.Tensor  # (nodes,) int64: met-bits of the sets completed on reaching the node
    pending_bits: torch.Tensor | None  # (nodes,) int64: met-bits pending at the node (or None)
    met_weight: torch.Tensor  # (rows, S) int64: met-bit of each set; 0 for padding, impossible, inexact
    exact_node: torch.Tensor  # (nodes,) bool: the node's automaton has an exact need table
    # Met-sets packed as bits (bit s: set s) where they fit an int64 (:func:`_packed_tables`);
    # None beyond 62 sets:
    set_bits: torch.Tensor | None  # (S,) int64: 1 << s
    completes_packed: torch.Tensor | None  # (nodes,) int64: the sets completed on reaching the node
    pending_packed: torch.Tensor | None  # (nodes,) int64: the sets pending there (whole-word rows)
    useful_packed: torch.Tensor | None  # (nodes,) int64: the sets the node is on the way to
    byte_counts: torch.Tensor | None  # (256,) int64: the bits set in each byte value
    # ... and the plan's need on them, where besides the gains take few values (else None):
    gain_levels: torch.Tensor | None  # (L,) int32: the distinct positive gains, descending
    gain_masks: torch.Tensor | None  # (nodes, L) int64: the sets whose gain at the node is level l
    length_bytes: torch.Tensor | None  # (distinct * C * 256,) int32: per automaton and byte c of
    #                                    the met-bits, the shortest lengths of the sets it holds
    symbol_table: torch.Tensor | None  # (distinct, W) int8/16/32: token t's symbol; None: bisect
    sorted_alphabet: torch.Tensor  # (distinct, A + 1) int64, padded above every token id
    max_depth: int
    max_need: int  # the largest need() any hypothesis can reach (Automaton.max_need)
    need_mode: Literal["exact", "plan", "mixed"]  # which automata have an exact need table: all, none, some
    has_banned: bool
    clamp_tokens: int | None  # token ids above this share the table's last column (no vocab given)
    continues: torch.Tensor | None  # (W,) bool: token continues a word (ids >= W - 1 read W - 1,
    # which is True); None without whole-word alternatives

    @property
    def num_rows(self) -> int:
        return len(self.automata)

    @property
    def num_sets(self) -> int:
        """Columns of ``met`` (the widest row's number of sets, at least 1)."""
        return int(self.completes.shape[1])

    @property
    def alphabet_size(self) -> int:
        return int(self.alphabet.shape[1])

    @classmethod
    def compile(
        cls,
        automata: Sequence[Automaton],
        device: torch.device | str = "cpu",
        vocab_size: int | None = None,
    ) -> TensorAutomaton:
        """Lay the automata of a batch out as tensors on ``device``.

        Rows given the same :class:`Automaton` object share its tables. ``vocab_size`` (the
        model's number of logits) sizes the symbol lookup table; without it, the table covers
        the largest letter and larger token ids are clamped onto its last column. Automata with
        whole-word alternatives must share one ``continues`` (one tokenizer per batch).
        """
        automata = tuple(automata)
        num_sets = max([a.num_sets for a in automata] + [1])
        index: dict[int, int] = {}
        distinct: list[Automaton] = []
        block = []
        for a in automata:
            if id(a) not in index:
                index[id(a)] = len(distinct)
                distinct.append(a)
            block.append(index[id(a)])
        t = _Tables.build(distinct, num_sets)
        continues = _continues_table(distinct, vocab_size)
        width = t.letters.shape[1]

        block_t = torch.tensor(block, dtype=torch.long)
        next_node = torch.from_numpy(t.next_node)
        depth = torch.from_numpy(t.depth)
        useful = _bit_matrix(t.useful, num_sets)
        ww = continues is not None  # the pending tables are read only with whole-word rows
        pending = _bit_matrix(t.pending, num_sets) if ww else None
        valid = np.arange(width)[None, :] < t.letter_count[:, None]  # (D, A)
        top = int(t.letters[valid].max(initial=0))
        columns = vocab_size if vocab_size is not None else top + 2
        # The symbol table is written where it lives: only its entries travel (it can be tens of
        # megabytes, every other entry "outside the alphabet").
        auto, column = np.nonzero(valid)
        entries = torch.from_numpy(
            np.stack([auto, t.letters[auto, column], column], axis=1) if len(auto)
            else np.zeros((1, 3), dtype=np.int64))
        sentinel = np.iinfo(np.int64).max  # above every token id
        sorted_alphabet = np.full((len(distinct), width + 1), sentinel, dtype=np.int64)
        sorted_alphabet[:, :width] = np.where(valid, t.letters, sentinel)
        tensors = {
            "block": block_t,
            "alphabet": torch.from_numpy(t.letters)[block_t],
            "alphabet_valid": torch.from_numpy(valid)[block_t],
            "next_node": next_node,
            "letter_next": next_node[:, :width].contiguous(),
            "leaving": torch.from_numpy(
                t.letters[t.node_auto[:, None], _leaving_positions(t.leaving)]),
            "completes": _bit_matrix(t.completes, num_sets),
            "pending": pending,
            "useful": useful,
            "violation": torch.from_numpy(t.violation),
            "depth": depth,
            "partial_depth": torch.where(useful, depth.unsqueeze(1), 0),
            "gain": torch.from_numpy(t.gain),
            "min_length": torch.from_numpy(t.min_length)[block_t],
            "root": torch.from_numpy(t.offsets)[block_t],
            "initial_met": torch.from_numpy(t.initial_met)[block_t],
            "need_table": torch.from_numpy(t.need_table),
            "need_base": torch.from_numpy(t.need_base),
            "completes_bits": torch.from_numpy(t.completes_bits),
            "pending_bits": torch.from_numpy(t.pending_bits) if ww else None,
            "continues": continues,
            "met_weight": torch.from_numpy(t.met_weight)[block_t],
            "exact_node": torch.from_numpy(t.exact[t.node_auto]),
            **_packed_tables(_bit_matrix(t.completes, num_sets), pending, useful,
                             torch.from_numpy(t.gain), torch.from_numpy(t.min_length)),
            "symbol_entries": entries,
            "sorted_alphabet": torch.from_numpy(sorted_alphabet),
        }
        moved = _to_device(tensors, torch.device(device))
        entries = moved.pop("symbol_entries")
        assert entries is not None
        moved["symbol_table"] = None
        if len(distinct) * columns <= SYMBOL_TABLE_BUDGET:
            # The narrowest integer that holds every symbol (0..A): a step's lookups land at
            # random in it, so a quarter of the bytes is what keeps them in the CPU's caches
            # (300 automata x 1,000 ids: 0.3 MB of int8; benchmarks/engine_step_profile.py
            # times its lookups).
            kind = torch.int8 if width < 2**7 else torch.int16 if width < 2**15 else torch.int32
            table = torch.full((len(distinct), columns), width, dtype=kind, device=device)
            if len(auto):
                table[entries[:, 0], entries[:, 1]] = entries[:, 2].to(kind)
            moved["symbol_table"] = table
        return cls(
            automata=automata,
            max_depth=int(t.depth.max(initial=0)),
            max_need=max([a.max_need for a in distinct] + [0]),
            need_mode="exact" if t.exact.all() else "plan" if not t.exact.any() else "mixed",
            has_banned=bool(t.violation.any()),
            clamp_tokens=None if vocab_size is not None else columns - 1,
            **moved,
        )

    # ------------------------------------------------------------------ hot path
    @property
    def has_whole_word(self) -> bool:
        """Whether any row has a whole-word alternative (``pending`` and ``continues`` in use)."""
        return self.continues is not None

    def token_continues(self, tokens: torch.Tensor) -> torch.Tensor:
        """Whether each token continues the word before it: same shape as ``tokens``, bool.
        Only for automata with whole-word alternatives."""
        assert self.continues is not None
        return self.continues[tokens.clamp(max=self.continues.shape[0] - 1)]

    def vocab_continues(self, vocab: int) -> torch.Tensor:
        """:meth:`token_continues` of every id below ``vocab``, (vocab,) bool: a view of the
        table, not a gather, when the table covers the vocabulary (the usual case)."""
        assert self.continues is not None
        width = self.continues.shape[0]
        if vocab <= width:
            return self.continues[:vocab]
        return torch.cat([self.continues, self.continues[-1:].expand(vocab - width)])

    def confirm(self, nodes: torch.Tensor, met: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
        """``met`` (..., S) with the sets pending at ``nodes`` (...,) that the next ``tokens``
        (...,) confirm (they do not continue the word); ``met`` itself without whole-word
        alternatives."""
        if self.continues is None:
            return met
        return met | (rows_at(self.pending, nodes) & ~self.token_continues(tokens).unsqueeze(-1))

    def met_if_ended(self, nodes: torch.Tensor, met: torch.Tensor) -> torch.Tensor:
        """The sets met if the output ended at ``nodes`` (...,): ``met`` (..., S) and the pending
        sets (EOS and the end of the output confirm them)."""
        if self.continues is None:
            return met
        return met | rows_at(self.pending, nodes)

    def initial_state(self, rows: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(node, met)`` before any generated token, for hypotheses of the given rows (hyps,)."""
        return self.root[rows], self.initial_met[rows]

    def block_symbols(self, blocks: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
        """Position of each token in its automaton's alphabet, or ``A`` for tokens outside it.

        ``blocks`` (distinct-automaton ids, ``self.block[rows]``) broadcasts against ``tokens``
        (e.g. (B, 1) against (B, C)); same shape out, int64.
        """
        if self.symbol_table is not None:
            if self.clamp_tokens is not None:
                tokens = tokens.clamp(max=self.clamp_tokens)
            return self.symbol_table[blocks, tokens].long()
        flat = tokens.reshape(-1, 1)  # (N, 1)
        letters = self.sorted_alphabet[blocks.expand_as(tokens).reshape(-1)]  # (N, A + 1), sorted
        pos = torch.searchsorted(letters, flat)  # (N, 1); the padding is above every token id
        hit = letters.gather(1, pos) == flat
        return torch.where(hit, pos, self.alphabet_size).reshape(tokens.shape)

    def symbols(self, rows: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
        """Position of each token in its row's alphabet, or ``A`` for tokens outside it.

        rows: (hyps,); tokens: (hyps, k) or (hyps,) -> same shape as tokens.
        """
        blocks = self.block[rows]
        return self.block_symbols(blocks if tokens.dim() == 1 else blocks.unsqueeze(1), tokens)

    def for_rows(self, rows: torch.Tensor) -> RowTables:
        """The row constants of hypotheses of these rows (hyps,), for the per-step functions."""
        letters = self.alphabet[rows]
        base, total = self._length_rows(rows) if self.length_bytes is not None else (None, None)
        return RowTables(rows, letters, self.min_length[rows], self.met_weight[rows],
                         self.need_base[self.root[rows]],
                         self.token_continues(letters) if self.continues is not None else None,
                         base, total)

    def successors(
        self, rows: torch.Tensor | RowTables, nodes: torch.Tensor, met: torch.Tensor
    ) -> Successors:
        """Every letter of each hypothesis's alphabet, with the state it leads to.

        rows, nodes: (hyps,), met: (hyps, S). One row gather of the transition table; padding
        letters repeat the first letter and its transition.
        """
        nxt = rows_at(self.letter_next, nodes)  # (hyps, A)
        if self.continues is None:
            letters = rows.letters if isinstance(rows, RowTables) else self.alphabet[rows]
            return Successors(letters, nxt, self, None, (nodes, met))
        tables = rows if isinstance(rows, RowTables) else self.for_rows(rows)
        return Successors(tables.letters, nxt, self, tables, (nodes, met))

    def advance(
        self, rows: torch.Tensor, nodes: torch.Tensor, met: torch.Tensor, tokens: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """State after one token per hypothesis. rows, nodes, tokens: (hyps,); met: (hyps, S)."""
        nxt = self.next_node[nodes, self.symbols(rows, tokens)]  # (hyps,)
        return nxt, self.confirm(nodes, met, tokens) | rows_at(self.completes, nxt)

    def need(
        self, rows: torch.Tensor | RowTables, nodes: torch.Tensor, met: torch.Tensor
    ) -> torch.Tensor:
        """Fewest tokens that still meet every set (:meth:`Automaton.need`): exact for automata
        with an exact table, the plan's count (:meth:`plan_need`) for the others.

        rows: (...,) or the :class:`RowTables` of (hyps,), nodes: (...,), met: (..., S) -> (...,).
        With RowTables, nodes and met may carry one more dimension (hyps, A).
        """
        if self.need_mode == "plan":
            return self.plan_need(rows, nodes, met)
        exact = self.exact_need(nodes, self.met_bits(rows, met))
        if self.need_mode == "exact":
            return exact
        return torch.where(rows_at(self.exact_node, nodes), exact, self.plan_need(rows, nodes, met))

    def met_bits(self, rows: torch.Tensor | RowTables, met: torch.Tensor) -> torch.Tensor:
        """``met`` (..., S) as the integer of its met-bits (...,) that indexes ``need_table``: a
        weighted sum of the columns."""
        if isinstance(rows, RowTables):
            weight = rows.met_weight if met.dim() == 2 else rows.met_weight.unsqueeze(1)
        else:
            weight = self.met_weight[rows]
        return (met * weight).sum(-1)

    def exact_need(self, nodes: torch.Tensor, bits: torch.Tensor) -> torch.Tensor:
        """The exact table at (node, met-bits): nodes and bits of one shape -> that shape, int16."""
        return rows_at(self.need_table, rows_at(self.need_base, nodes) + bits)

    def step_needs(
        self, rows: RowTables, nodes: torch.Tensor, met: torch.Tensor, successors: Successors
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """:meth:`need` now (hyps,), after each letter (hyps, A), and after a token outside the
        alphabet (hyps,: at the row's root, the same sets met and the pending ones confirmed),
        for a tight step's masks. The fourth: after a token outside the alphabet that continues
        the word (at the root, the pending sets lost), or ``None`` without whole-word
        alternatives."""
        ww = self.continues is not None
        if self.need_mode == "plan" and self.gain_levels is not None:
            bits = self.pack(met)  # (hyps,)
            plain_root = self._unmet_length_bits(rows, bits)
            now = plain_root - self._plan_gain_bits(nodes, bits)
            after_bits = bits.unsqueeze(1) | rows_at(self.completes_packed, successors.nodes)
            if not ww:
                return now, self._plan_need_bits(rows, successors.nodes, after_bits), plain_root, None
            assert self.pending_packed is not None and rows.letter_continues is not None
            pend = rows_at(self.pending_packed, nodes)  # (hyps,)
            # letters that do not continue the word confirm the pending sets (Successors.met)
            after_bits = after_bits | torch.where(rows.letter_continues, 0, pend.unsqueeze(1))
            return (now, self._plan_need_bits(rows, successors.nodes, after_bits),
                    self._unmet_length_bits(rows, bits | pend), plain_root)
        if self.need_mode == "plan":
            plain_root = self.unmet_length(rows, met)  # (hyps,): the plan gains nothing at the root
            now = plain_root - self._plan_gain(nodes, met)
            after = self.plan_need(rows, successors.nodes, successors.met)
            if not ww:
                return now, after, plain_root, None
            pending = rows_at(self.pending, nodes)
            return now, after, self.unmet_length(rows, met | pending), plain_root
        bits = self.met_bits(rows, met)  # (hyps,)
        # (hyps, A)
        letter_bits = bits.unsqueeze(1) | rows_at(self.completes_bits, successors.nodes)
        now = self.exact_need(nodes, bits)
        plain_root = at_root = rows_at(self.need_table, rows.root_base + bits)  # (hyps,)
        if ww:
            assert rows.letter_continues is not None
            pend = rows_at(self.pending_bits, nodes)  # (hyps,)
            letter_bits = letter_bits | torch.where(rows.letter_continues, 0, pend.unsqueeze(1))
            at_root = rows_at(self.need_table, rows.root_base + (bits | pend))
        after = self.exact_need(successors.nodes, letter_bits)
        if self.need_mode == "mixed":
            plan_plain = self.unmet_length(rows, met)
            plan_root = (self.unmet_length(rows, met | rows_at(self.pending, nodes)) if ww
                         else plan_plain)
            exact = rows_at(self.exact_node, nodes)  # (hyps,): a row's nodes share its automaton
            now = torch.where(exact, now, plan_plain - self._plan_gain(nodes, met))
            after = torch.where(exact.unsqueeze(1), after,
                                self.plan_need(rows, successors.nodes, successors.met))
            at_root = torch.where(exact, at_root, plan_root)
            plain_root = torch.where(exact, plain_root, plan_plain)
        return now, after, at_root, plain_root if ww else None

    def plan_need(
        self, rows: torch.Tensor | RowTables, nodes: torch.Tensor, met: torch.Tensor
    ) -> torch.Tensor:
        """Tokens of the plan of :meth:`Automaton.plan_need` (not exact; the fallback of automata
        over the exact budget). Shapes as :meth:`need`; int32."""
        if self.gain_levels is not None:
            return self._plan_need_bits(rows, nodes, self.pack(met))
        return self.unmet_length(rows, met) - self._plan_gain(nodes, met)

    def pack(self, met: torch.Tensor) -> torch.Tensor:
        """``met`` (..., S) as one int64 (...,) with bit s for set s (up to 62 sets)."""
        assert self.set_bits is not None
        return (met * self.set_bits).sum(-1)

    def unpack(self, bits: torch.Tensor) -> torch.Tensor:
        """:meth:`pack` undone: (...,) int64 -> (..., S) bool."""
        assert self.set_bits is not None
        return (bits.unsqueeze(-1) & self.set_bits) != 0

    def count_packed(self, bits: torch.Tensor) -> torch.Tensor:
        """The number of sets in each of the packed ``bits`` (...,): int64, a byte at a time."""
        assert self.byte_counts is not None
        return self._byte_sums(self.byte_counts, bits)

    def _byte_sums(self, table: torch.Tensor, bits: torch.Tensor,
                   base: torch.Tensor | None = None, stride: int = 0) -> torch.Tensor:
        """``table`` read at each byte of ``bits`` (...,) and added up: byte c of a value reads
        ``table[base + stride * c + byte]`` (``base``: none, or broadcasting against ``bits``)."""
        total: torch.Tensor | None = None
        for chunk in range((self.num_sets + 7) // 8):
            index = (bits >> (8 * chunk)) & 255 if chunk else bits & 255
            if base is not None:
                index = index + (base + stride * chunk if chunk else base)
            part = table.take(index)
            total = part if total is None else total + part
        assert total is not None
        return total

    def _plan_need_bits(self, rows: torch.Tensor | RowTables, nodes: torch.Tensor,
                        bits: torch.Tensor) -> torch.Tensor:
        """:meth:`plan_need` with the met sets packed (``bits`` of ``nodes``' shape)."""
        return self._unmet_length_bits(rows, bits) - self._plan_gain_bits(nodes, bits)

    def _unmet_length_bits(self, rows: torch.Tensor | RowTables, bits: torch.Tensor) -> torch.Tensor:
        """:meth:`unmet_length` with the met sets packed: the row's total less the met sets'
        lengths, one table lookup per byte of ``bits`` (...,; rows (hyps,) leads) -> int32."""
        assert self.length_bytes is not None
        if isinstance(rows, RowTables):
            assert rows.length_base is not None and rows.total_length is not None
            base, total = rows.length_base, rows.total_length
        else:
            base, total = self._length_rows(rows)
        if bits.dim() > base.dim():
            base, total = base.unsqueeze(-1), total.unsqueeze(-1)
        return total - self._byte_sums(self.length_bytes, bits, base, 256)

    def _length_rows(self, rows: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """For rows (hyps,): where each row's automaton starts in ``length_bytes``, and its
        sets' shortest lengths added up (int32)."""
        chunks = (self.num_sets + 7) // 8
        return self.block[rows] * (256 * chunks), self.min_length[rows].sum(-1, dtype=torch.int32)

    def _plan_gain_bits(self, nodes: torch.Tensor, bits: torch.Tensor) -> torch.Tensor:
        """:meth:`_plan_gain` with the met sets packed: the largest gain level at ``nodes``
        with a set not in ``bits`` (0 where none), int32."""
        assert self.gain_masks is not None and self.gain_levels is not None
        if self.gain_levels.numel() == 0:
            return torch.zeros_like(bits, dtype=torch.int32)
        open_ = (rows_at(self.gain_masks, nodes) & ~bits.unsqueeze(-1)) != 0  # (..., L)
        return (open_ * self.gain_levels).amax(-1)

    def _plan_gain(self, nodes: torch.Tensor, met: torch.Tensor) -> torch.Tensor:
        """Tokens the plan saves by finishing the most advanced unmet set from ``nodes``."""
        return torch.where(met, 0, rows_at(self.gain, nodes)).amax(-1)

    def unmet_length(self, rows: torch.Tensor | RowTables, met: torch.Tensor) -> torch.Tensor:
        """Shortest alternative of every unmet set, added up: ``plan_need`` at the root (...,) int32."""
        if isinstance(rows, RowTables):
            lengths = rows.min_length if met.dim() == 2 else rows.min_length.unsqueeze(1)
        else:
            lengths = self.min_length[rows]
        return torch.where(met, 0, lengths).sum(-1, dtype=torch.int32)


#: Most distinct positive gains for which the plan's need runs on packed met-bits: each level is
#: one column of ``gain_masks`` (a gain is a count of tokens of one alternative, so this is the
#: longest alternative's length, about).
PLAN_GAIN_LEVELS = 16


def _packed_tables(completes: torch.Tensor, pending: torch.Tensor | None, useful: torch.Tensor,
                   gain: torch.Tensor, min_length: torch.Tensor) -> dict[str, torch.Tensor | None]:
    """The tables of met-sets packed as bits (completes, pending, useful, gain: (nodes, S);
    min_length: (distinct, S)): all ``None`` beyond 62 sets; those of the plan's need
    (``gain_levels``, ``gain_masks``, ``length_bytes``) ``None`` too where a gain is negative or
    there are more than :data:`PLAN_GAIN_LEVELS` distinct gains.

    Why: the search keeps, and a tight step's masks read, the sets met by every candidate or
    after every letter: (B, C, S) or (hyps, A, S) booleans, reduced over the sets several times a
    step. On bits the same figures are a few lookups of (B, C) or (hyps, A) integers: a count of
    bits one byte at a time, the met sets' lengths likewise (a table of 256 sums per byte and
    automaton), the plan's gain as the largest level whose sets at the node are not all met.

    >>> t = _packed_tables(torch.tensor([[False, True]]), None, torch.tensor([[True, False]]),
    ...                    torch.tensor([[2, 0]]), torch.tensor([[3, 1]]))
    >>> t["completes_packed"].tolist(), t["gain_levels"].tolist(), t["length_bytes"][:4].tolist()
    ([2], [2], [0, 3, 1, 4])
    """
    sets = completes.shape[1]
    names = ["set_bits", "completes_packed", "pending_packed", "useful_packed", "byte_counts",
             "gain_levels", "gain_masks", "length_bytes"]
    out: dict[str, torch.Tensor | None] = dict.fromkeys(names)
    if sets > 62:
        return out
    bits = torch.ones((), dtype=torch.long) << torch.arange(sets)  # (S,)
    out.update(set_bits=bits, completes_packed=(completes.long() * bits).sum(-1),
               pending_packed=None if pending is None else (pending.long() * bits).sum(-1),
               useful_packed=(useful.long() * bits).sum(-1), byte_counts=_BYTE_BITS.sum(1))
    wide = gain.long()
    levels = torch.unique(wide[wide > 0]).flip(0)
    if bool((wide < 0).any()) or len(levels) > PLAN_GAIN_LEVELS:
        return out
    chunks = (sets + 7) // 8
    lengths = torch.zeros(min_length.shape[0], chunks * 8, dtype=torch.long)
    lengths[:, :sets] = min_length
    per_byte = (lengths.view(-1, chunks, 1, 8) * _BYTE_BITS.view(1, 1, 256, 8)).sum(-1)  # (D, C, 256)
    masks = ((wide.unsqueeze(1) == levels.view(1, -1, 1)).long() * bits).sum(-1)  # (nodes, L)
    out.update(gain_levels=levels.int(), gain_masks=masks, length_bytes=per_byte.reshape(-1).int())
    return out


#: Bit b of each byte value (256, 8).
_BYTE_BITS = (torch.arange(256).unsqueeze(1) >> torch.arange(8)) & 1


def _continues_table(distinct: Sequence[Automaton], vocab_size: int | None) -> torch.Tensor | None:
    """The word pieces of the automata with whole-word alternatives as one (W,) bool tensor, with
    a last True entry that ids past the tokenizer are clamped onto; ``None`` when none has any.
    They must agree (one tokenizer per batch)."""
    given = [a.continues for a in distinct if a.has_whole_word and a.continues is not None]
    if not given:
        return None
    first = given[0]
    for other in given[1:]:
        if other is not first and list(other) != list(first):
            raise DpcError(
                "the automata of one batch hold different word pieces (`continues`): whole-word "
                "constraints of one batch must come from one tokenizer"
            )
    flags = [bool(f) for f in first] + [True] * max(0, (vocab_size or 0) - len(first)) + [True]
    return torch.tensor(flags, dtype=torch.bool)

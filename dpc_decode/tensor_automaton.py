"""The constraint automata of a whole batch, compiled into tensors for the decoding hot path.

Every input row has its own :class:`~dpc_decode.automaton.Automaton`. Their nodes are laid end to
end in one global numbering, and each row gets a small *local alphabet*: the sorted distinct tokens
of its phrases. A transition is then a gather in ``next_node[node, symbol]`` where ``symbol`` is
the token's position in its row's alphabet, or the extra last column for any other token (which
always leads back to the row's root). Tables stay ``nodes × (alphabet + 1)`` instead of
``nodes × vocabulary``, so 300 rows of constraints over a 32k vocabulary cost kilobytes.

Per-hypothesis state is two tensors: ``node`` (hyps,) and ``met`` (hyps, sets) booleans. Sets are
columns of a boolean matrix rather than bits of an integer, so there is no limit on their number.
Rows with fewer sets than the widest row have their padding columns met from the start, and so do
*impossible* sets (every alternative contains a banned phrase): they can never be met, must not
hold back EOS, and are reported unmet by the Python reference after decoding.

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
from dataclasses import dataclass

import torch

from dpc_decode.automaton import Automaton

__all__ = ["Successors", "TensorAutomaton"]


def _bit_matrix(masks: list[int], width: int) -> torch.Tensor:
    """(len(masks), width) booleans: bit s of masks[i]."""
    if width <= 62:
        values = torch.tensor(masks, dtype=torch.long).unsqueeze(1)
        return ((values >> torch.arange(width)) & 1).bool()
    return torch.tensor([[bool((m >> s) & 1) for s in range(width)] for m in masks], dtype=torch.bool)


@dataclass(frozen=True)
class _Block:
    """One automaton's slice of the tables, with node ids local to it."""

    next_node: torch.Tensor  # (n, width + 1)
    completes: torch.Tensor  # (n, S)
    useful: torch.Tensor  # (n, S)
    gain: torch.Tensor  # (n, S)
    violation: torch.Tensor  # (n,)
    depth: torch.Tensor  # (n,)
    min_length: torch.Tensor  # (S,)
    initial_met: torch.Tensor  # (S,)

    @classmethod
    def build(cls, a: Automaton, letters: list[int], width: int, num_sets: int) -> _Block:
        n, k = a.num_nodes, len(letters)
        column = {t: j for j, t in enumerate(letters)}
        # DFA rows in breadth-first order: a node's row is its failure target's row with its own
        # children written over it (failure targets come earlier in that order).
        rows: list[list[int]] = [[]] * n
        for node in a.order:
            row = rows[a.fail[node]].copy() if node else [0] * k
            for t, child in a.children[node].items():
                row[column[t]] = child
            rows[node] = row
        pad = width - k
        # Padding letters mirror letter 0; the last column (a token outside the alphabet) is root.
        table = torch.tensor(
            [row + row[:1] * pad + [0] if k else [0] * (width + 1) for row in rows],
            dtype=torch.long,
        ).reshape(n, width + 1)
        live = [s for s in range(a.num_sets) if s not in set(a.impossible_sets)]
        completes = torch.zeros((n, num_sets), dtype=torch.bool)
        useful = torch.zeros((n, num_sets), dtype=torch.bool)
        gain = torch.zeros((n, num_sets), dtype=torch.int16)
        min_length = torch.zeros(num_sets, dtype=torch.int16)
        initial_met = torch.ones(num_sets, dtype=torch.bool)
        if a.num_sets:
            completes[:, : a.num_sets] = _bit_matrix(a.completes, a.num_sets)
            useful[:, : a.num_sets] = _bit_matrix(a.useful, a.num_sets)
            lengths = torch.tensor(a.min_length, dtype=torch.int32)
            # Impossible sets have no live alternative: their "remaining" is a huge sentinel.
            remaining = torch.tensor(a.remaining, dtype=torch.int64).clamp(max=2**15 - 1)
            remaining = remaining.to(torch.int32).reshape(n, a.num_sets)
            live_t = torch.tensor(live, dtype=torch.long)
            gain[:, live_t] = (lengths[live_t] - remaining[:, live_t]).to(torch.int16)
            min_length[live_t] = lengths[live_t].to(torch.int16)
            initial_met[live_t] = False
        return cls(
            next_node=table,
            completes=completes,
            useful=useful,
            gain=gain,
            violation=torch.tensor(a.violation, dtype=torch.bool),
            depth=torch.tensor(a.depth, dtype=torch.long),
            min_length=min_length,
            initial_met=initial_met,
        )


@dataclass(frozen=True)
class Successors:
    """The letters of each hypothesis and where they lead (see :meth:`TensorAutomaton.successors`)."""

    letters: torch.Tensor  # (hyps, A) token ids
    nodes: torch.Tensor  # (hyps, A) next node of each letter
    met: torch.Tensor  # (hyps, A, S) sets met after each letter


@dataclass(frozen=True)
class TensorAutomaton:
    """Batched, compiled automata. Build with :meth:`compile`; all tensors live on one device."""

    automata: tuple[Automaton, ...]
    alphabet: torch.Tensor  # (rows, A) int64; padding repeats the row's first token
    alphabet_valid: torch.Tensor  # (rows, A) bool
    next_node: torch.Tensor  # (nodes, A + 1) int64 global ids; column A: a token outside the alphabet
    completes: torch.Tensor  # (nodes, S) bool: sets completed on reaching the node
    useful: torch.Tensor  # (nodes, S) bool: the node is on the way to a live alternative of the set
    violation: torch.Tensor  # (nodes,) bool: reaching the node completes a banned phrase
    depth: torch.Tensor  # (nodes,) int64
    gain: torch.Tensor  # (nodes, S) int16: min_length[s] - tokens still needed for s from here
    min_length: torch.Tensor  # (rows, S) int16: shortest live alternative; 0 for padding/impossible
    root: torch.Tensor  # (rows,) int64
    initial_met: torch.Tensor  # (rows, S) bool: padding and impossible sets start met
    max_depth: int
    max_need: int  # the largest need() of any row at the start: no hypothesis ever needs more

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
        cls, automata: Sequence[Automaton], device: torch.device | str = "cpu"
    ) -> TensorAutomaton:
        """Lay the automata of a batch out as tensors on ``device``."""
        automata = tuple(automata)
        num_sets = max([a.num_sets for a in automata] + [1])
        distinct = list({id(a): a for a in automata}.values())
        letters_of = {id(a): sorted({t for n in a.children for t in n}) for a in distinct}
        alphabets = [letters_of[id(a)] for a in automata]
        width = max([len(al) for al in alphabets] + [1])

        alphabet = torch.zeros((len(automata), width), dtype=torch.long)
        alphabet_valid = torch.zeros((len(automata), width), dtype=torch.bool)
        blocks: dict[int, _Block] = {}
        parts: list[_Block] = []
        offsets: list[int] = []
        offset = 0
        for r, (a, letters) in enumerate(zip(automata, alphabets)):
            block = blocks.get(id(a))
            if block is None:  # rows that share constraints share one Automaton: build it once
                block = blocks[id(a)] = _Block.build(a, letters, width, num_sets)
            if letters:
                alphabet[r, : len(letters)] = torch.tensor(letters)
                alphabet[r, len(letters) :] = letters[0]
                alphabet_valid[r, : len(letters)] = True
            parts.append(block)
            offsets.append(offset)
            offset += a.num_nodes
        shift = torch.repeat_interleave(
            torch.tensor(offsets, dtype=torch.long), torch.tensor([a.num_nodes for a in automata])
        )
        next_node = torch.cat([b.next_node for b in parts]) + shift.unsqueeze(1)
        completes = torch.cat([b.completes for b in parts])
        useful = torch.cat([b.useful for b in parts])
        gain = torch.cat([b.gain for b in parts])
        violation = torch.cat([b.violation for b in parts])
        depth = torch.cat([b.depth for b in parts])
        min_length = torch.stack([b.min_length for b in parts])
        initial_met = torch.stack([b.initial_met for b in parts])
        root = torch.tensor(offsets, dtype=torch.long)
        max_need = max([a.need(a.start()) for a in distinct] + [0])

        max_depth = max([max(a.depth) for a in automata] + [0])
        return cls(
            automata=automata,
            alphabet=alphabet.to(device),
            alphabet_valid=alphabet_valid.to(device),
            next_node=next_node.to(device),
            completes=completes.to(device),
            useful=useful.to(device),
            violation=violation.to(device),
            depth=depth.to(device),
            gain=gain.to(device),
            min_length=min_length.to(device),
            root=root.to(device),
            initial_met=initial_met.to(device),
            max_depth=max_depth,
            max_need=max_need,
        )

    # ------------------------------------------------------------------ hot path
    def initial_state(self, rows: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(node, met)`` before any generated token, for hypotheses of the given rows (hyps,)."""
        return self.root[rows], self.initial_met[rows]

    def symbols(self, rows: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
        """Position of each token in its row's alphabet, or ``A`` for tokens outside it.

        rows: (hyps,); tokens: (hyps, k) or (hyps,) -> same shape as tokens.
        """
        squeeze = tokens.dim() == 1
        tok = tokens.unsqueeze(-1) if squeeze else tokens  # (hyps, k)
        letters = self.alphabet[rows]  # (hyps, A)
        valid = self.alphabet_valid[rows]  # (hyps, A)
        hit = (tok.unsqueeze(-1) == letters.unsqueeze(1)) & valid.unsqueeze(1)  # (hyps, k, A)
        found = hit.any(-1)
        sym = torch.where(found, hit.to(torch.uint8).argmax(-1), self.alphabet_size)
        return sym.squeeze(-1) if squeeze else sym

    def successors(self, rows: torch.Tensor, nodes: torch.Tensor, met: torch.Tensor) -> Successors:
        """Every letter of each hypothesis's alphabet, with the state it leads to.

        rows, nodes: (hyps,), met: (hyps, S). One row gather of the transition table; padding
        letters repeat the first letter and its transition. Computed once per step and shared by
        the masks and the candidate selection.
        """
        nxt = self.next_node[nodes, : self.alphabet_size]  # (hyps, A)
        return Successors(self.alphabet[rows], nxt, met.unsqueeze(1) | self.completes[nxt])

    def step(self, nodes: torch.Tensor, symbols: torch.Tensor) -> torch.Tensor:
        """Next nodes: nodes (hyps,) or (hyps, 1); symbols (hyps, k) -> (hyps, k)."""
        if symbols.dim() == 1:
            return self.next_node[nodes, symbols]
        return self.next_node[nodes.unsqueeze(-1), symbols]

    def advance(
        self, rows: torch.Tensor, nodes: torch.Tensor, met: torch.Tensor, tokens: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """State after one token per hypothesis. rows, nodes, tokens: (hyps,); met: (hyps, S)."""
        nxt = self.next_node[nodes, self.symbols(rows, tokens)]  # (hyps,)
        return nxt, met | self.completes[nxt]

    def need(self, rows: torch.Tensor, nodes: torch.Tensor, met: torch.Tensor) -> torch.Tensor:
        """Tokens an achievable plan still needs to meet every set (see :meth:`Automaton.need`).

        rows: (...,), nodes: (...,), met: (..., S) -> (...,) int32.
        """
        zero = torch.zeros((), dtype=torch.int16, device=met.device)
        total = torch.where(met, zero, self.min_length[rows]).sum(-1, dtype=torch.int32)
        gain = torch.where(met, zero, self.gain[nodes]).amax(-1)
        return total - gain.to(torch.int32)

    def progress(self, nodes: torch.Tensor, met: torch.Tensor) -> torch.Tensor:
        """Beam-allocation bank of a state: sets met first, then the depth of the partial match if
        it leads towards an unmet set. An exact integer encoding of that lexicographic pair
        (``depth <= max_depth``), so banks compare as the pairs do."""
        partial = torch.where(
            (self.useful[nodes] & ~met).any(-1), self.depth[nodes], torch.zeros_like(nodes)
        )
        return met.sum(-1) * (self.max_depth + 1) + partial

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

__all__ = ["TensorAutomaton"]


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
    gain: torch.Tensor  # (nodes, S) int64: min_length[s] - tokens still needed for s from here
    min_length: torch.Tensor  # (rows, S) int64: shortest live alternative; 0 for padding/impossible
    root: torch.Tensor  # (rows,) int64
    initial_met: torch.Tensor  # (rows, S) bool: padding and impossible sets start met
    max_depth: int

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
        alphabets = [sorted({t for n in a.children for t in n}) for a in automata]
        width = max([len(al) for al in alphabets] + [1])
        total = sum(a.num_nodes for a in automata)

        alphabet = torch.zeros((len(automata), width), dtype=torch.long)
        alphabet_valid = torch.zeros((len(automata), width), dtype=torch.bool)
        next_node = torch.zeros((total, width + 1), dtype=torch.long)
        completes = torch.zeros((total, num_sets), dtype=torch.bool)
        useful = torch.zeros((total, num_sets), dtype=torch.bool)
        violation = torch.zeros(total, dtype=torch.bool)
        depth = torch.zeros(total, dtype=torch.long)
        gain = torch.zeros((total, num_sets), dtype=torch.long)
        min_length = torch.zeros((len(automata), num_sets), dtype=torch.long)
        root = torch.zeros(len(automata), dtype=torch.long)
        initial_met = torch.ones((len(automata), num_sets), dtype=torch.bool)

        set_bits = [1 << s for s in range(num_sets)]
        offset = 0
        for r, (a, letters) in enumerate(zip(automata, alphabets)):
            n, k = a.num_nodes, len(letters)
            root[r] = offset
            if k:
                alphabet[r, :k] = torch.tensor(letters)
                alphabet[r, k:] = letters[0]
                alphabet_valid[r, :k] = True
            impossible = set(a.impossible_sets)
            live = [s for s in range(a.num_sets) if s not in impossible]
            for s in live:
                initial_met[r, s] = False
                min_length[r, s] = a.min_length[s]
            table = [[offset + a.goto(node, t) for t in letters] for node in range(n)]
            block = torch.full((n, width + 1), offset, dtype=torch.long)
            if k:
                block[:, :k] = torch.tensor(table, dtype=torch.long)
                block[:, k:width] = block[:, :1]  # padding columns are never looked up; keep sane
            next_node[offset : offset + n] = block
            completes[offset : offset + n, : a.num_sets] = torch.tensor(
                [[bool(c & set_bits[s]) for s in range(a.num_sets)] for c in a.completes],
                dtype=torch.bool,
            ).reshape(n, a.num_sets)
            useful[offset : offset + n, : a.num_sets] = torch.tensor(
                [[bool(u & set_bits[s]) for s in range(a.num_sets)] for u in a.useful],
                dtype=torch.bool,
            ).reshape(n, a.num_sets)
            for s in live:
                gain[offset : offset + n, s] = torch.tensor(
                    [a.min_length[s] - a.remaining[node][s] for node in range(n)]
                )
            violation[offset : offset + n] = torch.tensor(a.violation, dtype=torch.bool)
            depth[offset : offset + n] = torch.tensor(a.depth, dtype=torch.long)
            offset += n

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

        rows: (...,), nodes: (...,), met: (..., S) -> (...,) int64.
        """
        unmet = ~met  # (..., S)
        total = (self.min_length[rows] * unmet).sum(-1)
        gain = (self.gain[nodes] * unmet).amax(-1)
        return total - gain

    def progress(self, nodes: torch.Tensor, met: torch.Tensor) -> torch.Tensor:
        """Beam-allocation bank of a state: sets met first, then the depth of the partial match if
        it leads towards an unmet set. An exact integer encoding of that lexicographic pair
        (``depth <= max_depth``), so banks compare as the pairs do."""
        partial = torch.where(
            (self.useful[nodes] & ~met).any(-1), self.depth[nodes], torch.zeros_like(nodes)
        )
        return met.sum(-1) * (self.max_depth + 1) + partial

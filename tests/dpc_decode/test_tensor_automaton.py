"""The compiled tensor automaton against the plain-Python reference, on random constraints."""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from dpc_decode.automaton import Automaton
from dpc_decode.tensor_automaton import TensorAutomaton

phrase = st.lists(st.integers(0, 5), min_size=1, max_size=4)
row = st.tuples(
    st.lists(st.lists(phrase, min_size=1, max_size=3), max_size=4),  # sets (possibly none)
    st.lists(phrase, max_size=2),  # banned
)


@settings(max_examples=150, deadline=None)
@given(rows=st.lists(row, min_size=1, max_size=4), data=st.data())
def test_tensor_walk_equals_reference(rows, data):
    automata = [Automaton(sets, banned) for sets, banned in rows]
    ta = TensorAutomaton.compile(automata)
    length = data.draw(st.integers(1, 12))
    # Tokens 0..7: some inside every alphabet, some (6, 7) outside all of them.
    seqs = [data.draw(st.lists(st.integers(0, 7), min_size=length, max_size=length)) for _ in rows]
    r = torch.arange(len(rows))
    node, met = ta.initial_state(r)
    violated = torch.zeros(len(rows), dtype=torch.bool)
    states = [a.start() for a in automata]
    for t in range(length):
        tokens = torch.tensor([s[t] for s in seqs])
        node, met = ta.advance(r, node, met, tokens)
        violated |= ta.violation[node]
        states = [a.advance(st_, s[t]) for a, st_, s in zip(automata, states, seqs)]
        for i, (a, state) in enumerate(zip(automata, states)):
            assert int(node[i] - ta.root[i]) == state.node
            for s in range(a.num_sets):
                if s in a.impossible_sets:
                    assert bool(met[i, s])  # never holds back EOS; reported unmet after decoding
                else:
                    assert bool(met[i, s]) == bool((state.met >> s) & 1)
            assert bool(met[i, a.num_sets :].all())  # padding columns start met
            assert bool(violated[i]) == state.violated
            assert int(ta.need(r[i : i + 1], node[i : i + 1], met[i : i + 1])) == a.need(state)


def test_alphabet_padding_mirrors_first_letter():
    ta = TensorAutomaton.compile([Automaton([[[3, 4]]]), Automaton([[[5], [6], [7]]])])
    assert ta.alphabet.tolist() == [[3, 4, 3], [5, 6, 7]]
    assert ta.alphabet_valid.tolist() == [[True, True, False], [True, True, True]]
    # Column 2 of row 0 is padding: same transitions as column 0.
    nodes = torch.arange(int(ta.root[1]))
    assert torch.equal(ta.next_node[nodes, 2], ta.next_node[nodes, 0])

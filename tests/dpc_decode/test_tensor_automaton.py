"""The compiled tensor automaton against the plain-Python reference, on random constraints."""

from __future__ import annotations

import dataclasses
from unittest import mock

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from dpc_decode import automaton, tensor_automaton
from dpc_decode.automaton import Automaton, State
from dpc_decode.tensor_automaton import TensorAutomaton, rows_at

phrase = st.lists(st.integers(0, 5), min_size=1, max_size=4)
row = st.tuples(
    st.lists(st.lists(phrase, min_size=1, max_size=3), max_size=4),  # sets (possibly none)
    st.lists(phrase, max_size=2),  # banned
)


@pytest.mark.parametrize("lookup", ["table", "table-vocab", "binary-search"])
@settings(max_examples=100, deadline=None)
@given(rows=st.lists(row, min_size=1, max_size=4), data=st.data())
def test_tensor_walk_equals_reference(lookup, rows, data):
    automata = [Automaton(sets, banned) for sets, banned in rows]
    if data.draw(st.booleans()):  # rows with equal constraints share one object, and its tables
        automata = automata + automata[:1]
        seqs_extra = 1
    else:
        seqs_extra = 0
    budget = 0 if lookup == "binary-search" else tensor_automaton.SYMBOL_TABLE_BUDGET
    with mock.patch.object(tensor_automaton, "SYMBOL_TABLE_BUDGET", budget):
        ta = TensorAutomaton.compile(automata, vocab_size=8 if lookup == "table-vocab" else None)
    assert (ta.symbol_table is None) == (lookup == "binary-search")
    rows = rows + rows[:seqs_extra]
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


def test_rows_with_one_automaton_share_its_nodes():
    shared = Automaton([[[3, 4], [5]], [[6]]])
    other = Automaton([[[7]]])
    ta = TensorAutomaton.compile([shared, other, shared, shared])
    assert ta.root.tolist() == [0, shared.num_nodes, 0, 0]
    assert ta.next_node.shape[0] == shared.num_nodes + other.num_nodes
    assert ta.block.tolist() == [0, 1, 0, 0]


def test_symbols_of_tokens_outside_every_alphabet():
    ta = TensorAutomaton.compile([Automaton([[[3, 900]]])], vocab_size=1000)
    rows = torch.zeros(4, dtype=torch.long)
    assert ta.symbols(rows, torch.tensor([3, 900, 0, 999])).tolist() == [0, 1, 2, 2]


def test_more_sets_than_an_int64_has_bits():
    """70 sets: a node's met-mask is a Python int wider than int64, laid out column by column."""
    sets = [[[10 + s]] for s in range(70)]
    a, small = Automaton(sets), Automaton([[[3]], [[4, 5]]])
    ta = TensorAutomaton.compile([small, a], vocab_size=100)
    assert ta.num_sets == 70 and ta.need_mode == "mixed"  # 2**70 met-bits: no exact table for a
    rows = torch.tensor([0, 1])
    node, met = ta.initial_state(rows)
    seqs = [[4, 5, 3], [10, 79, 45]]
    for t in range(3):
        node, met = ta.advance(rows, node, met, torch.tensor([s[t] for s in seqs]))
    assert met[0].tolist() == [True] * 70  # both sets met, the padding columns met from the start
    assert [s for s in range(70) if met[1, s]] == [0, 35, 69]
    assert met[1].sum() == 3 and bool(a.run(seqs[1]).met == (1 | 1 << 35 | 1 << 69))


@pytest.mark.parametrize("budget", [automaton.EXACT_NEED_BUDGET, 300])
@settings(max_examples=80, deadline=None)
@given(specs=st.lists(st.lists(st.lists(phrase, min_size=1, max_size=3), max_size=4),
                      min_size=1, max_size=5))
def test_compile_solves_the_exact_need_tables_as_the_reference(budget, specs):
    """Compiling works out the need tables of automata without banned phrases or whole words
    all at once; each equals the table the automaton's own search finds (None over budget)."""
    with mock.patch.object(automaton, "EXACT_NEED_BUDGET", budget):
        compiled = [Automaton(sets) for sets in specs]
        # the automaton's own search starts from its edges: compiling must not need it
        with mock.patch.object(Automaton, "_edges", side_effect=AssertionError("searched")):
            TensorAutomaton.compile(compiled)
        for sets, a in zip(specs, compiled):
            assert a.exact_need_table == Automaton(sets).exact_need_table


def _with_plan_need(a: Automaton) -> Automaton:
    """``a`` with its exact table given up, as when over the budget: need is the plan."""
    with mock.patch.object(automaton, "EXACT_NEED_BUDGET", 0):
        assert a.exact_need_table is None  # computed now and kept
    return a


@pytest.mark.parametrize("mode", ["exact", "plan", "mixed"])
@settings(max_examples=60, deadline=None)
@given(rows=st.lists(row, min_size=2, max_size=3), data=st.data())
def test_step_needs_equal_reference(mode, rows, data):
    """need now, after each letter and after any other token (the row's root, sets kept) equal
    the reference's, whether every automaton has an exact table, none, or some."""
    automata = [Automaton(sets, banned) for sets, banned in rows]
    if mode != "exact":
        automata = [_with_plan_need(a) if mode == "plan" or i % 2 else a for i, a in enumerate(automata)]
    ta = TensorAutomaton.compile(automata)
    assert ta.need_mode == mode
    assert ta.max_need == max(a.max_need for a in automata)
    r = torch.arange(len(rows))
    tables = ta.for_rows(r)
    node, met = ta.initial_state(r)
    states = [a.start() for a in automata]
    for _ in range(data.draw(st.integers(0, 5))):
        tokens = data.draw(st.lists(st.integers(0, 7), min_size=len(rows), max_size=len(rows)))
        node, met = ta.advance(r, node, met, torch.tensor(tokens))
        states = [a.advance(s, t) for a, s, t in zip(automata, states, tokens)]
    successors = ta.successors(tables, node, met)
    now, after, at_root, pieces = ta.step_needs(tables, node, met, successors)
    assert pieces is None  # no whole-word alternative
    assert torch.equal(ta.need(r, node, met), now.to(ta.need(r, node, met).dtype))
    for i, (a, state) in enumerate(zip(automata, states)):
        assert int(now[i]) == a.need(state)
        assert int(at_root[i]) == a.need(State(0, state.met))
        letters = ta.alphabet[i][ta.alphabet_valid[i]].tolist()
        assert after[i, : len(letters)].tolist() == [a.need(a.advance(state, t)) for t in letters]


@pytest.mark.parametrize("dtype", [torch.bool, torch.int8, torch.int16, torch.int64])
@pytest.mark.parametrize("table_shape", [(7,), (7, 3), (7, 3, 2)])
@pytest.mark.parametrize("index_shape", [(5,), (4, 6), (2, 3, 4)])
def test_rows_at_is_indexing(dtype, table_shape, index_shape):
    gen = torch.Generator().manual_seed(0)
    high = 2 if dtype == torch.bool else 100
    table = torch.randint(0, high, table_shape, generator=gen).to(dtype)
    index = torch.randint(0, table_shape[0], index_shape, generator=gen)
    got = rows_at(table, index)
    assert got.dtype == dtype
    assert torch.equal(got, table[index])


_DENSE = dict.fromkeys(["gain_levels", "gain_masks", "length_bytes"])
_CONT = [False, False, False, False, True, False, True, False, False, True]  # 4, 6, 9 continue


@pytest.mark.parametrize("whole_word", [False, True])
@settings(max_examples=60, deadline=None)
@given(specs=st.lists(st.lists(st.lists(phrase, min_size=1, max_size=2), min_size=1, max_size=20),
                      min_size=1, max_size=3), data=st.data())
def test_packed_plan_need_equals_the_dense_one(whole_word, specs, data):
    """The plan's need on met-sets packed as bits (up to 20 sets here: three bytes of bits)
    equals the dense (hyps, A, S) reduction it replaces, now, after every letter and at the root,
    with and without whole-word alternatives (the pending sets then count)."""
    if whole_word:
        flags = [[[data.draw(st.booleans()) for _ in alts] for alts in sets] for sets in specs]
        automata = [_with_plan_need(Automaton(sets, (), f, _CONT)) for sets, f in zip(specs, flags)]
    else:
        automata = [_with_plan_need(Automaton(sets)) for sets in specs]
    packed = TensorAutomaton.compile(automata, vocab_size=10)
    assert packed.need_mode == "plan" and packed.gain_levels is not None
    dense = dataclasses.replace(packed, **_DENSE)
    r = torch.arange(len(automata))
    node, met = packed.initial_state(r)
    for _ in range(data.draw(st.integers(0, 6))):
        tokens = data.draw(st.lists(st.integers(0, 9), min_size=len(r), max_size=len(r)))
        node, met = packed.advance(r, node, met, torch.tensor(tokens))
        got = [ta.step_needs(ta.for_rows(r), node, met, ta.successors(ta.for_rows(r), node, met))
               for ta in (packed, dense)]
        for a, b in zip(*got):
            assert (a is None) == (b is None)
            if a is not None:
                assert torch.equal(a.int(), b.int())
        assert torch.equal(packed.need(r, node, met).int(), dense.need(r, node, met).int())

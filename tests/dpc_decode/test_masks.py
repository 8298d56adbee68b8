"""Step masks: feasibility, banned phrases, EOS, repeated n-grams."""

from __future__ import annotations

import torch

from dpc_decode.automaton import Automaton
from dpc_decode.masks import mask_constraints, mask_eos, mask_repeated_ngrams
from dpc_decode.tensor_automaton import TensorAutomaton

V = 12


def allowed_after(sets, banned, prefix, tokens_left):
    ta = TensorAutomaton.compile([Automaton(sets, banned)])
    rows = torch.tensor([0])
    node, met = ta.initial_state(rows)
    for t in prefix:
        node, met = ta.advance(rows, node, met, torch.tensor([t]))
    lp = torch.zeros(1, V)
    mask_constraints(lp, ta, rows, node, met, tokens_left)
    return [t for t in range(V) if torch.isfinite(lp[0, t])]


def test_feasibility_table():
    sets = [[[3, 4]], [[5]]]
    # 3 tokens left, 3 needed: must start [3, 4] or take 5 now.
    assert allowed_after(sets, [], [], 3) == [3, 5]
    # 4 tokens left: one spare token, anything goes.
    assert allowed_after(sets, [], [], 4) == list(range(V))
    # after 3 with 2 left: only 4 (finish [3, 4], then 5) keeps both sets within the budget.
    assert allowed_after(sets, [], [3], 2) == [4]
    # already infeasible by the bound (2 left, 3 needed): nothing is forced.
    assert allowed_after(sets, [], [], 2) == list(range(V))


def test_feasibility_counts_overlapping_alternatives():
    # [3, 4, 5] and [4, 5, 6] fit in 4 tokens only as 3 4 5 6 (the plan's count is 6).
    sets = [[[3, 4, 5]], [[4, 5, 6]]]
    assert allowed_after(sets, [], [], 4) == [3]
    assert allowed_after(sets, [], [3], 3) == [4]
    assert allowed_after(sets, [], [3, 4, 5], 1) == [6]
    # One alternative inside the other: 3 4 5 meets both in 3 tokens.
    assert allowed_after([[[3, 4, 5]], [[4]]], [], [], 3) == [3]


def test_feasibility_steers_around_a_ban_in_context():
    # 5 7 3 is the only way in 3 tokens: 3 first would need 5 7 after it, completing [3, 5].
    assert allowed_after([[[3]], [[5, 7]]], [[3, 5]], [], 3) == [5]


def test_banned_phrase_is_masked_only_where_it_would_complete():
    # banned [7, 8]: 8 is forbidden only right after 7.
    assert 8 in allowed_after([], [[7, 8]], [], 5)
    assert 8 not in allowed_after([], [[7, 8]], [7], 5)
    assert 9 not in allowed_after([], [[9]], [], 5)


def test_eos_mask_per_hypothesis():
    lp = torch.zeros(2, V)
    mask_eos(lp, torch.tensor([1, 2]), torch.tensor([True, False]))
    assert torch.isinf(lp[0, 1]) and torch.isinf(lp[0, 2]) and torch.isfinite(lp[1]).all()


def test_repeated_ngram_mask_handles_tokens_closing_several_windows():
    lp = torch.zeros(1, V)
    # bigrams so far: (5,6) (6,5) (5,6) (6,5); the next token after 5 must not be 6.
    mask_repeated_ngrams(lp, torch.tensor([[5, 6, 5, 6, 5]]), 2)
    assert [t for t in range(V) if not torch.isfinite(lp[0, t])] == [6]

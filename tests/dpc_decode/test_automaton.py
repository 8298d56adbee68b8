"""Token-walk tables for the reference automaton, and properties against brute force."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpc_decode.automaton import Automaton, satisfies
from dpc_decode.errors import ConstraintError


def brute_force_met(tokens: list[int], sets: list[list[list[int]]]) -> int:
    """Bitmask of sets with an alternative that occurs as a contiguous run of ``tokens``."""
    mask = 0
    for i, alternatives in enumerate(sets):
        for alt in alternatives:
            n = len(alt)
            if any(tokens[k : k + n] == alt for k in range(len(tokens) - n + 1)):
                mask |= 1 << i
    return mask


def occurs(tokens: list[int], phrase: list[int]) -> bool:
    n = len(phrase)
    return any(tokens[k : k + n] == phrase for k in range(len(tokens) - n + 1))


# Each row: sets, banned, tokens, expected met mask after each token, satisfied at the end.
WALKS = [
    pytest.param(  # alternatives that are token-prefixes of each other (HF <= 4.56 rejects these)
        [[[100], [100, 7], [100, 8]]], [], [5, 100, 8], [0, 1, 1], True, id="prefix-alternatives"
    ),
    pytest.param(  # the shortest alternative alone completes the set
        [[[100, 7], [100]]], [], [100], [1], True, id="interior-terminal"
    ),
    pytest.param(  # overlap: [1,1,2] inside 5 1 1 1 2 needs the failure link
        [[[1, 1, 2]]], [], [5, 1, 1, 1, 2], [0, 0, 0, 0, 1], True, id="failure-link-overlap"
    ),
    pytest.param(  # walk follows [1,2,3,4], fails over to [2,3,5]
        [[[1, 2, 3, 4], [2, 3, 5], [3, 6], [7]]], [], [1, 2, 3, 5], [0, 0, 0, 1], True,
        id="fail-over-to-other-alternative",
    ),
    pytest.param(  # two sets met out of order, with a token between
        [[[1, 2]], [[3, 4]]], [], [1, 3, 4, 9, 1, 2], [0, 0, 2, 2, 2, 3], True, id="two-sets"
    ),
    pytest.param(  # one alternative shared by two sets meets both at once
        [[[4, 5]], [[4, 5], [6]]], [], [4, 5], [0, 3], True, id="shared-alternative"
    ),
    pytest.param(  # prompt-like prefix does not count: nothing met before the phrase ends
        [[[1, 2]]], [], [1], [0], False, id="partial-only"
    ),
    pytest.param(  # a banned phrase inside the positive one: met, but violated
        [[[1, 2, 3]]], [[2]], [1, 2, 3], [0, 0, 1], False, id="banned-inside-positive"
    ),
    pytest.param(  # a banned phrase found through a failure link
        [[[9]]], [[1, 2]], [9, 1, 1, 2], [1, 1, 1, 1], False, id="banned-via-failure-link"
    ),
    pytest.param(  # banned phrase that is a prefix of a positive alternative, positive not produced
        [[[3]]], [[7, 8]], [7, 3], [0, 1], True, id="banned-prefix-not-completed"
    ),
]


@pytest.mark.parametrize(("sets", "banned", "tokens", "met_after", "satisfied"), WALKS)
def test_token_walks(sets, banned, tokens, met_after, satisfied):
    a = Automaton(sets, banned)
    state = a.start()
    seen = []
    for t in tokens:
        state = a.advance(state, t)
        seen.append(state.met)
    assert seen == met_after
    assert a.is_satisfied(state) is satisfied
    assert satisfies(tokens, sets, banned) is satisfied


def test_matches_report_every_occurrence_in_end_order():
    a = Automaton([[[1, 1, 2]], [[1, 2], [2]]])
    got = [(m.set_index, m.alternative_index, m.start, m.end) for m in a.matches([5, 1, 1, 1, 2])]
    assert got == [(0, 0, 2, 5), (1, 0, 3, 5), (1, 1, 4, 5)]
    first = a.first_matches([2, 1, 1, 2])
    assert (first[1].alternative_index, first[1].start) == (1, 0)
    assert (first[0].start, first[0].end) == (1, 4)


def test_dead_alternatives_and_impossible_sets():
    a = Automaton([[[1, 2, 3], [4]], [[5, 2]]], banned=[[2]])
    assert a.dead == [[True, False], [True]]
    assert a.impossible_sets == (1,)
    assert a.min_length == [1, 0]


@pytest.mark.parametrize(
    ("sets", "banned", "tokens", "need"),
    [
        ([[[1, 2, 3]], [[4], [5, 6]]], [], [], 4),
        ([[[1, 2, 3]], [[4], [5, 6]]], [], [1, 2], 2),  # finish [1,2,3] (1) then [4] (1)
        ([[[1, 2, 3]], [[4], [5, 6]]], [], [5], 4),  # [6] + [1,2,3], or [1,2,3] + [4]: 4 either way
        ([[[1, 2, 3]], [[4], [5, 6]]], [], [1, 2, 3, 4], 0),
        ([[[1, 2, 3], [7]]], [[7]], [], 3),  # [7] is dead: the plan must use [1,2,3]
    ],
)
def test_need_table(sets, banned, tokens, need):
    a = Automaton(sets, banned)
    assert a.need(a.run(tokens)) == need


@pytest.mark.parametrize(
    ("sets", "message"),
    [
        ([[]], "constraint set 0 is empty"),
        ([[[1], []]], "set 0, alternative 1 is empty"),
        ([[["rain"]]], "holds 'rain', which is not a token id"),
        ([[[-3]]], "token id -3 in set 0, alternative 0"),
        ("rain", "constraints must be a list of sets, got 'rain'"),
        ([[1, 2]], "set 0, alternative 0 must be a list of token ids, got 1"),
    ],
)
def test_bad_input_names_the_value(sets, message):
    with pytest.raises(ConstraintError, match=message.replace("[", r"\[").replace("]", r"\]")):
        Automaton(sets)


phrase = st.lists(st.integers(0, 4), min_size=1, max_size=4)
token_sets = st.lists(st.lists(phrase, min_size=1, max_size=4), min_size=1, max_size=4)


@settings(max_examples=300, deadline=None)
@given(sets=token_sets, banned=st.lists(phrase, max_size=2), tokens=st.lists(st.integers(0, 5), max_size=14))
def test_reference_equals_brute_force(sets, banned, tokens):
    a = Automaton(sets, banned)
    state = a.start()
    for k, t in enumerate(tokens):
        state = a.advance(state, t)
        prefix = tokens[: k + 1]
        assert state.met == brute_force_met(prefix, sets)
        assert state.violated == any(occurs(prefix, p) for p in banned)


@settings(max_examples=200, deadline=None)
@given(sets=token_sets, tokens=st.lists(st.integers(0, 5), max_size=10))
def test_need_is_achievable_by_following_its_plan(sets, tokens):
    """need(state) tokens chosen greedily (the token that lowers need by one) meet every set."""
    a = Automaton(sets)
    state = a.run(tokens)
    alphabet = sorted({t for alts in sets for alt in alts for t in alt})
    budget = a.need(state)
    for _ in range(budget):
        before = a.need(state)
        if before == 0:
            break
        state = min((a.advance(state, t) for t in alphabet), key=a.need)
        assert a.need(state) <= before - 1
    assert state.met == a.all_met

"""Token-walk tables for the reference automaton, and properties against brute force."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpc_decode import automaton
from dpc_decode.automaton import Automaton, State, satisfies
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
        # Overlapping alternatives: fewer tokens than their lengths added up.
        ([[[1, 2, 3]], [[2, 3, 4]]], [], [], 4),  # suffix of one is the other's prefix: 1 2 3 4
        ([[[1, 2, 3]], [[2, 3, 4]]], [], [2], 4),  # 2 3 4 1 2 3 is 5 more; 1 2 3 4 is 4
        ([[[1, 2, 3]], [[2]]], [], [], 3),  # one contains the other
        ([[[1, 2]], [[2, 3]], [[3, 1]]], [], [], 4),  # a chain: 1 2 3 1
        ([[[4, 5]], [[4, 5], [6]]], [], [], 2),  # one alternative meets both sets
        # A ban across an alternative's boundary: after 3, 5 7 would complete [3, 5].
        ([[[3]], [[5, 7]]], [[3, 5]], [], 3),  # 5 7 3
        ([[[3]], [[5, 7]]], [[3, 5]], [3], 3),  # one token to leave the 3 behind, then 5 7
    ],
)
def test_need_table(sets, banned, tokens, need):
    a = Automaton(sets, banned)
    assert a.need_is_exact
    assert a.need(a.run(tokens)) == need


@pytest.mark.parametrize(
    ("sets", "exact", "plan"),
    [
        ([[[1, 2, 3]], [[2, 3, 4]]], 4, 6),
        ([[[1, 2, 3]], [[2]]], 3, 4),
        ([[[1, 2]], [[2, 3]], [[3, 1]]], 4, 6),
    ],
)
def test_beyond_the_budget_need_is_the_plan(sets, exact, plan, monkeypatch):
    """Over EXACT_NEED_BUDGET the table is not built and need falls back to the plan, which does
    not count overlaps: larger than the exact minimum here."""
    assert Automaton(sets).need(Automaton(sets).start()) == exact
    monkeypatch.setattr(automaton, "EXACT_NEED_BUDGET", 0)
    a = Automaton(sets)
    assert not a.need_is_exact and a.exact_need_table is None
    assert a.need(a.start()) == a.plan_need(a.start()) == a.max_need == plan


def test_exact_need_budget_counts_transitions_times_met_sets():
    sets = [[[1, 2]], [[3]]]
    a = Automaton(sets)
    work = sum(len(t) for t in a.transitions()) << 2
    assert a.transitions()[0] == (0, 1, 3)  # the root: any other token, 1 and 3
    with pytest.MonkeyPatch.context() as m:
        m.setattr(automaton, "EXACT_NEED_BUDGET", work)
        assert Automaton(sets).need_is_exact
        m.setattr(automaton, "EXACT_NEED_BUDGET", work - 1)
        assert not Automaton(sets).need_is_exact


def test_max_need_counts_a_way_out_of_a_ban():
    # After 7, the only alternative's first token completes the ban [7, 5]: one more token first.
    a = Automaton([[[5, 6]]], banned=[[7, 5]])
    assert a.need(a.start()) == 2
    assert a.need(a.run([7])) == 3
    assert a.max_need == 3


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


def brute_force_need(a: Automaton, state: State, alphabet: list[int], longest: int) -> int | None:
    """Fewest tokens after ``state`` that meet every possible set without completing a ban, by
    trying every string over ``alphabet`` and one token outside it, shortest first; None when
    no string of up to ``longest`` tokens does."""
    other = max(alphabet, default=0) + 1
    live = sum(1 << s for s in range(a.num_sets) if s not in a.impossible_sets)
    for n in range(longest + 1):
        for tokens in itertools.product([*alphabet, other], repeat=n):
            walk, ok = state, True
            for t in tokens:
                walk = a.advance(walk, t)
                if a.violation[walk.node]:
                    ok = False
                    break
            if ok and walk.met & live == live:
                return n
    return None


small_phrase = st.lists(st.integers(0, 3), min_size=1, max_size=3)


@settings(max_examples=150, deadline=None)
@given(
    sets=st.lists(st.lists(small_phrase, min_size=1, max_size=3), min_size=1, max_size=3),
    banned=st.lists(st.lists(st.integers(0, 4), min_size=1, max_size=2), max_size=2),
    tokens=st.lists(st.integers(0, 4), max_size=4),
)
def test_need_equals_brute_force_minimum(sets, banned, tokens):
    """need is the true minimum: no string of fewer tokens meets the sets, one of need tokens
    does (strings of up to 5 tokens tried), overlaps and bans in context included."""
    a = Automaton(sets, banned)
    alphabet = sorted({t for alts in sets for alt in alts for t in alt} | {t for p in banned for t in p})
    state = a.run(tokens)
    if a.violation[state.node]:
        return
    need = a.need(state)
    assert need <= a.max_need
    assert brute_force_need(a, state, alphabet, 5) == (need if need <= 5 else None)
    assert need <= a.plan_need(state) or banned  # without bans the plan is achievable


@settings(max_examples=300, deadline=None)
@given(sets=st.one_of(token_sets, st.just([])), banned=st.lists(phrase, max_size=2),
       tokens=st.lists(st.integers(0, 5), max_size=14), data=st.data())
def test_scan_is_run_and_first_matches(sets, banned, tokens, data):
    """The outputs' single walk gives what the two walks it replaces give, whole words too."""
    whole = [[data.draw(st.booleans()) for _ in alts] for alts in sets]
    continues = data.draw(st.lists(st.booleans(), min_size=6, max_size=6))
    a = Automaton(sets, banned, whole_word=whole, continues=continues)
    state, first = a.scan(tokens)
    walked: dict = {}
    for m in a.matches(tokens):  # the first occurrence of each set, from the matches walk
        walked.setdefault(m.set_index, m)
    assert state == a.run(tokens)
    assert first == walked

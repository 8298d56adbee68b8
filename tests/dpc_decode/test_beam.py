"""Dynamic beam allocation: table tests and invariants."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from dpc_decode.beam import (
    allocate,
    dba_order,
    descending_order,
    group_keys,
    lexsort,
    neurologic_allocate,
    rank_within_bank,
    within_tolerance,
)

# Each row: banks, scores, valid, beam size, expected first `beam` candidates (indices).
TABLE = [
    # one bank: plain score order (what unconstrained beam search does)
    ([0, 0, 0, 0], [-3.0, -1.0, -2.0, -4.0], [1, 1, 1, 1], 3, [1, 2, 0]),
    # three banks, beam 3: the best of each bank, the most advanced bank first
    ([0, 0, 1, 2], [-1.0, -2.0, -5.0, -9.0], [1, 1, 1, 1], 3, [3, 2, 0]),
    # empty banks hand their slots over: bank 2 has one candidate, bank 0 gets the rest
    ([0, 0, 0, 2], [-1.0, -2.0, -3.0, -9.0], [1, 1, 1, 1], 3, [3, 0, 1]),
    # invalid candidates come last even in a high bank
    ([0, 0, 5, 5], [-1.0, -2.0, -0.1, -0.2], [1, 1, 0, 1], 2, [3, 0]),
    # round robin: rank 0 of banks (2, 1, 0), then rank 1 of banks (2, 1, 0)
    ([0, 1, 2, 0, 1, 2], [-1.0, -1.0, -1.0, -2.0, -2.0, -2.0], [1] * 6, 5, [2, 1, 0, 5, 4]),
]


@pytest.mark.parametrize(("bank", "score", "valid", "beam", "expected"), TABLE)
def test_dba_order_table(bank, score, valid, beam, expected):
    order = dba_order(
        torch.tensor([bank]), torch.tensor([score]), torch.tensor([valid], dtype=torch.bool)
    )
    assert order[0, :beam].tolist() == expected


def test_lexsort_is_lexicographic_not_weighted():
    # A weighted sum bank*100+score would put (bank 1, score -150) below (bank 0, score -1).
    bank = torch.tensor([0, 1])
    score = torch.tensor([-1.0, -150.0])
    assert lexsort(-bank, -score).tolist() == [1, 0]


@settings(max_examples=200, deadline=None)
@given(
    data=st.lists(
        st.tuples(st.integers(0, 4), st.floats(-50, 0, allow_nan=False), st.booleans()),
        min_size=1, max_size=30,
    ),
    beam=st.integers(1, 12),
)
def test_allocation_invariants(data, beam):
    bank = torch.tensor([[b for b, _, _ in data]])
    score = torch.tensor([[s for _, s, _ in data]])
    valid = torch.tensor([[v for _, _, v in data]])
    order = dba_order(bank, score, valid)[0]
    assert sorted(order.tolist()) == list(range(len(data)))  # a permutation
    chosen = order[:beam].tolist()
    n_valid = int(valid.sum())
    # Valid candidates are chosen before any invalid one.
    assert sum(bool(valid[0, c]) for c in chosen) == min(beam, n_valid)
    # Every non-empty bank gets its fair share: min(its size, beam // non-empty banks).
    banks = {b for b, _, v in data if v}
    for b in banks:
        size = sum(1 for bb, _, v in data if v and bb == b)
        got = sum(1 for c in chosen if valid[0, c] and data[c][0] == b)
        assert got >= min(size, beam // len(banks))
    # Within a bank, chosen candidates are its best ones (compared as the float32 sorted).
    values = score[0].tolist()
    for b in banks:
        members = sorted((values[i] for i, (bb, _, v) in enumerate(data) if v and bb == b),
                         reverse=True)
        got = sorted((values[c] for c in chosen if valid[0, c] and data[c][0] == b), reverse=True)
        assert got == members[: len(got)]


def test_rank_within_bank_batched():
    bank = torch.tensor([[0, 0, 1], [2, 2, 2]])
    score = torch.tensor([[-2.0, -1.0, -3.0], [-1.0, -3.0, -2.0]])
    valid = torch.ones_like(bank, dtype=torch.bool)
    assert rank_within_bank(bank, score, valid).tolist() == [[1, 0, 0], [0, 2, 1]]


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_three_sort_order_equals_the_five_sort_definition(data):
    """dba_order (three stable sorts) gives lexsort(rank, -bank, -score) on the valid candidates,
    every valid one before every invalid one."""
    n = data.draw(st.integers(1, 12))
    bank = torch.tensor([data.draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))])
    score = torch.tensor([data.draw(st.lists(st.sampled_from([-3.0, -2.0, -1.5, -1.0, 0.0]),
                                             min_size=n, max_size=n))])
    valid = torch.tensor([data.draw(st.lists(st.booleans(), min_size=n, max_size=n))])
    order = dba_order(bank, score, valid)[0].tolist()
    reference = lexsort(rank_within_bank(bank, score, valid), -bank, -score)[0].tolist()
    k = int(valid.sum())
    assert order[:k] == reference[:k]
    assert sorted(order[k:]) == sorted(reference[k:])


_SCORES = st.one_of(
    st.sampled_from([0.0, -0.0, float("-inf"), float("inf"), -1.0, -1e-45, 1e-45, -3.4e38]),
    st.floats(-1e6, 1e6, allow_nan=False, width=32),
)


@settings(max_examples=300, deadline=None)
@given(data=st.data(), dtype=st.sampled_from([torch.float32, torch.bfloat16, torch.float16,
                                              torch.float64]))
def test_descending_order_is_the_two_key_lexsort(data, dtype):
    """One sort of the packed key orders exactly as two stable sorts: ties (0.0 and -0.0
    included) stay in place, -inf last within its bank, banks as far apart as int32 allows."""
    rows = data.draw(st.integers(1, 3))
    n = data.draw(st.integers(1, 20))
    banks = st.one_of(st.integers(-1, 6), st.sampled_from([1 - 2**31, 2**31 - 1]))
    bank = torch.tensor(data.draw(st.lists(st.lists(banks, min_size=n, max_size=n),
                                           min_size=rows, max_size=rows)))
    score = torch.tensor(data.draw(st.lists(st.lists(_SCORES, min_size=n, max_size=n),
                                            min_size=rows, max_size=rows))).to(dtype)
    assert descending_order(bank, score).tolist() == lexsort(-bank, -score).tolist()


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_allocation_first_is_the_head_of_the_order(data):
    """allocate(...).first(k) is dba_order's first k; first_outside(k, excluded) is the first k
    not excluded in that order, then the excluded in order (the stable sort it replaces)."""
    rows, n = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 16))
    k = data.draw(st.integers(1, n))

    def grid(values):
        return data.draw(st.lists(st.lists(values, min_size=n, max_size=n), min_size=rows,
                                  max_size=rows))

    bank = torch.tensor(grid(st.integers(0, 3)))
    score = torch.tensor(grid(st.sampled_from([-3.0, -2.0, -1.0, 0.0, float("-inf")])))
    valid = torch.isfinite(score) & torch.tensor(grid(st.booleans()))
    excluded = torch.tensor(grid(st.booleans()))
    order = dba_order(bank, score, valid)
    allocation = allocate(bank, score, valid)
    assert allocation.first(k).tolist() == order[:, :k].tolist()
    out = excluded.gather(1, order)
    first = torch.argsort(out.to(torch.uint8), dim=1, stable=True)[:, :k]
    columns, flags = allocation.first_outside(k, excluded)
    assert columns.tolist() == order.gather(1, first).tolist()
    assert flags.tolist() == out.gather(1, first).tolist()


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_score_slots_put_the_best_scores_first_then_the_allocation_order(data):
    """allocate(..., score_slots=s, slot_eligible=e): the s best valid candidates of e by score
    lead, best first, whatever their bank; the rest follow in dynamic beam allocation order."""
    rows, n = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 16))
    slots, k = data.draw(st.integers(0, n)), data.draw(st.integers(1, n))

    def grid(values):
        return data.draw(st.lists(st.lists(values, min_size=n, max_size=n), min_size=rows,
                                  max_size=rows))

    bank = torch.tensor(grid(st.integers(0, 3)))
    # distinct scores, so that the order is one
    score = torch.tensor([data.draw(st.permutations([-0.25 * i for i in range(n)]))
                          for _ in range(rows)])
    valid = torch.tensor(grid(st.booleans()))
    eligible = torch.tensor(grid(st.booleans())) if data.draw(st.booleans()) else None
    order = dba_order(bank, score, valid).tolist()
    got = allocate(bank, score, valid, slots, eligible).first(k).tolist()
    for row in range(rows):
        best = sorted((c for c in range(n) if valid[row, c]
                       and (eligible is None or eligible[row, c])), key=lambda c: -score[row, c])
        lead = best[:slots]
        assert got[row] == (lead + [c for c in order[row] if c not in lead])[:k]


def test_score_slots_keep_the_best_path_of_a_bank_left_behind():
    # banks 2, 1, 0 and beam 2: allocation keeps the heads of banks 2 and 1; one score slot
    # keeps the best candidate overall (bank 0) first, then bank 2's head
    bank, score = torch.tensor([[0, 0, 1, 2]]), torch.tensor([[-0.1, -0.2, -5.0, -9.0]])
    valid = torch.ones_like(bank, dtype=torch.bool)
    assert allocate(bank, score, valid).first(2).tolist() == [[3, 2]]
    assert allocate(bank, score, valid, score_slots=1).first(2).tolist() == [[0, 3]]


# NeuroLogic's selection. Each row: groups (which sets met, as a bitmask), complete, scores,
# valid, beams, expected first candidates.
NEUROLOGIC_TABLE = [
    # one group, nothing complete: plain score order
    ([0, 0, 0], [0, 0, 0], [-3.0, -1.0, -2.0], [1, 1, 1], 2, [1, 2, 0]),
    # the best complete candidate first, even far behind on score
    ([1, 1, 3], [0, 0, 1], [-1.0, -2.0, -9.0], [1, 1, 1], 1, [2, 0, 1]),
    # groups by *which* sets, not how many: {a} and {b} each keep their best in round 0
    ([1, 1, 2, 2], [0] * 4, [-1.0, -2.0, -5.0, -6.0], [1] * 4, 2, [0, 2, 1, 3]),
    # at most `beams` complete candidates jump the rounds; the rest wait their turn
    ([3, 3, 3, 0], [1, 1, 1, 0], [-1.0, -2.0, -3.0, -1.5], [1] * 4, 1, [0, 3, 1, 2]),
    # invalid candidates come last, complete or not
    ([3, 0], [1, 0], [-0.1, -5.0], [0, 1], 1, [1, 0]),
]


@pytest.mark.parametrize("wide", [True, False])
@pytest.mark.parametrize(("group", "complete", "score", "valid", "beams", "expected"),
                         NEUROLOGIC_TABLE)
def test_neurologic_allocate_table(group, complete, score, valid, beams, expected, wide):
    a = neurologic_allocate(torch.tensor([group]), torch.tensor([complete], dtype=torch.bool),
                            torch.tensor([score]), torch.tensor([valid], dtype=torch.bool), beams,
                            wide=wide)
    assert a.first(len(expected)).tolist() == [expected]


@settings(max_examples=200, deadline=None)
@given(data=st.data(), beams=st.integers(1, 4), slots=st.integers(0, 3))
def test_neurologic_allocate_packed_keys_give_the_same_order(data, beams, slots):
    """``wide=False`` (one sort of packed keys) orders every column exactly as the lexicographic
    sorts do, ties, signed zeros and -inf scores of invalid candidates included."""
    n = data.draw(st.integers(1, 14))
    draw = {"group": st.integers(0, 2**31 - 1) if data.draw(st.booleans()) else st.integers(0, 3),
            "score": st.sampled_from([0.0, -0.0, -0.5, -1.0, -2.0, float("-inf")]),
            "valid": st.booleans(), "complete": st.booleans(), "eligible": st.booleans()}
    rows = [{k: data.draw(st.lists(v, min_size=n, max_size=n)) for k, v in draw.items()}
            for _ in range(2)]
    t = {k: torch.tensor([r[k] for r in rows]) for k in draw}
    valid = t["valid"] & torch.isfinite(t["score"])
    orders = [neurologic_allocate(t["group"], t["complete"], t["score"], valid, beams, slots,
                                  t["eligible"], wide=wide).first(n) for wide in (True, False)]
    assert orders[0].tolist() == orders[1].tolist()


def neurologic_reference(group, complete, score, valid, beams):
    """The selection as NeuroLogic's reference code writes it (``_sequential_topk``), in plain
    Python: the best ``beams`` complete candidates by score; then chunk r = the r-th best of
    every group, each chunk by score; invalid candidates last."""
    n = len(group)
    live = [i for i in range(n) if valid[i]]
    by_score = sorted(live, key=lambda i: (-score[i], i))
    first = [i for i in by_score if complete[i]][:beams]
    groups: dict[int, list[int]] = {}
    for i in by_score:
        groups.setdefault(group[i], []).append(i)
    rank = {i: members.index(i) for members in groups.values() for i in members}
    rest = sorted((i for i in live if i not in first), key=lambda i: (rank[i], -score[i], i))
    return first + rest + [i for i in range(n) if not valid[i]]


@settings(max_examples=200, deadline=None)
@given(data=st.data(), beams=st.integers(1, 4))
def test_neurologic_allocate_equals_the_reference(data, beams):
    """Against the plain-Python reference, over random groups, scores (ties included) and
    validity, two inputs at once; and its promises: within a group the order is by score (the
    best-scoring hypothesis of a group is never dropped for a worse one of it), and where a
    valid complete candidate exists, the best one is first."""
    n = data.draw(st.integers(1, 12))
    rows = []
    for _ in range(2):
        group = data.draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
        score = data.draw(st.lists(st.sampled_from([-0.5, -1.0, -2.0, -3.5, -7.0]),
                                   min_size=n, max_size=n))
        valid = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))
        rows.append((group, [g == 3 for g in group], score, valid))
    tensors = [torch.tensor([r[k] for r in rows]) for k in range(4)]
    order = neurologic_allocate(tensors[0], tensors[1], tensors[2], tensors[3], beams).first(n)
    for (group, complete, score, valid), got in zip(rows, order.tolist()):
        want = neurologic_reference(group, complete, score, valid, beams)
        # ties in score may be broken differently, and invalid candidates are in no order:
        # compare (group, score) sequences of the valid ones, and that they lead
        live = sum(valid)
        assert all(valid[i] for i in got[:live])
        assert [(group[i], score[i]) for i in got[:live]] == \
               [(group[i], score[i]) for i in want[:live]]
        for g in set(group):
            members = [score[i] for i in got if valid[i] and group[i] == g]
            assert members == sorted(members, reverse=True)
        done = [i for i in range(n) if valid[i] and complete[i]]
        if done:
            assert score[got[0]] == max(score[i] for i in done) and complete[got[0]]


@given(data=st.data(), tolerance=st.integers(0, 3))
def test_within_tolerance_is_the_reference(data, tolerance):
    n = data.draw(st.integers(1, 10))
    met = data.draw(st.lists(st.integers(0, 5), min_size=n, max_size=n))
    valid = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))
    got = within_tolerance(torch.tensor([met]), torch.tensor([valid]), tolerance)[0].tolist()
    best = max((m for m, v in zip(met, valid) if v), default=-1)
    assert got == [v and m >= best - tolerance for m, v in zip(met, valid)]


def test_group_keys_name_the_sets_met():
    met = torch.tensor([[[1, 0, 1], [1, 0, 1], [0, 1, 1], [0, 0, 0]]], dtype=torch.bool)
    keys = group_keys(met)[0].tolist()
    assert keys[0] == keys[1] and len({keys[0], keys[2], keys[3]}) == 3
    wide = torch.zeros((1, 3, 70), dtype=torch.bool)
    wide[0, 0, 65] = wide[0, 1, 3] = True  # beyond 62 sets: hashed, still distinct
    assert len(set(group_keys(wide)[0].tolist())) == 3

"""Dynamic beam allocation (Post & Vilar 2018), vectorised as in Hu et al. 2019.

Candidates of one input are grouped into *banks* by constraint progress. Each bank gets an equal
share of the beam, and slots a bank cannot fill go to the others. Hu et al. showed this is one sort:
rank every candidate within its bank by score, then order all candidates by ``(rank ascending,
bank descending)`` and keep the first ``beam_size``. Round ``r`` of that order holds the ``r``-th
best candidate of every bank, most advanced bank first, so each bank gets its turn in every round
and empty banks simply drop out.

All functions are pure and work on a leading batch dimension: ``(batch, candidates)``.

>>> import torch
>>> bank = torch.tensor([[0, 0, 0, 1, 2]])
>>> score = torch.tensor([[-1.0, -2.0, -3.0, -5.0, -9.0]])
>>> valid = torch.ones_like(bank, dtype=torch.bool)
>>> dba_order(bank, score, valid)[0, :3].tolist()   # one per bank first, top bank leading
[4, 3, 0]
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

__all__ = [
    "Allocation", "allocate", "dba_order", "descending_order", "group_keys", "lexsort",
    "neurologic_allocate", "rank_within_bank", "within_tolerance",
]


def lexsort(*keys: torch.Tensor) -> torch.Tensor:
    """Permutation that sorts along the last dimension by ``keys[0]``, ties broken by ``keys[1]``,
    and so on, each ascending (negate a key to sort it descending). A real lexicographic sort:
    successive stable sorts from the least significant key, never a weighted sum of keys.

    >>> import torch
    >>> lexsort(torch.tensor([1, 0, 1, 0]), torch.tensor([5.0, 7.0, 2.0, 3.0])).tolist()
    [3, 1, 2, 0]
    """
    order = torch.argsort(keys[-1], dim=-1, stable=True)
    for key in reversed(keys[:-1]):
        order = order.gather(-1, torch.argsort(key.gather(-1, order), dim=-1, stable=True))
    return order


def descending_order(bank: torch.Tensor, score: torch.Tensor) -> torch.Tensor:
    """``lexsort(-bank, -score)``: banks descending, then scores descending, ties in place.

    On the CPU, as one stable sort instead of two: each float32 score becomes an int32 that
    orders as its negation does (the bits of a negative float count its magnitude: flipping the
    sign bit makes them an int that grows as the score falls; a positive float's bits grow with
    it: all of them flipped fall below those), packed below the bank in one int64. The same order
    exactly, not a weighted sum of keys (``-0.0`` is made ``0.0`` first, as ``==`` has them equal).
    Banks are small integers (|bank| < 2**31); float16 and bfloat16 scores widen to float32
    exactly. One sort of a step's candidates instead of two, for 3 more operations (``python
    benchmarks/engine_micro.py``: ``descending_order_ms`` against ``lexsort_ms``). float64
    scores, and other devices, where a 64-bit radix sort does twice a 32-bit one's passes, keep
    :func:`lexsort`.

    >>> import torch
    >>> bank, score = torch.tensor([[0, 1, 0, 1]]), torch.tensor([[-1.0, -3.0, 0.0, -2.0]])
    >>> descending_order(bank, score).tolist()
    [[3, 1, 2, 0]]
    """
    if score.device.type != "cpu" or score.dtype == torch.float64:
        return lexsort(-bank, -score)
    if score.dtype != torch.float32:
        score = score.float()
    bits = (score + 0.0).view(torch.int32)  # + 0.0: -0.0 becomes 0.0
    falling = torch.where(bits < 0, bits ^ -(2**31), ~bits).long()  # grows as the score falls
    return torch.argsort(falling.add(bank, alpha=-(2**32)), dim=-1, stable=True)


def _bank_sorted(
    bank: torch.Tensor, score: torch.Tensor, valid: torch.Tensor, wide: bool = False
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The candidates sorted by (bank desc, score desc), invalid ones last, each one's rank
    within its bank in that order (``n`` for invalid candidates), and the positions 0..n-1
    (batch, n). Banks must be >= 0; ``wide``: they may reach 2**31 and beyond (NeuroLogic's
    bitmask groups), so the two-key :func:`lexsort` is used instead of the packed key."""
    n = bank.shape[-1]
    grouped_bank = torch.where(valid, bank, bank.new_full((), -1))
    order = (lexsort(-grouped_bank, -score) if wide
             else descending_order(grouped_bank, score))  # (batch, n)
    sorted_bank = grouped_bank.gather(-1, order)
    position = torch.arange(n, device=bank.device).expand_as(order)
    starts = torch.ones_like(sorted_bank, dtype=torch.bool)
    starts[..., 1:] = sorted_bank[..., 1:] != sorted_bank[..., :-1]
    group_start = torch.where(starts, position, torch.zeros_like(position)).cummax(-1).values
    return order, torch.where(sorted_bank >= 0, position - group_start, n), position


def rank_within_bank(bank: torch.Tensor, score: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
    """Rank of each candidate among the valid candidates of its bank, best score first (0-based).
    Invalid candidates get rank ``candidates`` (after every valid one).

    >>> import torch
    >>> rank_within_bank(torch.tensor([[1, 0, 1, 0, 1]]),
    ...                  torch.tensor([[-1.0, -2.0, -3.0, -0.5, -2.0]]),
    ...                  torch.tensor([[True, True, True, True, False]])).tolist()
    [[0, 1, 1, 0, 5]]
    """
    order, sorted_rank, _ = _bank_sorted(bank, score, valid)
    return torch.empty_like(sorted_rank).scatter_(-1, order, sorted_rank)


@dataclass(frozen=True)
class Allocation:
    """The order of dynamic beam allocation, kept as one sort and a key: ``order`` (batch, n)
    holds the candidates by (bank desc, score desc), invalid ones last, and ``key`` (batch, n)
    the place in allocation order of ``order[:, i]`` as a distinct integer (``rank x n + i``:
    within a rank, that order is already right). A step reads only the first few candidates in
    allocation order, so :meth:`first` takes them with ``topk`` instead of sorting all n
    (``python benchmarks/engine_micro.py``: ``topk_ms`` against ``argsort_ms``).

    >>> import torch
    >>> bank, score = torch.tensor([[0, 0, 0, 1, 2]]), torch.tensor([[-1.0, -2, -3, -5, -9]])
    >>> a = allocate(bank, score, torch.ones(1, 5, dtype=torch.bool))
    >>> a.first(3).tolist()
    [[4, 3, 0]]
    >>> a.first_outside(2, torch.tensor([[False, False, True, False, True]]))[0].tolist()
    [[3, 0]]
    """

    order: torch.Tensor  # (batch, n) candidate columns
    key: torch.Tensor  # (batch, n) int64, distinct, below n * (n + 1)

    def first(self, k: int) -> torch.Tensor:
        """The first ``k`` candidates (columns, (batch, k)) in allocation order; ``k`` <= n."""
        return self.order.gather(-1, self.key.topk(k, dim=-1, largest=False).indices)

    def first_outside(self, k: int, excluded: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The first ``k`` candidates (columns, (batch, k)) in allocation order of those not
        ``excluded`` (batch, n), then (where fewer than ``k`` are) of the excluded, and whether
        each is excluded. ``k`` <= n."""
        n = self.key.shape[-1]
        out = excluded.gather(-1, self.order)  # (batch, n) in ``order``
        first = self.key.add(out, alpha=n * (n + 1)).topk(k, dim=-1, largest=False).indices
        return self.order.gather(-1, first), out.gather(-1, first)


def allocate(bank: torch.Tensor, score: torch.Tensor, valid: torch.Tensor,
             score_slots: int = 0, slot_eligible: torch.Tensor | None = None) -> Allocation:
    """Dynamic beam allocation of the candidates (all (batch, n)), as an :class:`Allocation`:
    :func:`dba_order` without sorting by rank. With ``score_slots``, the best that many valid
    candidates by score (of those ``slot_eligible``, (batch, n), where given) come first, best
    first, whatever their bank; the rest follow in allocation order, a slot counting toward
    its bank's share (:attr:`dpc_decode.options.BeamSearchOptions.score_slots`)."""
    order, sorted_rank, position = _bank_sorted(bank, score, valid)
    key = torch.add(position, sorted_rank, alpha=order.shape[-1])
    if score_slots:
        slots = min(score_slots, order.shape[-1])
        eligible = valid if slot_eligible is None else valid & slot_eligible
        ordered = torch.where(eligible, score, score.new_full((), float("-inf"))).gather(-1, order)
        best = ordered.topk(slots, dim=-1).indices  # (batch, slots) positions in ``order``
        lead = torch.arange(slots, device=key.device).sub(slots).expand_as(best)  # -slots..-1
        lead = torch.where(eligible.gather(-1, order).gather(-1, best), lead, key.gather(-1, best))
        key = key.scatter(-1, best, lead)
    return Allocation(order, key)


def dba_order(bank: torch.Tensor, score: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
    """Order of the candidates under dynamic beam allocation: ``(rank within bank ascending, bank
    descending, score descending)``; invalid candidates last. Taking the first ``k`` gives each
    non-empty bank an equal share of ``k`` and hands unused shares to the other banks.

    Without constraints every candidate is in one bank and this is plain score order, the same
    selection as ordinary beam search.

    Three stable sorts, two on the CPU (:func:`descending_order`): the candidates sorted by
    (bank desc, score desc) are already in that order within each rank, so one stable sort of
    them by rank gives the full order (the ``lexsort(rank_within_bank(...), -bank, -score)``
    this replaces took five). Decoding needs only the first few: :func:`allocate` gives them
    without the last sort.
    """
    a = allocate(bank, score, valid)
    return a.order.gather(-1, torch.argsort(a.key, dim=-1))


def group_keys(met: torch.Tensor) -> torch.Tensor:
    """One int64 per candidate naming *which* sets it has met (``met`` (batch, n, S) bool):
    the bitmask of its met sets when ``S <= 62``, else a sum of fixed random 40-bit weights
    (distinct sets collide with probability about ``n**2 / 2**40``). Equal sets give equal keys.

    >>> import torch
    >>> group_keys(torch.tensor([[[True, False], [False, True], [True, True]]])).tolist()
    [[1, 2, 3]]
    """
    sets = met.shape[-1]
    if sets <= 62:
        weights = 2 ** torch.arange(sets, device=met.device, dtype=torch.long)
    else:
        gen = torch.Generator().manual_seed(sets)
        weights = torch.randint(0, 2**40, (sets,), generator=gen).to(met.device)
    return (met.long() * weights).sum(-1)


def within_tolerance(met_count: torch.Tensor, valid: torch.Tensor, tolerance: int) -> torch.Tensor:
    """NeuroLogic's ``sat_tolerance``: the valid candidates (batch, n) whose count of met sets
    is at most ``tolerance`` below the most any valid candidate of their input has met.

    >>> import torch
    >>> within_tolerance(torch.tensor([[3, 1, 0, 2]]), torch.tensor([[False, True, True, True]]),
    ...                  1).tolist()
    [[False, True, False, True]]
    """
    best = torch.where(valid, met_count, -1).amax(-1, keepdim=True)  # (batch, 1)
    return valid & (met_count >= best - tolerance)


def neurologic_allocate(group: torch.Tensor, complete: torch.Tensor, score: torch.Tensor,
                        valid: torch.Tensor, beams: int, score_slots: int = 0,
                        slot_eligible: torch.Tensor | None = None, *,
                        wide: bool = True) -> Allocation:
    """NeuroLogic decoding's selection (Lu et al. 2021, ``_sequential_topk`` of its reference
    code), as an :class:`Allocation`: candidates (all (batch, n)) are grouped by *which* sets
    they have met (``group``, :func:`group_keys`), not how many. The ``beams`` best candidates
    that meet every set (``complete``) come first, by score; then the rest in rounds: round
    ``r`` holds the ``r``-th best candidate of every group, by score within the round.
    Invalid candidates come last. So a hypothesis that meets every set is never dropped for a
    worse one, and each way of having met the sets keeps its best hypothesis in the first
    round, however low its score against other groups'.

    ``wide=False`` says every key is below ``2**31`` (:func:`group_keys` of at most 31 sets):
    the groups are then one sort of a packed key (:func:`descending_order`) instead of two. The
    final order (tier, rank, score) is always one such sort instead of three; the order is the
    lexicographic one either way.

    >>> import torch
    >>> group = torch.tensor([[0, 0, 1, 3, 3]])       # 3: both of two sets met (complete)
    >>> score = torch.tensor([[-1.0, -2.0, -4.0, -5.0, -3.0]])
    >>> a = neurologic_allocate(group, group == 3, score, torch.ones_like(group, dtype=torch.bool), 1)
    >>> a.first(5).tolist()  # the best complete; round 0 of the rest (0, 2); round 1 (1, 3)
    [[4, 0, 2, 1, 3]]
    """
    n = group.shape[-1]
    order, sorted_rank, position = _bank_sorted(group, score, valid, wide=wide)
    rank = torch.empty_like(sorted_rank).scatter_(-1, order, sorted_rank)  # (batch, n)
    tier = torch.where(valid & complete & (rank < beams), 0, torch.where(valid, 1, 2))
    if score_slots:
        eligible = valid if slot_eligible is None else valid & slot_eligible
        slots = min(score_slots, n)
        best = torch.where(eligible, score, score.new_full((), float("-inf"))).topk(slots, -1)
        lead = torch.zeros_like(valid).scatter_(-1, best.indices, True) & eligible
        tier = torch.where(lead, -1, tier)
    # lexsort(tier, rank, -score) as one sort: (tier, rank) packed into one small "bank" that
    # falls as they rise (tier -1..2, rank 0..n), the score below it (descending_order)
    place = (tier + 1) * (n + 1) + rank
    final = descending_order(4 * (n + 1) - place, score)  # (batch, n) columns in allocation order
    return Allocation(final, position)

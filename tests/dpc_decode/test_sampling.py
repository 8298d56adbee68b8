"""Constrained sampling."""

from __future__ import annotations

import pytest
import torch

from dpc_decode import DpcError, sample, satisfies

from .conftest import EOS, tiny_gpt2, tiny_t5


def test_top_k_1_is_greedy_decoding():
    model = tiny_t5()
    prompt = [5, 6, 7]
    ours = sample(model, None, [prompt], num_samples=3, top_k=1, max_new_tokens=8, seed=0)[0]
    ids = torch.tensor([prompt])
    greedy = model.generate(ids, attention_mask=torch.ones_like(ids), do_sample=False,
                            num_beams=1, max_new_tokens=8)[0, 1:].tolist()
    if EOS in greedy:
        greedy = greedy[: greedy.index(EOS)]
    assert all(list(o.token_ids) == greedy for o in ours)


def test_unconstrained_first_token_follows_the_model():
    model = tiny_gpt2(vocab=12)
    prompt = [3, 4]
    draws = sample(model, None, [prompt], num_samples=3000, max_new_tokens=1, seed=0,
                   eos_token_id=None)[0]
    counts = torch.bincount(torch.tensor([o.token_ids[0] for o in draws]), minlength=12).float()
    with torch.no_grad():
        probs = model(input_ids=torch.tensor([prompt])).logits[0, -1].softmax(-1)
    assert torch.allclose(counts / counts.sum(), probs, atol=0.03)


def test_unique_oversampling_satisfies_and_bans():
    model = tiny_gpt2()
    sets = [[[7], [8, 9]], [[20]]]
    outs = sample(model, None, [[5, 6], [10]], sets, banned=[[11]], num_samples=25,
                  unique=True, max_new_tokens=6, seed=3, temperature=1.5)
    for per_input in outs:
        assert len(per_input) == 25
        assert len({o.token_ids for o in per_input}) == 25
        for o in per_input:
            assert o.satisfied and satisfies(list(o.token_ids), sets, [[11]])
            assert len(o.token_ids) <= 6


def test_seed_makes_draws_reproducible():
    model = tiny_t5()
    a = sample(model, None, [[5, 6]], [[[7]]], num_samples=5, max_new_tokens=6, seed=7)
    b = sample(model, None, [[5, 6]], [[[7]]], num_samples=5, max_new_tokens=6, seed=7)
    assert [o.token_ids for o in a[0]] == [o.token_ids for o in b[0]]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"temperature": 0.0}, r"`temperature` \(=0.0\) has to be a finite number > 0"),
        ({"top_p": 1.5}, r"`top_p` \(=1.5\)"),
        ({"num_samples": 0}, r"`num_samples` \(=0\)"),
    ],
)
def test_bad_sampling_options(kwargs, message):
    with pytest.raises(DpcError, match=message):
        sample(tiny_t5(), None, [[5]], **kwargs)


def test_finished_rows_leave_the_batch_without_changing_the_draws(family, step_rows):
    """Compacting finished rows out of the model's batch is an optimisation only: the same
    seed gives the same samples with it and without it (a runner that cannot shrink)."""
    model = family[1]()
    sizes = step_rows
    args = ([[5, 6], [10, 11, 12]], None)
    kwargs = {"num_samples": 12, "max_new_tokens": 40, "seed": 4, "banned": [[11]]}
    compacted = sample(model, None, *args, **kwargs)
    assert min(sizes) < max(sizes) == 24  # rows left the batch as they finished
    sizes.full_batch()
    sizes.clear()
    full = sample(model, None, *args, **kwargs)
    assert set(sizes) == {24}
    assert [[o.token_ids for o in x] for x in compacted] == [[o.token_ids for o in x] for x in full]
    assert [[round(o.score, 4) for o in x] for x in compacted] == [
        [round(o.score, 4) for o in x] for x in full]


def _sort_and_scatter_top_p(scores: torch.Tensor, top_p: float) -> torch.Tensor:
    """The top-p filter by a full sort of values and indices (the reference)."""
    ordered, index = scores.sort(dim=-1, descending=True)
    probs = ordered.softmax(dim=-1)
    before = probs.cumsum(dim=-1) - probs
    drop = before >= top_p
    drop[:, 0] = False
    return scores.scatter(-1, index, ordered.masked_fill(drop, float("-inf")))


@pytest.mark.parametrize("kind", ["plain", "ties", "some -inf", "log-probs", "all -inf row", "float64"])
def test_top_p_filter_is_the_sort_and_scatter_bit_for_bit(kind):
    """The CPU filter sorts values only; it keeps exactly the tokens the sort-and-scatter
    keeps (ties at the boundary included: it hands those back to the full sort)."""
    from dpc_decode.sampling import filter_top_k_top_p

    gen = torch.Generator().manual_seed(0)
    for trial in range(60):
        vocab = int(torch.randint(2, 400 if trial % 4 else 5000, (1,), generator=gen))
        x = torch.randn(5, vocab, generator=gen) * float(torch.rand(1, generator=gen) * 5 + 0.1)
        if kind == "ties":
            x = (x * 2).round() / 2
        elif kind == "some -inf":
            x[torch.rand(x.shape, generator=gen) < 0.3] = float("-inf")
        elif kind == "log-probs":
            x = x.log_softmax(-1) / 0.7
        elif kind == "all -inf row":
            x[2] = float("-inf")
        elif kind == "float64":
            x = x.double()
        top_p = float(torch.rand(1, generator=gen)) * 0.99 + 0.005
        ours, ref = filter_top_k_top_p(x.clone(), top_p=top_p), _sort_and_scatter_top_p(x.clone(), top_p)
        bits = torch.int64 if x.dtype == torch.float64 else torch.int32
        assert torch.equal(ours.view(bits), ref.view(bits)), (trial, top_p)
        for rows in ([0], [1, 3], [4, 2, 0]):  # a row's result does not depend on the others
            assert torch.equal(filter_top_k_top_p(x[rows].clone(), top_p=top_p).view(bits),
                               ref[rows].view(bits))


def test_top_p_draws_do_not_depend_on_how_the_nucleus_is_found(family, monkeypatch):
    """Same seed, same samples, whether the nucleus comes from the values-only sort or from the
    full sort (the fast path turned off)."""
    from dpc_decode import sampling

    model = family[1]()
    args = ([[5, 6], [10, 11, 12]], None)
    kwargs = {"num_samples": 12, "max_new_tokens": 20, "seed": 2, "top_p": 0.8,
              "temperature": 0.9, "top_k": 30}
    fast = sample(model, None, *args, **kwargs)
    monkeypatch.setattr(sampling, "_nucleus_by_threshold", lambda scores, top_p: None)
    full = sample(model, None, *args, **kwargs)
    assert [[(o.token_ids, o.score) for o in x] for x in fast] == [
        [(o.token_ids, o.score) for o in x] for x in full]

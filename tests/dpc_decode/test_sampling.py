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

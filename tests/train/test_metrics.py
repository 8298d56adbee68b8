"""Log-probabilities of continuations: batched by length, the same numbers as one at a time."""

from __future__ import annotations

from pathlib import Path

import pytest

from train.metrics import continuation_log_probs, length_buckets


def test_length_buckets_cover_every_index_once_and_bound_the_batch():
    lengths = [5, 1, 16, 7, 7, 2, 15, 9, 3, 16]
    batches = length_buckets(lengths, batch_size=3)
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    assert all(len(b) <= 3 for b in batches)
    for b in batches:  # padding to the batch's longest wastes at most 20% of its positions
        width = max(lengths[i] for i in b)
        assert len(b) * width - sum(lengths[i] for i in b) <= 0.2 * len(b) * width
    assert length_buckets([], 4) == []


def test_batched_scores_equal_one_at_a_time(tiny_lm: Path):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(str(tiny_lm)).eval()
    tok = AutoTokenizer.from_pretrained(str(tiny_lm))
    tails = [[2000 + i for i in range(n)] for n in (1, 6, 2, 9, 1, 4, 9)]
    batched = continuation_log_probs(model, tok, "the baby cried because", tails, batch_size=3)
    alone = [continuation_log_probs(model, tok, "the baby cried because", [t])[0] for t in tails]
    assert batched == pytest.approx(alone, abs=1e-4)
    assert all(v < 0 for v in batched)
    with pytest.raises(ValueError, match="empty continuation"):
        continuation_log_probs(model, tok, "the baby", [[2001], []])

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


class _WordTokenizer:
    """A token per word (id 3 + its length), EOS 0; adds no special token."""

    eos_token_id = 0
    bos_token_id = None

    def __call__(self, texts, add_special_tokens=False):
        one = isinstance(texts, str)
        ids = [[3 + len(w) for w in t.split()] for t in ([texts] if one else texts)]
        if add_special_tokens and self.bos_token_id is not None:
            ids = [[self.bos_token_id] + row for row in ids]
        return {"input_ids": ids[0] if one else ids}


class _BosTokenizer(_WordTokenizer):
    """The same, but like Gemma's: BOS (id 1) first when it adds its special tokens."""

    bos_token_id = 1


def test_prompts_start_with_the_bos_the_decoder_gives():
    # A model scored without the <bos> it is decoded with reads another distribution (Gemma's
    # PMI fell to chance without it): both scorers put the tokenizer's BOS first.
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    from train.metrics import causal_log_probs

    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(vocab_size=30, n_embd=8, n_layer=1, n_head=2)).eval()
    ids = torch.tensor([[1, 4, 5, 5, 0]])  # <bos> "a bb" then "cc" and EOS
    with torch.no_grad():
        logp = model(input_ids=ids).logits.log_softmax(-1)[0]
    expected = float(logp[2, 5] + logp[3, 0])
    plain = causal_log_probs(model, _WordTokenizer(), ["a bb"], ["cc"])[0]
    with_bos = causal_log_probs(model, _BosTokenizer(), ["a bb"], ["cc"])[0]
    shared = causal_log_probs(model, _BosTokenizer(), ["a bb", "a bb"], ["cc", "cc"])
    cached = continuation_log_probs(model, _BosTokenizer(), "a bb", [[5, 0]])[0]
    assert with_bos == pytest.approx(expected, abs=1e-5)
    assert shared == pytest.approx([expected] * 2, abs=1e-5)
    assert cached == pytest.approx(expected, abs=1e-5)
    assert abs(plain - expected) > 1e-4

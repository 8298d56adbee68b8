"""The ending model's data: gold endings only, pool contexts kept out, splits by context."""

from __future__ import annotations

from causal_mining.shards import read_pairs
from tasks.datasets import MultipleChoiceItem
from tasks.swag.ending_model import build_bank, context_input, context_split


def _item(i: int, ctx: str) -> MultipleChoiceItem:
    return MultipleChoiceItem(i, ctx, ("wrong one here", "the gold ending", "wrong two", "x y"), 1)


def test_bank_has_gold_endings_of_lm_contexts_only(tmp_path):
    items = [_item(i, f"context number {i} of the story") for i in range(200)]
    items.append(_item(999, "short"))  # one word: left out, counted
    counts = build_bank(items, tmp_path / "bank.tsv")
    pairs = list(read_pairs(tmp_path / "bank.tsv"))
    assert counts["short"] == 1
    assert counts["written"] == len(pairs) and counts["written"] + counts["pool"] == 200
    assert 10 < counts["pool"] < 60  # 15% of contexts, by hash
    assert {p.effect for p in pairs} == {"the gold ending"}  # never a wrong ending
    assert all(context_split(p.cause) == "lm" for p in pairs)


def test_split_is_by_context_and_stable():
    assert context_split("A man  is sitting on a roof. he") == context_split(
        "A man is sitting on a roof. he")
    shares = [context_split(f"ctx {i}") for i in range(2000)]
    assert 0.12 < shares.count("pool") / 2000 < 0.18


def test_context_input_keeps_the_last_words():
    assert context_input("a b c d", max_words=2) == "effect: c d"


def test_lora_examples_are_gold_endings_of_lm_contexts_with_a_dev_split():
    from tasks.swag.ending_model import causal_prompt, lora_examples

    items = [_item(i, f"context number {i} of the story") for i in range(400)]
    items.append(_item(999, "short"))
    train, dev, counts = lora_examples(items)
    assert counts["short"] == 1 and counts["train"] == len(train) and counts["dev"] == len(dev)
    assert counts["train"] + counts["dev"] + counts["pool"] == 400
    assert 0 < len(dev) < 30  # 2% of contexts, by hash
    assert {t for _, t in train + dev} == {"the gold ending"}  # never a wrong ending
    assert all(context_split(p) == "lm" for p, _ in train + dev)
    assert not {p for p, _ in train} & {p for p, _ in dev}
    assert train[0][0] == causal_prompt(items[0].ctx) or context_split(items[0].ctx) == "pool"


def test_lora_ending_model_trains_loads_and_oversamples(tmp_path, tiny_lm):
    import math

    import pytest

    from dpc_errors import DpcError
    from tasks.swag.ending_model import (
        end_token_ids,
        ending_prompt,
        is_ending_adapter,
        load_ending_model,
        train_ending_model,
    )
    from tasks.swag.oversample import OversampleOptions, oversample, read_pool

    items = [_item(i, f"the man walks to the car number {i} and he") for i in range(60)]
    out = tmp_path / "endings"
    summary = train_ending_model(items, out, base=str(tiny_lm), epochs=1, batch_size=16,
                                 progress=False)
    assert summary["steps"] == math.ceil(summary["examples"]["train"] / 16)
    assert summary["dev_perplexity_after"] == round(math.exp(summary["dev_loss_after"]), 2)
    assert is_ending_adapter(out) and not is_ending_adapter(tmp_path)
    assert train_ending_model(items, out, base=str(tiny_lm), epochs=1, batch_size=16,
                              progress=False) == summary  # finished: not retrained
    with pytest.raises(DpcError, match="other options"):
        train_ending_model(items, out, base=str(tiny_lm), epochs=2, progress=False)
    with pytest.raises(DpcError, match="neither 'bundled'"):
        train_ending_model(items, tmp_path / "other", base="no-such-model", progress=False)

    model, tok = load_ending_model(out)
    assert not model.config.is_encoder_decoder
    assert ending_prompt(model, "  a man  walks. he") == "a man walks. he"
    assert end_token_ids(model, tok) == [tok.eos_token_id]  # WordPiece: no line-break token
    options = OversampleOptions(per_context=4, max_new_tokens=4, max_rounds=1)
    oversample(items[:3], tmp_path / "pool", model, tok, options, progress=False)
    pool = read_pool(tmp_path / "pool")
    assert len(pool) == 3
    for e in pool:
        assert e.drawn == 4 and e.gold_log_prob < 0
        # the gold is counted as the model writes it: its word pieces and the end token
        assert e.gold_tokens == len(tok(" " + e.gold, add_special_tokens=False).input_ids) + 1


def test_the_bundled_ending_model_is_a_safetensors_lora_adapter():
    import json

    from tasks.swag.ending_model import (
        ADAPTER_FILE,
        BUNDLED_ENDING_MODEL,
        MARKER,
        is_ending_adapter,
    )
    from train.checkpoint import check_safetensors

    assert is_ending_adapter(BUNDLED_ENDING_MODEL)
    config = json.loads((BUNDLED_ENDING_MODEL / MARKER).read_text())
    assert config["base"] == "smollm2-135m" and config["r"] == 16
    assert config["summary"]["dev_perplexity_after"] < config["summary"]["dev_perplexity_before"]
    check_safetensors(BUNDLED_ENDING_MODEL / ADAPTER_FILE)  # never a pickle
    assert (BUNDLED_ENDING_MODEL / ADAPTER_FILE).stat().st_size < 12_000_000

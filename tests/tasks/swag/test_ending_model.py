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

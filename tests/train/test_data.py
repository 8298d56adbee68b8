from pathlib import Path

import pytest

from causal_mining.shards import HEADER
from tests.train.conftest import tiny_pairs
from train.data import bucket_batches, load_examples, pair_examples, split_of
from train.errors import TrainDataError


def test_examples_per_variant() -> None:
    epc, cpe = tiny_pairs(2)[1], tiny_pairs(2)[0]
    assert [e.direction for e in pair_examples(epc, "both")] == ["effect", "cause"]
    assert [e.source for e in pair_examples(epc, "paper-cause")] == [f"cause: {epc.effect}"]
    assert pair_examples(epc, "paper-effect") == []
    assert [e.target for e in pair_examples(cpe, "paper-effect")] == [cpe.effect]
    with pytest.raises(TrainDataError, match="'sideways'"):
        pair_examples(epc, "sideways")


def test_split_is_stable_and_roughly_one_percent() -> None:
    splits = [split_of(f"sentence number {i}.") for i in range(20000)]
    assert splits == [split_of(f"sentence number {i}.") for i in range(20000)]
    assert 150 < splits.count("dev") < 250 and 150 < splits.count("test") < 250


def test_bucketing_groups_similar_lengths() -> None:
    lengths = [(i * 37) % 100 for i in range(1000)]
    batches = bucket_batches(lengths, 10, seed=1, epoch=0)
    assert sorted(i for b in batches for i in b) == list(range(1000))
    spread = sum(max(lengths[i] for i in b) - min(lengths[i] for i in b) for b in batches) / 100
    assert spread < 5  # random batches of 10 would spread over ~80
    assert bucket_batches(lengths, 10, 1, 1) != batches  # a new order every epoch


def test_empty_shard_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "causalbank-00000.tsv").write_text(HEADER)
    with pytest.raises(TrainDataError, match="gives no training example"):
        load_examples(tmp_path)


def test_malformed_shard_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "causalbank-00000.tsv").write_text("cause\teffect\nit rained\tit was wet\n")
    with pytest.raises(TrainDataError, match="malformed CausalBank"):
        load_examples(tmp_path)
    (tmp_path / "causalbank-00000.tsv").write_text(HEADER + "only\ttwo\n")
    with pytest.raises(TrainDataError, match="2 columns"):
        load_examples(tmp_path)


def test_folder_without_shards_and_missing_path(tmp_path: Path) -> None:
    with pytest.raises(TrainDataError, match="no causalbank"):
        load_examples(tmp_path)
    with pytest.raises(TrainDataError, match="does not exist"):
        load_examples(tmp_path / "missing")


def test_load_examples_filters_and_splits(tiny_bank: Path) -> None:
    splits = load_examples(tiny_bank, "both")
    n = sum(len(v) for v in splits.values())
    assert n == 2 * 160
    assert sum(len(v) for v in load_examples(tiny_bank, "paper-cause").values()) == 80
    assert sum(len(v) for v in load_examples(tiny_bank, "both", max_words=5).values()) < n

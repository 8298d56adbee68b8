"""LoRA fine-tuning of a causal LM (train.lora) on a tiny random Llama: options, learning,
resuming to the same adapter, loading merged, and refusing a foreign adapter."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from dpc_errors import DpcError
from train.errors import TrainConfigError
from train.lora import LoraFiles, LoraOptions, load_merged, lora_targets, train_lora

EXAMPLES = [(f"the {w} fell because", f"the wind blew {i}") for i, w in
            enumerate(["tree", "fence", "sign", "roof", "pole", "wall", "lamp", "gate"])]


@pytest.mark.parametrize("field, value, message", [
    ("r", 0, r"`r` \(=0\) must be an integer >= 1"),     # rank 0 is no adapter
    ("alpha", -1, r"`alpha` \(=-1\)"),
    ("batch_size", 2.5, r"`batch_size` \(=2.5\)"),            # not an integer
    ("checkpoint_every", True, r"`checkpoint_every` \(=True\)"),  # a bool is not a count
    ("epochs", 0, r"`epochs` \(=0\) has to be a finite number > 0"),
    ("lr", -1e-3, r"`lr` \(=-0.001\)"),
    ("max_minutes", 0, r"`max_minutes` \(=0\)"),
])
def test_bad_options_name_the_value(field: str, value: object, message: str) -> None:
    with pytest.raises(TrainConfigError, match=message):
        LoraOptions(**{field: value})


def test_targets_are_the_projections_the_model_has() -> None:
    names = ["model.layers.0.self_attn.q_proj", "model.layers.0.self_attn.o_proj",
             "model.layers.0.mlp.down_proj", "model.embed_tokens", "lm_head"]
    assert lora_targets(names) == ["q_proj", "o_proj", "down_proj"]
    assert lora_targets(["encoder.layer.0.attention.self.query"]) == []


def _options(**kw: object) -> LoraOptions:
    values = dict(r=2, alpha=4, batch_size=4, epochs=3, lr=1e-2, progress=False,
                  checkpoint_every=1)
    values.update(kw)
    return LoraOptions(**values)  # type: ignore[arg-type]


def test_training_lowers_the_target_loss_and_saves_a_float16_adapter(tiny_lm: Path,
                                                                    tmp_path: Path) -> None:
    summary = train_lora(EXAMPLES, tmp_path / "run", _options(), tiny_lm, dev=EXAMPLES[:4])
    assert summary["steps"] == summary["total_steps"] == 6 and not summary["stopped_by_time"]
    assert summary["dev_loss_after"] < summary["dev_loss_before"]
    weights = load_file(str(tmp_path / "run" / LoraFiles().adapter))
    assert weights and all(t.dtype == torch.float16 for t in weights.values())
    assert not (tmp_path / "run" / LoraFiles().state).exists()  # a finished run keeps no state


def test_a_run_stopped_by_time_continues_to_the_same_adapter(tiny_lm: Path,
                                                             tmp_path: Path) -> None:
    straight = train_lora(EXAMPLES, tmp_path / "a", _options(), tiny_lm)
    first = train_lora(EXAMPLES, tmp_path / "b", _options(max_minutes=1e-9), tiny_lm)
    assert first["stopped_by_time"] and first["steps"] == 1
    assert (tmp_path / "b" / LoraFiles().state).exists()
    resumed = train_lora(EXAMPLES, tmp_path / "b", _options(), tiny_lm)
    assert resumed["steps"] == straight["steps"] == 6
    a = load_file(str(tmp_path / "a" / LoraFiles().adapter))
    b = load_file(str(tmp_path / "b" / LoraFiles().adapter))
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_merged_model_differs_from_the_base_and_foreign_adapters_are_refused(
        tiny_lm: Path, tmp_path: Path) -> None:
    from train.lora import load_base

    train_lora(EXAMPLES, tmp_path / "run", _options(), tiny_lm)
    adapter = tmp_path / "run" / LoraFiles().adapter
    merged, tokenizer = load_merged(tiny_lm, adapter, 2, 4)
    base, _ = load_base(tiny_lm)
    ids = tokenizer(["the tree fell because"], return_tensors="pt").input_ids
    with torch.no_grad():
        assert not torch.allclose(merged(ids).logits, base(ids).logits)
    with pytest.raises(DpcError, match="does not fit"):  # rank 4 against a rank-2 adapter
        load_merged(tiny_lm, adapter, 4, 8)
    planted = tmp_path / "planted.safetensors"
    planted.write_bytes(b"\x80\x04K\x01.")  # a pickle, never read as one
    with pytest.raises(DpcError, match="planted.safetensors"):
        load_merged(tiny_lm, planted, 2, 4)


def test_no_examples_is_an_error(tiny_lm: Path, tmp_path: Path) -> None:
    with pytest.raises(DpcError, match="no training examples"):
        train_lora([], tmp_path / "run", _options(), tiny_lm)

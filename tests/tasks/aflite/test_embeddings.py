"""The paper's recipe (fine-tune on a discarded subset, embed the rest) and the on-disk cache."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tasks.aflite import embeddings
from tasks.aflite.embeddings import EmbeddingOptions, embed_instances, split_finetune
from tasks.aflite.formats import load_instances
from tasks.errors import TaskError


def test_pretrained_embeddings_are_cached(tiny_encoder: Path, winogrande_file: Path,
                                          tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    inst = load_instances(winogrande_file, "winogrande")
    options = EmbeddingOptions(encoder=str(tiny_encoder), finetune=0, chunk=16)
    first = embed_instances(inst, options, tmp_path)
    assert first.X.shape == (40, 32) and first.positions.tolist() == list(range(40))
    assert len(first.finetuned_on) == 0
    # antisymmetric: e(sentence, option1) - e(sentence, option2), nonzero
    assert np.abs(first.X).sum(axis=1).min() > 0
    assert sorted(p.name for p in first.folder.iterdir()) == ["embeddings.npy", "meta.json",
                                                              "positions.npy"]

    def fail(*_: object) -> None:
        raise AssertionError("a cached run must not encode again")

    monkeypatch.setattr(embeddings, "_embed_part", fail)
    again = embed_instances(inst, options, tmp_path)
    assert np.array_equal(again.X, first.X)
    # another option is another key: it would encode
    with pytest.raises(AssertionError, match="must not encode"):
        embed_instances(inst, EmbeddingOptions(encoder=str(tiny_encoder), finetune=0, chunk=8),
                        tmp_path)


def test_a_dtype_other_than_float32_is_part_of_the_cache_key(tiny_encoder: Path,
                                                             winogrande_file: Path) -> None:
    import torch

    inst = load_instances(winogrande_file, "winogrande")
    options = EmbeddingOptions(encoder=str(tiny_encoder), finetune=0)
    plain = embeddings.cache_key(inst, options)
    # float32 is the key every run had before there was a --dtype
    assert embeddings.cache_key(inst, options, "float32") == plain
    assert embeddings.cache_key(inst, options, torch.float32) == plain
    half = embeddings.cache_key(inst, options, torch.bfloat16)
    assert half != plain and half == embeddings.cache_key(inst, options, "bfloat16")


def test_an_interrupted_run_resumes_at_the_next_chunk(tiny_encoder: Path, winogrande_file: Path,
                                                      tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    inst = load_instances(winogrande_file, "winogrande")
    options = EmbeddingOptions(encoder=str(tiny_encoder), finetune=0, chunk=16)
    real = embeddings._embed_part
    calls: list[int] = []

    def twice_then_stop(model: object, part: object) -> np.ndarray:
        if len(calls) == 2:
            raise KeyboardInterrupt
        calls.append(len(part))  # type: ignore[arg-type]
        return real(model, part)

    monkeypatch.setattr(embeddings, "_embed_part", twice_then_stop)
    with pytest.raises(KeyboardInterrupt):
        embed_instances(inst, options, tmp_path)
    assert calls == [16, 16]
    calls.clear()
    monkeypatch.setattr(embeddings, "_embed_part",
                        lambda model, part: calls.append(len(part)) or real(model, part))
    done = embed_instances(inst, options, tmp_path)
    assert calls == [8] and done.X.shape == (40, 32)


def test_finetuned_instances_are_discarded(tiny_encoder: Path, winogrande_file: Path,
                                           tmp_path: Path) -> None:
    inst = load_instances(winogrande_file, "winogrande")
    options = EmbeddingOptions(encoder=str(tiny_encoder), finetune=8, epochs=1, batch_size=4,
                               seed=1)
    result = embed_instances(inst, options, tmp_path)
    assert len(result.finetuned_on) == 8 and len(result.positions) == 32
    assert not set(result.finetuned_on.tolist()) & set(result.positions.tolist())
    assert (result.folder / "finetune" / "cross_encoder.json").is_file()
    assert result.X.shape == (32, 32)


def test_finetune_size_is_checked() -> None:
    with pytest.raises(TaskError, match=r"--finetune \(=40\)"):
        split_finetune(40, 40, seed=0)

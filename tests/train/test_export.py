import json
from pathlib import Path

import pytest
import torch

from dpc_errors import DpcError
from train.errors import TrainError
from train.export import export_generator
from train.models import load_generator
from train.trainer import TrainOptions, train_generator


@pytest.fixture(scope="module")
def shared_run(tiny_bank: Path, tiny_bert: Path, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("shared_run")
    train_generator(TrainOptions(bank=str(tiny_bank), tokenizer=str(tiny_bert), out=str(out),
                                 warm_start=str(tiny_bert), share_weights=True, batch_size=16,
                                 lr=1e-3, warmup_steps=2, eval_every=3, checkpoint_every=3,
                                 dev_examples=16, max_steps=3, progress=False))
    return out / "model"


def _score(model, tokenizer) -> torch.Tensor:
    from train.metrics import sequence_log_probs

    return torch.tensor(sequence_log_probs(model, tokenizer, ["cause: the road was icy"] * 2,
                                           ["the car slid off", "the baby cried"]))


def test_half_precision_export_loads_in_float32_still_shared(shared_run: Path,
                                                             tmp_path: Path) -> None:
    result = export_generator(shared_run, tmp_path / "x", "float16")
    full = sum(f.stat().st_size for f in shared_run.iterdir() if f.name.endswith("safetensors"))
    half = (tmp_path / "x" / "model.safetensors").stat().st_size
    assert half < 0.55 * full and result.bytes > half
    info = json.loads((tmp_path / "x" / "dpc_generator.json").read_text())
    assert info["dtype"] == "float16" and info["model"]["shared"] is True
    original, exported = load_generator(shared_run), load_generator(tmp_path / "x")
    model = exported.model
    assert {p.dtype for p in model.parameters()} == {torch.float32}
    assert model.decoder.bert.embeddings.word_embeddings.weight is \
        model.encoder.embeddings.word_embeddings.weight
    assert torch.allclose(_score(original.model, original.tokenizer),
                          _score(model, exported.tokenizer), rtol=1e-2)


def test_export_errors(shared_run: Path, tmp_path: Path) -> None:
    with pytest.raises(TrainError, match="dtype 'int8' is not one of"):
        export_generator(shared_run, tmp_path / "x", "int8")
    with pytest.raises(TrainError, match="would overwrite"):
        export_generator(shared_run, shared_run, "float16")
    with pytest.raises(DpcError, match="/no/such"):
        export_generator("/no/such", tmp_path / "y")

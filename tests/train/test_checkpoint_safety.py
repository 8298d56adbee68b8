"""No code runs from a file placed where training resumes (issue 20, item 1).

Each place a resume (or a model folder) reads is given a pickle whose unpickling would create a
marker file; the run must stop with a :class:`~dpc_errors.DpcError` naming the planted file, and
the marker must never appear. The payload itself is checked to be live, so these tests can fail.
The training-state codec of :mod:`train.checkpoint` is tested against a table of values.
"""

from __future__ import annotations

import json
import math
import pickle
import random
import shutil
from pathlib import Path
from typing import Any

import pytest
import torch
from safetensors.torch import load_file, save_file

from cli import main as dpc_main
from dpc_errors import DpcError
from dpc_files import claim_output_folder
from train import causal_bert as cb
from train.checkpoint import (
    CheckpointError,
    capture_rng,
    decode,
    encode,
    load_state,
    restore_rng,
    save_state,
)
from train.errors import ModelFolderError
from train.trainer import PICKLE_STATE_FILE, STATE_FILE, TrainOptions, train_generator


class _Marker:
    """Unpickling this opens (creates) ``path``: harmless, and visible."""

    def __init__(self, path: Path) -> None:
        self.path = str(path)

    def __reduce__(self) -> tuple[Any, tuple[str, str]]:
        return (open, (self.path, "w"))


def _plant(path: Path, marker: Path, kind: str) -> Path:
    """Write a malicious file at ``path``: ``torch.save`` (zip) of a checkpoint-like dict, or a
    raw pickle."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "torch":
        torch.save({"step": 6, "payload": _Marker(marker)}, path)
    else:
        path.write_bytes(pickle.dumps({"step": 6, "payload": _Marker(marker)}))
    return path


def test_the_planted_payload_is_live(tmp_path: Path) -> None:
    # guards every test below: unpickling the payload does create the marker
    control = tmp_path / "control"
    pickle.loads(pickle.dumps(_Marker(control)))
    assert control.exists()


def _refused(call: Any, planted: Path, marker: Path, *, error: type = DpcError,
             words: str = "") -> str:
    with pytest.raises(error) as info:
        call()
    message = str(info.value)
    assert str(planted) in message and "\n" not in message
    assert words in message
    assert not marker.exists()
    return message


# ----------------------------------------------------------------------------- the codec

ROUND_TRIPS = [
    {"step": 3, "history": [{"dev_loss": 1.25}]},           # plain JSON stays plain
    {"best_loss": math.inf, "nan": math.nan, "tiny": 5e-324},  # floats JSON cannot spell
    {0: {"exp_avg": 1}, 12: {"exp_avg": 2}},                # int keys (optimizer state)
    {"$weird": 1, "ok": 2},                                 # a key that looks like a tag
    (3, tuple(range(625)), None),                           # random.getstate()
    {"betas": (0.9, 0.999), "nested": [(1, [2, (3,)])]},    # tuples inside lists inside tuples
    {"flag": True, "none": None, "text": "ünïcode"},
    [],
]


def _same(a: Any, b: Any) -> bool:
    """Equal, with the same container types, NaN equal to NaN and tensors bit for bit."""
    if type(a) is not type(b):
        return False
    if isinstance(a, torch.Tensor):
        return a.dtype == b.dtype and a.shape == b.shape and torch.equal(a, b)
    if isinstance(a, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


@pytest.mark.parametrize("value", ROUND_TRIPS)
def test_encode_decode_round_trip_through_json(value: Any) -> None:
    tensors: dict[str, torch.Tensor] = {}
    tree = json.loads(json.dumps(encode(value, tensors)))
    assert not tensors
    assert _same(decode(tree, tensors), value)


def test_same_can_fail() -> None:
    assert not _same((1, 2), [1, 2]) and not _same({0: 1}, {"0": 1})
    assert not _same(torch.zeros(2), torch.zeros(2, dtype=torch.float64))


def test_tensors_round_trip_through_a_file(tmp_path: Path) -> None:
    generator = torch.Generator().manual_seed(0)
    state = {"scalar": torch.tensor(6.0), "rng": torch.get_rng_state(),
             "mask": torch.tensor([True, False]), "ids": torch.arange(5),
             "moments": {0: torch.randn(3, 4, generator=generator).t()},  # not contiguous
             "same": [torch.ones(2)] * 2}  # one tensor twice: stored twice
    save_state(tmp_path / "s.safetensors", state)
    assert _same(load_state(tmp_path / "s.safetensors"), state)
    assert not (tmp_path / "s.safetensors.tmp").exists()


@pytest.mark.parametrize("tree, words", [
    ({"$tensor": "9"}, "not in the file"),          # a tensor the file lacks
    ({"$pickle": "x"}, "unknown entry"),            # a tag nobody writes
    ({"$tuple": [1], "x": 2}, "unknown entry"),     # a tag with company
    ({"$tuple": 3}, "not a list"),
    ({"$items": [[1, 2, 3]]}, "pairs"),
    ({"$items": [[[1], 2]]}, "cannot be a key"),
])
def test_decode_refuses_trees_encode_cannot_make(tree: Any, words: str) -> None:
    with pytest.raises((ValueError, TypeError), match=words):
        decode(tree, {})


def test_encode_refuses_objects() -> None:
    with pytest.raises(TypeError, match="_Marker"):
        encode({"x": _Marker(Path("never"))}, {})


def test_rng_state_restores_every_generator(tmp_path: Path) -> None:
    import numpy

    numpy.random.seed(1)
    save_state(tmp_path / "rng.safetensors", {"rng": capture_rng()})
    expected = (random.random(), torch.rand(3).tolist(), numpy.random.rand())
    random.random(), torch.rand(3), numpy.random.rand()  # move every generator on
    restore_rng(load_state(tmp_path / "rng.safetensors")["rng"])
    assert (random.random(), torch.rand(3).tolist(), numpy.random.rand()) == expected


@pytest.mark.parametrize("content, words", [
    (b"", "not a safetensors file"),
    (b"{}", "not a safetensors file"),
    (b"\x80\x04K\x01.", "pickle format"),
    (b"PK\x03\x04rest-of-zip", "pickle format"),
])
def test_load_state_names_a_file_it_cannot_read(tmp_path: Path, content: bytes,
                                                words: str) -> None:
    path = tmp_path / "state.safetensors"
    path.write_bytes(content)
    with pytest.raises(CheckpointError, match=words) as info:
        load_state(path)
    assert str(path) in str(info.value)


def test_load_state_refuses_a_foreign_or_damaged_safetensors(tmp_path: Path) -> None:
    foreign = tmp_path / "model.safetensors"
    save_file({"w": torch.zeros(1)}, str(foreign))
    with pytest.raises(CheckpointError, match="not a dpc training state"):
        load_state(foreign)
    damaged = tmp_path / "damaged.safetensors"
    save_file({}, str(damaged), metadata={"dpc_format": "dpc-training-state-1",
                                          "dpc_state": '{"x": {"$tensor": "0"}}'})
    with pytest.raises(CheckpointError, match="damaged.*not in the file"):
        load_state(damaged)


# ----------------------------------------------------------------------------- the generator


def _options(bank: Path, tok: Path, out: Path, **kw: Any) -> TrainOptions:
    base: dict[str, Any] = {
        "bank": str(bank), "tokenizer": str(tok), "out": str(out), "d_model": 32, "d_ff": 64,
        "num_layers": 1, "num_heads": 2, "batch_size": 16, "lr": 3e-3, "warmup_steps": 5,
        "eval_every": 4, "checkpoint_every": 2, "dev_examples": 32, "max_steps": 2,
        "progress": False, "seed": 3}
    return TrainOptions(**{**base, **kw})


def test_generator_checkpoint_holds_no_pickle(tiny_bank: Path, tiny_tokenizer: Path,
                                              tmp_path: Path) -> None:
    train_generator(_options(tiny_bank, tiny_tokenizer, tmp_path / "run"))
    checkpoint = tmp_path / "run" / "checkpoint"
    names = sorted(p.name for p in checkpoint.iterdir())
    assert STATE_FILE in names and "model.safetensors" in names
    assert all(p.suffix in (".json", ".safetensors") for p in checkpoint.iterdir()), names
    state = load_state(checkpoint / STATE_FILE)
    assert state["step"] == 2 and isinstance(state["rng"]["python"], tuple)
    assert state["rng"]["torch"].dtype == torch.uint8
    assert isinstance(state["optimizer"]["param_groups"][0]["betas"], tuple)


@pytest.mark.parametrize("kind", ["torch", "raw"])
def test_generator_refuses_a_pickled_trainer_state(tiny_bank: Path, tiny_tokenizer: Path,
                                                  tmp_path: Path, kind: str) -> None:
    marker = tmp_path / "marker"
    train_generator(_options(tiny_bank, tiny_tokenizer, tmp_path / "run"))
    checkpoint = tmp_path / "run" / "checkpoint"
    (checkpoint / STATE_FILE).unlink()
    planted = _plant(checkpoint / PICKLE_STATE_FILE, marker, kind)
    _refused(lambda: train_generator(_options(tiny_bank, tiny_tokenizer, tmp_path / "run",
                                              max_steps=4)),
             planted, marker, error=CheckpointError, words="older dpc (pickle format)")


@pytest.mark.parametrize("name", [STATE_FILE, "model.safetensors"])
def test_generator_refuses_a_pickle_under_a_new_name(tiny_bank: Path, tiny_tokenizer: Path,
                                                     tmp_path: Path, name: str) -> None:
    marker = tmp_path / "marker"
    train_generator(_options(tiny_bank, tiny_tokenizer, tmp_path / "run"))
    planted = _plant(tmp_path / "run" / "checkpoint" / name, marker, "torch")
    _refused(lambda: train_generator(_options(tiny_bank, tiny_tokenizer, tmp_path / "run",
                                              max_steps=4)),
             planted, marker, error=CheckpointError, words="pickle format")


def test_generator_never_reads_a_pytorch_bin(tiny_bank: Path, tiny_tokenizer: Path,
                                             tmp_path: Path) -> None:
    # transformers would torch.load a pytorch_model.bin found instead of model.safetensors
    marker = tmp_path / "marker"
    train_generator(_options(tiny_bank, tiny_tokenizer, tmp_path / "run"))
    checkpoint = tmp_path / "run" / "checkpoint"
    (checkpoint / "model.safetensors").unlink()
    _plant(checkpoint / "pytorch_model.bin", marker, "torch")
    _refused(lambda: train_generator(_options(tiny_bank, tiny_tokenizer, tmp_path / "run",
                                              max_steps=4)),
             checkpoint / "model.safetensors", marker, error=CheckpointError, words="missing")


def test_generator_state_that_does_not_fit_is_named(tiny_bank: Path, tiny_tokenizer: Path,
                                                    tmp_path: Path) -> None:
    train_generator(_options(tiny_bank, tiny_tokenizer, tmp_path / "run"))
    path = tmp_path / "run" / "checkpoint" / STATE_FILE
    state = load_state(path)
    save_state(path, {**state, "step": "six"})
    with pytest.raises(CheckpointError, match="does not fit this run") as info:
        train_generator(_options(tiny_bank, tiny_tokenizer, tmp_path / "run", max_steps=4))
    assert str(path) in str(info.value)


def test_cli_generator_refuses_a_planted_checkpoint(tiny_bank: Path, tiny_tokenizer: Path,
                                                    tmp_path: Path,
                                                    capsys: pytest.CaptureFixture) -> None:
    marker = tmp_path / "marker"
    for name in (PICKLE_STATE_FILE, STATE_FILE):
        out = claim_output_folder(tmp_path / name, "dpc train generator")  # a run folder...
        planted = _plant(out / "checkpoint" / name, marker, "torch")  # ...with a planted file
        code = dpc_main(["train", "generator", "--bank", str(tiny_bank), "--tokenizer",
                         str(tiny_tokenizer), "--out", str(out), "--no-progress"])
        err = capsys.readouterr().err
        assert code == 2 and str(planted) in err and err.strip().count("\n") == 0, err
        assert "Traceback" not in err and not marker.exists()


# ----------------------------------------------------------------------------- CausalBERT


def _tiny_causal_bert(seed: int = 0) -> tuple[cb.CausalBert, Any]:
    from transformers import AutoTokenizer, BertConfig, BertModel

    from train.models import minilm_tokenizer_path

    tokenizer = AutoTokenizer.from_pretrained(minilm_tokenizer_path(), local_files_only=True)
    torch.manual_seed(seed)
    config = BertConfig(vocab_size=len(tokenizer), hidden_size=16, num_hidden_layers=1,
                        num_attention_heads=2, intermediate_size=32, max_position_embeddings=64)
    return cb.CausalBert(BertModel(config, add_pooling_layer=False)), tokenizer


def _cb_options(bank: Path, out: Path) -> cb.CausalBertOptions:
    return cb.CausalBertOptions(bank=str(bank), out=str(out), pairs=24, batch_size=4, lr=1e-3,
                                epochs=2, dev_pairs=0, checkpoint_every=5, progress=False)


def test_causal_bert_resumes_to_bit_identical_weights(tiny_bank: Path, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    model, tokenizer = _tiny_causal_bert()  # dropout on: the torch RNG must be restored
    cb.continue_training(_cb_options(tiny_bank, tmp_path / "whole"), model, tokenizer)
    real_loss, calls = cb.margin_loss, []

    def failing_loss(*args: Any, **kwargs: Any) -> torch.Tensor:
        calls.append(1)
        if len(calls) == 8:  # after the checkpoint of step 5, inside the first epoch's order
            raise KeyboardInterrupt
        return real_loss(*args, **kwargs)

    monkeypatch.setattr(cb, "margin_loss", failing_loss)
    with pytest.raises(KeyboardInterrupt):
        cb.continue_training(_cb_options(tiny_bank, tmp_path / "cut"), *_tiny_causal_bert())
    monkeypatch.setattr(cb, "margin_loss", real_loss)
    state = load_state(tmp_path / "cut" / cb.CHECKPOINT_FILE)
    assert (state["start"], len(state["losses"]), state["order"].dtype) == (20, 5, torch.int64)
    cb.continue_training(_cb_options(tiny_bank, tmp_path / "cut"), *_tiny_causal_bert(seed=7))
    a = load_file(str(tmp_path / "whole" / "model.safetensors"))
    b = load_file(str(tmp_path / "cut" / "model.safetensors"))
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    heads = [cb._load_head(tmp_path / run / cb.HEAD_FILE) for run in ("whole", "cut")]
    assert all(torch.equal(heads[0][k], heads[1][k]) for k in heads[0])
    fresh = tmp_path / "other"
    cb.continue_training(_cb_options(tiny_bank, fresh), *_tiny_causal_bert(seed=7))
    c = load_file(str(fresh / "model.safetensors"))
    assert not all(torch.equal(a[k], c[k]) for k in a)  # the comparison above can fail


@pytest.mark.parametrize("name, words", [
    (cb.PICKLE_CHECKPOINT_FILE, "older dpc (pickle format)"),
    (cb.CHECKPOINT_FILE, "pickle format"),
])
def test_causal_bert_refuses_a_planted_checkpoint(tiny_bank: Path, tmp_path: Path, name: str,
                                                  words: str) -> None:
    marker = tmp_path / "marker"
    claim_output_folder(tmp_path / "cb", "dpc train causal-bert")  # a run folder, planted in
    planted = _plant(tmp_path / "cb" / name, marker, "torch")
    _refused(lambda: cb.continue_training(_cb_options(tiny_bank, tmp_path / "cb"),
                                          *_tiny_causal_bert()),
             planted, marker, error=CheckpointError, words=words)


def test_train_margin_refuses_a_planted_checkpoint(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    planted = _plant(tmp_path / "ckpt.safetensors", marker, "raw")
    model, tokenizer = _tiny_causal_bert()
    options = cb.CausalBertOptions(bank="unused", out="unused", pairs=4, progress=False)
    _refused(lambda: cb.train_margin(model, tokenizer, [("a", "b"), ("c", "d")], options,
                                     planted),
             planted, marker, error=CheckpointError, words="pickle format")


def test_cli_causal_bert_refuses_a_planted_checkpoint(tiny_bank: Path, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture) -> None:
    marker = tmp_path / "marker"
    for name in (cb.PICKLE_CHECKPOINT_FILE, cb.CHECKPOINT_FILE):
        out = claim_output_folder(tmp_path / name, "dpc train causal-bert")
        planted = _plant(out / name, marker, "torch")
        code = dpc_main(["train", "causal-bert", "--bank", str(tiny_bank), "--out", str(out),
                         "--no-progress"])
        err = capsys.readouterr().err
        assert code == 2 and str(planted) in err and err.strip().count("\n") == 0, err
        assert "Traceback" not in err and not marker.exists()


def _causal_bert_folder(tiny_bert: Path, folder: Path, marker: Path) -> Path:
    """A CausalBERT model folder whose head file is the payload."""
    shutil.copytree(tiny_bert, folder)
    return _plant(folder / cb.HEAD_FILE, marker, "torch")


def test_causal_bert_head_is_read_as_tensors_only(tiny_bert: Path, tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    planted = _causal_bert_folder(tiny_bert, tmp_path / "model", marker)
    _refused(lambda: cb.load_causal_bert(tmp_path / "model"), planted, marker,
             error=ModelFolderError, words="does not load as plain tensors")


def test_an_old_pickled_head_is_refused_unread(tiny_bert: Path, tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    folder = tmp_path / "model"
    shutil.copytree(tiny_bert, folder)
    (folder / cb.HEAD_FILE).unlink(missing_ok=True)
    planted = _plant(folder / cb.PICKLE_HEAD_FILE, marker, "torch")
    _refused(lambda: cb.load_causal_bert(folder), planted, marker, error=ModelFolderError,
             words="older dpc")


def test_causal_bert_encoder_is_never_read_from_a_pytorch_bin(tiny_bert: Path,
                                                              tmp_path: Path) -> None:
    from safetensors.torch import save_file

    marker = tmp_path / "marker"
    folder = tmp_path / "model"
    shutil.copytree(tiny_bert, folder)
    save_file({"weight": torch.zeros(1, 16), "bias": torch.zeros(1)}, folder / cb.HEAD_FILE)
    assert cb.load_causal_bert(folder)[0].head.weight.shape == (1, 16)  # a sound folder loads
    (folder / "model.safetensors").unlink()
    _plant(folder / "pytorch_model.bin", marker, "torch")
    with pytest.raises(ModelFolderError, match="model.safetensors") as info:
        cb.load_causal_bert(folder)
    assert str(folder) in str(info.value) and not marker.exists()


def test_cli_eval_copa_refuses_a_planted_head(tiny_bert: Path, tmp_path: Path,
                                              capsys: pytest.CaptureFixture) -> None:
    import xml.etree.ElementTree as ET

    marker = tmp_path / "marker"
    planted = _causal_bert_folder(tiny_bert, tmp_path / "model", marker)
    root = ET.Element("copa-corpus")
    item = ET.SubElement(root, "item", {"id": "1", "asks-for": "cause",
                                        "most-plausible-alternative": "1"})
    for tag, text in (("p", "The man fell."), ("a1", "He tripped."), ("a2", "He sang.")):
        ET.SubElement(item, tag).text = text
    ET.ElementTree(root).write(tmp_path / "copa.xml")
    copa = str(tmp_path / "copa.xml")
    code = dpc_main(["eval", "copa", copa, "--scorer", "causal-bert", "--train", copa,
                     "--model", str(tmp_path / "model")])
    err = capsys.readouterr().err
    assert code == 2 and str(planted) in err and err.strip().count("\n") == 0, err
    assert not marker.exists()

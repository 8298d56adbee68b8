"""``--device`` and ``--dtype`` (:mod:`dpc_device`): the resolution rules as tables, then every
command that runs a model, on the CPU (CI has no GPU) and with a CUDA it cannot have.

The CUDA branches are reached by patching ``torch.cuda.is_available`` / ``device_count``: they
fail or resolve before anything touches a GPU.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import cli
from dpc_device import (
    DeviceError,
    add_device_arguments,
    autocast,
    place,
    resolve_device,
    resolve_dtype,
)
from tests.train.conftest import (  # noqa: F401  (fixtures)
    copa_file,
    tiny_bank,
    tiny_bert,
    tiny_tokenizer,
)
from train.models import DEFAULT_MODEL_DIR

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture()
def no_cuda(monkeypatch: pytest.MonkeyPatch) -> None:
    """A machine without CUDA, whatever this one has."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)


@pytest.fixture()
def two_gpus(monkeypatch: pytest.MonkeyPatch) -> None:
    """A machine that says it has two CUDA devices (nothing is ever run on them)."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)


# ----------------------------------------------------------------------------- resolution


@pytest.mark.parametrize(("value", "expected"), [
    ("cpu", "cpu"),
    ("auto", "cuda"),       # auto takes CUDA when there is one
    ("cuda", "cuda"),
    ("cuda:1", "cuda:1"),   # the last of two
])
def test_devices_with_cuda(two_gpus: None, value: str, expected: str) -> None:
    assert resolve_device(value) == torch.device(expected)


def test_auto_is_the_cpu_without_cuda(no_cuda: None) -> None:
    assert resolve_device("auto") == torch.device("cpu")
    assert resolve_device(torch.device("cpu")) == torch.device("cpu")  # a torch.device as is


@pytest.mark.parametrize(("value", "message"), [
    ("cuda", "--device cuda: CUDA is not available on this machine"),
    ("cuda:0", "--device cuda:0: CUDA is not available on this machine"),
])
def test_cuda_without_cuda_is_one_line_naming_the_value(no_cuda: None, value: str,
                                                        message: str) -> None:
    with pytest.raises(DeviceError) as info:
        resolve_device(value)
    text = str(info.value)
    assert text.startswith(message) and "use --device cpu or auto" in text
    assert torch.__version__ in text and "\n" not in text


def test_a_device_past_the_last_is_named(two_gpus: None) -> None:
    with pytest.raises(DeviceError, match=r"^--device cuda:2: this machine has 2 CUDA devices "
                                          r"\(cuda:0 to cuda:1\)"):
        resolve_device("cuda:2")


@pytest.mark.parametrize("value", [
    "gpu",          # not a torch name
    "CPU",          # names are lower case
    "cuda:",        # an index is a number
    "cuda:-1",
    "cuda:one",
    " cpu",         # no blanks
    "",
    "mps",          # only the CPU and CUDA
])
def test_malformed_devices_are_refused(two_gpus: None, value: str) -> None:
    with pytest.raises(DeviceError, match=rf"^--device {value}: not a device; use auto, cpu, "):
        resolve_device(value)


CPU, CUDA = torch.device("cpu"), torch.device("cuda")


@pytest.mark.parametrize(("value", "device", "training", "expected"), [
    (None, CPU, False, torch.float32),          # inference: float32 everywhere by default
    (None, CUDA, False, torch.float32),
    (None, CPU, True, torch.float32),           # CPU training: as dpc always trained
    (None, CUDA, True, torch.bfloat16),         # GPU training: bf16 autocast
    ("float32", CUDA, True, torch.float32),     # ... unless float32 is asked for
    ("bfloat16", CPU, True, torch.bfloat16),    # CPU autocast when asked
    ("float16", CPU, False, torch.float16),     # half weights run on the CPU too
    ("float16", CUDA, False, torch.float16),
    (torch.bfloat16, CPU, False, torch.bfloat16),  # the Python API may pass a torch.dtype
])
def test_dtypes(value, device: torch.device, training: bool, expected: torch.dtype) -> None:
    assert resolve_dtype(value, device, training=training) == expected


@pytest.mark.parametrize("device", [CPU, CUDA])
def test_float16_training_is_refused(device: torch.device) -> None:
    with pytest.raises(DeviceError, match=r"^--dtype float16: training in float16 needs loss "):
        resolve_dtype("float16", device, training=True)


def test_an_unknown_dtype_is_named() -> None:
    with pytest.raises(DeviceError, match=r"^--dtype half: not one of float32, bfloat16, float16"):
        resolve_dtype("half", CPU)


def test_place_moves_and_casts_only_what_it_is_asked() -> None:
    model = torch.nn.Linear(3, 2)
    weight = model.weight
    assert place(model) is model and model.weight is weight  # None, None: untouched
    assert place(model, "cpu") is model and model.weight.dtype == torch.float32
    place(model, None, "bfloat16")
    assert model.weight.dtype == torch.bfloat16 and model.weight.device == CPU


def test_autocast_computes_in_the_dtype_and_float32_is_no_autocast() -> None:
    a = torch.ones(2, 2)
    with autocast(CPU, torch.bfloat16):
        assert (a @ a).dtype == torch.bfloat16
    with autocast(CPU, torch.float32):
        assert not torch.is_autocast_enabled("cpu")
        assert (a @ a).dtype == torch.float32


def test_the_flags_and_their_defaults() -> None:
    parser = argparse.ArgumentParser()
    add_device_arguments(parser)
    args = parser.parse_args([])
    assert (args.device, args.dtype) == ("auto", None)
    assert parser.parse_args(["--device", "cuda:1", "--dtype", "bfloat16"]).dtype == "bfloat16"
    with pytest.raises(SystemExit):
        parser.parse_args(["--dtype", "half"])


def test_the_flags_cost_no_torch() -> None:
    # a parser with these flags must not import torch (`dpc --help` stays fast)
    code = ("import argparse, sys, dpc_device; "
            "dpc_device.add_device_arguments(argparse.ArgumentParser()); "
            "print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "False"


# ----------------------------------------------------------------------------- every command

COPA = """<?xml version="1.0" encoding="UTF-8"?>
<copa-corpus version="1.0">
<item id="1" asks-for="cause" most-plausible-alternative="1">
<p>The baby cried.</p><a1>The baby was hungry.</a1><a2>The sun rose.</a2></item>
<item id="2" asks-for="effect" most-plausible-alternative="2">
<p>It rained all day.</p><a1>The sun was hot.</a1><a2>The streets were wet.</a2></item>
</copa-corpus>
"""
TINY = ["--d-model", "16", "--d-ff", "32", "--num-layers", "1", "--num-heads", "2",
        "--batch-size", "16", "--max-steps", "3", "--eval-every", "3", "--warmup-steps", "2",
        "--dev-examples", "20", "--no-progress"]


@pytest.fixture()
def copa(tmp_path: Path) -> Path:
    path = tmp_path / "copa.xml"
    path.write_text(COPA, encoding="utf-8")
    return path


def _commands(copa: Path, bank: Path, tokenizer: Path, out: Path) -> dict[str, list[str]]:
    """Every command that runs a model, without its --device."""
    return {
        "generate": ["generate", "--input", "babies cry"],
        "eval copa (generator)": ["eval", "copa", str(copa), "--scorer", "generator"],
        "eval copa (causal-bert)": ["eval", "copa", str(copa), "--scorer", "causal-bert",
                                    "--train", str(copa)],
        "eval generation": ["eval", "generation", str(copa), "--methods", "nbest"],
        "train generator": ["train", "generator", "--bank", str(bank), "--tokenizer",
                            str(tokenizer), "--out", str(out / "run"), *TINY],
        "train evaluate": ["train", "evaluate", "--model", str(DEFAULT_MODEL_DIR), "--bank",
                           str(bank)],
        "train causal-bert": ["train", "causal-bert", "--bank", str(bank), "--out",
                              str(out / "cb"), "--no-progress"],
    }


COMMANDS = ["generate", "eval copa (generator)", "eval copa (causal-bert)", "eval generation",
            "train generator", "train evaluate", "train causal-bert"]


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("device", ["cuda", "cuda:0"])
def test_cuda_missing_is_one_line_and_exit_2(command: str, device: str, no_cuda: None, copa: Path,
                                             tiny_bank: Path, tiny_tokenizer: Path,  # noqa: F811
                                             tmp_path: Path,
                                             capsys: pytest.CaptureFixture) -> None:
    argv = _commands(copa, tiny_bank, tiny_tokenizer, tmp_path)[command]
    assert cli.main([*argv, "--device", device]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert err.count("\n") == 0 and "Traceback" not in err, err
    assert err.startswith("dpc") and "error: " in err
    assert f"--device {device}: CUDA is not available on this machine" in err
    assert captured.out == ""
    assert not (tmp_path / "run").exists() and not (tmp_path / "cb").exists()  # checked first


@pytest.mark.parametrize("command", ["generate", "train generator", "train evaluate"])
def test_a_gpu_past_the_last_is_one_line_and_exit_2(command: str, two_gpus: None, copa: Path,
                                                   tiny_bank: Path,  # noqa: F811
                                                   tiny_tokenizer: Path,  # noqa: F811
                                                   tmp_path: Path,
                                                   capsys: pytest.CaptureFixture) -> None:
    argv = _commands(copa, tiny_bank, tiny_tokenizer, tmp_path)[command]
    assert cli.main([*argv, "--device", "cuda:5"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "--device cuda:5: this machine has 2 CUDA devices" in err


def test_float16_training_is_one_line_and_exit_2(tiny_bank: Path,  # noqa: F811
                                                 tiny_tokenizer: Path,  # noqa: F811
                                                 tmp_path: Path,
                                                 capsys: pytest.CaptureFixture) -> None:
    argv = _commands(Path("unused"), tiny_bank, tiny_tokenizer, tmp_path)["train generator"]
    assert cli.main([*argv, "--device", "cpu", "--dtype", "float16"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == ("dpc train generator: error: --dtype float16: training in float16 needs loss "
                   "scaling, which dpc does not do; use bfloat16 or float32")
    assert not (tmp_path / "run").exists()


def test_generate_on_the_cpu(capsys: pytest.CaptureFixture) -> None:
    fast = ["--input", "babies cry", "--n", "3", "--m", "2", "--k", "3", "--max-new-tokens", "8",
            "--json"]
    assert cli.main(["generate", *fast, "--device", "cpu"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["input"] == "babies cry" and len(row["outputs"]) == 3


def test_eval_copa_on_the_cpu(copa: Path, capsys: pytest.CaptureFixture) -> None:
    assert cli.main(["eval", "copa", str(copa), "--scorer", "generator-forward",
                     "--device", "cpu"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"scorer generator-forward on {copa}: ") and out[-1] in {
        "0.0000", "0.5000", "1.0000"}


def test_eval_generation_on_the_cpu(copa: Path, capsys: pytest.CaptureFixture) -> None:
    assert cli.main(["eval", "generation", str(copa), "--methods", "nbest", "--limit", "1",
                     "--m", "2", "--k", "2", "--max-new-tokens", "6", "--device", "cpu"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| nbest")]
    assert len(rows) == 1 and rows[0].split("|")[2].strip() == "1"  # one item


def _safetensors(path: Path) -> dict[str, torch.Tensor]:
    from safetensors.torch import load_file

    return load_file(str(path))


def test_train_generator_and_evaluate_on_the_cpu(tiny_bank: Path,  # noqa: F811
                                                 tiny_tokenizer: Path,  # noqa: F811
                                                 tmp_path: Path,
                                                 capsys: pytest.CaptureFixture) -> None:
    from train.trainer import TrainOptions, train_generator

    argv = _commands(Path("unused"), tiny_bank, tiny_tokenizer, tmp_path)["train generator"]
    assert cli.main([*argv, "--device", "cpu"]) == 0
    assert json.loads(capsys.readouterr().out)["steps"] == 3
    # --device cpu trains exactly as the Python API always did (no device, no autocast)
    options = TrainOptions(str(tiny_bank), str(tiny_tokenizer), str(tmp_path / "api"), d_model=16,
                           d_ff=32, num_layers=1, num_heads=2, batch_size=16, max_steps=3,
                           eval_every=3, warmup_steps=2, dev_examples=20, progress=False)
    train_generator(options)
    cli_weights = (tmp_path / "run" / "checkpoint" / "model.safetensors").read_bytes()
    assert cli_weights == (tmp_path / "api" / "checkpoint" / "model.safetensors").read_bytes()

    model = str(tmp_path / "run" / "model")
    assert cli.main(["train", "evaluate", "--model", model, "--bank", str(tiny_bank),
                     "--device", "cpu"]) == 0
    assert cli.main(["train", "evaluate", "--model", model, "--bank", str(tiny_bank),
                     "--device", "cpu", "--dtype", "bfloat16"]) == 0
    full, half = capsys.readouterr().out.splitlines()
    assert full.startswith("dev (both): ") and half.split(",")[0] == full.split(",")[0]
    perplexity = [float(re.search(r"perplexity ([\d.]+)", line).group(1)) for line in (full, half)]
    assert perplexity[1] == pytest.approx(perplexity[0], rel=0.05)  # bf16 weights: close


def test_train_generator_under_cpu_autocast_keeps_float32_weights(
        tiny_bank: Path, tiny_tokenizer: Path, tmp_path: Path,  # noqa: F811
        capsys: pytest.CaptureFixture) -> None:
    argv = _commands(Path("unused"), tiny_bank, tiny_tokenizer, tmp_path)["train generator"]
    assert cli.main([*argv, "--device", "cpu", "--dtype", "bfloat16"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["steps"] == 3 and math.isfinite(result["best_dev_loss"])
    for folder in ("checkpoint", "model"):
        weights = _safetensors(tmp_path / "run" / folder / "model.safetensors")
        assert {t.dtype for t in weights.values()} == {torch.float32}


def test_train_causal_bert_on_the_cpu(tiny_bank: Path, tiny_bert: Path,  # noqa: F811
                                      tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture) -> None:
    import train.causal_bert as cb

    monkeypatch.setattr(cb, "_minilm_path", lambda: tiny_bert)  # a tiny BERT for MiniLM
    out = tmp_path / "cb"
    assert cli.main(["train", "causal-bert", "--bank", str(tiny_bank), "--out", str(out),
                     "--pairs", "8", "--batch-size", "4", "--dev-pairs", "0", "--no-progress",
                     "--device", "cpu"]) == 0
    assert json.loads(capsys.readouterr().out)["steps"] == 2
    from safetensors.torch import load_file

    head = load_file(out / "head.safetensors")
    assert {(t.dtype, t.device.type) for t in head.values()} == {(torch.float32, "cpu")}


def test_causal_bert_scorer_trains_and_scores_under_cpu_autocast(
        tiny_bank: Path, tmp_path: Path) -> None:  # noqa: F811
    from transformers import AutoTokenizer, BertConfig, BertModel

    import train.causal_bert as cb
    from tasks.copa.causal_bert import make_causal_bert_scorer
    from train.models import minilm_tokenizer_path

    tokenizer = AutoTokenizer.from_pretrained(minilm_tokenizer_path(), local_files_only=True)
    torch.manual_seed(0)
    config = BertConfig(vocab_size=len(tokenizer), hidden_size=16, num_hidden_layers=1,
                        num_attention_heads=2, intermediate_size=32, max_position_embeddings=64)
    options = cb.CausalBertOptions(bank=str(tiny_bank), out=str(tmp_path / "cb"), pairs=8,
                                   batch_size=4, dev_pairs=4, progress=False)
    result = cb.continue_training(options, cb.CausalBert(BertModel(config,
                                                                   add_pooling_layer=False)),
                                  tokenizer, device="cpu", dtype="bfloat16")
    assert result.steps == 2 and result.dev_accuracy_after is not None
    copa = copa_file(tmp_path / "copa.xml")
    scorer = make_causal_bert_scorer(train=str(copa), model=str(tmp_path / "cb"), device="cpu",
                                     dtype="bfloat16")
    assert scorer.dtype == torch.bfloat16
    assert next(scorer.model.parameters()).dtype == torch.float32  # weights stay float32
    assert isinstance(scorer.score("The man fell.", "cause", "He tripped."), float)

"""``--device`` and ``--dtype`` on the task pipelines (``dpc swag``, ``dpc aflite``, ``dpc inli``):
a CUDA the machine lacks, and float16 training, are one line naming the value and exit status 2,
before anything is read, loaded or written.

Every input path here is missing: a command that read its data or loaded its model before
checking the device would name the path instead, so each row also checks the order. The runs
on the CPU are in each task's own tests (``--device cpu``).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

import cli


@pytest.fixture()
def no_cuda(monkeypatch: pytest.MonkeyPatch) -> None:
    """A machine without CUDA, whatever this one has."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)


def _commands(missing: Path, out: Path) -> dict[str, list[str]]:
    """Every task command, without its --device (``missing``: a path that does not exist)."""
    return {
        "swag train-endings": ["swag", "train-endings", str(missing / "data.jsonl"),
                               "--out", str(out)],
        "swag oversample": ["swag", "oversample", str(missing / "contexts.jsonl"),
                            "--out", str(out), "--model", str(missing)],
        "swag filter": ["swag", "filter", str(missing), "--out", str(out / "af.jsonl")],
        "aflite": ["aflite", str(missing / "wg.jsonl"), "--format", "winogrande",
                   "--out", str(out)],
        "inli train": ["inli", "train", "--out", str(out), "--train",
                       str(missing / "train.csv")],
        "inli eval": ["inli", "eval", str(missing / "val.csv"), "--model", str(missing)],
        "inli predict": ["inli", "predict", "--model", str(missing), "--input",
                         str(missing / "in.jsonl"), "--out", str(out / "p.jsonl")],
        "inli variants": ["inli", "variants", "--premise", "Tom won.", "--implied",
                          "Tom is happy.", "--generator", str(missing)],
        "inli variants --train": ["inli", "variants", "--train", str(missing / "train.csv"),
                                  "--out", str(out)],
    }


COMMANDS = list(_commands(Path("m"), Path("o")))
#: The commands that train: their --dtype is an autocast precision, float16 refused.
TRAINING = ["swag train-endings", "swag filter", "aflite", "inli train", "inli variants --train"]


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("device", ["cuda", "cuda:0"])
def test_cuda_missing_is_one_line_and_exit_2(command: str, device: str, no_cuda: None,
                                             tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    argv = _commands(tmp_path / "missing", out)[command]
    assert cli.main([*argv, "--device", device]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert err.count("\n") == 0 and "Traceback" not in err, err
    assert err.startswith(f"dpc {command.split()[0]}: error: "), err
    assert f"--device {device}: CUDA is not available on this machine" in err, err
    assert captured.out == ""
    assert not out.exists()  # checked before anything is written


@pytest.mark.parametrize("command", TRAINING)
def test_float16_training_is_one_line_and_exit_2(command: str, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    argv = _commands(tmp_path / "missing", out)[command]
    assert cli.main([*argv, "--device", "cpu", "--dtype", "float16"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (f"dpc {command.split()[0]}: error: --dtype float16: training in float16 "
                   "needs loss scaling, which dpc does not do; use bfloat16 or float32")
    assert not out.exists()


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_takes_both_flags(command: str, tmp_path: Path) -> None:
    argv = _commands(tmp_path, tmp_path / "out")[command]
    args = cli.build_parser().parse_args([*argv, "--device", "cuda:1", "--dtype", "bfloat16"])
    assert (args.device, args.dtype) == ("cuda:1", "bfloat16")
    defaults = cli.build_parser().parse_args(argv)
    assert (defaults.device, defaults.dtype) == ("auto", None)

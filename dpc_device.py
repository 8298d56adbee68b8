"""Where dpc's models run, and in which precision: ``--device`` and ``--dtype``.

Every command that runs or trains a model takes the two flags of :func:`add_device_arguments`:
``dpc generate``, ``dpc eval copa``, ``dpc eval generation``,
``dpc train generator|evaluate|causal-bert|lm-generator``, and the task pipelines
``dpc swag train-endings|oversample|filter``, ``dpc aflite`` and
``dpc inli train|eval|predict|variants``. The library functions behind them take ``device=`` and
``dtype=`` (default: the CPU in float32, what dpc always did) and hand the model to :func:`place`
or train it under :func:`autocast`; a function given a model follows ``model.device``. A command
checks both flags first (:func:`check_arguments`), before anything is read, loaded or written.
A command that runs no model in some mode still takes them: ``dpc inli variants`` decodes (the
weights' dtype) or, with ``--train``, trains (autocast); the scikit-learn members of
``dpc swag filter``'s committee stay on the CPU while its CNN and BiLSTM use the device.

``--device``
    ``auto`` (the default: CUDA when torch sees a GPU, else the CPU), ``cpu``, ``cuda`` or
    ``cuda:N``. A CUDA device this machine does not have is a :class:`DeviceError` naming the
    value (:func:`resolve_device`), never a traceback from deep inside torch.
``--dtype``
    The precision the model computes in; its meaning follows what the command does to the model
    (:func:`resolve_dtype`):

    - *running* a model (generation, scoring, ``dpc train evaluate``): the weights are cast to
      it. Default ``float32`` on every device, so a GPU gives the CPU's outputs;
      ``bfloat16``/``float16`` halve the memory and are allowed on the CPU too.
    - *training* one (``dpc train generator|causal-bert|lm-generator``, the COPA fine-tuning
      of ``--scorer causal-bert``, ``dpc swag train-endings|filter``, ``dpc aflite`` (which
      embeds under the same autocast), ``dpc inli train``, ``dpc inli variants --train``): the
      weights, the optimizer's state and every checkpoint stay ``float32``, and the forward
      passes run under :func:`torch.autocast` in the dtype (:func:`autocast`). Default ``bfloat16`` on CUDA and ``float32`` (no autocast, exactly
      what dpc always did) on the CPU. ``float16`` is refused: it needs loss scaling, which dpc
      does not do.

torch is imported inside the functions: building a parser with these flags costs nothing
(``dpc --help``).

>>> resolve_device("cpu")
device(type='cpu')
>>> resolve_dtype(None, resolve_device("cpu"), training=True)
torch.float32
>>> resolve_device("gpu")
Traceback (most recent call last):
...
dpc_device.DeviceError: --device gpu: not a device; use auto, cpu, cuda or cuda:N
"""

from __future__ import annotations

import argparse
import contextlib
import re
from typing import TYPE_CHECKING, Any

from dpc_errors import DpcError

if TYPE_CHECKING:
    import torch

__all__ = ["DTYPES", "DeviceError", "add_device_arguments", "autocast", "check_arguments",
           "place", "resolve_device", "resolve_dtype", "resolve_training"]

#: The values ``--dtype`` takes.
DTYPES = ("float32", "bfloat16", "float16")
_DEVICE = re.compile(r"auto|cpu|cuda(?::(\d+))?")


class DeviceError(DpcError):
    """A device or dtype this machine cannot give, or a malformed one; the message names it."""


def add_device_arguments(parser: argparse.ArgumentParser, *, training: bool = False,
                         dtype_help: str | None = None) -> None:
    """Add ``--device`` and ``--dtype`` to ``parser`` (``training``: the dtype's help says what
    it means for a training command; ``dtype_help``: a help of the command's own)."""
    parser.add_argument("--device", default="auto", metavar="auto|cpu|cuda[:N]",
                        help="where the model runs: auto (CUDA when present, else the CPU), "
                        "cpu, cuda or cuda:N (default: auto)")
    if dtype_help is not None:
        what = dtype_help
    elif training:
        what = ("precision of the forward passes (torch.autocast; the weights, optimizer state "
                "and checkpoints stay float32); default: bfloat16 on CUDA, float32 on the CPU; "
                "float16 is refused (it needs loss scaling)")
    else:
        what = ("precision of the model's weights and computation (default float32; bfloat16 "
                "and float16 halve the memory)")
    parser.add_argument("--dtype", choices=DTYPES, default=None, help=what)


def resolve_device(value: str | torch.device | None = "auto") -> torch.device:
    """The torch device ``value`` names: ``auto`` is CUDA when torch sees a GPU, else the CPU;
    ``None`` is the CPU (the default of dpc's library functions; a command's ``--device`` is
    ``auto``).

    Raises :class:`DeviceError` naming the value when it is malformed, when CUDA is asked for on
    a machine without it, or when ``cuda:N`` is past this machine's devices.
    """
    import torch

    if value is None:
        return torch.device("cpu")
    text = str(value)
    match = _DEVICE.fullmatch(text)
    if match is None:
        raise DeviceError(f"--device {text}: not a device; use auto, cpu, cuda or cuda:N")
    if text == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if text == "cpu":
        return torch.device("cpu")
    if not torch.cuda.is_available():
        build = ", a CPU-only build" if torch.version.cuda is None else ""
        raise DeviceError(f"--device {text}: CUDA is not available on this machine "
                          f"(torch {torch.__version__}{build}); use --device cpu or auto")
    if match.group(1) is None:
        return torch.device("cuda")
    index, count = int(match.group(1)), torch.cuda.device_count()
    if index >= count:
        have = "1 CUDA device (cuda:0)" if count == 1 else \
            f"{count} CUDA devices (cuda:0 to cuda:{count - 1})"
        raise DeviceError(f"--device {text}: this machine has {have}; use one of them or auto")
    return torch.device("cuda", index)


def resolve_dtype(value: str | torch.dtype | None, device: torch.device, *,
                  training: bool = False) -> torch.dtype:
    """The torch dtype of ``--dtype value`` on ``device`` (see the module docstring).

    ``None`` is the default: ``float32``, except ``bfloat16`` for training on CUDA. Raises
    :class:`DeviceError` for a name not in :data:`DTYPES` and for ``float16`` training.

    >>> import torch
    >>> resolve_dtype("bfloat16", torch.device("cpu"))
    torch.bfloat16
    >>> resolve_dtype(None, torch.device("cuda"), training=True)
    torch.bfloat16
    >>> resolve_dtype("float16", torch.device("cpu"), training=True)
    Traceback (most recent call last):
    ...
    dpc_device.DeviceError: --dtype float16: training in float16 needs loss scaling, which dpc does not do; use bfloat16 or float32
    """
    import torch

    if value is None:
        return torch.bfloat16 if training and device.type == "cuda" else torch.float32
    name = str(value).removeprefix("torch.")
    if name not in DTYPES:
        raise DeviceError(f"--dtype {name}: not one of {', '.join(DTYPES)}")
    if training and name == "float16":
        raise DeviceError("--dtype float16: training in float16 needs loss scaling, which dpc "
                          "does not do; use bfloat16 or float32")
    dtype: torch.dtype = getattr(torch, name)
    return dtype


def resolve_training(device: str | torch.device | None = None,
                     dtype: str | torch.dtype | None = None) -> tuple[torch.device, torch.dtype]:
    """Where a training function runs (:func:`resolve_device`; ``None``: the CPU) and the dtype
    its forward passes autocast to (:func:`resolve_dtype`, training rules).

    >>> resolve_training()
    (device(type='cpu'), torch.float32)
    """
    where = resolve_device(device)
    return where, resolve_dtype(dtype, where, training=True)


def check_arguments(args: argparse.Namespace, *, training: bool = False) -> torch.device:
    """The device of a command's ``--device``, with its ``--dtype`` checked as well
    (:func:`resolve_dtype`; ``training``: float16 refused). A command calls it first, so that a
    bad value is one line before anything is read, loaded or written.

    >>> check_arguments(argparse.Namespace(device="cpu", dtype=None), training=True)
    device(type='cpu')
    """
    device = resolve_device(args.device)
    resolve_dtype(args.dtype, device, training=training)
    return device


def place(model: Any, device: str | torch.device | None = None,
          dtype: str | torch.dtype | None = None) -> Any:
    """``model`` moved to ``device`` (:func:`resolve_device`) with its floating-point weights
    cast to ``dtype`` (:func:`resolve_dtype`, inference); ``None`` leaves either as it is.
    Returns the model (moved in place, as ``torch.nn.Module.to`` does)."""
    if device is not None:
        device = resolve_device(device)
        model = model.to(device)
    if dtype is not None:
        model = model.to(resolve_dtype(dtype, next(model.parameters()).device))
    return model


def autocast(device: torch.device, dtype: torch.dtype) -> contextlib.AbstractContextManager[Any]:
    """The mixed-precision context of a training forward pass: :func:`torch.autocast` in
    ``dtype`` on ``device``'s type, or nothing at all for ``float32`` (the weights stay
    ``float32`` either way).

    >>> import torch
    >>> with autocast(torch.device("cpu"), torch.bfloat16):
    ...     (torch.ones(2, 2) @ torch.ones(2, 2)).dtype
    torch.bfloat16
    >>> with autocast(torch.device("cpu"), torch.float32):
    ...     (torch.ones(2, 2) @ torch.ones(2, 2)).dtype
    torch.float32
    """
    import torch

    if dtype == torch.float32:
        return contextlib.nullcontext()
    return torch.autocast(device_type=device.type, dtype=dtype)

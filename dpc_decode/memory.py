"""How much memory a decode needs, checked before it starts.

A beam search of ``num_beams`` hypotheses per input (or ``num_samples`` draws) holds, at each
step, a handful of vocabulary-sized float32 tensors per hypothesis (logits, log-probabilities,
the constraint and n-gram masks, the top-k over beams) and its key/value cache (self-attention
over the tokens so far, cross-attention over the input): :func:`bytes_per_hypothesis`. On the
bundled generator (22,637 tokens, 6 layers of 384) that is about 1.05 MB per hypothesis at 20
new tokens, against 0.9 to 1.2 MB measured (peak RSS less the loaded model, 50 to 800 beams,
CPU).

:func:`generate <dpc_decode.generate>` and :func:`sample <dpc_decode.sample>` call
:func:`check_model_fits` before they decode: when one input's hypotheses alone would not fit in
the memory free on the model's device (``MemAvailable`` of ``/proc/meminfo``, or
``torch.cuda.mem_get_info``), a ``num_beams=10**9`` is a :class:`~dpc_errors.DpcError` that
names the value and the gigabytes it needs, not the allocator's ``RuntimeError`` or the
machine swapping. (The guided-generation pipeline also lowers how many rows it decodes at
once: :mod:`guided_generation.memory`.)

>>> bytes_per_hypothesis(vocab=22637, layers=6, hidden=384, tokens=28, dtype_bytes=4) // 1000
1059
>>> check_fits(per_hypothesis=1_000_000, hypotheses=5, available=10**9)  # usable bytes
800000000
>>> check_fits(per_hypothesis=1_000_000, hypotheses=10**9, available=10**9)
Traceback (most recent call last):
...
dpc_errors.DpcError: `num_beams` (=1000000000) needs about 1000000.0 GB for one input's beams (1000000000 hypotheses of about 1.0 MB); about 0.8 GB of memory is free for decoding: lower `num_beams` or `max_new_tokens`
"""

from __future__ import annotations

import os
from typing import Any

from dpc_errors import DpcError

__all__ = ["USABLE", "VOCAB_COPIES", "available_bytes", "bytes_per_hypothesis", "check_fits",
           "check_model_fits", "model_bytes_per_hypothesis"]

#: Vocabulary-sized float32 tensors alive per hypothesis in a decoding step.
VOCAB_COPIES = 6
#: The share of the free memory a decode may plan to use.
USABLE = 0.8


def bytes_per_hypothesis(*, vocab: int, layers: int, hidden: int, tokens: int,
                         dtype_bytes: int) -> int:
    """Bytes one hypothesis holds at a step: :data:`VOCAB_COPIES` float32 vectors over the
    vocabulary, and the keys and values of ``layers`` layers of width ``hidden`` over ``tokens``
    tokens (input and output)."""
    return VOCAB_COPIES * 4 * vocab + 2 * layers * hidden * dtype_bytes * tokens


def _first(config: Any, *names: str) -> int | None:
    for name in names:
        value = getattr(config, name, None)
        if isinstance(value, int) and value > 0:
            return value
    return None


def model_bytes_per_hypothesis(model: Any, tokens: int) -> int | None:
    """:func:`bytes_per_hypothesis` of a Hugging Face model (its decoder's sizes), or ``None``
    when its configuration does not say them."""
    config = getattr(model, "config", None)
    decoder = getattr(config, "decoder", None) or config
    vocab = _first(decoder, "vocab_size") or _first(config, "vocab_size")
    layers = _first(decoder, "num_decoder_layers", "num_hidden_layers", "num_layers", "n_layer")
    hidden = _first(decoder, "hidden_size", "d_model", "n_embd")
    if vocab is None or layers is None or hidden is None:
        return None
    try:
        dtype_bytes = next(model.parameters()).element_size()
    except (AttributeError, StopIteration, TypeError):
        dtype_bytes = 4
    return bytes_per_hypothesis(vocab=vocab, layers=layers, hidden=hidden, tokens=tokens,
                                dtype_bytes=dtype_bytes)


def available_bytes(model: Any) -> int | None:
    """Memory free on the device of ``model``'s weights, or ``None`` when it cannot be read."""
    try:
        device = next(model.parameters()).device
    except (AttributeError, StopIteration, TypeError):
        return None
    if device.type == "cuda":
        import torch

        free, _ = torch.cuda.mem_get_info(device)
        return int(free)
    if device.type != "cpu":
        return None
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not POSIX
        return None


def _megabytes(size: int) -> str:
    """``size`` bytes in MB, or in kB below 0.1 MB (a tiny model's hypothesis)."""
    return f"{size / 1e6:.1f} MB" if size >= 100_000 else f"{size / 1e3:.1f} kB"


def check_fits(*, per_hypothesis: int, hypotheses: int, available: int, name: str = "num_beams",
               flags: str | None = None, unit: str = "input", what: str = "beams",
               lower: str = "`num_beams` or `max_new_tokens`",
               error: type[DpcError] = DpcError) -> int:
    """The bytes a decode may use (:data:`USABLE` of ``available``), once checked that one
    ``unit``'s ``hypotheses`` fit in them.

    Raises
    ------
    DpcError (or ``error``)
        If they do not; the message names ``name`` (and the command-line ``flags`` that set
        it), its value and the estimate, and says what to ``lower``.
    """
    usable = int(available * USABLE)
    needed = hypotheses * per_hypothesis
    if needed > usable:
        named = f"{hypotheses}, {flags}" if flags else f"{hypotheses}"
        raise error(
            f"`{name}` (={named}) needs about {needed / 1e9:.1f} GB for one {unit}'s {what} "
            f"({hypotheses} hypotheses of about {_megabytes(per_hypothesis)}); about "
            f"{usable / 1e9:.1f} GB of memory is free for decoding: lower {lower}")
    return usable


def check_model_fits(model: Any, hypotheses: int, tokens: int, name: str = "num_beams",
                     what: str = "beams") -> None:
    """:func:`check_fits` for ``hypotheses`` of ``model`` over ``tokens`` tokens (the longest
    input and the new tokens); nothing when the model's sizes or the free memory are unknown."""
    per_hypothesis = model_bytes_per_hypothesis(model, tokens)
    if per_hypothesis is None:
        return
    free = available_bytes(model)
    if free is None:
        return
    check_fits(per_hypothesis=per_hypothesis, hypotheses=hypotheses, available=free, name=name,
               what=what, lower=f"`{name}` or `max_new_tokens`")

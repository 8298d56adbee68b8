"""How much memory a decode needs, and how many keyword rows fit at once.

Every keyword row is a beam search of ``num_beams`` hypotheses, and ``batch_rows`` rows are
decoded together, so one decoding step holds ``rows * num_beams`` hypotheses. Each hypothesis
costs about :func:`bytes_per_hypothesis`: a handful of vocabulary-sized float32 tensors per step
(logits, log-probabilities, the constraint and n-gram masks, the top-k over beams) and its
key/value cache (self-attention over the tokens generated so far, cross-attention over the
input). On the bundled generator (22,637 tokens, 6 layers of 384) that is about 1.05 MB per
hypothesis at 20 new tokens, against 0.9 to 1.2 MB measured (peak RSS less the loaded model,
``--m`` 50 to 800, CPU).

:func:`rows_that_fit` lowers the rows decoded at once when their hypotheses would not fit in
the memory free on the model's device (``MemAvailable`` of ``/proc/meminfo``, or
``torch.cuda.mem_get_info``), and refuses with the estimate when even one row's beams would
not: a ``--m 100000`` is an error naming the gigabytes it needs, not the machine swapping or
the process being killed.

>>> bytes_per_hypothesis(vocab=22637, layers=6, hidden=384, tokens=28, dtype_bytes=4) // 1000
1059
>>> rows_that_fit(per_hypothesis=1_000_000, beams=5, rows=300, batch_rows=100,
...               available=10**9)   # 500 hypotheses of 1 MB: 0.5 GB of 0.8 GB usable
100
>>> rows_that_fit(per_hypothesis=1_000_000, beams=50, rows=300, batch_rows=100,
...               available=10**9)   # 100 rows would need 5 GB: 16 rows at a time
16
>>> rows_that_fit(per_hypothesis=1_000_000, beams=100_000, rows=1, batch_rows=100,
...               available=10**9)
Traceback (most recent call last):
...
guided_generation.errors.GuidedGenerationError: `num_beams` (=100000, --m/--num-beams) needs about 100.0 GB for one keyword's beams (100000 hypotheses of about 1.0 MB); about 0.8 GB of memory is free for decoding: lower --m/--num-beams or --max-new-tokens
"""

from __future__ import annotations

import os
from typing import Any

from guided_generation.errors import GuidedGenerationError

__all__ = ["available_bytes", "bytes_per_hypothesis", "model_bytes_per_hypothesis",
           "rows_that_fit"]

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


def rows_that_fit(*, per_hypothesis: int, beams: int, rows: int, batch_rows: int,
                  available: int) -> int:
    """How many rows of ``beams`` hypotheses to decode at once: ``batch_rows`` (or all ``rows``,
    if fewer) when they fit in :data:`USABLE` of ``available`` bytes, else as many as fit.

    Raises
    ------
    GuidedGenerationError
        If one row's beams alone would not fit; the message gives the estimate.
    """
    usable = int(available * USABLE)
    wanted = max(1, min(batch_rows, rows))
    per_row = beams * per_hypothesis
    if per_row > usable:
        raise GuidedGenerationError(
            f"`num_beams` (={beams}, --m/--num-beams) needs about {per_row / 1e9:.1f} GB for one "
            f"keyword's beams ({beams} hypotheses of about {per_hypothesis / 1e6:.1f} MB); about "
            f"{usable / 1e9:.1f} GB of memory is free for decoding: lower --m/--num-beams or "
            "--max-new-tokens")
    return min(wanted, usable // per_row)

"""Held-out evaluation of a trained generator: dev/test perplexity and word accuracy.

The split is the one :mod:`train.data` assigns by sentence hash, so a model trained on a bank is
scored on pairs it never saw (``dpc train evaluate --model M --bank B``). Perplexity and word
accuracy count the model's own subword tokens (the paper's Table 2); the per-word perplexity
(:attr:`~train.metrics.DevMetrics.word_perplexity`) divides the same log-likelihood by the
number of target words instead, so models with different tokenizers can be compared.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from dpc_device import place, resolve_device
from train.data import load_examples
from train.errors import TrainDataError
from train.metrics import DevMetrics, collate, evaluate
from train.models import load_generator
from train.trainer import encode_examples

if TYPE_CHECKING:
    import torch

__all__ = ["evaluate_generator"]


def evaluate_generator(
    model_dir: str | Path,
    bank: str | Path,
    split: str = "dev",
    variant: str = "both",
    max_examples: int | None = None,
    max_words: int = 24,
    *,
    device: str | torch.device | None = None,
    dtype: str | torch.dtype | None = None,
) -> DevMetrics:
    """Perplexity and word accuracy of the generator in ``model_dir`` on a split of ``bank``,
    computed on ``device`` with the weights in ``dtype`` (:func:`dpc_device.place`; ``None``:
    the CPU, float32).

    >>> evaluate_generator("/no/such/model", "/no/such/bank")
    Traceback (most recent call last):
    ...
    dpc_errors.DpcError: model path '/no/such/model' is not a folder
    """
    placed = resolve_device(device) if device is not None else None  # before the model is read
    loaded = load_generator(model_dir)
    examples = load_examples(bank, variant, max_words=max_words)[split]  # type: ignore[index]
    if not examples:
        raise TrainDataError(f"CausalBank {str(bank)!r} has no {split} example")
    examples = examples[:max_examples] if max_examples else examples
    encoded = encode_examples(loaded.tokenizer, examples, 64, 48)
    order = sorted(range(len(encoded)), key=lambda i: len(encoded[i][0]) + len(encoded[i][1]))
    batches = (collate([encoded[i] for i in order[k : k + 128]], loaded.tokenizer.pad_token_id)
               for k in range(0, len(order), 128))
    words = sum(len(e.target.split()) + 1 for e in examples)
    return replace(evaluate(place(loaded.model, placed, dtype), batches), words=words)

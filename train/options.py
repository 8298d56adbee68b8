"""The options of the training commands, in a module that imports no torch.

``dpc train generator --help`` and ``dpc train causal-bert --help`` build their flags from these
dataclasses (one definition serves the CLI and the Python API); keeping them here, away from
:mod:`train.trainer` and :mod:`train.causal_bert` (which import torch), keeps ``dpc --help``
fast. :mod:`train.trainer` and :mod:`train.causal_bert` name them too (``from train.trainer
import TrainOptions``).

>>> TrainOptions("bank", "tok", "out").d_model
256
>>> TrainOptions("bank", "tok", "out", batch_size=0)
Traceback (most recent call last):
...
train.errors.TrainError: `batch_size` (=0) must be an integer >= 1
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

from dpc_errors import check_choice, check_float, check_int, check_seed
from train.data import VARIANTS
from train.errors import TrainError

__all__ = ["CausalBertOptions", "GeneratorConfig", "TrainOptions", "options_from_dict"]


@dataclass(frozen=True)
class GeneratorConfig:
    """Size of the T5 generator (pad 0, eos 1, decoder start = pad, as in T5)."""

    vocab_size: int
    d_model: int = 256
    d_ff: int = 1024
    num_layers: int = 4
    num_decoder_layers: int | None = None
    num_heads: int = 4
    dropout: float = 0.1

    def __post_init__(self) -> None:
        for name in ("vocab_size", "d_model", "d_ff", "num_layers", "num_heads"):
            check_int(name, getattr(self, name), 1, error=TrainError)
        if self.d_model % self.num_heads:
            raise TrainError(
                f"`d_model` (={self.d_model}) must be divisible by `num_heads` (={self.num_heads})"
            )
        check_float("dropout", self.dropout, 0, 1, open_max=True, error=TrainError)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class TrainOptions:
    """Everything a generator training run depends on (the CLI flags map 1:1 onto these)."""

    bank: str
    tokenizer: str
    out: str
    variant: str = "both"
    d_model: int = 256
    d_ff: int = 1024
    num_layers: int = 4
    num_heads: int = 4
    dropout: float = 0.1
    batch_size: int = 64
    lr: float = 1e-3
    warmup_steps: int = 500
    weight_decay: float = 0.01
    max_steps: int = 100_000
    max_minutes: float | None = None
    eval_every: int = 500
    checkpoint_every: int = 250
    patience: int = 4
    dev_examples: int = 2000
    max_source_tokens: int = 64
    max_target_tokens: int = 48
    max_pairs: int | None = None
    max_words: int = 32
    seed: int = 0
    threads: int | None = None
    init_from: str | None = None  # a generator folder whose weights start the run
    warm_start: str | None = None  # a BERT-style encoder folder, or "minilm": bert2bert
    share_weights: bool = False  # warm start only: the decoder shares the encoder's weights
    progress: bool = True

    def __post_init__(self) -> None:
        check_choice("variant", self.variant, VARIANTS, error=TrainError)
        for name in ("d_model", "d_ff", "num_layers", "num_heads", "batch_size", "max_steps",
                     "eval_every", "checkpoint_every", "patience", "dev_examples",
                     "max_source_tokens", "max_target_tokens", "max_words"):
            check_int(name, getattr(self, name), 1, error=TrainError)
        check_int("warmup_steps", self.warmup_steps, 0, error=TrainError)
        for name in ("max_pairs", "threads"):  # None: all pairs, torch's threads
            if getattr(self, name) is not None:
                check_int(name, getattr(self, name), 1, error=TrainError)
        check_seed("seed", self.seed, error=TrainError)
        check_float("lr", self.lr, 0, open_min=True, error=TrainError)
        check_float("dropout", self.dropout, 0, 1, open_max=True, error=TrainError)
        check_float("weight_decay", self.weight_decay, 0, error=TrainError)
        if self.max_minutes is not None:
            check_float("max_minutes", self.max_minutes, 0, open_min=True, error=TrainError)
        if self.share_weights and self.warm_start is None:
            raise TrainError("--share-weights applies to a warm-started generator (--warm-start)")
        if self.warm_start is not None:
            if self.init_from is not None:
                raise TrainError("--warm-start and --init-from exclude each other")
            if self.tokenizer != self.warm_start:
                raise TrainError(
                    f"a generator warm-started from {self.warm_start!r} uses that model's "
                    f"tokenizer: pass --tokenizer {self.warm_start} (not {self.tokenizer!r})"
                )

    def model_config(self, vocab_size: int) -> GeneratorConfig:
        return GeneratorConfig(vocab_size, self.d_model, self.d_ff, self.num_layers,
                               None, self.num_heads, self.dropout)


def options_from_dict(values: dict[str, Any]) -> TrainOptions:
    """Build :class:`TrainOptions` from a dict, ignoring keys it does not have (CLI namespaces).

    >>> options_from_dict({"bank": "b", "tokenizer": "t", "out": "o", "command": "x"}).out
    'o'
    """
    names = {f.name for f in fields(TrainOptions)}
    return TrainOptions(**{k: v for k, v in values.items() if k in names})


@dataclass(frozen=True)
class CausalBertOptions:
    """One continued-training run (the ``dpc train causal-bert`` flags map 1:1 onto these)."""

    bank: str
    out: str
    pairs: int | None = 10_000  # None: every train-split pair
    batch_size: int = 32
    lr: float = 3e-5
    epochs: int = 1
    max_tokens: int = 48
    margin: float = 0.3
    l2: float = 1e-5  # lambda of lambda/2 * ||Theta||^2
    seed: int = 0
    dev_pairs: int = 500  # CausalBank dev pairs for the before/after ranking accuracy
    checkpoint_every: int = 50  # steps between checkpoints (OUT/checkpoint.safetensors)
    progress: bool = True

    def __post_init__(self) -> None:
        for name in ("batch_size", "epochs", "max_tokens", "checkpoint_every"):
            check_int(name, getattr(self, name), 1, error=TrainError)
        check_int("dev_pairs", self.dev_pairs, 0, error=TrainError)  # 0: no dev ranking
        check_seed("seed", self.seed, error=TrainError)
        if self.pairs is not None:  # None: all
            check_int("pairs", self.pairs, 2, error=TrainError)
        check_float("lr", self.lr, 0, open_min=True, error=TrainError)
        check_float("margin", self.margin, 0, open_min=True, error=TrainError)
        check_float("l2", self.l2, 0, error=TrainError)

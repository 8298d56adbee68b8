"""CausalBERT ranked on COPA (``--scorer causal-bert``).

Margin ranking after Li, Chen & Van Durme 2019 ("Learning to rank for plausible plausibility"):
each (premise, alternative) is scored in causal order (:func:`causal_order`) by a
:class:`~train.causal_bert.CausalBert`, the whole model is fine-tuned on
``max(0, m - s(correct) + s(wrong))`` for a few epochs, and the alternative with the higher score
is the answer. ``--scorer causal-bert`` trains on the COPA file given as ``--train`` and answers
the file being evaluated::

    dpc train causal-bert --bank runs/train/bank --pairs 10000 --out runs/causal_bert/p10k
    dpc eval copa TEST.xml --scorer causal-bert --train TRAIN.xml --model runs/causal_bert/p10k

Without ``--model`` the plain all-MiniLM-L6-v2 is used ("without continued training").

>>> causal_order("The man fell.", "cause", "He tripped.")
('he tripped', 'the man fell')
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from dpc_device import autocast, resolve_training
from dpc_errors import check_float, check_int, check_seed
from tasks.copa.dataset import CopaItem, as_clause, read_copa
from train.causal_bert import CausalBert, Pair, load_causal_bert, margin_loss, score_pairs
from train.errors import TrainDataError, TrainError
from train.loop import LoopHooks, LoopOptions, run_loop

__all__ = ["CausalBertScorer", "CopaRankingOptions", "causal_order", "make_causal_bert_scorer",
           "train_copa_ranking"]


def causal_order(premise: str, asks_for: str, alternative: str) -> Pair:
    """The (cause, effect) clauses of a COPA candidate: the alternative is the cause when the
    question asks for the cause, else the premise is.

    >>> causal_order("The man fell.", "effect", "He got hurt.")
    ('the man fell', 'he got hurt')
    """
    p, a = as_clause(premise), as_clause(alternative)
    if asks_for == "cause":
        return a, p
    if asks_for == "effect":
        return p, a
    raise TrainDataError(f"asks_for (={asks_for!r}) must be 'cause' or 'effect'")


@dataclass(frozen=True)
class CopaRankingOptions:
    """COPA margin-ranking fine-tuning (the whole model)."""

    epochs: int = 3
    batch_size: int = 16  # COPA items per step (2 scored pairs each)
    lr: float = 3e-5
    margin: float = 0.3
    max_tokens: int = 48
    seed: int = 0
    progress: bool = False

    def __post_init__(self) -> None:
        for name in ("epochs", "batch_size", "max_tokens"):
            check_int(name, getattr(self, name), 1, error=TrainError)
        check_seed("seed", self.seed, error=TrainError)
        check_float("lr", self.lr, 0, open_min=True, error=TrainError)
        check_float("margin", self.margin, 0, open_min=True, error=TrainError)


def _copa_pairs(item: CopaItem) -> tuple[Pair, Pair]:
    """(correct, wrong) candidates of an item, each in causal order."""
    right = item.alternatives[item.answer - 1]
    wrong = item.alternatives[2 - item.answer]
    return (causal_order(item.premise, item.asks_for, right),
            causal_order(item.premise, item.asks_for, wrong))


def train_copa_ranking(model: CausalBert, tokenizer: Any, items: Sequence[CopaItem],
                       options: CopaRankingOptions, *,
                       dtype: torch.dtype = torch.float32) -> list[float]:
    """Fine-tune in place on ``max(0, m - s(correct) + s(wrong))``; returns the step losses.
    The forward passes run under :func:`dpc_device.autocast` in ``dtype`` on the model's device
    (float32: no autocast); the weights stay as they are."""
    if not items:
        raise TrainDataError("no COPA items to train on")
    rng = random.Random(options.seed)
    torch.manual_seed(options.seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=options.lr, weight_decay=0.0)
    steps = math.ceil(len(items) / options.batch_size) * options.epochs
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min((s + 1) / max(1, steps // 10), (steps - s) / steps))
    candidates = [_copa_pairs(it) for it in items]
    per_epoch = math.ceil(len(items) / options.batch_size)
    order: list[int] = []
    losses: list[float] = []
    device = next(model.parameters()).device

    def forward(step: int, micro: int) -> torch.Tensor:
        k = step % per_epoch
        if k == 0:  # a new epoch: a new order
            order[:] = range(len(items))
            rng.shuffle(order)
        batch = [candidates[i] for i in order[k * options.batch_size:(k + 1) * options.batch_size]]
        with autocast(device, dtype):
            scores = score_pairs(model, tokenizer, [r for r, _ in batch] + [w for _, w in batch],
                                 options.max_tokens)
            pos, neg = scores[:len(batch)], scores[len(batch):]  # (b,), (b,)
            return margin_loss(pos, neg, options.margin).mean()

    model.train()
    run_loop(forward, optimizer,
             LoopOptions(total_steps=steps, progress=options.progress, desc="copa"),
             scheduler=schedule,
             hooks=LoopHooks(record=lambda state, loss: losses.append(float(loss))))
    model.eval()
    return losses


class CausalBertScorer:
    """COPA scorer: ``s(cause, effect)`` of the candidate in causal order (cached), computed
    under :func:`dpc_device.autocast` in ``dtype`` (float32: no autocast)."""

    def __init__(self, model: CausalBert, tokenizer: Any, max_tokens: int = 48,
                 dtype: torch.dtype = torch.float32) -> None:
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.max_tokens = max_tokens
        self.dtype = dtype
        self._cache: dict[Pair, float] = {}

    def score_many(self, pairs: Sequence[Pair]) -> list[float]:
        """Scores of (cause, effect) pairs, batched; fills the cache."""
        todo = [p for p in dict.fromkeys(pairs) if p not in self._cache]
        with torch.no_grad(), autocast(next(self.model.parameters()).device, self.dtype):
            for i in range(0, len(todo), 64):
                chunk = todo[i:i + 64]
                for p, s in zip(chunk, score_pairs(self.model, self.tokenizer, chunk,
                                                   self.max_tokens).tolist()):
                    self._cache[p] = s
        return [self._cache[p] for p in pairs]

    def score(self, premise: str, asks_for: str, alternative: str) -> float:
        return self.score_many([causal_order(premise, asks_for, alternative)])[0]


def make_causal_bert_scorer(train: str | None = None, model: str | None = None, seed: int = 0,
                            ranking: CopaRankingOptions | None = None,
                            device: str | None = None, dtype: str | None = None,
                            **_: Any) -> CausalBertScorer:
    """Factory for ``--scorer causal-bert``: COPA-train on ``train``, starting from ``model``
    (a ``dpc train causal-bert`` folder; plain all-MiniLM-L6-v2 when ``None``), on ``device``
    (``None``: the CPU) with the forward passes in ``dtype`` (a training dtype,
    :func:`dpc_device.resolve_dtype`: bfloat16 autocast on CUDA by default; weights float32)."""
    where, compute = resolve_training(device, dtype)
    if train is None:
        raise TrainError("the causal-bert scorer is trained on COPA: give the training file "
                         "with --train TRAIN.xml (train=None)")
    items = read_copa(train)
    loaded, tokenizer = load_causal_bert(model, seed)
    loaded = loaded.to(where)
    opts = ranking or CopaRankingOptions(seed=seed)
    train_copa_ranking(loaded, tokenizer, items, opts, dtype=compute)
    return CausalBertScorer(loaded, tokenizer, opts.max_tokens, compute)

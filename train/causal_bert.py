"""CausalBERT: a causal-strength scorer s(c, e) continued-trained on CausalBank.

The model is a BERT encoder (all-MiniLM-L6-v2 by default) reading the pair input
``[CLS] cause [SEP] effect [SEP]``, mean-pooled over its tokens, and a linear head giving one
score ``s(c, e)``.

**Continued training** (Li et al. 2020, "Guided generation of cause and effect", CausalBERT) on
CausalBank pairs ``(c, e)`` with the margin loss ::

    L = mean over the batch of max(0, m - s(c, e) + s(c', e'))  +  lambda/2 * ||Theta||^2

with ``m = 0.3`` and ``lambda = 1e-5``; ``(c', e')`` is the pair with its cause *or* its effect
(a coin flip) replaced by that of another random pair (:func:`corrupt`). ``lambda`` is applied
exactly as written: the squared L2 norm of every trainable parameter (encoder and head) times
``lambda / 2`` is added to the loss of each batch, and the optimiser is plain Adam (no decoupled
weight decay). The paper sums the hinge over pairs; we average it over the batch, so at batch
size ``B`` our ``lambda`` weighs ``B`` times more against the hinge than a per-pair sum would.

Ranking COPA with it (margin ranking, ``--scorer causal-bert``) is a task:
:mod:`tasks.copa.causal_bert`. ::

    dpc train causal-bert --bank runs/train/bank --pairs 10000 --out runs/causal_bert/p10k
    dpc eval copa TEST.xml --scorer causal-bert --train TRAIN.xml --model runs/causal_bert/p10k

Without ``--model`` the plain all-MiniLM-L6-v2 is used ("without continued training").

An interrupted run resumes from ``OUT/checkpoint.safetensors`` (:mod:`train.checkpoint`: the
weights, the optimiser and the rest of the state as safetensors with a JSON tree; nothing is
unpickled). A ``checkpoint.pt`` (a pickle) is refused, not loaded.

>>> margin_loss(torch.tensor([1.0, 0.0]), torch.tensor([0.0, 0.0]), margin=0.3).tolist()
[0.0, 0.30000001192092896]
"""

from __future__ import annotations

import json
import math
import os
import random
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch import nn

from dpc_device import autocast, resolve_device, resolve_dtype
from dpc_files import check_output_folder, claim_output_folder
from train.checkpoint import CheckpointError, load_state, pickle_checkpoint_error
from train.cross_encoder import mean_pool
from train.data import read_pairs_checked, split_of
from train.errors import ModelFolderError, TrainDataError, TrainError
from train.loop import LoopHooks, LoopOptions, LoopState, resume, run_loop, save_checkpoint
from train.model_config import check_model_config
from train.models import minilm_tokenizer_path
from train.options import CausalBertOptions  # continue_training's options, named here too

__all__ = [
    "CausalBert",
    "CausalBertOptions",
    "CausalBertResult",
    "continue_training",
    "corrupt",
    "load_bank_pairs",
    "load_causal_bert",
    "margin_loss",
    "ranking_accuracy",
    "score_pairs",
    "train_margin",
]

HEAD_FILE = "head.safetensors"
#: A pickled (torch.save) head: refused where found, never unpickled.
PICKLE_HEAD_FILE = "head.pt"
RUN_FILE = "causal_bert.json"
CHECKPOINT_FILE = "checkpoint.safetensors"
#: A pickled (torch.save) checkpoint: refused where found, never unpickled.
PICKLE_CHECKPOINT_FILE = "checkpoint.pt"
#: Options that may differ between an interrupted run and its resumption.
RESUMABLE_CHANGES = frozenset({"out", "progress", "checkpoint_every"})

Pair = tuple[str, str]  # (cause, effect)


# ----------------------------------------------------------------------------- pure pieces


def margin_loss(pos: torch.Tensor, neg: torch.Tensor, margin: float = 0.3) -> torch.Tensor:
    """Per-example hinge ``max(0, margin - pos + neg)``; ``pos``, ``neg``: (batch,) -> (batch,)."""
    return torch.clamp(margin - pos + neg, min=0.0)


def corrupt(pairs: Sequence[Pair], index: int, rng: random.Random) -> Pair:
    """``pairs[index]`` with its cause or its effect (a coin flip) taken from another pair.

    The result always differs from the original pair: a donor whose cause (or effect) is the same
    text is skipped. Raises :class:`TrainDataError` when no pair can make a difference (all pairs
    identical, or fewer than two).

    >>> new = corrupt([("rain", "wet"), ("sun", "dry")], 0, random.Random(0))
    >>> new in {("sun", "wet"), ("rain", "dry")}
    True
    """
    cause, effect = pairs[index]
    n = len(pairs)
    if n >= 2:
        for _ in range(32):  # random donors first; duplicates are rare in a real bank
            j = rng.randrange(n - 1)
            j = j + 1 if j >= index else j
            slot = rng.randrange(2)
            new = (pairs[j][0], effect) if slot == 0 else (cause, pairs[j][1])
            if new != (cause, effect):
                return new
        for j in range(n):  # deterministic fallback over every donor
            for new in ((pairs[j][0], effect), (cause, pairs[j][1])):
                if new != (cause, effect):
                    return new
    raise TrainDataError(
        f"cannot corrupt pair {index} ({cause!r}, {effect!r}): no other pair has a different "
        f"cause or effect among {n} pairs")


# ----------------------------------------------------------------------------- the model


class CausalBert(nn.Module):
    """A BERT encoder, mean pooling over the pair input and a linear head: one score a pair."""

    def __init__(self, encoder: nn.Module, head: nn.Linear | None = None) -> None:
        super().__init__()
        self.encoder = encoder
        hidden = int(encoder.config.hidden_size)
        self.head = head if head is not None else nn.Linear(hidden, 1)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                token_type_ids: torch.Tensor | None = None) -> torch.Tensor:
        # input_ids, attention_mask: (batch, tokens) -> scores: (batch,)
        hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).last_hidden_state  # (b, t, h)
        return self.head(mean_pool(hidden, attention_mask)).squeeze(-1)  # (b,)


def score_pairs(model: CausalBert, tokenizer: Any, pairs: Sequence[Pair],
                max_tokens: int = 48) -> torch.Tensor:
    """Scores ``s(c, e)`` of ``pairs``: (len(pairs),), with gradients if enabled, on the
    model's device (the inputs are moved there)."""
    enc = tokenizer([c for c, _ in pairs], [e for _, e in pairs], truncation=True,
                    max_length=max_tokens, padding=True, return_tensors="pt")
    enc = {name: tensor.to(_device(model)) for name, tensor in enc.items()}
    return model(enc["input_ids"], enc["attention_mask"], enc.get("token_type_ids"))


def _device(model: nn.Module) -> torch.device:
    """Where ``model``'s weights are (a plain ``nn.Module`` has no ``.device``)."""
    return next(model.parameters()).device


def _minilm_path() -> Path:
    return minilm_tokenizer_path()


def load_causal_bert(path: str | os.PathLike[str] | None = None,
                     seed: int = 0) -> tuple[CausalBert, Any]:
    """A CausalBERT and its tokenizer from a ``dpc train causal-bert`` folder, or (``path=None``)
    the plain all-MiniLM-L6-v2 with a fresh head drawn with ``seed``.

    The encoder is read from ``model.safetensors`` only (a ``pytorch_model.bin`` is never
    unpickled) and the head from ``head.safetensors``; anything else is a :class:`ModelFolderError`."""
    from transformers import AutoModel, AutoTokenizer

    if path is None:
        folder = _minilm_path()
    else:
        folder = Path(path)
        if not folder.is_dir():
            raise ModelFolderError(f"CausalBERT model folder {os.fspath(path)!r} does not exist")
        if (folder / PICKLE_HEAD_FILE).is_file() and not (folder / HEAD_FILE).is_file():
            raise ModelFolderError(
                f"{os.fspath(folder / PICKLE_HEAD_FILE)!r} is an older dpc's pickled head, which dpc "
                "does not load; train the folder again with dpc train causal-bert")
        needed = (HEAD_FILE, "config.json", "model.safetensors")
        if not all((folder / name).is_file() for name in needed):
            raise ModelFolderError(
                f"{os.fspath(path)!r} is not a CausalBERT folder (needs {', '.join(needed)}; "
                "make one with dpc train causal-bert)")
    head = _load_head(folder / HEAD_FILE) if path is not None else None  # checked first: cheap
    check_model_config(folder)  # each field's type: one line naming it
    tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    encoder = AutoModel.from_pretrained(folder, local_files_only=True, use_safetensors=True)
    torch.manual_seed(seed)
    model = CausalBert(encoder)
    if head is not None:
        try:
            model.head.load_state_dict(head)
        except RuntimeError as err:
            raise ModelFolderError(f"CausalBERT head {os.fspath(folder / HEAD_FILE)!r} does not "
                                   f"fit the encoder ({str(err).splitlines()[0]})") from None
    return model, tokenizer


def _load_head(path: Path) -> dict[str, torch.Tensor]:
    """The head's state dict from the safetensors file ``path`` (a format that holds tensors and
    nothing that runs); :class:`ModelFolderError` naming it."""
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    try:
        return load_file(path, device="cpu")
    except (SafetensorError, OSError, ValueError) as err:
        reason = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise ModelFolderError(f"CausalBERT head {os.fspath(path)!r} does not load as plain "
                               f"tensors ({reason})") from None


# ----------------------------------------------------------------------------- CausalBank


@dataclass
class CausalBertResult:
    """What a run did; also written to ``OUT/causal_bert.json``."""

    options: dict[str, Any]
    pairs: int
    steps: int
    seconds: float
    first_loss: float
    last_loss: float
    dev_accuracy_before: float | None
    dev_accuracy_after: float | None
    reused: bool = False
    history: list[float] = field(default_factory=list)  # mean hinge per 20 steps


def load_bank_pairs(bank: str | os.PathLike[str], split: str = "train", limit: int | None = None,
                    seed: int = 0) -> list[Pair]:
    """Distinct (cause, effect) pairs of one split of a bank, shuffled with ``seed``, the first
    ``limit`` of them (all when ``None``)."""
    seen: set[Pair] = set()
    pairs: list[Pair] = []
    for p in read_pairs_checked(os.fspath(bank)):
        key = (" ".join(p.cause.split()), " ".join(p.effect.split()))
        if split_of(p.sentence) == split and key[0] and key[1] and key not in seen:
            seen.add(key)
            pairs.append(key)
    random.Random(seed).shuffle(pairs)
    if len(pairs) < 2:
        raise TrainDataError(f"CausalBank {os.fspath(bank)!r} has {len(pairs)} distinct "
                             f"{split} pair(s); need at least 2")
    return pairs if limit is None else pairs[:limit]


def _l2(model: nn.Module) -> torch.Tensor:
    return sum((p.pow(2).sum() for p in model.parameters() if p.requires_grad),
               torch.zeros((), device=_device(model)))


def ranking_accuracy(model: CausalBert, tokenizer: Any, pairs: Sequence[Pair], seed: int = 0,
                     max_tokens: int = 48, batch_size: int = 64) -> float:
    """Share of ``pairs`` scored above their corruption (fixed by ``seed``)."""
    rng = random.Random(seed)
    negatives = [corrupt(pairs, i, rng) for i in range(len(pairs))]
    was_training = model.training
    model.eval()
    wins = 0
    with torch.no_grad():
        for i in range(0, len(pairs), batch_size):
            pos = score_pairs(model, tokenizer, pairs[i:i + batch_size], max_tokens)
            neg = score_pairs(model, tokenizer, negatives[i:i + batch_size], max_tokens)
            wins += int((pos > neg).sum())
    model.train(was_training)
    return wins / len(pairs)


@dataclass
class _Order:
    """Where the margin training is in its data: the epoch, its shuffled order of the pairs
    (``None`` until the epoch's first batch draws it) and the position in that order."""

    epoch: int = 0
    start: int = 0
    order: list[int] | None = None

    def next_batch(self, n: int, batch_size: int, rng: random.Random) -> list[int]:
        """The indices of the next batch, moving on to a new epoch (a new shuffle drawn from
        ``rng``) when this one is used up."""
        if self.order is not None and self.start >= len(self.order):
            self.epoch, self.order = self.epoch + 1, None
        if self.order is None:
            self.order = list(range(n))
            rng.shuffle(self.order)
            self.start = 0
        idx = self.order[self.start:self.start + batch_size]
        self.start += batch_size
        return idx


def _resume_margin(path: Path, model: CausalBert, optimizer: torch.optim.Optimizer,
                   rng: random.Random) -> tuple[LoopState, _Order, list[float]]:
    """Weights, optimizer and both random generators put back from the checkpoint at
    ``path``; the loop state, the data position and the losses so far."""
    state = load_state(path)
    try:
        model.load_state_dict(state["model"])
        rng.setstate(state["python_rng"])
        epoch, start, seconds = state["epoch"], state["start"], state["seconds"]
        if not all(isinstance(v, int) for v in (epoch, start)) or \
                not isinstance(seconds, (int, float)):
            raise TypeError("epoch, start or seconds is not a number")
        order, losses = state["order"].tolist(), state["losses"].tolist()
    except (KeyError, TypeError, ValueError, RuntimeError, AttributeError) as err:
        raise CheckpointError(f"checkpoint {os.fspath(path)!r} does not fit this run "
                              f"({type(err).__name__}: {str(err).splitlines()[0]}); delete "
                              "it to train from the start") from None
    # a checkpoint without the loop's own entries counts its steps by its losses
    state.setdefault("step", len(losses))
    state.setdefault("elapsed", seconds)
    return resume(state, path, optimizer), _Order(epoch, start, order), losses


def train_margin(model: CausalBert, tokenizer: Any, pairs: Sequence[Pair],
                 options: CausalBertOptions, checkpoint: Path | None = None,
                 extra: dict[str, Any] | None = None, *,
                 dtype: torch.dtype = torch.float32) -> list[float]:
    """Continued training in place; returns the mean hinge of every step (the L2 term, which is
    optimised too, is left out of the returned values so that they show the ranking alone).
    The forward passes run under :func:`dpc_device.autocast` in ``dtype`` on the model's device
    (float32: no autocast); the weights stay as they are.

    With ``checkpoint``, the whole state (weights, optimiser, both random generators, the epoch's
    order and position, the losses so far and ``extra``) is written there atomically every
    ``options.checkpoint_every`` steps, and a run that finds one resumes from it: an interrupted
    run continued this way gives the same weights and losses as an uninterrupted one.
    """
    rng = random.Random(options.seed)
    torch.manual_seed(options.seed)
    optimizer = torch.optim.Adam([p for p in model.parameters() if p.requires_grad],
                                 lr=options.lr)
    start, data, losses = LoopState(), _Order(), []
    if checkpoint is not None and os.path.lexists(checkpoint):
        start, data, losses = _resume_margin(checkpoint, model, optimizer, rng)
    steps_per_epoch = math.ceil(len(pairs) / options.batch_size)

    def forward(step: int, micro: int) -> tuple[torch.Tensor, torch.Tensor]:
        idx = data.next_batch(len(pairs), options.batch_size, rng)
        positives = [pairs[i] for i in idx]
        negatives = [corrupt(pairs, i, rng) for i in idx]
        with autocast(_device(model), dtype):
            scores = score_pairs(model, tokenizer, positives + negatives, options.max_tokens)
            pos, neg = scores[:len(idx)], scores[len(idx):]  # (b,), (b,)
            hinge = margin_loss(pos, neg, options.margin).mean()
            return hinge + options.l2 / 2 * _l2(model), hinge

    def save(state: LoopState) -> None:
        assert data.order is not None and checkpoint is not None  # after a step, with a path
        save_checkpoint(checkpoint, state, optimizer, extra={
            "model": model.state_dict(), "python_rng": rng.getstate(),
            "epoch": data.epoch, "start": data.start,
            # tensors, not JSON: one entry per pair and per step of a long run
            "order": torch.tensor(data.order, dtype=torch.int64),
            "losses": torch.tensor(losses, dtype=torch.float64),
            "seconds": state.elapsed, "extra": extra or {}})

    model.train()
    run_loop(forward, optimizer,
             LoopOptions(total_steps=steps_per_epoch * options.epochs,
                         progress=options.progress, desc="causal-bert"),
             start=start,
             hooks=LoopHooks(
                 record=lambda state, hinge: losses.append(float(hinge)),
                 postfix=lambda state, hinge: {
                     "loss": f"{sum(losses[-20:]) / len(losses[-20:]):.3f}"},
                 save=save if checkpoint is not None else None,
                 save_due=lambda step: step % options.checkpoint_every == 0))
    return losses


def _refuse_pickle_checkpoint(out: Path) -> None:
    """Raise :class:`CheckpointError` if ``out`` holds a pickled checkpoint."""
    pickled = out / PICKLE_CHECKPOINT_FILE
    if os.path.lexists(pickled):
        raise pickle_checkpoint_error(pickled, "delete it to train from the start, or use "
                                      "another --out")


def continue_training(options: CausalBertOptions, model: CausalBert | None = None,
                      tokenizer: Any = None, *, device: str | torch.device | None = None,
                      dtype: str | torch.dtype | None = None) -> CausalBertResult:
    """Continued training of all-MiniLM-L6-v2 (or ``model``) on a bank; saves to ``options.out``.

    It trains on ``device`` (``"auto"``, ``"cpu"``, ``"cuda:0"``, ...; ``None``: where ``model``
    is, the CPU for the default one) with the forward passes in ``dtype``
    (:func:`dpc_device.resolve_dtype` for training: bfloat16 autocast on CUDA by default, float32
    on the CPU); the weights, checkpoints and saved model stay float32 CPU tensors.

    A finished ``out`` folder (holding ``causal_bert.json``) with the same options is reused,
    not retrained; one with other options is an error. An interrupted run resumes from
    ``OUT/checkpoint.safetensors`` (written every ``checkpoint_every`` steps) when run again with
    the same options; ``model`` then only supplies the architecture, its weights come from the
    checkpoint. A checkpoint that does not load without unpickling (``OUT/checkpoint.pt`` of an
    older dpc included) is a :class:`~train.checkpoint.CheckpointError` naming the file.
    """
    if device is not None:
        where = resolve_device(device)
    else:
        where = _device(model) if model is not None else torch.device("cpu")
    compute = resolve_dtype(dtype, where, training=True)
    out = check_output_folder(options.out, "--out", command="dpc train causal-bert")
    wanted = {k: v for k, v in asdict(options).items() if k not in RESUMABLE_CHANGES}
    if (out / RUN_FILE).is_file():
        done = json.loads((out / RUN_FILE).read_text(encoding="utf-8"))
        if done["options"] != wanted:
            raise TrainError(f"{options.out!r} holds a finished run with other options "
                             f"({done['options']}); choose another --out")
        done["reused"] = True
        return CausalBertResult(**done)
    checkpoint = out / CHECKPOINT_FILE
    resumed: dict[str, Any] | None = None
    seconds_before = 0.0
    _refuse_pickle_checkpoint(out)
    if os.path.lexists(checkpoint):
        state = load_state(checkpoint)
        resumed, seconds_before = state.get("extra"), state.get("seconds")
        if not isinstance(resumed, dict) or not isinstance(seconds_before, (int, float)):
            raise CheckpointError(f"checkpoint {os.fspath(checkpoint)!r} lacks the run's options "
                                  "or time; delete it to train from the start")
        if resumed.get("options") != wanted:
            raise TrainError(f"{options.out!r} holds an interrupted run with other options "
                             f"({resumed.get('options')}); rerun it with those, or choose "
                             "another --out")
    pairs = load_bank_pairs(options.bank, "train", options.pairs, options.seed)
    dev: list[Pair] = []
    if options.dev_pairs:
        try:
            dev = load_bank_pairs(options.bank, "dev", options.dev_pairs, options.seed)
        except TrainDataError:
            dev = []
    # claimed once the options and the bank are read: a refused run leaves no folder behind
    claim_output_folder(out, "dpc train causal-bert")
    if model is None or tokenizer is None:
        model, tokenizer = load_causal_bert(None, options.seed)
    model = model.to(where)

    def dev_accuracy() -> float | None:
        if not dev:
            return None
        with autocast(where, compute):
            return ranking_accuracy(model, tokenizer, dev, options.seed, options.max_tokens)

    before = resumed["dev_before"] if resumed is not None else dev_accuracy()
    start = time.perf_counter()
    # seconds: training time of the steps that count (an interrupted run's steps after its last
    # checkpoint are redone, so their time is not added)
    losses = train_margin(model, tokenizer, pairs, options, checkpoint,
                          {"options": wanted, "dev_before": before}, dtype=compute)
    seconds = seconds_before + time.perf_counter() - start
    after = dev_accuracy()
    out.mkdir(parents=True, exist_ok=True)
    model.encoder.save_pretrained(out)
    tokenizer.save_pretrained(out)
    head = model.head.state_dict()
    for name, tensor in head.items():
        head[name] = tensor.cpu()  # CPU tensors whatever the device (the same ones on the CPU)
    from safetensors.torch import save_file

    save_file({k: v.contiguous() for k, v in head.items()}, out / HEAD_FILE)
    history = [sum(losses[i:i + 20]) / len(losses[i:i + 20]) for i in range(0, len(losses), 20)]
    result = CausalBertResult(wanted, len(pairs), len(losses), round(seconds, 1), losses[0],
                              losses[-1], before, after, False, history)
    tmp = out / (RUN_FILE + ".tmp")
    tmp.write_text(json.dumps(asdict(result), indent=1), encoding="utf-8")
    tmp.replace(out / RUN_FILE)  # written last: its presence marks a finished run
    checkpoint.unlink(missing_ok=True)
    return result

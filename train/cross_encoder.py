"""A cross-encoder fine-tuner: a BERT encoder (MiniLM by default) and a linear head on its pooled
output, for sentence-pair classification and for multiple choice.

- **Pair classification** (:func:`train_pair_classifier`): each ``(text_a, text_b)`` pair (or a
  single text) is encoded together and the head gives ``num_labels`` logits; cross-entropy.
- **Multiple choice** (:func:`train_multiple_choice`): each ``(context, choice)`` pair is scored
  to one logit; a softmax over an item's choices; cross-entropy on the right choice.

Training is AdamW with a linear warm-up and decay, dynamic padding, seeded shuffles, a tqdm bar,
an optional time budget (``max_minutes``) and model selection on ``dev`` (the best checkpoint by
dev accuracy is kept). With ``out`` the run is resumable: its state (weights, optimizer,
scheduler, random generators, counters) is saved every ``checkpoint_every`` steps with
:func:`train.checkpoint.save_state` (safetensors, no pickle) and a restarted run with the same
``out`` and the same data continues where it stopped.

Training takes ``device=`` and ``dtype=`` (:mod:`dpc_device`; default the CPU in float32): the
weights, optimizer state and checkpoints stay float32 and the forward passes run under
:func:`dpc_device.autocast` in ``dtype`` (default bfloat16 on CUDA). A model's inference
follows its parameters' device (``model.to("cuda")``); :meth:`CrossEncoder.load` takes
``device=``/``dtype=`` (:func:`dpc_device.place`).

A trained model is a folder (:meth:`CrossEncoder.save`)::

    cross_encoder.json      mode, num_labels, pooling, label names, max_length
    encoder/                the encoder as a Hugging Face folder (safetensors) + its tokenizer
    head.safetensors        the linear head (weight, bias)

>>> CrossEncoderOptions(epochs=2, batch_size=8).batch_size
8
>>> pool_name("mean")
'mean'
"""

from __future__ import annotations

import json
import math
import os
import random
import shutil
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from dpc_device import autocast, place, resolve_training
from dpc_errors import check_float, check_int, check_seed
from dpc_files import write_json
from train.checkpoint import CheckpointError, check_safetensors, load_state
from train.errors import ModelFolderError, TrainDataError
from train.loop import LoopHooks, LoopOptions, LoopState, resume, run_loop, save_checkpoint
from train.model_config import check_model_config
from train.models import minilm_tokenizer_path

__all__ = [
    "CONFIG_FILE",
    "POOLINGS",
    "CrossEncoder",
    "CrossEncoderOptions",
    "load_encoder",
    "mean_pool",
    "pool_name",
    "train_multiple_choice",
    "train_pair_classifier",
]

#: The file that makes a folder a saved cross-encoder.
CONFIG_FILE = "cross_encoder.json"
HEAD_FILE = "head.safetensors"
ENCODER_DIR = "encoder"
#: Files of a training run in progress inside ``out`` (besides a saved best model).
RUN_FILE = "training_run.json"
STATE_FILE = "training_state.safetensors"
BEST_DIR = "best"
FORMAT = "dpc-cross-encoder-1"
#: Pooling of the encoder's last hidden states: the ``[CLS]`` vector or the masked mean.
POOLINGS = ("cls", "mean")
MODES = ("pair", "choice")


def pool_name(pooling: str) -> str:
    """``pooling`` if it is one of :data:`POOLINGS`, else a :class:`ModelFolderError`.

    >>> pool_name("max")
    Traceback (most recent call last):
    ...
    train.errors.ModelFolderError: pooling 'max' is not one of cls, mean
    """
    if pooling not in POOLINGS:
        raise ModelFolderError(f"pooling {pooling!r} is not one of {', '.join(POOLINGS)}")
    return pooling


@dataclass
class CrossEncoderOptions:
    """How to fine-tune a cross-encoder.

    ``encoder``: a local Hugging Face encoder folder (``None``: all-MiniLM-L6-v2 from
    :func:`train.models.minilm_tokenizer_path`). ``epochs`` may be fractional. ``max_minutes``
    stops training once that much training time has passed (``None``: no limit); the schedule
    still spans ``epochs``. ``group_by_length``: batches of similar length (less padding).
    ``init_from``: a saved cross-encoder (:meth:`CrossEncoder.save`) to continue training from
    (its encoder and head; same mode and labels), instead of a new head on ``encoder``. ``eval_every``: steps between dev evaluations (``0``: once per epoch
    and at the end). ``checkpoint_every``: steps between saved training states (with ``out``).
    """

    encoder: str | Path | None = None
    epochs: float = 1.0
    batch_size: int = 16
    lr: float = 5e-5
    max_length: int = 128
    seed: int = 0
    max_minutes: float | None = None
    warmup: float = 0.1
    weight_decay: float = 0.01
    pooling: str = "mean"
    eval_every: int = 0
    checkpoint_every: int = 200
    group_by_length: bool = True
    eval_batch_size: int = 64
    progress: bool = True
    init_from: str | Path | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def check(self) -> None:
        """Raise :class:`TrainDataError` naming the first out-of-range option."""
        check_float("epochs", self.epochs, 0, open_min=True, error=TrainDataError)
        for name in ("batch_size", "max_length", "eval_batch_size", "checkpoint_every"):
            check_int(name, getattr(self, name), 1, error=TrainDataError)
        check_int("eval_every", self.eval_every, 0, error=TrainDataError)  # 0: once an epoch
        check_seed("seed", self.seed, error=TrainDataError)
        check_float("weight_decay", self.weight_decay, 0, error=TrainDataError)
        check_float("lr", self.lr, 0, open_min=True, error=TrainDataError)
        if self.max_minutes is not None:
            check_float("max_minutes", self.max_minutes, 0, open_min=True, error=TrainDataError)
        check_float("warmup", self.warmup, 0, 1, open_max=True, error=TrainDataError)
        pool_name(self.pooling)


# ----------------------------------------------------------------------------- the model


def _encoder_folder(encoder: str | Path | None) -> Path:
    if encoder is None:
        return minilm_tokenizer_path()
    folder = Path(encoder)
    if not (folder / "config.json").is_file():
        raise ModelFolderError(f"encoder {os.fspath(folder)!r} is not a Hugging Face model folder "
                               "(no config.json)")
    return folder


def load_encoder(folder: Path) -> tuple[Any, Any]:
    """The encoder and tokenizer of a local folder; safetensors weights only (never a pickle):
    a folder without ``model.safetensors`` or one that does not load is a
    :class:`~train.errors.ModelFolderError` naming it."""
    from transformers import AutoModel, AutoTokenizer

    if not (folder / "model.safetensors").is_file():
        bins = sorted(p.name for p in folder.glob("*.bin"))
        hint = f" (it holds {', '.join(bins)}: pickle weights, which dpc does not load)" if bins \
            else ""
        raise ModelFolderError(f"encoder folder {os.fspath(folder)!r} has no model.safetensors"
                               f"{hint}")
    check_safetensors(folder / "model.safetensors")
    check_model_config(folder)  # each field's type: one line naming it
    try:
        tokenizer = AutoTokenizer.from_pretrained(os.fspath(folder), local_files_only=True)
        model = AutoModel.from_pretrained(os.fspath(folder), local_files_only=True,
                                          use_safetensors=True)
    except (OSError, ValueError, KeyError) as err:
        raise ModelFolderError(f"cannot load encoder folder {os.fspath(folder)!r}: "
                               f"{str(err).splitlines()[0] if str(err) else type(err).__name__}"
                               ) from None
    return model, tokenizer


def mean_pool(hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """The mean of ``hidden`` (batch, tokens, h) over the tokens ``mask`` (batch, tokens) keeps:
    (batch, h). The pooling of sentence-transformers' MiniLM, of CausalBERT and of the
    cross-encoder.

    >>> mean_pool(torch.tensor([[[1.0], [3.0], [9.0]]]), torch.tensor([[1, 1, 0]]))
    tensor([[2.]])
    """
    m = mask.unsqueeze(-1).to(hidden.dtype)  # (batch, tokens, 1)
    return (hidden * m).sum(1) / m.sum(1).clamp(min=1.0)


class CrossEncoder(nn.Module):
    """An encoder, its tokenizer and a linear head on the pooled output.

    ``mode`` is ``"pair"`` (``num_labels`` logits a pair) or ``"choice"`` (one logit a
    ``(context, choice)`` pair). Inference methods batch by length and return numpy arrays in the
    input order.
    """

    def __init__(self, encoder: Any, tokenizer: Any, *, mode: str, num_labels: int,
                 pooling: str = "mean", label_names: Sequence[str] | None = None,
                 max_length: int = 128) -> None:
        super().__init__()
        if mode not in MODES:
            raise ModelFolderError(f"mode {mode!r} is not one of {', '.join(MODES)}")
        self.encoder = encoder
        self.tokenizer = tokenizer
        self.mode = mode
        self.num_labels = int(num_labels)
        self.pooling = pool_name(pooling)
        self.label_names = list(label_names) if label_names is not None else None
        self.max_length = int(max_length)
        self.dropout = nn.Dropout(0.1)
        self.head = nn.Linear(encoder.config.hidden_size, 1 if mode == "choice" else num_labels)

    # -- building blocks
    def _pool(self, hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return hidden[:, 0] if self.pooling == "cls" else mean_pool(hidden, mask)

    @property
    def device(self) -> torch.device:
        """Where the model's weights are (its inputs are moved there)."""
        return self.head.weight.device

    def _tokenize(self, texts_a: Sequence[str], texts_b: Sequence[str] | None) -> dict[str, Any]:
        batch = self.tokenizer(list(texts_a), list(texts_b) if texts_b is not None else None,
                               truncation=True, max_length=self.max_length, padding=True,
                               return_tensors="pt")
        return {k: v.to(self.device) for k, v in batch.items()}  # a no-op on the CPU

    def pooled(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """Pooled encoder output of a tokenized batch."""
        inputs = {k: v for k, v in batch.items()
                  if k in ("input_ids", "attention_mask", "token_type_ids")}
        hidden = self.encoder(**inputs).last_hidden_state
        return self._pool(hidden, batch["attention_mask"])

    def forward(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        return self.head(self.dropout(self.pooled(batch)))

    # -- inference
    def _batched(self, texts_a: Sequence[str], texts_b: Sequence[str] | None,
                 fn: Callable[[dict[str, torch.Tensor]], torch.Tensor],
                 batch_size: int, progress: bool) -> np.ndarray:
        if texts_b is not None and len(texts_b) != len(texts_a):
            raise TrainDataError(f"{len(texts_a)} first texts but {len(texts_b)} second texts")
        n = len(texts_a)
        lengths = [len(texts_a[i]) + (len(texts_b[i]) if texts_b is not None else 0)
                   for i in range(n)]
        order = sorted(range(n), key=lambda i: lengths[i])
        out: list[np.ndarray | None] = [None] * n
        was_training = self.training
        self.eval()
        starts = range(0, n, batch_size)
        if progress and n > batch_size:
            from tqdm import tqdm

            starts = tqdm(starts, desc="scoring", unit="batch", leave=False)
        with torch.inference_mode():
            for start in starts:
                idx = order[start:start + batch_size]
                batch = self._tokenize([texts_a[i] for i in idx],
                                       [texts_b[i] for i in idx] if texts_b is not None else None)
                values = fn(batch).float().cpu().numpy()
                for j, i in enumerate(idx):
                    out[i] = values[j]
        self.train(was_training)
        if n == 0:
            width = self.head.out_features if fn == self.forward else self.head.in_features
            return np.zeros((0, width), dtype=np.float32)
        return np.stack(out).astype(np.float32)  # type: ignore[arg-type]

    def logits(self, texts_a: Sequence[str], texts_b: Sequence[str] | None = None, *,
               batch_size: int = 64, progress: bool = False) -> np.ndarray:
        """Head outputs, shape ``(n, num_labels)`` (``(n, 1)`` for a multiple-choice model)."""
        return self._batched(texts_a, texts_b, self.forward, batch_size, progress)

    def probabilities(self, texts_a: Sequence[str], texts_b: Sequence[str] | None = None, *,
                      batch_size: int = 64, progress: bool = False) -> np.ndarray:
        """Softmax of :meth:`logits` over the labels, shape ``(n, num_labels)``."""
        z = self.logits(texts_a, texts_b, batch_size=batch_size, progress=progress)
        z = z - z.max(axis=1, keepdims=True) if len(z) else z
        e = np.exp(z)
        return e / e.sum(axis=1, keepdims=True) if len(e) else e

    def embed(self, texts_a: Sequence[str], texts_b: Sequence[str] | None = None, *,
              batch_size: int = 64, progress: bool = False) -> np.ndarray:
        """Pooled encoder outputs (sentence-pair embeddings), shape ``(n, hidden_size)``."""
        return self._batched(texts_a, texts_b, self.pooled, batch_size, progress)

    def choice_scores(self, contexts: Sequence[str], choices: Sequence[Sequence[str]], *,
                      batch_size: int = 64, progress: bool = False) -> np.ndarray:
        """One score per ``(context, choice)``, shape ``(n, n_choices)`` (a multiple-choice
        model's logit, or a pair model's first logit)."""
        a, b, k = _flatten_choices(contexts, choices)
        z = self.logits(a, b, batch_size=batch_size, progress=progress)[:, 0]
        return z.reshape(len(contexts), k)

    # -- files
    def config(self) -> dict[str, Any]:
        return {"format": FORMAT, "mode": self.mode, "num_labels": self.num_labels,
                "pooling": self.pooling, "label_names": self.label_names,
                "max_length": self.max_length}

    def save(self, folder: str | Path, *, half: bool = False) -> Path:
        """Write the model to ``folder`` (created; files there of an earlier save are replaced).
        ``half``: store the encoder's weights in float16 (half the size; loaded back as
        float32)."""
        from safetensors.torch import save_file

        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / (ENCODER_DIR + ".tmp")
        if tmp.exists():
            shutil.rmtree(tmp)
        if half:
            import copy

            copy.deepcopy(self.encoder).half().save_pretrained(os.fspath(tmp),
                                                               safe_serialization=True)
        else:
            self.encoder.save_pretrained(os.fspath(tmp), safe_serialization=True)
        self.tokenizer.save_pretrained(os.fspath(tmp))
        if (folder / ENCODER_DIR).exists():
            shutil.rmtree(folder / ENCODER_DIR)
        tmp.rename(folder / ENCODER_DIR)
        head = {k: v.detach().cpu().contiguous() for k, v in self.head.state_dict().items()}
        save_file(head, os.fspath(folder / (HEAD_FILE + ".tmp")))
        (folder / (HEAD_FILE + ".tmp")).replace(folder / HEAD_FILE)
        write_json(folder / CONFIG_FILE, self.config())
        return folder

    @classmethod
    def load(cls, folder: str | Path, *, device: str | torch.device | None = None,
             dtype: str | torch.dtype | None = None) -> CrossEncoder:
        """The model :meth:`save` wrote to ``folder``; :class:`ModelFolderError` (or
        :class:`~train.checkpoint.CheckpointError` for a pickle) naming it for anything else.
        Loaded in float32 on the CPU, then moved to ``device`` with its weights cast to
        ``dtype`` (:func:`dpc_device.place`; ``None``: left as loaded)."""
        from safetensors.torch import load_file

        folder = Path(folder)
        name = os.fspath(folder)
        if not folder.is_dir():
            raise ModelFolderError(f"cross-encoder {name!r} is not a folder"
                                   + (" (it is a file)" if folder.exists() else
                                      " (it does not exist)"))
        try:
            config = json.loads((folder / CONFIG_FILE).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ModelFolderError(f"{name!r} is not a saved cross-encoder (no {CONFIG_FILE})"
                                   ) from None
        except (OSError, ValueError) as err:
            raise ModelFolderError(f"{os.fspath(folder / CONFIG_FILE)!r} is not valid JSON "
                                   f"({err})") from None
        if not isinstance(config, dict) or config.get("format") != FORMAT:
            raise ModelFolderError(f"{os.fspath(folder / CONFIG_FILE)!r} is not a dpc "
                                   f"cross-encoder config (format is not {FORMAT!r})")
        check_safetensors(folder / HEAD_FILE)
        encoder, tokenizer = load_encoder(folder / ENCODER_DIR)
        try:
            model = cls(encoder, tokenizer, mode=config["mode"], num_labels=config["num_labels"],
                        pooling=config.get("pooling", "mean"),
                        label_names=config.get("label_names"),
                        max_length=config.get("max_length", 128))
            model.head.load_state_dict(load_file(os.fspath(folder / HEAD_FILE)))
        except (KeyError, RuntimeError, TypeError) as err:
            raise ModelFolderError(f"cross-encoder {name!r} is inconsistent: {err}") from None
        model.float().eval()
        return place(model, device, dtype)


def _flatten_choices(contexts: Sequence[str], choices: Sequence[Sequence[str]]
                     ) -> tuple[list[str], list[str], int]:
    if len(contexts) != len(choices):
        raise TrainDataError(f"{len(contexts)} contexts but {len(choices)} choice lists")
    k = len(choices[0]) if choices else 0
    for i, c in enumerate(choices):
        if len(c) != k:
            raise TrainDataError(f"item {i} has {len(c)} choices, item 0 has {k}")
    a = [ctx for ctx in contexts for _ in range(k)]
    b = [ch for c in choices for ch in c]
    return a, b, k


# ----------------------------------------------------------------------------- training


def _new_model(options: CrossEncoderOptions, mode: str, num_labels: int,
               label_names: Sequence[str] | None) -> CrossEncoder:
    if options.init_from is not None:
        model = CrossEncoder.load(options.init_from)
        if model.mode != mode or model.num_labels != num_labels:
            raise ModelFolderError(
                f"init_from {os.fspath(options.init_from)!r} is a {model.mode} model with "
                f"{model.num_labels} labels, not a {mode} model with {num_labels}")
        model.max_length = options.max_length
        return model
    encoder, tokenizer = load_encoder(_encoder_folder(options.encoder))
    torch.manual_seed(options.seed)
    return CrossEncoder(encoder, tokenizer, mode=mode, num_labels=num_labels,
                        pooling=options.pooling, label_names=label_names,
                        max_length=options.max_length)


def _fingerprint(texts: Sequence[str]) -> str:
    import hashlib

    h = hashlib.sha256()
    for t in texts:
        h.update(t.encode("utf-8"))
        h.update(b"\0")
    return h.hexdigest()[:16]


def _epoch_batches(n_items: int, lengths: Sequence[int], options: CrossEncoderOptions,
                   epoch: int) -> list[list[int]]:
    """The items of each batch of ``epoch``: a seeded shuffle; with ``group_by_length``, each run
    of 50 batches sorted by length (less padding) and the batches shuffled again."""
    g = torch.Generator().manual_seed(options.seed * 1000003 + epoch)
    perm = torch.randperm(n_items, generator=g).tolist()
    bs = options.batch_size
    if not options.group_by_length:
        return [perm[j:j + bs] for j in range(0, n_items, bs)]
    batches: list[list[int]] = []
    for c in range(0, n_items, bs * 50):
        chunk = sorted(perm[c:c + bs * 50], key=lambda i: lengths[i])
        batches += [chunk[j:j + bs] for j in range(0, len(chunk), bs)]
    shuffle = torch.randperm(len(batches), generator=g).tolist()
    return [batches[i] for i in shuffle]


def _dev_accuracy(model: CrossEncoder, dev: tuple[Sequence[str], Sequence[str] | None,
                                                  Sequence[int]],
                  group: int, options: CrossEncoderOptions, where: torch.device,
                  precision: torch.dtype) -> float:
    """Share of ``dev`` items the model gets right (the argmax of an item's choices in
    multiple-choice mode, of the labels in pair mode)."""
    da, db, dy = dev
    with autocast(where, precision):
        logits = model.logits(da, db, batch_size=options.eval_batch_size)
    pred = logits[:, 0].reshape(-1, group).argmax(1) if model.mode == "choice" \
        else logits.argmax(1)
    return float((pred == np.asarray(dy)).mean())


def _optimizer(model: CrossEncoder, options: CrossEncoderOptions,
               total_steps: int) -> tuple[torch.optim.Optimizer, Any]:
    """AdamW (no weight decay on biases and layer norms), linear warm-up then decay."""
    from transformers import get_linear_schedule_with_warmup

    no_decay = ("bias", "LayerNorm.weight", "LayerNorm.bias")
    params = [
        {"params": [p for n, p in model.named_parameters() if not any(x in n for x in no_decay)],
         "weight_decay": options.weight_decay},
        {"params": [p for n, p in model.named_parameters() if any(x in n for x in no_decay)],
         "weight_decay": 0.0},
    ]
    optimizer = torch.optim.AdamW(params, lr=options.lr)
    scheduler = get_linear_schedule_with_warmup(optimizer, int(options.warmup * total_steps),
                                                total_steps)
    return optimizer, scheduler


def _claim_run(folder: Path, run: dict[str, Any], where: torch.device) -> CrossEncoder | None:
    """Write ``run`` to ``folder``'s run file, or check that the run there is the same one;
    the saved model when that run has finished (``None``: train, or resume)."""
    folder.mkdir(parents=True, exist_ok=True)
    if (folder / RUN_FILE).exists():
        previous = json.loads((folder / RUN_FILE).read_text(encoding="utf-8"))
        if previous != json.loads(json.dumps(run)):
            raise TrainDataError(f"{os.fspath(folder)!r} holds a training run with other data "
                                 "or options; give another out folder or the same settings")
    else:
        write_json(folder / RUN_FILE, run)
    if (folder / "training_summary.json").exists() and (folder / CONFIG_FILE).exists() \
            and not (folder / STATE_FILE).exists():
        return CrossEncoder.load(folder, device=where)
    return None


def _resume(path: Path, model: CrossEncoder, optimizer: torch.optim.Optimizer,
            scheduler: Any) -> tuple[LoopState, float, list[dict[str, Any]]]:
    """Weights, optimizer, scheduler and random generators put back from the state at
    ``path``; the loop state, best dev accuracy and history to go on from."""
    state = load_state(path)
    try:
        model.load_state_dict(state["model"])
        best, history = float(state["best"]), list(state["history"])
    except (KeyError, RuntimeError, TypeError, ValueError) as err:
        raise CheckpointError(f"training state {os.fspath(path)!r} does not fit this run "
                              f"({err}); delete it or use another out") from None
    return resume(state, path, optimizer, scheduler), best, history


def _run(mode: str, a: Sequence[str], b: Sequence[str] | None, labels: Sequence[int],
         num_labels: int, options: CrossEncoderOptions, out: str | Path | None,
         dev: tuple[Sequence[str], Sequence[str] | None, Sequence[int]] | None,
         label_names: Sequence[str] | None, group: int,
         device: str | torch.device | None = None,
         dtype: str | torch.dtype | None = None) -> CrossEncoder:
    """Train on items of ``group`` consecutive pairs each (1 for classification, the number of
    choices for multiple choice); ``labels`` has one entry an item. On ``device`` (``None``: the
    CPU), the forward passes under :func:`dpc_device.autocast` in ``dtype``."""
    from tqdm import tqdm

    where, precision = resolve_training(device, dtype)
    options.check()
    n_items = len(labels)
    if n_items == 0:
        raise TrainDataError("no training examples")
    for i, y in enumerate(labels):
        if not 0 <= int(y) < (group if mode == "choice" else num_labels):
            raise TrainDataError(f"label {y!r} of example {i} is out of range")
    model = _new_model(options, mode, num_labels, label_names).to(where)
    steps_per_epoch = math.ceil(n_items / options.batch_size)
    total_steps = max(1, math.ceil(steps_per_epoch * options.epochs))
    optimizer, scheduler = _optimizer(model, options, total_steps)
    run = {"mode": mode, "num_labels": num_labels, "n": n_items, "group": group,
           "data": _fingerprint(list(a) + list(b or []) + [str(y) for y in labels]),
           "options": {k: (os.fspath(v) if isinstance(v, Path) else v)
                       for k, v in asdict(options).items()
                       if k not in ("max_minutes", "progress", "eval_batch_size")}}
    start, best, history = LoopState(), -1.0, []
    folder = Path(out) if out is not None else None
    random.seed(options.seed)
    torch.manual_seed(options.seed)
    if folder is not None:
        finished = _claim_run(folder, run, where)
        if finished is not None:
            return finished
        if (folder / STATE_FILE).exists():
            start, best, history = _resume(folder / STATE_FILE, model, optimizer, scheduler)

    lengths = [sum(len(a[i * group + j]) + (len(b[i * group + j]) if b is not None else 0)
                   for j in range(group)) for i in range(n_items)]
    epochs: dict[int, list[list[int]]] = {}  # the batches of the current epoch
    best_state: dict[str, torch.Tensor] | None = None
    loss_avg: list[float] = []  # the bar's moving average of the loss

    def forward(step: int, micro: int) -> torch.Tensor:
        epoch, k = divmod(step, steps_per_epoch)
        if epoch not in epochs:
            epochs.clear()
            epochs[epoch] = _epoch_batches(n_items, lengths, options, epoch)
        idx = epochs[epoch][k]
        batch = model._tokenize([a[i * group + j] for i in idx for j in range(group)],
                                [b[i * group + j] for i in idx for j in range(group)]
                                if b is not None else None)
        y = torch.tensor([int(labels[i]) for i in idx], device=where)
        with autocast(where, precision):
            logits = model(batch)
            if mode == "choice":
                logits = logits.view(-1, group)
            return nn.functional.cross_entropy(logits, y)

    def evaluate(state: LoopState, loss: torch.Tensor | None = None) -> None:
        nonlocal best, best_state
        if dev is None:
            return
        acc = _dev_accuracy(model, dev, group, options, where, precision)
        history.append({"step": state.step, "dev_accuracy": acc})
        if acc > best:
            best = acc
            if folder is not None:
                model.save(folder / BEST_DIR)
            else:
                best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
        if options.progress:
            tqdm.write(f"step {state.step}: dev accuracy {acc:.4f} (best {best:.4f})")
        model.train()

    def postfix(state: LoopState, loss: torch.Tensor) -> dict[str, str]:
        value = loss.item()
        loss_avg[:] = [value if not loss_avg else 0.98 * loss_avg[0] + 0.02 * value]
        return {"loss": f"{loss_avg[0]:.3f}"}

    def eval_due(step: int) -> bool:
        period = options.eval_every or steps_per_epoch
        return step % period == 0 and step < total_steps

    def checkpoint(state: LoopState) -> None:
        save_checkpoint(folder / STATE_FILE, state, optimizer, scheduler,  # type: ignore[operator]
                        {"model": model.state_dict(), "best": best, "history": history})

    model.train()
    end = run_loop(forward, optimizer,
                   LoopOptions(total_steps=total_steps, clip_norm=1.0,
                               checkpoint_every=options.checkpoint_every,
                               max_minutes=options.max_minutes, progress=options.progress,
                               desc=f"training ({mode})"),
                   scheduler=scheduler, parameters=model.parameters(), start=start,
                   hooks=LoopHooks(evaluate=evaluate, eval_due=eval_due, postfix=postfix,
                                   save=checkpoint if folder is not None else None))
    step, elapsed, stopped = end.step, end.elapsed, bool(end.stopped)
    if stopped and options.progress:
        tqdm.write(f"stopped after {elapsed / 60:.1f} min (max_minutes={options.max_minutes}) "
                   f"at step {step}/{total_steps}")
    if not history or history[-1]["step"] != step:
        evaluate(end)
    model.eval()
    if dev is not None:
        if folder is not None and (folder / BEST_DIR / CONFIG_FILE).exists():
            model = CrossEncoder.load(folder / BEST_DIR, device=where)
        elif best_state is not None:
            model.load_state_dict(best_state)
    if folder is not None:
        model.save(folder)
        info = {"steps": step, "total_steps": total_steps, "stopped_by_time": stopped,
                "train_minutes": round(elapsed / 60, 2), "best_dev_accuracy":
                best if dev is not None else None, "history": history}
        write_json(folder / "training_summary.json", info)
        (folder / STATE_FILE).unlink(missing_ok=True)
        if (folder / BEST_DIR).exists():
            shutil.rmtree(folder / BEST_DIR)
    model.training_summary = {"steps": step, "train_minutes": elapsed / 60,  # type: ignore[attr-defined]
                              "best_dev_accuracy": best if dev is not None else None,
                              "history": history}
    return model


def train_pair_classifier(texts_a: Sequence[str], texts_b: Sequence[str] | None,
                          labels: Sequence[int], num_labels: int,
                          options: CrossEncoderOptions | None = None, *,
                          out: str | Path | None = None,
                          dev: tuple[Sequence[str], Sequence[str] | None, Sequence[int]] | None
                          = None, label_names: Sequence[str] | None = None,
                          device: str | torch.device | None = None,
                          dtype: str | torch.dtype | None = None) -> CrossEncoder:
    """Fine-tune a ``num_labels``-way classifier of ``(texts_a[i], texts_b[i])`` (or of
    ``texts_a[i]`` alone when ``texts_b`` is ``None``) with ``labels[i]`` in ``0..num_labels-1``.

    With ``dev`` (same shape) the model with the best dev accuracy is returned; with ``out`` the
    run is resumable there and the result is saved there (:meth:`CrossEncoder.save`). It trains
    on ``device`` (``None``: the CPU) with the forward passes in ``dtype``
    (:func:`dpc_device.resolve_dtype` for training: by default bfloat16 autocast on CUDA, float32
    on the CPU); the returned model is on ``device``.
    """
    if texts_b is not None and len(texts_b) != len(texts_a):
        raise TrainDataError(f"{len(texts_a)} first texts but {len(texts_b)} second texts")
    if len(labels) != len(texts_a):
        raise TrainDataError(f"{len(texts_a)} texts but {len(labels)} labels")
    if num_labels < 2:
        raise TrainDataError(f"num_labels (={num_labels}) has to be at least 2")
    return _run("pair", list(texts_a), list(texts_b) if texts_b is not None else None, labels,
                num_labels, options or CrossEncoderOptions(), out, dev, label_names, 1,
                device, dtype)


def train_multiple_choice(contexts: Sequence[str], choices: Sequence[Sequence[str]],
                          labels: Sequence[int], options: CrossEncoderOptions | None = None, *,
                          out: str | Path | None = None,
                          dev: tuple[Sequence[str], Sequence[Sequence[str]], Sequence[int]] | None
                          = None, device: str | torch.device | None = None,
                          dtype: str | torch.dtype | None = None) -> CrossEncoder:
    """Fine-tune a multiple-choice scorer: item ``i`` is ``contexts[i]`` with the choices
    ``choices[i]`` (the same number for every item), ``labels[i]`` the index of the right one.
    ``dev`` has the same shape; ``out``, ``device`` and ``dtype`` as in
    :func:`train_pair_classifier`."""
    a, b, k = _flatten_choices(contexts, choices)
    if k < 2:
        raise TrainDataError(f"multiple choice needs at least 2 choices an item, not {k}")
    if len(labels) != len(contexts):
        raise TrainDataError(f"{len(contexts)} contexts but {len(labels)} labels")
    flat_dev = None
    if dev is not None:
        da, db, kd = _flatten_choices(dev[0], dev[1])
        if kd != k:
            raise TrainDataError(f"dev items have {kd} choices, training items {k}")
        flat_dev = (da, db, dev[2])
    return _run("choice", a, b, labels, k, options or CrossEncoderOptions(), out, flat_dev,
                None, k, device, dtype)

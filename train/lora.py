"""LoRA fine-tuning of a pretrained causal LM on (prompt, target) pairs, and loading the result.

A decoder-only model is trained as a seq2seq one: each example is a prompt and the target that
continues it, and the loss is taken on the target's tokens only (the prompt's labels are
``-100``). Only the LoRA adapter is trained and saved (``peft``; safetensors in float16, a few
MB); the base model is an installed package (:mod:`train.pretrained`) or a local folder. Two
generators use it: the cause/effect generator of ``dpc generate``
(:mod:`train.cause_effect_lm`) and the INLI variant generator (:mod:`tasks.inli.hypotheses`).

A run is resumable: its options are written to a run file at the start, its state (adapter,
optimizer, scheduler, random generators, step) every ``checkpoint_every`` steps through
:mod:`train.checkpoint` (safetensors, never pickle); the same call again continues from there
and reaches the same adapter as an uninterrupted run. Batches are drawn from a seeded
permutation per epoch, so the order depends only on the seed and the data.

>>> LoraOptions(r=0)
Traceback (most recent call last):
...
train.errors.TrainConfigError: `r` (=0) must be an integer >= 1
>>> lora_targets(["model.layers.0.self_attn.q_proj", "model.layers.0.mlp.up_proj", "lm_head"])
['q_proj', 'up_proj']
"""

from __future__ import annotations

import json
import math
import os
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from dpc_device import autocast, resolve_training
from dpc_errors import check_float, check_int, check_seed
from dpc_files import write_json
from train.errors import TrainConfigError, TrainError
from train.model_config import check_model_config
from train.pretrained import build_folder, cache_root, pretrained_folder
from train.tokenizer import prompt_start_ids

__all__ = ["LORA_TARGETS", "LoraFiles", "LoraOptions", "attach_lora", "check_run", "load_base",
           "load_merged", "lora_targets", "merged_lora_folder", "train_lora"]

#: The projections that get an adapter, where the model has them (Llama-type names).
LORA_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


@dataclass
class LoraOptions:
    """How the adapter is trained.

    Attributes
    ----------
    r, alpha
        LoRA rank and scale (the update is ``alpha / r * B @ A``).
    epochs
        Passes over the examples (fractions allowed).
    batch_size, lr
        Examples a step, peak learning rate (AdamW, linear warm-up over 5% then decay).
    max_minutes
        Stop once this much training time has passed (``None``: never): the adapter is saved
        and so is the state, so the same call with a larger ``max_minutes`` continues.
    seed
        Seeds the initialisation, dropout and the batch order.
    checkpoint_every
        Steps between resumable states.
    """

    r: int = 16
    alpha: int = 32
    epochs: float = 1.0
    batch_size: int = 8
    lr: float = 5e-4
    max_minutes: float | None = None
    seed: int = 0
    checkpoint_every: int = 25
    progress: bool = True

    def __post_init__(self) -> None:
        for name in ("r", "alpha", "batch_size", "checkpoint_every"):
            check_int(name, getattr(self, name), 1, error=TrainConfigError)
        check_seed("seed", self.seed, error=TrainConfigError)
        check_float("epochs", self.epochs, 0, open_min=True, error=TrainConfigError)
        check_float("lr", self.lr, 0, open_min=True, error=TrainConfigError)
        if self.max_minutes is not None:
            check_float("max_minutes", self.max_minutes, 0, open_min=True, error=TrainConfigError)

    def run_record(self) -> dict[str, Any]:
        """The options that decide what a run trains (all but the time budget, the progress bar
        and the checkpoint interval, which a resumed run may change): what its run file keeps."""
        return {k: v for k, v in asdict(self).items()
                if k not in ("max_minutes", "progress", "checkpoint_every")}


@dataclass(frozen=True)
class LoraFiles:
    """The file names of one run's folder (each generator keeps its own)."""

    adapter: str = "adapter.safetensors"
    state: str = "lora_state.safetensors"


def check_run(folder: Path, run: dict[str, Any], run_file: str, config_file: str,
              files: LoraFiles) -> dict[str, Any] | None:
    """Before training into ``folder``: refuse a folder holding a run of other options (its
    ``run_file``), write ``run`` there for a new run, and return the summary a finished run of
    the same options keeps in its ``config_file`` (``None``: train, or resume from the state).
    """
    path = folder / run_file
    if not path.exists():
        write_json(path, run)
        return None
    if json.loads(path.read_text(encoding="utf-8")) != run:
        raise TrainError(f"{os.fspath(folder)!r} holds a run with other options or data; give "
                         "another --out or the same options")
    if (folder / config_file).exists() and not (folder / files.state).exists():
        return json.loads((folder / config_file).read_text(encoding="utf-8"))["summary"]
    return None


def lora_targets(module_names: Iterable[str]) -> list[str]:
    """The :data:`LORA_TARGETS` that name modules of a model (given its module names)."""
    names = {n.rsplit(".", 1)[-1] for n in module_names}
    return [t for t in LORA_TARGETS if t in names]


def load_base(base: str | Path) -> tuple[Any, Any]:
    """The base causal LM (float32, train mode off) and its tokenizer: a
    :mod:`train.pretrained` name or a local Hugging Face folder with ``model.safetensors``.

    A tokenizer without a pad token pads with its EOS (the padded positions are masked)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if Path(base).is_dir():
        folder = Path(base)
    else:
        folder = pretrained_folder(str(base))
    if not (folder / "model.safetensors").is_file():
        raise TrainError(f"base model folder {os.fspath(folder)!r} has no model.safetensors")
    check_model_config(folder, error=TrainError)  # each field's type: one line naming it
    tokenizer = AutoTokenizer.from_pretrained(os.fspath(folder), local_files_only=True)
    model = AutoModelForCausalLM.from_pretrained(os.fspath(folder), local_files_only=True,
                                                 use_safetensors=True)
    if tokenizer.eos_token_id is None and tokenizer.sep_token is not None:  # a BERT tokenizer
        tokenizer.eos_token = tokenizer.sep_token
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    return model.eval(), tokenizer


def attach_lora(model: Any, r: int, alpha: int, dropout: float = 0.05) -> Any:
    """``model`` wrapped by ``peft`` with a LoRA adapter on every projection it has of
    :data:`LORA_TARGETS`."""
    from peft import LoraConfig, get_peft_model

    targets = lora_targets(n for n, _ in model.named_modules())
    if not targets:
        raise TrainError("the base model has none of the projections LoRA is attached to "
                         f"({', '.join(LORA_TARGETS)})")
    config = LoraConfig(r=r, lora_alpha=alpha, lora_dropout=dropout, target_modules=targets,
                        task_type="CAUSAL_LM")
    with warnings.catch_warnings():  # peft reads a transformers property deprecated in 5.x
        warnings.filterwarnings("ignore", message=".*is_gradient_checkpointing.*")
        return get_peft_model(model, config)


def load_merged(base: str | Path, adapter: str | Path, r: int, alpha: int) -> tuple[Any, Any]:
    """The base model with the saved adapter merged into its weights (eval mode), and its
    tokenizer. The adapter file is checked to be safetensors first (never unpickled)."""
    from peft import set_peft_model_state_dict
    from safetensors.torch import load_file

    from train.checkpoint import check_safetensors

    check_safetensors(Path(adapter))
    model, tokenizer = load_base(base)
    peft_model = attach_lora(model, r, alpha)
    weights = {k: v.float() for k, v in load_file(os.fspath(adapter)).items()}
    try:
        result = set_peft_model_state_dict(peft_model, weights)
    except RuntimeError as err:  # shapes differ: another rank or another base model
        first = str(err).strip().splitlines()[-1].strip()
        raise TrainError(f"the adapter {os.fspath(adapter)!r} does not fit the base model "
                         f"{str(base)!r} with r={r} ({first})") from None
    wrong = list(getattr(result, "unexpected_keys", []) or []) + [
        k for k in getattr(result, "missing_keys", []) or [] if "lora_" in k]
    if wrong:
        raise TrainError(f"the adapter {os.fspath(adapter)!r} does not fit the base model "
                         f"{str(base)!r} (e.g. {wrong[0]!r})")
    return peft_model.merge_and_unload().eval(), tokenizer


def train_lora(examples: Sequence[tuple[str, str]], folder: str | Path, options: LoraOptions,
               base: str | Path, *, files: LoraFiles = LoraFiles(), end: str = "\n",
               dev: Sequence[tuple[str, str]] = (), desc: str = "training adapter",
               device: str | Any | None = None, dtype: str | Any | None = None
               ) -> dict[str, Any]:
    """Fine-tune a LoRA adapter of ``base`` on ``examples`` and save it as
    ``folder/files.adapter`` (float16 safetensors); resumable from ``folder/files.state``.

    Parameters
    ----------
    examples
        ``(prompt, target)`` pairs; the model reads ``prompt`` and learns to write
        ``" " + target`` (spaces normalised) followed by ``end`` (a line break by default; the
        EOS token when the tokenizer has no single token for it).
    dev
        Held-out pairs: their mean target loss (nats a token) before and after training is in
        the summary.
    device, dtype
        Where to train (:func:`dpc_device.resolve_device`; default the CPU) and the forward
        passes' autocast precision (default bfloat16 on CUDA, float32 on the CPU). The adapter,
        optimizer state and checkpoints stay float32 CPU tensors, so a run begun on a GPU
        resumes on the CPU.

    Returns
    -------
    dict
        ``steps``, ``total_steps``, ``stopped_by_time``, ``train_minutes``, ``examples_seen``,
        ``final_loss`` (mean of the last 50 steps), and ``dev_loss_before``/``dev_loss_after``
        when ``dev`` is given.
    """
    import torch
    from peft import get_peft_model_state_dict, set_peft_model_state_dict
    from safetensors.torch import save_file
    from transformers import get_linear_schedule_with_warmup

    from train.checkpoint import load_state
    from train.loop import LoopHooks, LoopOptions, LoopState, resume, run_loop, save_checkpoint

    where, precision = resolve_training(device, dtype)
    if not examples:
        raise TrainError("no training examples for the adapter")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(options.seed)
    model, tokenizer = load_base(base)
    model = attach_lora(model, options.r, options.alpha).to(where)
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=options.lr, weight_decay=0.0)
    steps_per_epoch = math.ceil(len(examples) / options.batch_size)
    total = max(1, math.ceil(steps_per_epoch * options.epochs))
    scheduler = get_linear_schedule_with_warmup(optimizer, max(1, total // 20), total)
    start, losses = LoopState(), []
    dev_before: float | None = None
    state_path = folder / files.state
    if state_path.exists():
        state = load_state(state_path)
        set_peft_model_state_dict(model, {k: v.to(where) for k, v in state["lora"].items()})
        start = resume(state, state_path, optimizer, scheduler)
        losses, dev_before = list(state["losses"]), state.get("dev_before")
    pad = tokenizer.pad_token_id
    newline = tokenizer(end, add_special_tokens=False).input_ids
    if len(newline) != 1:  # a tokenizer that drops line breaks: end with EOS
        newline = [tokenizer.eos_token_id]

    bos = prompt_start_ids(tokenizer)  # Gemma's <bos>, as the decoder gives it: none for SmolLM2

    def encode(pair: tuple[str, str]) -> tuple[list[int], list[int]]:
        p = bos + tokenizer(pair[0], add_special_tokens=False).input_ids
        t = tokenizer(" " + " ".join(pair[1].split()), add_special_tokens=False).input_ids + newline
        return p + t, [-100] * len(p) + t

    def collate(pairs: Sequence[tuple[str, str]]) -> dict[str, Any]:
        encoded = [encode(x) for x in pairs]
        width = max(len(ids) for ids, _ in encoded)
        # input_ids, labels, attention_mask: (batch, width)
        ids = torch.tensor([x + [pad] * (width - len(x)) for x, _ in encoded])
        labels = torch.tensor([y + [-100] * (width - len(y)) for _, y in encoded])
        mask = torch.tensor([[1] * len(x) + [0] * (width - len(x)) for x, _ in encoded])
        return {"input_ids": ids.to(where), "attention_mask": mask.to(where),
                "labels": labels.to(where)}

    def batch(s: int) -> dict[str, Any]:
        epoch, k = divmod(s, steps_per_epoch)
        g = torch.Generator().manual_seed(options.seed * 7919 + epoch)
        perm = torch.randperm(len(examples), generator=g).tolist()
        return collate([examples[i] for i in perm[k * options.batch_size:(k + 1) * options.batch_size]])

    def dev_loss() -> float | None:
        if not dev:
            return None
        model.eval()
        total_loss, tokens = 0.0, 0
        with torch.no_grad():
            for start in range(0, len(dev), 32):
                inputs = collate(dev[start:start + 32])
                count = int((inputs["labels"][:, 1:] != -100).sum())
                with autocast(where, precision):
                    total_loss += float(model(**inputs).loss) * count
                tokens += count
        model.train()
        return round(total_loss / max(tokens, 1), 4)

    def forward(step: int, micro: int) -> Any:
        with autocast(where, precision):
            return model(**batch(step)).loss

    def record(state: LoopState, loss: Any) -> None:
        losses[:] = (losses + [float(loss.item())])[-50:]

    def checkpoint(state: LoopState) -> None:
        save_checkpoint(state_path, state, optimizer, scheduler, {
            "lora": {k: v.detach().cpu() for k, v in get_peft_model_state_dict(model).items()},
            "losses": losses, "dev_before": dev_before})

    if start.step == 0:
        dev_before = dev_loss()
    model.train()
    end = run_loop(
        forward, optimizer,
        LoopOptions(total_steps=total, clip_norm=1.0, checkpoint_every=options.checkpoint_every,
                    max_minutes=options.max_minutes, progress=options.progress, desc=desc),
        scheduler=scheduler, parameters=params, start=start,
        hooks=LoopHooks(save=checkpoint, save_on_stop=True, record=record,
                        postfix=lambda state, loss: {"loss": f"{sum(losses) / len(losses):.3f}"}))
    step, elapsed, stopped = end.step, end.elapsed, bool(end.stopped)
    weights = {k: v.detach().cpu().to(torch.float16).contiguous()
               for k, v in get_peft_model_state_dict(model).items()}
    partial = folder / (files.adapter + ".tmp")
    save_file(weights, os.fspath(partial))
    partial.replace(folder / files.adapter)
    summary: dict[str, Any] = {
        "steps": step, "total_steps": total, "stopped_by_time": stopped,
        "train_minutes": round(elapsed / 60, 2), "examples_seen": step * options.batch_size,
        "final_loss": round(sum(losses) / max(1, len(losses)), 4)}
    if dev:
        summary.update(dev_loss_before=dev_before, dev_loss_after=dev_loss())
    if not stopped:
        state_path.unlink(missing_ok=True)
    return summary


def merged_lora_folder(base: str | Path, adapter: str | Path, r: int, alpha: int,
                       progress: bool = True) -> Path:
    """A Hugging Face folder holding ``base`` with the adapter file merged in, made on first use
    under the cache (:func:`train.pretrained.cache_root`), named after the adapter's SHA-256 and
    ``(base, r, alpha)`` (:func:`train.pretrained.build_folder`: nothing half-written is left by
    an interrupted merge); later loads read it directly, as fast as the base model, without
    importing ``peft`` or wrapping and merging every projection again."""
    import hashlib
    import sys

    from transformers.utils import logging as hf_logging

    digest = hashlib.sha256()
    try:
        digest.update(Path(adapter).read_bytes())
    except OSError as err:
        raise TrainError(f"cannot read the adapter {os.fspath(adapter)!r}: {err.strerror}"
                         ) from None
    digest.update(json.dumps({"base": str(base), "r": r, "alpha": alpha},
                             sort_keys=True).encode("utf-8"))
    target = cache_root() / "models" / f"{Path(str(base)).name}-lora-{digest.hexdigest()[:16]}"
    if (target / "model.safetensors").is_file():
        return target
    if progress:
        print(f"dpc: merging the adapter {os.fspath(adapter)} into {base} (once) into {target}",
              file=sys.stderr)
    model, tokenizer = load_merged(base, adapter, r, alpha)

    def write(work: Path) -> None:
        bars = hf_logging.is_progress_bar_enabled()
        hf_logging.disable_progress_bar()  # "Writing model shards" for one small file
        try:
            model.save_pretrained(os.fspath(work), safe_serialization=True)
            tokenizer.save_pretrained(os.fspath(work))
        finally:
            if bars:
                hf_logging.enable_progress_bar()

    return build_folder(target, write)

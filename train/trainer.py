"""Training a generator: seeded, length-bucketed, resumable, with dev-loss early stopping.

One call of :func:`train_generator` reads a CausalBank, tokenises it with a trained tokenizer,
builds (or resumes) a T5 generator -- or, with ``warm_start``, a bert2bert encoder-decoder whose
halves both start from a pretrained BERT-style model (all-MiniLM-L6-v2); ``init_from`` starts
from an existing generator of either kind (e.g. to adapt one to another bank) -- and trains it with
AdamW (warm-up then inverse-square-root decay). Every ``checkpoint_every`` steps it writes
``OUT/checkpoint/`` (model, optimizer, scheduler, RNG state and position in the data)
atomically; a run started again with the same ``OUT`` continues from there and reaches the same
weights as an uninterrupted run. Every
``eval_every`` steps it measures the dev loss; the best model so far is kept in ``OUT/model/``
(a Hugging Face folder with the tokenizer, loadable by ``dpc generate --model OUT/model``), and
training stops after ``patience`` evaluations without improvement, at ``max_steps`` or after
``max_minutes`` (training time summed over resumptions). A run stopped by a budget continues
when started again with a larger one; a run stopped early does not.

The training state on disk is the source of truth: ``OUT/log.jsonl`` holds one JSON line per
evaluation and ``OUT/train_config.json`` the options (a resumed run must use the same ones).
``OUT/checkpoint/`` holds the model as a Hugging Face folder (``model.safetensors``,
``config.json``) and :data:`STATE_FILE`, the rest as safetensors with a JSON tree
(:mod:`train.checkpoint`): nothing there is unpickled. A ``trainer_state.pt`` of an older dpc
(a pickle) is refused, not loaded.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import sys
from dataclasses import asdict, dataclass, field, fields, replace
from functools import partial
from pathlib import Path
from typing import Any

import torch
from tqdm import tqdm

from dpc_device import autocast, resolve_training
from dpc_errors import DpcError
from dpc_files import check_output_folder, claim_output_folder
from train.checkpoint import CheckpointError, check_safetensors, load_state, pickle_checkpoint_error
from train.data import Example, bucket_batches, load_examples
from train.errors import TrainError
from train.generator import (
    build_generator,
    build_warm_started,
    count_parameters,
    resolve_warm_start,
    t5_config,
)
from train.loop import LoopHooks, LoopOptions, LoopState, resume, run_loop, save_checkpoint
from train.metrics import DevMetrics, collate, evaluate
from train.models import generator_config, load_generator
from train.options import GeneratorConfig, TrainOptions, options_from_dict
from train.shared_weights import is_shared, load_weights, save_weights
from train.tokenizer import end_token_id, load_tokenizer, target_ids

# TrainOptions and options_from_dict are defined in train.options (no torch: `dpc --help`);
# train_generator takes them, so they are named here too.
__all__ = ["TrainOptions", "TrainResult", "encode_examples", "options_from_dict",
           "train_generator"]

#: Options that may differ between a run and its resumption (budgets, not the experiment).
RESUMABLE_CHANGES = frozenset({"max_steps", "max_minutes", "progress", "threads"})
#: ``OUT/checkpoint/`` file of everything but the model: optimizer, scheduler, random generators,
#: progress (:func:`train.checkpoint.save_state`).
STATE_FILE = "trainer_state.safetensors"
#: A pickled (torch.save) state: refused where found, never unpickled.
PICKLE_STATE_FILE = "trainer_state.pt"


@dataclass
class TrainResult:
    """What a run did: steps, best dev metrics, time, why it stopped, where the model is."""

    model_dir: str
    steps: int
    best_dev_loss: float
    best_step: int
    dev_perplexity: float
    dev_word_accuracy: float
    seconds: float
    stopped: str
    parameters: int
    train_examples: int
    history: list[dict[str, Any]] = field(default_factory=list)


def encode_examples(
    tokenizer: Any, examples: list[Example], max_source: int, max_target: int
) -> list[tuple[list[int], list[int]]]:
    """Token ids of (source, target) with EOS, truncated to the limits (EOS kept last)."""
    src = tokenizer([e.source for e in examples])["input_ids"]
    tgt = target_ids(tokenizer, [e.target for e in examples])
    eos = end_token_id(tokenizer)

    def cut(ids: list[int], n: int) -> list[int]:
        return ids if len(ids) <= n else ids[: n - 1] + [eos]

    return [(cut(s, max_source), cut(t, max_target)) for s, t in zip(src, tgt)]


def _lr_lambda(warmup: int):
    def f(step: int) -> float:
        step = step + 1
        return min(step / warmup, math.sqrt(warmup / step))

    return f


def _save_checkpoint(folder: Path, model: Any, loop: LoopState, optimizer: Any, scheduler: Any,
                     state: dict[str, Any]) -> None:
    """Write the checkpoint (the model, and :func:`train.loop.save_checkpoint` with the
    trainer's ``state``) to a temporary folder and rename it over the old one."""
    tmp = folder.with_name(folder.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    save_weights(model, tmp)
    save_checkpoint(tmp / STATE_FILE, loop, optimizer, scheduler, state)
    old = folder.with_name(folder.name + ".old")
    shutil.rmtree(old, ignore_errors=True)
    if folder.exists():
        folder.rename(old)
    tmp.rename(folder)
    shutil.rmtree(old, ignore_errors=True)


def _save_model(folder: Path, model: Any, tokenizer: Any, info: dict[str, Any]) -> None:
    tmp = folder.with_name(folder.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    save_weights(model, tmp)
    tokenizer.save_pretrained(str(tmp))
    (tmp / "dpc_generator.json").write_text(json.dumps(info, indent=1, sort_keys=True) + "\n")
    shutil.rmtree(folder, ignore_errors=True)
    tmp.rename(folder)


def _initial_weights(folder: str, config: GeneratorConfig) -> Any:
    """The generator in ``folder`` (``--init-from``), checked against the run's architecture
    if it is a T5 (a bert2bert keeps its own architecture and weight sharing, and its folder is
    the run's tokenizer)."""
    loaded = load_generator(folder).model  # ModelFolderError for a missing or foreign folder
    if loaded.config.model_type == "encoder-decoder":
        return loaded
    if loaded.config.model_type != "t5":
        raise TrainError(
            f"--init-from {folder!r} holds a {loaded.config.model_type!r} model; --init-from "
            "takes a generator of `dpc train generator` (T5 or bert2bert)"
        )
    want = t5_config(config)
    diffs = [f"{k}: {getattr(loaded.config, k)} (folder) vs {getattr(want, k)} (options)"
             for k in ("vocab_size", "d_model", "d_ff", "num_layers", "num_decoder_layers",
                       "num_heads") if getattr(loaded.config, k) != getattr(want, k)]
    if diffs:
        raise TrainError(f"--init-from {folder!r} has another architecture: {'; '.join(diffs)}")
    return loaded


def _check_same_options(path: Path, options: TrainOptions) -> None:
    saved = json.loads(path.read_text())
    # an option added after the run was started has its default there
    defaults = {f.name: f.default for f in fields(TrainOptions)}
    diffs = [f"{k}: {saved.get(k, defaults[k])!r} -> {v!r}" for k, v in asdict(options).items()
             if k not in RESUMABLE_CHANGES and saved.get(k, defaults[k]) != v]
    if diffs:
        raise TrainError(
            f"output folder {str(path.parent)!r} holds a run with other options ({'; '.join(diffs)}); "
            "use another --out or the same options to resume"
        )


def train_generator(options: TrainOptions, *, device: str | torch.device | None = None,
                    dtype: str | torch.dtype | None = None) -> TrainResult:
    """Train (or resume) a generator as :class:`TrainOptions` says; see the module docstring.

    It trains on ``device`` (``"auto"``, ``"cpu"``, ``"cuda:0"``, ...; ``None``: the CPU),
    with the forward passes in ``dtype`` (:func:`dpc_device.resolve_dtype` for training: by
    default bfloat16 autocast on CUDA, plain float32 on the CPU). The weights, the optimizer's
    state and every checkpoint stay float32 whatever the device, so a run may be resumed on
    another one. Both are checked before ``OUT`` is written."""
    if not options.threads:
        return _train(options, device, dtype)
    before = torch.get_num_threads()  # the run's threads are the run's: the caller's come back
    torch.set_num_threads(options.threads)
    try:
        return _train(options, device, dtype)
    finally:
        torch.set_num_threads(before)


def _train(options: TrainOptions, device: str | torch.device | None,
           dtype: str | torch.dtype | None) -> TrainResult:
    where, compute = resolve_training(device, dtype)
    precision = partial(autocast, where, compute)
    run = _prepare_run(options)
    checkpoint = run.out / "checkpoint"
    model_config = options.model_config(len(run.tokenizer))
    model, state = _load_or_build_model(options, checkpoint, model_config)
    model = model.to(where)  # before the optimizer holds its parameters (a no-op on the CPU)
    optimizer, scheduler = _optimizer(model, options)
    progress = _resume_state(state, optimizer, scheduler, options.seed, checkpoint / STATE_FILE)
    if state is not None and state.get("stopped", "").startswith("early stopping"):
        return _result(run, progress, progress.seconds_before, state["stopped"], model)

    info = _generator_info(options, run.init_bert2bert, model, model_config)
    batches = bucket_batches(run.lengths, options.batch_size, options.seed, progress.epoch)

    def forward(step: int, micro: int) -> torch.Tensor:
        nonlocal batches, progress
        batch, batches, progress = _next_batch(run, options, batches, progress)
        progress = replace(progress, position=progress.position + 1)
        batch = {name: tensor.to(model.device) for name, tensor in batch.items()}
        with precision():
            return model(**batch).loss

    def count(state: LoopState, loss: torch.Tensor) -> None:
        nonlocal progress
        progress = replace(progress, step=state.step)

    def evaluate(state: LoopState, loss: torch.Tensor) -> None:
        nonlocal progress
        with precision():
            progress = _evaluate(model, run, info, progress, loss, state.elapsed,
                                 options.progress)

    def save(state: LoopState) -> None:
        stopped = _should_stop(options, progress, state.elapsed)
        _save_checkpoint(checkpoint, model, state, optimizer, scheduler,
                         progress.snapshot(state.elapsed, stopped))

    end = run_loop(
        forward, optimizer,
        LoopOptions(total_steps=options.max_steps, clip_norm=1.0, progress=options.progress),
        scheduler=scheduler, start=LoopState(progress.step, progress.seconds_before),
        hooks=LoopHooks(
            stop=lambda state: _should_stop(options, progress, state.elapsed),
            record=count, evaluate=evaluate, save=save, save_on_stop=True,
            eval_due=lambda step: step % options.eval_every == 0 or step >= options.max_steps,
            save_due=lambda step: step % options.checkpoint_every == 0,
            postfix=lambda state, loss: {"loss": f"{loss.item():.3f}",
                                         "epoch": progress.epoch}))
    return _result(run, progress, end.elapsed, end.stopped, model)


@dataclass(frozen=True)
class _Run:
    """What a run reads before it trains: the tokenizer, the encoded data and where it writes."""

    out: Path
    tokenizer: Any
    init_bert2bert: bool  # --init-from names a bert2bert (whose folder is the tokenizer)
    train: list[tuple[list[int], list[int]]]  # (source ids, target ids) with EOS
    lengths: list[int]  # source + target tokens of each training example
    dev_batches: list[dict[str, torch.Tensor]]  # collated, shortest first


@dataclass(frozen=True)
class _Progress:
    """Where training stands: what the checkpoint holds besides the model, optimizer, scheduler,
    RNG state and the reason to stop."""

    step: int = 0
    epoch: int = 0
    position: int = 0  # batches of this epoch done
    best_loss: float = math.inf
    best_step: int = 0
    bad_evals: int = 0  # evaluations since the best one
    best: DevMetrics = DevMetrics(0.0, 0, 0)
    seconds_before: float = 0.0  # training time of the earlier runs in this OUT
    history: list[dict[str, Any]] = field(default_factory=list)  # one record per evaluation

    def snapshot(self, seconds: float, stopped: str) -> dict[str, Any]:
        """The checkpoint's trainer state besides optimizer, scheduler and RNG, after ``seconds``
        of training in all; ``stopped`` is why the run stopped, "" while it goes on."""
        return {"step": self.step, "epoch": self.epoch, "position": self.position,
                "best_loss": self.best_loss, "best_step": self.best_step,
                "bad_evals": self.bad_evals,
                "best": (self.best.nll_sum, self.best.tokens, self.best.correct),
                "elapsed": seconds, "history": self.history, "stopped": stopped}


def _prepare_run(options: TrainOptions) -> _Run:
    """Load and check the tokenizer, claim ``OUT`` for these options, encode the data.

    The options are checked before ``OUT`` is written, so a corrected command is not refused as
    a changed run."""
    _check_out(options)  # first: a folder of other files fails before anything is read
    tokenizer, init_bert2bert = _checked_tokenizer(options)
    options.model_config(len(tokenizer))  # the sizes (d_model % num_heads, ...) before OUT
    out = _claim_output(options)
    splits = load_examples(options.bank, options.variant, max_words=options.max_words,
                           max_pairs=options.max_pairs)
    train = encode_examples(tokenizer, splits["train"], options.max_source_tokens,
                            options.max_target_tokens)
    dev_examples = splits["dev"][: options.dev_examples] or splits["train"][: options.dev_examples]
    dev = encode_examples(tokenizer, dev_examples, options.max_source_tokens,
                          options.max_target_tokens)
    dev_order = sorted(range(len(dev)), key=lambda i: len(dev[i][0]) + len(dev[i][1]))
    dev_batches = [collate([dev[i] for i in dev_order[k : k + 128]], tokenizer.pad_token_id)
                   for k in range(0, len(dev_order), 128)]
    lengths = [len(s) + len(t) for s, t in train]
    return _Run(out, tokenizer, init_bert2bert, train, lengths, dev_batches)


def _checked_tokenizer(options: TrainOptions) -> tuple[Any, bool]:
    """The run's tokenizer, and whether ``--init-from`` names a bert2bert (which must then be
    the ``--tokenizer`` too); a T5 generator needs a dpc tokenizer (pad 0, EOS 1)."""
    init_bert2bert = (options.init_from is not None
                      and generator_config(options.init_from).model_type == "encoder-decoder")
    if init_bert2bert and Path(options.tokenizer).resolve() != Path(options.init_from).resolve():
        raise TrainError(
            f"a generator started from the bert2bert {options.init_from!r} uses that model's "
            f"tokenizer: pass --tokenizer {options.init_from} (not {options.tokenizer!r})"
        )
    if options.warm_start is not None:
        tokenizer = load_tokenizer(resolve_warm_start(options.warm_start))
    else:
        tokenizer = load_tokenizer(options.tokenizer)
    if (options.warm_start is None and not init_bert2bert
            and (tokenizer.pad_token_id != 0 or tokenizer.eos_token_id != 1)):
        raise TrainError(
            f"tokenizer {options.tokenizer!r} has pad={tokenizer.pad_token_id}, "
            f"eos={tokenizer.eos_token_id}; a dpc tokenizer (`dpc train tokenizer`) has 0 and 1"
        )
    return tokenizer, init_bert2bert


def _check_out(options: TrainOptions) -> Path:
    """``OUT`` if it is new, empty or a run folder of this trainer (a ``train_config.json`` or
    a ``checkpoint/``, which is then checked); an :class:`~dpc_files.OutputError` otherwise."""
    return check_output_folder(options.out, "--out", command="dpc train generator")


def _claim_output(options: TrainOptions) -> Path:
    """``OUT``, created; its ``train_config.json`` written (a run already there must have the
    same options, budgets aside). A folder of other files is refused untouched."""
    out = claim_output_folder(_check_out(options), "dpc train generator")
    config_path = out / "train_config.json"
    if config_path.exists():
        _check_same_options(config_path, options)
    config_path.write_text(json.dumps(asdict(options), indent=1, sort_keys=True) + "\n")
    return out


def _load_or_build_model(options: TrainOptions, checkpoint: Path,
                         config: GeneratorConfig) -> tuple[Any, dict[str, Any] | None]:
    """The model and trainer state in ``checkpoint`` if it holds one; else a new model (warm
    started, from ``--init-from``, or seeded from scratch) and ``None``. In training mode.

    A checkpoint that does not load as safetensors and JSON, or one of an older dpc (a pickle),
    is a :class:`~train.checkpoint.CheckpointError` naming the file; nothing is unpickled."""
    state = None
    old = checkpoint.with_name(checkpoint.name + ".old")
    if not os.path.lexists(checkpoint) and (old / STATE_FILE).is_file():
        old.rename(checkpoint)  # interrupted between the two renames of _save_checkpoint
    if os.path.lexists(checkpoint / PICKLE_STATE_FILE):
        raise pickle_checkpoint_error(
            checkpoint / PICKLE_STATE_FILE,
            f"delete the folder {str(checkpoint)!r} to train from the start, or use another --out")
    if os.path.lexists(checkpoint / STATE_FILE):
        state = load_state(checkpoint / STATE_FILE)
        model = _checkpoint_model(checkpoint)
    elif options.warm_start is not None:
        model = build_warm_started(options.warm_start, seed=options.seed,
                                   share=options.share_weights)
    elif options.init_from is not None:
        model = _initial_weights(options.init_from, config)
    else:
        model = build_generator(config, seed=options.seed)
    model.train()
    return model, state


def _checkpoint_model(checkpoint: Path) -> Any:
    """The model of ``checkpoint``, read from its ``model.safetensors`` only (a
    ``pytorch_model.bin`` there is ignored); :class:`CheckpointError` naming what does not load."""
    check_safetensors(checkpoint / "model.safetensors")
    try:
        return load_weights(checkpoint, use_safetensors=True)
    except CheckpointError:
        raise
    except DpcError as err:
        raise CheckpointError(f"checkpoint {str(checkpoint)!r}: {err}") from None
    except (OSError, ValueError, RuntimeError, KeyError, TypeError) as err:
        reason = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise CheckpointError(f"the model in checkpoint folder {str(checkpoint)!r} (config.json, "
                              f"model.safetensors) does not load: {reason}") from None


def _optimizer(model: Any, options: TrainOptions) -> tuple[Any, Any]:
    """AdamW (no weight decay on biases and norms) and its schedule: warm-up, then inverse
    square root."""
    no_decay = [p for n, p in model.named_parameters() if p.ndim < 2]
    decay = [p for n, p in model.named_parameters() if p.ndim >= 2]
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": options.weight_decay},
         {"params": no_decay, "weight_decay": 0.0}], lr=options.lr)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, _lr_lambda(options.warmup_steps))
    return optimizer, scheduler


#: What the progress entries of a saved state must be.
_STATE_TYPES: dict[str, type | tuple[type, ...]] = {
    "step": int, "epoch": int, "position": int, "best_loss": (int, float), "best_step": int,
    "bad_evals": int, "best": (list, tuple), "elapsed": (int, float), "history": list,
    "stopped": str}


def _resume_state(state: dict[str, Any] | None, optimizer: Any, scheduler: Any,
                  seed: int, path: Path) -> _Progress:
    """The progress saved in ``state`` (read from ``path``), with optimizer, scheduler and RNG
    put back as they were; without a state, a fresh start with the RNG seeded. A state that
    lacks an entry or does not fit this optimizer is a :class:`CheckpointError` naming ``path``."""
    if state is None:
        torch.manual_seed(seed)
        return _Progress()
    try:
        for name, kinds in _STATE_TYPES.items():
            if not isinstance(state[name], kinds) or isinstance(state[name], bool):
                raise TypeError(f"{name!r} is a {type(state[name]).__name__}")
        resume(state, path, optimizer, scheduler)
        return _Progress(step=state["step"], epoch=state["epoch"], position=state["position"],
                         best_loss=state["best_loss"], best_step=state["best_step"],
                         bad_evals=state["bad_evals"], best=DevMetrics(*state["best"]),
                         seconds_before=state["elapsed"], history=state["history"])
    except (KeyError, TypeError, ValueError, RuntimeError, IndexError) as err:
        raise CheckpointError(f"training state {str(path)!r} does not fit this run "
                              f"({type(err).__name__}: {str(err).splitlines()[0]}); delete "
                              f"the folder {str(path.parent)!r} to train from the start") from None


def _generator_info(options: TrainOptions, init_bert2bert: bool, model: Any,
                    model_config: GeneratorConfig) -> dict[str, Any]:
    """What ``dpc_generator.json`` says of every saved model (the step and dev metrics aside)."""
    if options.warm_start is not None:
        architecture = {"warm_start": options.warm_start, "type": "bert2bert",
                        "shared": options.share_weights}
    elif init_bert2bert:
        architecture = {"init_from": options.init_from, "type": "bert2bert",
                        "shared": is_shared(model.config)}
    else:
        architecture = model_config.to_dict()
    return {"variant": options.variant, "input_format": "{direction}: {text}",
            "model": architecture, "bank": os.fspath(options.bank)}


def _should_stop(options: TrainOptions, progress: _Progress, seconds: float) -> str:
    """Why training stops now, or "" to go on: ``patience`` evaluations without improvement (a
    count that reaches it only at an evaluation), ``max_steps``, or ``max_minutes`` over the
    ``seconds`` of training so far, in that order.

    >>> options = TrainOptions("bank", "tok", "out", max_steps=10, max_minutes=1.0, patience=2)
    >>> _should_stop(options, _Progress(step=9, bad_evals=1), seconds=59.0)
    ''
    >>> _should_stop(options, _Progress(step=10), seconds=60.0)
    'max_steps=10 reached'
    >>> _should_stop(options, _Progress(step=3), seconds=60.0)
    'max_minutes=1.0 reached'
    >>> _should_stop(options, _Progress(step=10, bad_evals=2), seconds=60.0)
    'early stopping: no dev improvement in 2 evaluations'
    """
    if progress.bad_evals >= options.patience:
        return f"early stopping: no dev improvement in {progress.bad_evals} evaluations"
    if progress.step >= options.max_steps:
        return f"max_steps={options.max_steps} reached"
    if options.max_minutes is not None and seconds >= 60 * options.max_minutes:
        return f"max_minutes={options.max_minutes} reached"
    return ""


def _next_batch(run: _Run, options: TrainOptions, batches: list[list[int]],
                progress: _Progress) -> tuple[dict[str, torch.Tensor], list[list[int]], _Progress]:
    """The collated batch at ``progress``'s position, with the epoch's batches and the progress:
    both moved on to the next epoch when this one is used up."""
    if progress.position >= len(batches):
        progress = replace(progress, epoch=progress.epoch + 1, position=0)
        batches = bucket_batches(run.lengths, options.batch_size, options.seed, progress.epoch)
    batch = collate([run.train[i] for i in batches[progress.position]], run.tokenizer.pad_token_id)
    return batch, batches, progress


def _evaluate(model: Any, run: _Run, info: dict[str, Any], progress: _Progress,
              loss: torch.Tensor, seconds: float, show: bool) -> _Progress:
    """Measure the dev loss, log it (``OUT/log.jsonl``, above the bar when ``show``) and save the model to
    ``OUT/model`` if it is the best so far. Returns the progress with the record in its history
    and the best model or the evaluations without improvement counted."""
    metrics = evaluate(model, run.dev_batches)
    record = {"step": progress.step, "epoch": progress.epoch, "train_loss": round(loss.item(), 4),
              "dev_loss": round(metrics.loss, 4),
              "dev_perplexity": round(metrics.perplexity, 3),
              "dev_word_accuracy": round(metrics.word_accuracy, 4),
              "seconds": round(seconds, 1)}
    progress = replace(progress, history=[*progress.history, record])
    with open(run.out / "log.jsonl", "a", encoding="utf-8") as log:
        log.write(json.dumps(record) + "\n")
    if show:
        tqdm.write(json.dumps(record), file=sys.stderr)
    if metrics.loss < progress.best_loss:  # (a NaN loss is no improvement)
        _save_model(run.out / "model", model, run.tokenizer,
                    {**info, "step": progress.step, **{k: record[k] for k in record if "dev" in k}})
        return replace(progress, best_loss=metrics.loss, best_step=progress.step, best=metrics,
                       bad_evals=0)
    return replace(progress, bad_evals=progress.bad_evals + 1)


def _result(run: _Run, progress: _Progress, seconds: float, stopped: str,
            model: Any) -> TrainResult:
    """The run's :class:`TrainResult`, also written to ``OUT/result.json``."""
    result = TrainResult(str(run.out / "model"), progress.step, progress.best_loss,
                         progress.best_step, progress.best.perplexity, progress.best.word_accuracy,
                         seconds, stopped, count_parameters(model), len(run.train),
                         progress.history)
    (run.out / "result.json").write_text(json.dumps(asdict(result), indent=1) + "\n")
    return result

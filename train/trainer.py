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
"""

from __future__ import annotations

import json
import math
import os
import shutil
import sys
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import torch

from train.data import VARIANTS, Example, bucket_batches, load_examples
from train.errors import TrainError
from train.generator import (
    GeneratorConfig,
    build_generator,
    build_warm_started,
    count_parameters,
    resolve_warm_start,
    t5_config,
)
from train.metrics import DevMetrics, collate, evaluate
from train.models import generator_config, load_generator
from train.shared_weights import is_shared, load_weights, save_weights
from train.tokenizer import end_token_id, load_tokenizer, target_ids

__all__ = ["TrainOptions", "TrainResult", "encode_examples", "train_generator"]

#: Options that may differ between a run and its resumption (budgets, not the experiment).
RESUMABLE_CHANGES = frozenset({"max_steps", "max_minutes", "progress", "threads"})


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
        if self.variant not in VARIANTS:
            raise TrainError(f"variant {self.variant!r} is not one of {', '.join(VARIANTS)}")
        for name in ("batch_size", "max_steps", "eval_every", "checkpoint_every", "patience",
                     "dev_examples", "max_source_tokens", "max_target_tokens"):
            if getattr(self, name) < 1:
                raise TrainError(f"`{name}` (={getattr(self, name)}) must be at least 1")
        if not self.lr > 0:
            raise TrainError(f"`lr` (={self.lr}) must be positive")
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


def _save_checkpoint(folder: Path, model: Any, optimizer: Any, scheduler: Any,
                     state: dict[str, Any]) -> None:
    """Write the checkpoint to a temporary folder and rename it over the old one."""
    tmp = folder.with_name(folder.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    save_weights(model, tmp)
    torch.save({"optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict(),
                "rng": torch.get_rng_state(), **state}, tmp / "trainer_state.pt")
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


def train_generator(options: TrainOptions) -> TrainResult:
    """Train (or resume) a generator as :class:`TrainOptions` says; see the module docstring."""
    if options.threads:
        torch.set_num_threads(options.threads)
    # options checked before OUT is written: a corrected command is not refused as a changed run
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
    out = Path(options.out)
    out.mkdir(parents=True, exist_ok=True)
    config_path = out / "train_config.json"
    if config_path.exists():
        _check_same_options(config_path, options)
    config_path.write_text(json.dumps(asdict(options), indent=1, sort_keys=True) + "\n")

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

    checkpoint = out / "checkpoint"
    model_config = options.model_config(len(tokenizer))
    if (checkpoint / "trainer_state.pt").exists():
        model = load_weights(checkpoint)
        state = torch.load(checkpoint / "trainer_state.pt", weights_only=False)
    elif options.warm_start is not None:
        model = build_warm_started(options.warm_start, seed=options.seed,
                                   share=options.share_weights)
        state = None
    elif options.init_from is not None:
        model = _initial_weights(options.init_from, model_config)
        state = None
    else:
        model = build_generator(model_config, seed=options.seed)
        state = None
    model.train()
    no_decay = [p for n, p in model.named_parameters() if p.ndim < 2]
    decay = [p for n, p in model.named_parameters() if p.ndim >= 2]
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": options.weight_decay},
         {"params": no_decay, "weight_decay": 0.0}], lr=options.lr)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, _lr_lambda(options.warmup_steps))
    step, epoch, position = 0, 0, 0
    best_loss, best_step, bad_evals, elapsed_before = math.inf, 0, 0, 0.0
    best = DevMetrics(0.0, 0, 0)
    history: list[dict[str, Any]] = []
    if state is not None:
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        torch.set_rng_state(state["rng"])
        step, epoch, position = state["step"], state["epoch"], state["position"]
        best_loss, best_step, bad_evals = state["best_loss"], state["best_step"], state["bad_evals"]
        best = DevMetrics(*state["best"])
        elapsed_before = state["elapsed"]
        history = state["history"]
        if state.get("stopped", "").startswith("early stopping"):
            return _result(out, step, best_loss, best_step, best, elapsed_before, state["stopped"],
                           model, len(train), history)
    else:
        torch.manual_seed(options.seed)

    bar = None
    if options.progress:
        from tqdm import tqdm

        bar = tqdm(total=options.max_steps, initial=step, unit="step", file=sys.stderr,
                   dynamic_ncols=True)
    stopped = ""
    run_start = time.perf_counter()

    def elapsed() -> float:
        return elapsed_before + time.perf_counter() - run_start

    def snapshot() -> dict[str, Any]:
        return {"step": step, "epoch": epoch, "position": position, "best_loss": best_loss,
                "best_step": best_step, "bad_evals": bad_evals,
                "best": (best.nll_sum, best.tokens, best.correct), "elapsed": elapsed(),
                "history": history, "stopped": stopped}

    if options.warm_start is not None:
        architecture = {"warm_start": options.warm_start, "type": "bert2bert",
                        "shared": options.share_weights}
    elif init_bert2bert:
        architecture = {"init_from": options.init_from, "type": "bert2bert",
                        "shared": is_shared(model.config)}
    else:
        architecture = model_config.to_dict()
    info = {"variant": options.variant, "input_format": "{direction}: {text}",
            "model": architecture, "bank": os.fspath(options.bank)}
    batches = bucket_batches(lengths, options.batch_size, options.seed, epoch)
    while not stopped:
        if step >= options.max_steps:
            stopped = f"max_steps={options.max_steps} reached"
        elif options.max_minutes is not None and elapsed() >= 60 * options.max_minutes:
            stopped = f"max_minutes={options.max_minutes} reached"
        if stopped:  # a resumed run whose budget is already spent
            _save_checkpoint(checkpoint, model, optimizer, scheduler, snapshot())
            break
        if position >= len(batches):
            epoch, position = epoch + 1, 0
            batches = bucket_batches(lengths, options.batch_size, options.seed, epoch)
        batch = collate([train[i] for i in batches[position]], tokenizer.pad_token_id)
        loss = model(**batch).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad(set_to_none=True)
        step += 1
        position += 1
        if bar is not None:
            bar.update(1)
            bar.set_postfix(loss=f"{loss.item():.3f}", epoch=epoch, refresh=False)
        if step % options.eval_every == 0 or step >= options.max_steps:
            metrics = evaluate(model, dev_batches)
            record = {"step": step, "epoch": epoch, "train_loss": round(loss.item(), 4),
                      "dev_loss": round(metrics.loss, 4),
                      "dev_perplexity": round(metrics.perplexity, 3),
                      "dev_word_accuracy": round(metrics.word_accuracy, 4),
                      "seconds": round(elapsed(), 1)}
            history.append(record)
            with open(out / "log.jsonl", "a", encoding="utf-8") as log:
                log.write(json.dumps(record) + "\n")
            if bar is not None:
                bar.write(json.dumps(record))
            if metrics.loss < best_loss:
                best_loss, best_step, best, bad_evals = metrics.loss, step, metrics, 0
                _save_model(out / "model", model, tokenizer,
                            {**info, "step": step, **{k: record[k] for k in record if "dev" in k}})
            else:
                bad_evals += 1
                if bad_evals >= options.patience:
                    stopped = f"early stopping: no dev improvement in {bad_evals} evaluations"
        if not stopped and step >= options.max_steps:
            stopped = f"max_steps={options.max_steps} reached"
        if not stopped and options.max_minutes is not None and elapsed() >= 60 * options.max_minutes:
            stopped = f"max_minutes={options.max_minutes} reached"
        if stopped or step % options.checkpoint_every == 0:
            _save_checkpoint(checkpoint, model, optimizer, scheduler, snapshot())
    if bar is not None:
        bar.close()
    return _result(out, step, best_loss, best_step, best, elapsed(), stopped, model, len(train),
                   history)


def _result(out: Path, step: int, best_loss: float, best_step: int, best: DevMetrics,
            seconds: float, stopped: str, model: Any, n_train: int,
            history: list[dict[str, Any]]) -> TrainResult:
    result = TrainResult(str(out / "model"), step, best_loss, best_step, best.perplexity,
                         best.word_accuracy, seconds, stopped, count_parameters(model), n_train,
                         history)
    (out / "result.json").write_text(json.dumps(asdict(result), indent=1) + "\n")
    return result


def options_from_dict(values: dict[str, Any]) -> TrainOptions:
    """Build :class:`TrainOptions` from a dict, ignoring keys it does not have (CLI namespaces)."""
    names = {f.name for f in fields(TrainOptions)}
    return TrainOptions(**{k: v for k, v in values.items() if k in names})

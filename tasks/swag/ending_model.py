"""The ending model: a context → ending generator trained on gold endings only.

SWAG's negatives are endings an LM writes for a context. Two ending models are trained here on
HellaSwag contexts and their **gold** ending ``endings[label]`` — never the three machine-written
wrong ones:

* ``base="smollm2-135m"`` (or another :data:`train.pretrained.PRETRAINED` causal LM, the default):
  a LoRA adapter (:func:`train.lora.train_lora`, resumable, safetensors) over the pretrained LM,
  which reads the context's last words as they are (:func:`causal_prompt`) and writes the ending
  and a line break. A pretrained LM already writes fluent English, which is what makes sampled
  negatives hard; the adapter teaches HellaSwag's register and where an ending stops.
* ``base="bundled"``: the bundled bert2bert (MiniLM halves, 23M parameters,
  :mod:`train.default_model`) fine-tuned with the project's trainer
  (:func:`train.trainer.train_generator`, ``init_from``); 6x cheaper to sample, far less fluent.

Contexts are split by a CRC32 of the context text (:func:`context_split`): ``"pool"`` contexts
(15%) are kept out of the ending model's training altogether, because they are the ones whose
endings get oversampled (a model trained on a context's gold ending would sample it back as a
"negative"); the rest is the ending model's data, of which the trainer holds out 1% of the
contexts (:func:`train.data.split_of` of the context) for dev perplexity.

For the LoRA model the trainer holds out the contexts :func:`train.data.split_of` puts in
``"dev"`` (2%) and reports their per-token loss before (the pretrained LM zero-shot) and after.
For the bert2bert the data is written as a one-file CausalBank (context as cause, gold ending as
effect, class ``CPE``) and read by the trainer's ``paper-effect`` variant, so the model reads
``"effect: {context}"`` (:func:`context_input`) and writes the ending; no trainer code changes.
:func:`ending_prompt` gives the right input for either kind of model.

Both train on ``device=`` with the forward passes under autocast in ``dtype=`` (the trainers'
:mod:`dpc_device` rules; default the CPU in float32); :func:`load_ending_model` places the model
it loads (:func:`dpc_device.place`).

The bert2bert's vocabulary is uncased WordPiece: its endings are lower-case with WordPiece
spacing. Every ending that enters a dataset (gold or sampled) goes through the same tokenizer
round trip (:func:`normalise_ending`) so that case and spacing tell nothing.

>>> context_split("A man is sitting on a roof. he"), context_split("A lady walks to a barbell.")
('pool', 'lm')
>>> context_input("  A man is   sitting on a roof. he ")
'effect: A man is sitting on a roof. he'
>>> context_input("one two three four five", max_words=3)
'effect: three four five'
>>> causal_prompt("one two  three four five", max_words=3)
'three four five'
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from causal_mining.pair import CausalPair
from causal_mining.shards import write_pairs
from dpc_device import place, resolve_training
from dpc_files import check_output_folder, claim_output_folder, write_json
from tasks.errors import TaskError
from train.data import split_of
from train.lora import LoraFiles, LoraOptions, check_run, load_merged, train_lora
from train.pretrained import PRETRAINED

if TYPE_CHECKING:
    import torch

__all__ = [
    "POOL_PER_MILLE",
    "BUNDLED_ENDING_MODEL",
    "ContextItem",
    "build_bank",
    "causal_prompt",
    "context_input",
    "context_split",
    "end_token_ids",
    "ending_prompt",
    "is_ending_adapter",
    "load_ending_model",
    "lora_examples",
    "normalise_ending",
    "train_ending_model",
]

#: Share of contexts (per mille, by CRC32 of the context) kept out of the ending model's data.
POOL_PER_MILLE = 150
#: Words of a context the model reads (the last ones: the ending continues them).
CONTEXT_WORDS = 60
#: The file that marks an ending-model folder as ``dpc swag train-endings``'s own.
MARKER = "swag_endings.json"
#: The LoRA ending model's files (beside :data:`MARKER`, which holds its base, rank and summary).
ADAPTER_FILE = "adapter.safetensors"
STATE_FILE = "lora_state.safetensors"
RUN_FILE = "lora_run.json"
#: Dev contexts (per mille, :func:`train.data.split_of` of the context) of the LoRA model.
DEV_PER_MILLE = 20
#: The default base of ``dpc swag train-endings``.
DEFAULT_BASE = "smollm2-135m"
#: The bundled ending model (``dpc swag oversample``'s default): SmolLM2-135M's LoRA adapter
#: trained by ``dpc swag train-endings`` on the "lm" contexts of HellaSwag's ``val_part1.jsonl``
#: (``benchmarks/swag/RESULTS.md`` §1). Its "pool" contexts were never trained on.
BUNDLED_ENDING_MODEL = Path(__file__).resolve().parent / "ending_lm"


class ContextItem(Protocol):
    """What the ending model reads of a multiple-choice item (``MultipleChoiceItem`` has it)."""

    ind: Any
    ctx: str
    endings: Sequence[str]
    label: int


def context_split(ctx: str, pool_per_mille: int = POOL_PER_MILLE) -> Literal["pool", "lm"]:
    """``"pool"`` for the contexts whose endings are oversampled, ``"lm"`` for the ending
    model's data, from a CRC32 of the whitespace-normalised context (the same in every run)."""
    key = " ".join(ctx.split())
    return "pool" if zlib.crc32(key.encode("utf-8")) % 1000 >= 1000 - pool_per_mille else "lm"


def context_input(ctx: str, max_words: int = CONTEXT_WORDS) -> str:
    """The model input for a context: ``"effect: "`` and its last ``max_words`` words."""
    words = ctx.split()[-max_words:]
    return "effect: " + " ".join(words)


def causal_prompt(ctx: str, max_words: int = CONTEXT_WORDS) -> str:
    """The causal LM's input for a context: its last ``max_words`` words as they are (the
    ending continues them)."""
    return " ".join(ctx.split()[-max_words:])


def ending_prompt(model: Any, ctx: str) -> str:
    """The input ``model`` reads for ``ctx``: :func:`context_input` for a seq2seq model (the
    bert2bert), :func:`causal_prompt` for a causal LM."""
    if getattr(model.config, "is_encoder_decoder", False):
        return context_input(ctx)
    return causal_prompt(ctx)


def end_token_ids(model: Any, tokenizer: Any) -> list[int] | None:
    """The tokens that end an ending: ``None`` (the model's EOS) for a seq2seq model; for a
    causal LM a line break (what the LoRA model learns to end with; first) and the EOS."""
    if getattr(model.config, "is_encoder_decoder", False):
        return None
    newline = tokenizer("\n", add_special_tokens=False).input_ids
    ids = (newline if len(newline) == 1 else []) + [tokenizer.eos_token_id]
    return list(dict.fromkeys(i for i in ids if i is not None))


def normalise_ending(tokenizer: Any, texts: Sequence[str]) -> list[str]:
    """``texts`` as the generator would write them: tokenised and decoded (lower-case, special
    tokens such as ``[UNK]`` dropped, WordPiece spacing cleaned up)."""
    ids = tokenizer(list(texts), add_special_tokens=False)["input_ids"]
    return [" ".join(tokenizer.decode(i, skip_special_tokens=True).split()) for i in ids]


def build_bank(items: Iterable[ContextItem], path: Path) -> dict[str, int]:
    """Write the ``"lm"`` contexts of ``items`` with their gold ending as a one-file CausalBank
    at ``path``. Returns counts: ``written``, ``pool`` (kept out), ``short`` (context or ending
    under 2 words, left out)."""

    counts = {"written": 0, "pool": 0, "short": 0}
    pairs = []
    for item, gold in _lm_golds(items, counts):
        ctx = context_input(item.ctx)[len("effect: "):]
        pairs.append(CausalPair(ctx, gold, "swag-gold", "CPE", "CAUSE",
                                f"hellaswag:{item.ind}", ctx))
    counts["written"] = write_pairs(path, pairs)
    return counts


def _lm_golds(items: Iterable[ContextItem], counts: dict[str, int]
              ) -> Iterator[tuple[ContextItem, str]]:
    """``(item, gold ending with its spaces normalised)`` of the ``"lm"`` contexts of ``items``;
    counts the contexts kept out in ``counts["pool"]`` and those whose context or gold is under
    2 words in ``counts["short"]``."""
    for item in items:
        gold = " ".join(item.endings[item.label].split())
        if len(item.ctx.split()) < 2 or len(gold.split()) < 2:
            counts["short"] += 1
        elif context_split(item.ctx) == "pool":
            counts["pool"] += 1
        else:
            yield item, gold


def lora_examples(items: Iterable[ContextItem]) -> tuple[list[tuple[str, str]],
                                                         list[tuple[str, str]], dict[str, int]]:
    """``(prompt, gold ending)`` pairs of the ``"lm"`` contexts of ``items``: the training ones,
    the dev ones (:data:`DEV_PER_MILLE` of the contexts) and counts (``train``, ``dev``,
    ``pool`` kept out, ``short`` under 2 words)."""

    train: list[tuple[str, str]] = []
    dev: list[tuple[str, str]] = []
    counts = {"train": 0, "dev": 0, "pool": 0, "short": 0}
    for item, gold in _lm_golds(items, counts):
        key = " ".join(item.ctx.split())
        part = dev if split_of(key, DEV_PER_MILLE, 0) == "dev" else train
        part.append((causal_prompt(item.ctx), gold))
    counts["train"], counts["dev"] = len(train), len(dev)
    return train, dev, counts


def is_ending_adapter(folder: str | Path) -> bool:
    """Whether ``folder`` holds a LoRA ending model of ``dpc swag train-endings``."""
    marker = Path(folder) / MARKER
    if not marker.is_file() or not (Path(folder) / ADAPTER_FILE).is_file():
        return False
    try:
        import json

        return json.loads(marker.read_text(encoding="utf-8")).get("kind") == "lora"
    except (ValueError, OSError):
        return False


def load_ending_model(spec: str | Path = BUNDLED_ENDING_MODEL, *,
                      device: str | torch.device | None = None,
                      dtype: str | torch.dtype | None = None) -> tuple[Any, Any]:
    """``(model, tokenizer)`` of an ending model: a ``dpc swag train-endings`` LoRA folder (the
    adapter merged into its base; never unpickled; by default the bundled one), or whatever
    :func:`train.models.resolve_generator` accepts (``"bundled"``, a pretrained name, a
    model folder such as the bert2bert's ``OUT/run/model``). The model is loaded in float32 on
    the CPU, then moved to ``device`` with its weights cast to ``dtype``
    (:func:`dpc_device.place`; ``None``: left as loaded); sampling and scoring follow
    ``model.device``."""
    import json

    from train.models import resolve_generator

    if is_ending_adapter(spec):
        config = json.loads((Path(spec) / MARKER).read_text(encoding="utf-8"))
        model, tokenizer = load_merged(config["base"], Path(spec) / ADAPTER_FILE, config["r"],
                                       config["alpha"])
    else:
        loaded = resolve_generator(spec)
        model, tokenizer = loaded.model, loaded.tokenizer
    return place(model, device, dtype), tokenizer


def train_ending_model(items: Iterable[ContextItem], out: str | Path, *,
                       base: str = DEFAULT_BASE, init_from: str | Path | None = None,
                       max_minutes: float = 12.0, max_steps: int = 100_000,
                       batch_size: int | None = None, lr: float | None = None,
                       epochs: float = 1.0, seed: int = 0, progress: bool = True,
                       device: str | torch.device | None = None,
                       dtype: str | torch.dtype | None = None) -> dict[str, Any]:
    """Fine-tune the ending model on the gold endings of ``items`` (resumable: run it again
    with the same ``out`` and a larger budget to continue).

    ``base`` a pretrained causal LM name (LoRA; ``epochs``, batch 8 and lr 5e-4 by default) or
    ``"bundled"`` (the bert2bert and the trainer; ``init_from``, ``max_steps``, batch 32 and lr
    1e-4 by default). LoRA: ``OUT/adapter.safetensors`` is the model, ``OUT/swag_endings.json``
    its base, rank and the summary with the dev loss before and after. bert2bert:
    ``OUT/bank.tsv`` is the training data, ``OUT/run/`` the trainer's folder,
    ``OUT/run/model/`` the best model by dev loss. Returns the summary, also written to
    ``OUT/swag_endings.json``.

    It trains on ``device`` (``None``: the CPU) with the forward passes under autocast in
    ``dtype`` (:func:`dpc_device.resolve_dtype` for training: by default bfloat16 on CUDA,
    float32 on the CPU); weights and checkpoints stay float32, so a run resumes on any device.
    Both are checked before ``out`` is written.
    """
    where, _ = resolve_training(device, dtype)  # float16 refused before anything is written
    if base != "bundled":
        return _train_lora(items, out, base=base, max_minutes=max_minutes,
                           batch_size=batch_size or 8, lr=lr or 5e-4, epochs=epochs, seed=seed,
                           progress=progress, device=where, dtype=dtype)
    batch_size, lr = batch_size or 32, lr or 1e-4
    from dataclasses import asdict

    from train.models import DEFAULT_MODEL_DIR
    from train.trainer import TrainOptions, train_generator

    folder = check_output_folder(out, "--out", command="dpc swag train-endings")
    bank = folder / "bank.tsv"
    start = str(init_from if init_from is not None else DEFAULT_MODEL_DIR)
    options = TrainOptions(  # checked before the folder is made: a refused run leaves none
        bank=str(bank), tokenizer=start, out=str(folder / "run"), variant="paper-effect",
        batch_size=batch_size, lr=lr, warmup_steps=100, max_steps=max_steps,
        max_minutes=max_minutes, eval_every=100, checkpoint_every=50, patience=4,
        dev_examples=2000, max_source_tokens=96, max_target_tokens=40, max_words=CONTEXT_WORDS,
        seed=seed, init_from=start, progress=progress)
    claim_output_folder(folder, "dpc swag train-endings")
    marker = folder / MARKER
    if not marker.exists():
        write_json(marker, {"status": "training"})
    counts = build_bank(items, bank)
    result = asdict(train_generator(options, device=where, dtype=dtype))
    result["bank"] = counts
    write_json(marker, result)
    return result


def _train_lora(items: Iterable[ContextItem], out: str | Path, *, base: str, max_minutes: float,
                batch_size: int, lr: float, epochs: float, seed: int,
                progress: bool, device: torch.device,
                dtype: str | torch.dtype | None) -> dict[str, Any]:
    """The LoRA ending model (see :func:`train_ending_model`)."""
    import math


    if base not in PRETRAINED and not Path(base).is_dir():
        raise TaskError(f"--base {base!r} is neither 'bundled', a pretrained model "
                        f"({', '.join(PRETRAINED)}) nor a model folder")
    folder = check_output_folder(out, "--out", command="dpc swag train-endings")
    options = LoraOptions(epochs=epochs, batch_size=batch_size, lr=lr, max_minutes=max_minutes,
                          seed=seed, progress=progress)
    train, dev, counts = lora_examples(items)
    if not train:
        raise TaskError("no training examples: no 'lm' context with a gold ending of 2+ words")
    claim_output_folder(folder, "dpc swag train-endings")  # all checked: nothing left behind
    files = LoraFiles(adapter=ADAPTER_FILE, state=STATE_FILE)
    run = {**options.run_record(), "base": base, "examples": counts}
    finished = check_run(folder, run, RUN_FILE, MARKER, files)
    if finished is not None:
        return finished
    summary = train_lora(train, folder, options, base, files=files, dev=dev,
                         desc="training ending model", device=device, dtype=dtype)
    summary["examples"] = counts
    for when in ("before", "after"):
        loss = summary.get(f"dev_loss_{when}")
        if loss is not None:
            summary[f"dev_perplexity_{when}"] = round(math.exp(loss), 2)
    write_json(folder / MARKER, {"kind": "lora", "base": base, "r": options.r,
                                 "alpha": options.alpha, "prompt": "{last 60 words of ctx}",
                                 "summary": summary})
    return summary

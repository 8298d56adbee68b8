"""A pretrained causal LM fine-tuned (LoRA) to write one everyday sentence from a concept set.

Each CommonGen training pair becomes one example: the model reads ``"Concepts: field, look,
stand\\nSentence:"`` and learns to write the reference sentence, then a line break
(:func:`train.lora.train_lora`: the loss is on the sentence only). The concepts are written as
the source line gives them (lemmas, tags dropped), so the generator learns to inflect and order
them itself; the constraints of ``dpc commongen generate --mode dpc`` make sure it uses them.

``dpc commongen train`` makes one (resumable); :func:`load_commongen_lm` merges its adapter into
the base model for decoding.

>>> from tasks.commongen.dataset import parse_concept_set
>>> prompt(parse_concept_set("field_N#look_V#stand_V"))
'Concepts: field, look, stand\\nSentence:'
>>> examples([(parse_concept_set("dog frisbee catch"), "A dog catches a frisbee.")])
[('Concepts: dog, frisbee, catch\\nSentence:', 'A dog catches a frisbee.')]
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dpc_device import resolve_training
from dpc_errors import check_int
from dpc_files import write_json
from tasks.commongen.dataset import ConceptSet, lemmas
from tasks.errors import TaskError
from train.lora import LoraFiles, LoraOptions, check_run, merged_lora_folder, train_lora
from train.models import LoadedModel, load_model

__all__ = ["BUNDLED_SENTENCE_LM", "CONFIG_FILE", "CommonGenTrainOptions", "FORMAT", "examples", "load_commongen_lm",
           "prompt", "train_commongen_lm"]

#: The folder file that marks a CommonGen generator and says how it was made.
CONFIG_FILE = "commongen_generator.json"
RUN_FILE = "commongen_run.json"
#: The bundled generator: SmolLM2-135M + the LoRA adapter ``dpc commongen train`` made with its
#: defaults (benchmarks/commongen/RESULTS.md has its dev loss, wall time and scores).
BUNDLED_SENTENCE_LM = Path(__file__).resolve().parent / "sentence_lm"
FORMAT = "dpc-commongen-lm-1"


def prompt(concepts: ConceptSet) -> str:
    """The model input for a concept set (its lemmas in the given order)."""
    return f"Concepts: {', '.join(lemmas(concepts))}\nSentence:"


def examples(pairs: Sequence[tuple[ConceptSet, str]]) -> list[tuple[str, str]]:
    """``(prompt, sentence)`` training examples of :func:`train.lora.train_lora`."""
    return [(prompt(concepts), " ".join(sentence.split())) for concepts, sentence in pairs]


@dataclass
class CommonGenTrainOptions(LoraOptions):
    """``dpc commongen train``: the adapter's training (:class:`train.lora.LoraOptions`), the base
    model (a :mod:`train.pretrained` name or a model folder) and how many dev pairs measure its
    loss."""

    batch_size: int = 16
    lr: float = 3e-4
    epochs: float = 0.33
    base: str = "smollm2-135m"
    dev_pairs: int = 250

    def __post_init__(self) -> None:
        super().__post_init__()
        check_int("dev_pairs", self.dev_pairs, 0, error=TaskError)


def train_commongen_lm(train: Sequence[tuple[ConceptSet, str]], out: str | Path,
                       options: CommonGenTrainOptions,
                       dev: Sequence[tuple[ConceptSet, str]] = (), *,
                       device: str | Any | None = None, dtype: str | Any | None = None
                       ) -> dict[str, Any]:
    """Fine-tune the generator on ``train`` pairs into ``out``; ``options.dev_pairs`` of ``dev``
    (a seeded sample) give the dev loss before and after. Resumable: the same call continues an
    interrupted run; a call with other options or data is refused. Returns the summary that
    ``out/commongen_generator.json`` keeps."""
    where, _ = resolve_training(device, dtype)
    if not train:
        raise TaskError("no CommonGen training pair")
    dev = list(dev)
    dev_sample = random.Random(options.seed).sample(dev, min(options.dev_pairs, len(dev)))
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    run = {**options.run_record(), "train_pairs": len(train), "dev_pairs": len(dev_sample)}
    finished = check_run(folder, run, RUN_FILE, CONFIG_FILE, LoraFiles())
    if finished is not None:
        return finished
    summary = train_lora(examples(train), folder, options, options.base, dev=examples(dev_sample),
                         desc="training CommonGen generator", device=where, dtype=dtype)
    write_json(folder / CONFIG_FILE, {"format": FORMAT, "base": options.base, "r": options.r,
                                      "alpha": options.alpha, "summary": summary, "run": run})
    return summary


def _config(folder: Path) -> dict[str, Any]:
    path = folder / CONFIG_FILE
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise TaskError(f"{os.fspath(folder)!r} is not a CommonGen generator (no {CONFIG_FILE}); "
                        "make one with `dpc commongen train`") from None
    except (OSError, ValueError) as err:
        raise TaskError(f"{os.fspath(path)!r} is not valid JSON ({err})") from None
    if not isinstance(config, dict) or config.get("format") != FORMAT:
        raise TaskError(f"{os.fspath(path)!r} is not a CommonGen generator config (format is not "
                        f"{FORMAT!r})")
    return config


def load_commongen_lm(folder: str | Path, progress: bool = True) -> LoadedModel:
    """The generator in ``folder``: its base with the adapter merged
    (:func:`train.lora.merged_lora_folder`, made once under the cache), float32, eval mode."""
    folder = Path(folder)
    config = _config(folder)
    merged = merged_lora_folder(config["base"], folder / LoraFiles().adapter, config["r"],
                                config["alpha"], progress=progress)
    loaded = load_model(merged)
    return LoadedModel(loaded.model, loaded.tokenizer,
                       f"{config['base']} + CommonGen LoRA ({os.fspath(folder)})")

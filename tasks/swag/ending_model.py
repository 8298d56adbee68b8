"""The ending model: a context → ending generator trained on gold endings only.

SWAG's negatives are endings an LM writes for a context. Here the LM is the bundled bert2bert
(MiniLM halves, 23M parameters, :mod:`train.default_model`) fine-tuned with the project's trainer
(:func:`train.trainer.train_generator`, resumable, ``init_from``) on HellaSwag contexts and their
**gold** ending ``endings[label]`` — never the three machine-written wrong ones.

Contexts are split by a CRC32 of the context text (:func:`context_split`): ``"pool"`` contexts
(15%) are kept out of the ending model's training altogether, because they are the ones whose
endings get oversampled (a model trained on a context's gold ending would sample it back as a
"negative"); the rest is the ending model's data, of which the trainer holds out 1% of the
contexts (:func:`train.data.split_of` of the context) for dev perplexity.

The training data is written as a one-file CausalBank (context as cause, gold ending as effect,
class ``CPE``) and read by the trainer's ``paper-effect`` variant, so the model reads
``"effect: {context}"`` (:func:`context_input`) and writes the ending; no trainer code changes.

The generator's vocabulary is uncased WordPiece: its endings are lower-case with WordPiece
spacing. Every ending that enters a dataset (gold or sampled) goes through the same tokenizer
round trip (:func:`normalise_ending`) so that case and spacing tell nothing.

>>> context_split("A man is sitting on a roof. he"), context_split("A lady walks to a barbell.")
('pool', 'lm')
>>> context_input("  A man is   sitting on a roof. he ")
'effect: A man is sitting on a roof. he'
>>> context_input("one two three four five", max_words=3)
'effect: three four five'
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal, Protocol

from causal_mining.shards import write_json
from dpc_files import check_output_folder

__all__ = [
    "POOL_PER_MILLE",
    "ContextItem",
    "build_bank",
    "context_input",
    "context_split",
    "normalise_ending",
    "train_ending_model",
]

#: Share of contexts (per mille, by CRC32 of the context) kept out of the ending model's data.
POOL_PER_MILLE = 150
#: Words of a context the model reads (the last ones: the ending continues them).
CONTEXT_WORDS = 60
#: The file that marks an ending-model folder as ``dpc swag train-endings``'s own.
MARKER = "swag_endings.json"


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


def normalise_ending(tokenizer: Any, texts: Sequence[str]) -> list[str]:
    """``texts`` as the generator would write them: tokenised and decoded (lower-case, special
    tokens such as ``[UNK]`` dropped, WordPiece spacing cleaned up)."""
    ids = tokenizer(list(texts), add_special_tokens=False)["input_ids"]
    return [" ".join(tokenizer.decode(i, skip_special_tokens=True).split()) for i in ids]


def build_bank(items: Iterable[ContextItem], path: Path) -> dict[str, int]:
    """Write the ``"lm"`` contexts of ``items`` with their gold ending as a one-file CausalBank
    at ``path``. Returns counts: ``written``, ``pool`` (kept out), ``short`` (context or ending
    under 2 words, left out)."""
    from causal_mining.pair import CausalPair
    from causal_mining.shards import write_pairs

    counts = {"written": 0, "pool": 0, "short": 0}
    pairs = []
    for item in items:
        gold = item.endings[item.label]
        if len(item.ctx.split()) < 2 or len(gold.split()) < 2:
            counts["short"] += 1
            continue
        if context_split(item.ctx) == "pool":
            counts["pool"] += 1
            continue
        ctx = context_input(item.ctx)[len("effect: "):]
        pairs.append(CausalPair(ctx, " ".join(gold.split()), "swag-gold", "CPE", "CAUSE",
                                f"hellaswag:{item.ind}", ctx))
    counts["written"] = write_pairs(path, pairs)
    return counts


def train_ending_model(items: Iterable[ContextItem], out: str | Path, *,
                       init_from: str | Path | None = None, max_minutes: float = 12.0,
                       max_steps: int = 100_000, batch_size: int = 32, lr: float = 1e-4,
                       seed: int = 0, progress: bool = True) -> dict[str, Any]:
    """Fine-tune the ending model on the gold endings of ``items`` (resumable: run it again
    with the same ``out`` and a larger budget to continue).

    ``OUT/bank.tsv`` is the training data, ``OUT/run/`` the trainer's folder (checkpoints,
    ``log.jsonl``), ``OUT/run/model/`` the best model by dev loss. Returns the trainer's result
    with the bank counts, also written to ``OUT/swag_endings.json``.
    """
    from dataclasses import asdict

    from train.models import DEFAULT_MODEL_DIR
    from train.trainer import TrainOptions, train_generator

    folder = check_output_folder(out, "--out", markers=[MARKER], command="dpc swag train-endings")
    folder.mkdir(parents=True, exist_ok=True)
    marker = folder / MARKER
    if not marker.exists():
        write_json(marker, {"status": "training"})
    bank = folder / "bank.tsv"
    counts = build_bank(items, bank)
    start = str(init_from if init_from is not None else DEFAULT_MODEL_DIR)
    options = TrainOptions(
        bank=str(bank), tokenizer=start, out=str(folder / "run"), variant="paper-effect",
        batch_size=batch_size, lr=lr, warmup_steps=100, max_steps=max_steps,
        max_minutes=max_minutes, eval_every=100, checkpoint_every=50, patience=4,
        dev_examples=2000, max_source_tokens=96, max_target_tokens=40, max_words=CONTEXT_WORDS,
        seed=seed, init_from=start, progress=progress)
    result = asdict(train_generator(options))
    result["bank"] = counts
    write_json(marker, result)
    return result

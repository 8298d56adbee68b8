"""CausalBank pairs as seq2seq examples: direction prefixes, held-out splits, length bucketing.

A generator reads ``"{direction}: {text}"`` and writes the ``direction`` of ``text``: the input
``"cause: I am sad"`` asks for a cause of "I am sad" (target: "I lost my phone"), the input
``"effect: I lost my phone"`` asks for an effect. That is the format ``dpc generate`` builds.

Splits are decided by a hash of the mined sentence, so a pair lands in the same split in every
run and both directions of a pair stay together.

Examples
--------
>>> from causal_mining.pair import CausalPair
>>> p = CausalPair("I lost my phone", "I am sad", "because", "EPC", "EXPLANATION", "-",
...                "I am sad because I lost my phone.")
>>> [(e.source, e.target) for e in pair_examples(p, "both")]
[('effect: I lost my phone', 'I am sad'), ('cause: I am sad', 'I lost my phone')]
>>> [e.direction for e in pair_examples(p, "paper-effect")]  # an EPC pair: only the cause model
[]
>>> format_input("It rained.", "effect")
'effect: It rained.'
"""

from __future__ import annotations

import os
import random
import zlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from causal_mining.errors import MiningError
from causal_mining.pair import CausalPair, Direction, check_direction
from causal_mining.shards import read_bank
from dpc_errors import check_int
from train.errors import TrainDataError

__all__ = [
    "VARIANTS",
    "Example",
    "bucket_batches",
    "format_input",
    "load_examples",
    "pair_examples",
    "read_pairs_checked",
    "split_of",
]

#: ``both``: one model, every pair in both directions. ``paper-cause``: the paper's cause model
#: (EPC pairs, effect → cause). ``paper-effect``: the paper's effect model (CPE pairs, cause → effect).
VARIANTS = ("both", "paper-cause", "paper-effect")
Split = Literal["train", "dev", "test"]


@dataclass(frozen=True)
class Example:
    """One training example: ``source`` (with its direction prefix) → ``target``."""

    source: str
    target: str
    direction: Direction


def format_input(text: str, direction: str) -> str:
    """The model input asking for the ``direction`` ("cause" or "effect") of ``text``."""
    check_direction(direction, TrainDataError)
    return f"{direction}: {' '.join(text.split())}"


def split_of(sentence: str, dev_per_mille: int = 10, test_per_mille: int = 10) -> Split:
    """The split of a pair, from a CRC32 of its sentence (1% dev, 1% test by default).

    >>> split_of("We stayed in because it rained.")
    'train'
    """
    bucket = zlib.crc32(sentence.encode("utf-8")) % 1000
    if bucket < dev_per_mille:
        return "dev"
    if bucket < dev_per_mille + test_per_mille:
        return "test"
    return "train"


def pair_examples(pair: CausalPair, variant: str) -> list[Example]:
    """The examples one CausalBank pair gives for a training ``variant`` (see :data:`VARIANTS`)."""
    cause, effect, cls = pair.cause, pair.effect, pair.cls
    to_effect = Example(format_input(cause, "effect"), effect, "effect")
    to_cause = Example(format_input(effect, "cause"), cause, "cause")
    if variant == "both":
        return [to_effect, to_cause]
    if variant == "paper-cause":
        return [to_cause] if cls == "EPC" else []
    if variant == "paper-effect":
        return [to_effect] if cls == "CPE" else []
    raise TrainDataError(f"variant {variant!r} is not one of {', '.join(VARIANTS)}")


def read_pairs_checked(bank: str | Path) -> Iterator[CausalPair]:
    """Stream the pairs of a CausalBank shard or folder, with errors that name the bad path.

    >>> list(read_pairs_checked("/no/such/bank"))
    Traceback (most recent call last):
    ...
    train.errors.TrainDataError: CausalBank path '/no/such/bank' does not exist
    """
    path = Path(bank)
    if not path.exists():
        raise TrainDataError(f"CausalBank path {os.fspath(bank)!r} does not exist")
    try:
        yield from read_bank(path)
    except (MiningError, ValueError) as err:
        raise TrainDataError(f"malformed CausalBank {os.fspath(bank)!r}: {err}") from err
    except UnicodeDecodeError as err:
        raise TrainDataError(f"CausalBank {os.fspath(bank)!r} is not UTF-8 text: {err}") from err


def load_examples(
    bank: str | Path,
    variant: str = "both",
    *,
    min_words: int = 2,
    max_words: int = 32,
    max_pairs: int | None = None,
) -> dict[Split, list[Example]]:
    """Read a bank and return its examples per split.

    Pairs whose cause or effect has fewer than ``min_words`` or more than ``max_words`` words are
    left out (long Gutenberg clauses would dominate CPU time), as are exact duplicates.
    ``max_pairs`` keeps the first pairs only (for quick runs).

    Raises
    ------
    TrainDataError
        If the bank is missing, malformed, or yields no usable pair.
    """
    if variant not in VARIANTS:
        raise TrainDataError(f"variant {variant!r} is not one of {', '.join(VARIANTS)}")
    out: dict[Split, list[Example]] = {"train": [], "dev": [], "test": []}
    seen: set[tuple[str, str]] = set()
    n_pairs = 0
    for pair in read_pairs_checked(bank):
        key = (pair.cause, pair.effect)
        if key in seen:
            continue
        seen.add(key)
        if not all(min_words <= len(t.split()) <= max_words for t in key):
            continue
        n_pairs += 1
        out[split_of(pair.sentence)].extend(pair_examples(pair, variant))
        if max_pairs is not None and n_pairs >= max_pairs:
            break
    if not out["train"]:
        raise TrainDataError(
            f"CausalBank {os.fspath(bank)!r} gives no training example for variant {variant!r} "
            f"(pairs read: {len(seen)}, within {min_words}-{max_words} words: {n_pairs})"
        )
    return out


def bucket_batches(
    lengths: Sequence[int], batch_size: int, seed: int, epoch: int, pool_batches: int = 50
) -> list[list[int]]:
    """Length-bucketed batches of example indices, deterministic in (seed, epoch).

    Indices are shuffled, cut into pools of ``pool_batches`` batches, each pool sorted by length
    and cut into batches (so a batch holds similar lengths and pads little), and the batch order
    is shuffled again.

    >>> batches = bucket_batches([5, 1, 4, 2, 3, 6], batch_size=2, seed=0, epoch=0)
    >>> sorted(i for b in batches for i in b)
    [0, 1, 2, 3, 4, 5]
    >>> lengths = [5, 1, 4, 2, 3, 6]
    >>> sorted(sorted(lengths[i] for i in b) for b in batches)  # neighbours in length together
    [[1, 2], [3, 4], [5, 6]]
    >>> bucket_batches([1, 2, 3], 2, seed=0, epoch=1) == bucket_batches([1, 2, 3], 2, 0, 1)
    True
    """
    check_int("batch_size", batch_size, 1, error=TrainDataError)
    rng = random.Random(seed * 1_000_003 + epoch)
    order = list(range(len(lengths)))
    rng.shuffle(order)
    pool = batch_size * pool_batches
    batches: list[list[int]] = []
    for start in range(0, len(order), pool):
        chunk = sorted(order[start : start + pool], key=lambda i: lengths[i])
        batches.extend(chunk[i : i + batch_size] for i in range(0, len(chunk), batch_size))
    rng.shuffle(batches)
    return batches


def texts_for_tokenizer(bank: str | Path, max_pairs: int | None = None) -> Iterable[str]:
    """Every cause and effect text of the bank's training split (the tokenizer's corpus)."""
    for i, pair in enumerate(read_pairs_checked(bank)):
        if max_pairs is not None and i >= max_pairs:
            break
        if split_of(pair.sentence) == "train":
            yield pair.cause
            yield pair.effect

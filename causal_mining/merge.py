"""Merge part files into the final, globally de-duplicated CausalBank shards.

Parts are read in input order, then batch order, then file order, and the first occurrence of
every pair wins (exact, then normalised duplicate), so the shards depend only on the inputs and
the options: an interrupted-and-resumed run and an uninterrupted one write the same bytes, and
so do the local and the Spark engine.

Examples
--------
>>> import tempfile, pathlib
>>> from causal_mining.shards import write_pairs
>>> from dpc_files import write_json
>>> out = pathlib.Path(tempfile.mkdtemp())
>>> p = CausalPair("it rained", "we stayed in", "because", "EPC", "EXPLANATION", "x:1", "-")
>>> for i in range(2):
...     _ = write_pairs(out / "parts" / f"{i:05d}" / "000000.tsv", [p])
...     write_json(out / "parts" / f"{i:05d}" / "000000.json", {"pairs": 1})
>>> result = merge_parts(out, [{"index": 0, "batches": 1}, {"index": 1, "batches": 1}], 10)
>>> result.pairs, dict(result.drops)
(1, {'duplicate_exact': 1})
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from causal_mining.dedup import Deduplicator
from causal_mining.pair import CausalPair
from causal_mining.shards import ShardWriter, bank_files, read_pairs
from causal_mining.worker import part_folder

__all__ = ["MergeResult", "iter_parts", "merge_parts"]


@dataclass
class MergeResult:
    """Counts of the merge step."""

    pairs: int = 0
    per_pattern: Counter[str] = field(default_factory=Counter)
    per_class: Counter[str] = field(default_factory=Counter)
    per_category: Counter[str] = field(default_factory=Counter)
    drops: Counter[str] = field(default_factory=Counter)
    shards: list[str] = field(default_factory=list)


def iter_parts(out: Path, summaries: Sequence[dict[str, Any]]) -> Iterator[CausalPair]:
    """Every pair of every part file, in input order then batch order."""
    for summary in sorted(summaries, key=lambda s: s["index"]):
        folder = part_folder(out, summary["index"])
        for batch in range(summary["batches"]):
            yield from read_pairs(folder / f"{batch:06d}.tsv")


def merge_parts(out: Path, summaries: Sequence[dict[str, Any]], shard_pairs: int) -> MergeResult:
    """Write ``out/causalbank/causalbank-NNNNN.tsv`` from the parts; return the counts."""
    result = MergeResult()
    dedup = Deduplicator()
    folder = Path(out) / "causalbank"
    stale = set(bank_files(folder))
    with ShardWriter(folder, shard_pairs) as writer:
        for pair in iter_parts(Path(out), summaries):
            reason = dedup.check(pair.cause, pair.effect)
            if reason is not None:
                result.drops[reason.value] += 1
                continue
            writer.write(pair)
            result.per_pattern[pair.pattern] += 1
            result.per_class[pair.cls] += 1
            result.per_category[pair.category] += 1
    for path in stale - set(writer.paths):
        path.unlink()
    result.pairs = writer.count
    result.shards = [p.name for p in writer.paths]
    return result

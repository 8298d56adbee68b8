"""One definition of a mining run's options, shared by the CLI and the Python API.

Examples
--------
>>> MineOptions(inputs=("a.txt",), out="out", workers=2).engine
'local'
>>> MineOptions(inputs=("a.txt",), out="out", engine="hadoop")
Traceback (most recent call last):
...
causal_mining.errors.MiningConfigError: `engine` (='hadoop') is not one of local, spark
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from typing import Any

from causal_mining.errors import MiningConfigError
from causal_mining.extract import ExtractOptions
from causal_mining.readers import ReaderOptions
from dpc_errors import check_choice, check_int

__all__ = ["MineOptions", "ENGINES"]

ENGINES = ("local", "spark")


@dataclass(frozen=True)
class MineOptions:
    """Options of :func:`causal_mining.mine`.

    Parameters
    ----------
    inputs
        Files, folders and globs.
    out
        Output folder (created; an existing run there is resumed).
    engine
        ``"local"`` (multiprocessing) or ``"spark"``.
    workers
        Processes for the local engine (default: all cores); partitions hint for Spark.
    spark_master
        Spark master URL (``local[*]`` by default; ``spark://host:7077`` for a cluster, whose
        workers must see ``out`` and the inputs on a shared file system).
    batch_chars
        Characters of text per part file: the unit of resumption.
    shard_pairs
        Pairs per final CausalBank shard.
    extract, reader
        Sentence-level and reader options (part of the run's identity: changing them on resume
        is refused).
    progress
        Show a tqdm progress bar.
    follow_symlinks
        Read symbolic links in the input folders that point out of them (by default they are
        skipped and counted in the report; see :func:`causal_mining.readers.expand_inputs`).
    """

    inputs: tuple[str, ...]
    out: str
    engine: str = "local"
    workers: int | None = None
    spark_master: str = "local[*]"
    batch_chars: int = 4_000_000
    shard_pairs: int = 100_000
    extract: ExtractOptions = field(default_factory=ExtractOptions)
    reader: ReaderOptions = field(default_factory=ReaderOptions)
    progress: bool = False
    follow_symlinks: bool = False

    def __post_init__(self) -> None:
        if not self.inputs:
            raise MiningConfigError("`inputs` (=()) has to name at least one file, folder or glob")
        check_choice("engine", self.engine, ENGINES, error=MiningConfigError)
        if self.workers is not None:
            check_int("workers", self.workers, 1, error=MiningConfigError)
        check_int("batch_chars", self.batch_chars, 1000, error=MiningConfigError)
        check_int("shard_pairs", self.shard_pairs, 1, error=MiningConfigError)

    @property
    def n_workers(self) -> int:
        """Worker processes to use (``workers`` or the number of usable cores)."""
        if self.workers is not None:
            return self.workers
        try:
            return len(os.sched_getaffinity(0))
        except AttributeError:  # pragma: no cover - not Linux
            return os.cpu_count() or 1

    def identity(self) -> dict[str, Any]:
        """The options that decide the output; a resumed run must match them."""
        return {
            "batch_chars": self.batch_chars,
            "shard_pairs": self.shard_pairs,
            "extract": asdict(self.extract),
            "reader": asdict(self.reader),
        }

"""CausalBank shard files: TSV reading and writing, sharded output.

A shard is a UTF-8 TSV file with a header row naming the columns of
:data:`causal_mining.pair.COLUMNS` (cause, effect, pattern, class, category, source, sentence).
Every file is written to a temporary name in the same folder, flushed to disk and renamed, so a
reader (or a resumed run) sees a complete file or none (:func:`dpc_files.atomic_open`).

Examples
--------
>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> p = CausalPair("it rained", "we stayed in", "because", "EPC", "EXPLANATION", "x:1",
...                "We stayed in because it rained.")
>>> write_pairs(folder / "part.tsv", [p])
1
>>> list(read_pairs(folder / "part.tsv")) == [p]
True
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from causal_mining.errors import BankFormatError
from causal_mining.pair import COLUMNS, CausalPair
from dpc_files import atomic_open
from dpc_inputs import InputError, iter_input_lines

__all__ = [
    "write_pairs",
    "read_pairs",
    "ShardWriter",
    "bank_files",
    "read_bank",
]

HEADER = "\t".join(COLUMNS) + "\n"
_CLEAN = str.maketrans({"\t": " ", "\n": " ", "\r": " "})


def _row(pair: CausalPair) -> str:
    return "\t".join(value.translate(_CLEAN) for value in pair.to_row()) + "\n"


def write_pairs(path: Path, pairs: Iterable[CausalPair]) -> int:
    """Write ``pairs`` to one TSV file atomically; return how many were written."""
    n = 0
    with atomic_open(path) as handle:
        handle.write(HEADER)
        for pair in pairs:
            handle.write(_row(pair))
            n += 1
    return n


def read_pairs(path: Path) -> Iterator[CausalPair]:
    """Stream the pairs of one TSV file written by :func:`write_pairs`.

    Raises
    ------
    BankFormatError
        If the header or a row does not have the CausalBank columns.
    """
    lines = iter_input_lines(path, "CausalBank shard")  # UTF-8 named by line, BOM dropped
    try:
        header = next(lines, "")
        if header != HEADER.rstrip("\n"):
            raise BankFormatError(
                f"{os.fspath(path)!r}: header {header!r} is not {HEADER.rstrip()!r}"
            )
        for number, line in enumerate(lines, start=2):
            row = line.split("\t")
            if len(row) != len(COLUMNS):
                raise BankFormatError(
                    f"{os.fspath(path)!r}:{number}: {len(row)} columns, expected {len(COLUMNS)}"
                )
            yield CausalPair.from_row(row)
    except InputError as error:
        raise BankFormatError(str(error)) from None


class ShardWriter:
    """Write pairs into numbered shards of at most ``shard_pairs`` pairs each.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> pairs = [CausalPair(f"c {i}", f"e {i}", "cause", "CPE", "CAUSE", "-", "-")
    ...          for i in range(5)]
    >>> with ShardWriter(folder, 2) as w:
    ...     w.write_all(pairs)
    >>> [p.name for p in bank_files(folder)]
    ['causalbank-00000.tsv', 'causalbank-00001.tsv', 'causalbank-00002.tsv']
    >>> len(list(read_bank(folder)))
    5
    """

    def __init__(self, folder: Path, shard_pairs: int, prefix: str = "causalbank") -> None:
        self.folder = Path(folder)
        self.shard_pairs = shard_pairs
        self.prefix = prefix
        self.paths: list[Path] = []
        self._buffer: list[CausalPair] = []
        self.count = 0

    def write(self, pair: CausalPair) -> None:
        self._buffer.append(pair)
        self.count += 1
        if len(self._buffer) >= self.shard_pairs:
            self._flush()

    def write_all(self, pairs: Iterable[CausalPair]) -> None:
        for pair in pairs:
            self.write(pair)

    def _flush(self) -> None:
        if not self._buffer and self.paths:
            return
        path = self.folder / f"{self.prefix}-{len(self.paths):05d}.tsv"
        write_pairs(path, self._buffer)
        self.paths.append(path)
        self._buffer = []

    def close(self) -> None:
        """Write the last (partial) shard; an empty bank still gets one header-only shard."""
        if self._buffer or not self.paths:
            self._flush()

    def __enter__(self) -> ShardWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        if exc[0] is None:
            self.close()


def bank_files(folder: Path, prefix: str = "causalbank") -> list[Path]:
    """The shard files of a bank folder, in order."""
    return sorted(Path(folder).glob(f"{prefix}-*.tsv"))


def read_bank(path: Path) -> Iterator[CausalPair]:
    """Stream every pair of a shard file, a bank folder, or a mining output folder.

    For a mining output folder (holding ``causalbank/``) the final shards are read. For the
    official release layout (``because_mode/``, ``therefore_mode/``) use
    :func:`causal_mining.release.read_release`.
    """
    path = Path(path)
    if path.is_file():
        yield from read_pairs(path)
        return
    if (path / "causalbank").is_dir():
        path = path / "causalbank"
    files = bank_files(path)
    if not files:
        raise BankFormatError(f"{os.fspath(path)!r} holds no causalbank-*.tsv shard")
    for file in files:
        yield from read_pairs(file)

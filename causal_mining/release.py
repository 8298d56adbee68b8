"""The official CausalBank release layout (Li et al. 2020), read and written.

The release is split by the order of the arguments in the sentence:

- ``because_mode/``: effect first, then cause (EPC patterns), one pair per line,
  ``effect<TAB>cause``;
- ``therefore_mode/``: cause first, then effect (CPE patterns), ``cause<TAB>effect``.

Any number of files sit in each folder, plain or compressed (gzip, bzip2, xz, zstd; detected
from the content). Extra columns after the first two are ignored when reading; lines without a
tab are counted and skipped. The release carries neither the pattern nor the sentence, so pairs
read from it have ``pattern="unknown"``, ``category=""`` and an empty sentence, and their
``source`` is ``file:line``: that is enough for the Cause Effect Graph and for training.

Examples
--------
>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> pairs = [CausalPair("I lost my phone", "I am sad", "because", "EPC", "EXPLANATION", "-", "-"),
...          CausalPair("the quake", "many deaths", "result in", "CPE", "CAUSE", "-", "-")]
>>> write_release(pairs, folder)
{'because_mode': 1, 'therefore_mode': 1}
>>> (folder / "because_mode" / "because_mode-00000.txt").read_text()
'I am sad\\tI lost my phone\\n'
>>> [(p.cause, p.effect, p.cls) for p in read_release(folder)]
[('I lost my phone', 'I am sad', 'EPC'), ('the quake', 'many deaths', 'CPE')]
"""

from __future__ import annotations

import io
import os
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO

from causal_mining.errors import BankFormatError
from causal_mining.pair import CausalPair
from causal_mining.readers import open_decompressed
from dpc_errors import check_int
from dpc_files import atomic_open

__all__ = ["MODES", "read_release", "write_release"]

MODES: dict[str, str] = {"because_mode": "EPC", "therefore_mode": "CPE"}
_CLEAN = str.maketrans({"\t": " ", "\n": " ", "\r": " "})


def write_release(
    pairs: Iterable[CausalPair], folder: Path, lines_per_file: int = 1_000_000
) -> dict[str, int]:
    """Write ``pairs`` in the release layout under ``folder``; return lines per mode.

    EPC pairs go to ``because_mode`` (effect, cause), CPE pairs to ``therefore_mode``
    (cause, effect); files hold ``lines_per_file`` lines each and are written atomically.
    """
    check_int("lines_per_file", lines_per_file, 1, error=BankFormatError)
    folder = Path(folder)
    counts: Counter[str] = Counter({mode: 0 for mode in MODES})
    buffers: dict[str, list[str]] = {mode: [] for mode in MODES}
    files: Counter[str] = Counter()

    def flush(mode: str) -> None:
        path = folder / mode / f"{mode}-{files[mode]:05d}.txt"
        with atomic_open(path) as handle:
            handle.writelines(buffers[mode])
        files[mode] += 1
        buffers[mode] = []

    for pair in pairs:
        cause, effect = pair.cause.translate(_CLEAN), pair.effect.translate(_CLEAN)
        if pair.cls == "EPC":
            mode, line = "because_mode", f"{effect}\t{cause}\n"
        elif pair.cls == "CPE":
            mode, line = "therefore_mode", f"{cause}\t{effect}\n"
        else:
            raise BankFormatError(f"pair class {pair.cls!r} is neither 'EPC' nor 'CPE'")
        buffers[mode].append(line)
        counts[mode] += 1
        if len(buffers[mode]) >= lines_per_file:
            flush(mode)
    for mode in MODES:
        if buffers[mode] or files[mode] == 0:
            flush(mode)
    return dict(counts)


def read_release(folder: Path, skipped: Counter[str] | None = None) -> Iterator[CausalPair]:
    """Stream the pairs of a release folder (``because_mode/`` first, then ``therefore_mode/``).

    Parameters
    ----------
    folder
        Folder holding ``because_mode`` and/or ``therefore_mode``.
    skipped
        If given, counts malformed lines under ``"no_tab"``.

    Raises
    ------
    BankFormatError
        If ``folder`` holds neither mode folder.
    """
    folder = Path(folder)
    present = [mode for mode in MODES if (folder / mode).is_dir()]
    if not present:
        raise BankFormatError(
            f"{os.fspath(folder)!r} holds neither 'because_mode/' nor 'therefore_mode/'"
        )
    for mode in present:
        cls = MODES[mode]
        for path in sorted(p for p in (folder / mode).rglob("*") if p.is_file()):
            if path.name.startswith("."):
                continue
            buffered, _, raw = open_decompressed(path)
            try:
                text: IO[str] = io.TextIOWrapper(buffered, encoding="utf-8", errors="replace")
                for number, line in enumerate(text, start=1):
                    columns = line.rstrip("\r\n").split("\t")
                    if len(columns) < 2 or not columns[0].strip() or not columns[1].strip():
                        if skipped is not None:
                            skipped["no_tab"] += 1
                        continue
                    first, second = columns[0].strip(), columns[1].strip()
                    cause, effect = (second, first) if cls == "EPC" else (first, second)
                    yield CausalPair(cause, effect, "unknown", cls, "", f"{path}:{number}", "")
            finally:
                raw.close()

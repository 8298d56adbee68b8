"""Mine a corpus into a CausalBank: the entry point both the CLI and Python callers use.

Examples
--------
>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> _ = (folder / "a.txt").write_text("We stayed in because it was raining hard.\\n")
>>> report = mine(MineOptions(inputs=(str(folder / "a.txt"),), out=str(folder / "out"), workers=1))
>>> report["pairs"], report["pairs_per_pattern"]
(1, {'because': 1})
>>> [(p.cause, p.effect) for p in read_bank(folder / "out")]
[('it was raining hard', 'We stayed in')]
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from causal_mining.local_runner import run_local
from causal_mining.manifest import check_or_write_manifest
from causal_mining.merge import merge_parts
from causal_mining.options import MineOptions
from causal_mining.readers import expand_inputs
from causal_mining.report import build_report, write_report
from causal_mining.shards import read_bank
from causal_mining.spark_runner import run_spark
from dpc_files import check_output_folder

__all__ = ["mine", "read_bank"]


def mine(options: MineOptions) -> dict[str, Any]:
    """Mine ``options.inputs`` into ``options.out``; resume if that folder holds this run.

    Writes ``out/causalbank/causalbank-NNNNN.tsv`` (the bank), ``out/parts/`` (per-batch parts,
    the resumption state), ``out/manifest.json``, ``out/report.json`` and ``out/report.md``.
    ``out`` must be new, empty, or a folder this function wrote (it holds ``manifest.json``):
    a folder of other files is refused before anything is written, so none of them is changed.

    Returns
    -------
    dict
        The report (see :mod:`causal_mining.report`).

    Raises
    ------
    MiningInputError
        If an input names no file.
    ResumeError
        If ``out`` holds a run with other options or inputs.
    OutputError
        If ``out`` is a file, cannot be written, or holds files of something else.
    """
    started = time.perf_counter()
    check_output_folder(options.out, "--out", command="dpc mine")
    links: list[str] = []
    files = expand_inputs(options.inputs, options.follow_symlinks, links)
    check_or_write_manifest(options, files)
    if options.engine == "spark":
        summaries = run_spark(files, options)
    else:
        summaries = run_local(files, options)
    out = Path(options.out)
    merged = merge_parts(out, summaries, options.shard_pairs)
    report = build_report(
        out, summaries, merged, engine=options.engine, workers=options.n_workers,
        wall_seconds=time.perf_counter() - started,
    )
    if links:  # left out of the inputs (expand_inputs): counted like every other skip
        report["skipped_input"] = dict(sorted({**report["skipped_input"],
                                               "symlink_out_of_input": len(links)}.items()))
        report["warnings"] = [f"{link}: a symbolic link out of the input, skipped "
                              "(--follow-symlinks reads it)" for link in links[:20]] + \
            report["warnings"]
    write_report(out, report)
    return report

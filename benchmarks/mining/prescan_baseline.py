"""Baselines for the miner's throughput: how close to the I/O limit does it run?

Over the same files and with the same number of worker processes as the miner, measure

- ``read``: stream every file through the miner's reader (decompress, decode UTF-8, paragraphs);
- ``prescan``: the same, plus the miner's lexical pre-scan regex over every paragraph (the
  cheapest possible "miner": no sentence split, no extraction, no spaCy, no output).

and print MB/s of decompressed text for each. The ratio of the miner's MB/s (from its
report.json) to ``prescan`` is the fraction of the bare-regex throughput the miner keeps.

Usage::

    flock /tmp/dpc-cpu.lock python benchmarks/mining/prescan_baseline.py ../shared/data/gutenberg \
        --workers 2 --report runs/gutenberg/report.json
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import time
from pathlib import Path

from causal_mining.patterns import PRESCAN
from causal_mining.readers import ReadStats, expand_inputs, read_documents


def _read(path: str) -> tuple[int, int, float]:
    started = time.process_time()
    stats = ReadStats()
    for _ in read_documents(Path(path), stats):
        pass
    return stats.text_bytes, 0, time.process_time() - started


def _prescan(path: str) -> tuple[int, int, float]:
    started = time.process_time()
    stats = ReadStats()
    hits = 0
    search = PRESCAN.search
    for document in read_documents(Path(path), stats):
        if search(document.text) is not None:
            hits += 1
    return stats.text_bytes, hits, time.process_time() - started


def _timed(function: object, files: list[str], workers: int) -> tuple[float, int, int, float]:
    started = time.perf_counter()
    with mp.get_context("spawn").Pool(workers) as pool:
        results = pool.map(function, files, chunksize=1)  # type: ignore[arg-type]
    seconds = time.perf_counter() - started
    return (seconds, sum(r[0] for r in results), sum(r[1] for r in results),
            sum(r[2] for r in results))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("inputs", nargs="+")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--report", type=Path, help="the miner's report.json to compare with")
    parser.add_argument("--miner-cpu-seconds", type=float,
                        help="user+system CPU seconds of the miner run (from /usr/bin/time -v)")
    args = parser.parse_args()
    files = sorted((str(p) for p in expand_inputs(args.inputs)),
                   key=lambda p: -Path(p).stat().st_size)
    rows = {}
    for name, function in (("read", _read), ("prescan", _prescan)):
        seconds, text_bytes, hits, cpu = _timed(function, files, args.workers)
        rows[name] = {"seconds": round(seconds, 2), "text_mb": round(text_bytes / 1e6, 1),
                      "mb_per_s": round(text_bytes / 1e6 / seconds, 2),
                      "mb_per_s_per_core": round(text_bytes / 1e6 / seconds / args.workers, 2),
                      "cpu_seconds": round(cpu, 1),
                      "mb_per_cpu_second": round(text_bytes / 1e6 / cpu, 2)}
        if name == "prescan":
            rows[name]["paragraphs_hit"] = hits
    if args.report:
        report = json.loads(args.report.read_text())
        miner = report["mb_per_s"]
        rows["miner"] = {"seconds": report["wall_seconds"], "text_mb":
                         round(report["text_bytes"] / 1e6, 1), "mb_per_s": miner,
                         "mb_per_s_per_core": report["mb_per_s_per_core"]}
        rows["ratios"] = {"miner / prescan": round(miner / rows["prescan"]["mb_per_s"], 3),
                          "miner / read": round(miner / rows["read"]["mb_per_s"], 3)}
        if args.miner_cpu_seconds:
            per_cpu = report["text_bytes"] / 1e6 / args.miner_cpu_seconds
            rows["miner"]["mb_per_cpu_second"] = round(per_cpu, 3)
            rows["ratios"]["miner / prescan (CPU time)"] = round(
                per_cpu / rows["prescan"]["mb_per_cpu_second"], 3)
            rows["ratios"]["miner / read (CPU time)"] = round(
                per_cpu / rows["read"]["mb_per_cpu_second"], 3)
    print(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()

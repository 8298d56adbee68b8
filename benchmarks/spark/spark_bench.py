"""Spark against the single process, side by side in one run (benchmarks/spark/RESULTS.md).

``generate``: ``dpc generate --input-file`` on the first N COPA-dev premises (each asked in its
own direction), once as one process and once with ``--spark local[2]``; wall time of each whole
command (model loads and Spark's start included). Then once more as one process with one torch
thread (``OMP_NUM_THREADS=1``), the thread count of each Spark task: whether Spark's file is that
one row for row (timings aside), and how many rows differ from the default-thread run.

``oversample``: ``dpc swag oversample`` of the first N contexts of HellaSwag val_part1's pool
split with the bundled ending model, once as one process and once with ``--spark local[2]``;
wall time, kept endings per second, and the same identity checks as ``generate``.

``overhead``: :func:`dpc_spark.run_partitions` over 200 trivial rows (no model) in ``local[2]``
with 2, 50 and 200 partitions; the slope of wall time against partitions is the cost of one
partition (a task, its commit, its status), and the first call's extra time Spark's start.

    .venv/bin/python benchmarks/spark/spark_bench.py generate --n 200 --fast \
        --out benchmarks/results/spark_generate_fast.json
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
DPC = [sys.executable, "-m", "cli"]
DATA = ROOT.parent / "shared" / "data"


def _run(argv: list[str], threads: int | None = None) -> float:
    """Wall seconds of one command (``threads``: torch's, through ``OMP_NUM_THREADS``; default
    one per core); its stderr is kept only if it fails."""
    env = {**os.environ, "TQDM_DISABLE": "1"}
    if threads is not None:
        env["OMP_NUM_THREADS"] = str(threads)
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, env=env)
    seconds = time.perf_counter() - start
    if done.returncode:
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return seconds


def _rows(path: Path) -> list[dict[str, Any]]:
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if "stats" in row:
            row["stats"] = {k: v for k, v in row["stats"].items() if not k.endswith("_seconds")}
        rows.append(row)
    return rows


def generate(args: argparse.Namespace) -> dict[str, Any]:
    from tasks.copa.dataset import read_copa

    work = Path(tempfile.mkdtemp(prefix="spark_generate_"))
    items = read_copa(DATA / "copa" / "copa-dev.xml")[:args.n]
    inputs = work / "inputs.jsonl"
    inputs.write_text("".join(json.dumps({"input": it.premise, "direction": it.asks_for}) + "\n"
                              for it in items), encoding="utf-8")
    extra = ["--fast"] if args.fast else []
    base = [*DPC, "generate", "--input-file", str(inputs), *extra]
    single = _run([*base, "--out", str(work / "single.jsonl")])
    spark = _run([*base, "--out", str(work / "spark.jsonl"), "--spark", "local[2]"])
    one = _run([*base, "--out", str(work / "one_thread.jsonl")], threads=1)
    parts = len(list((work / "spark.jsonl.parts").glob("part-*.jsonl")))
    same = _identity(_rows(work / "spark.jsonl")[1:], _rows(work / "one_thread.jsonl")[1:],
                     _rows(work / "single.jsonl")[1:],
                     lambda row: [o["text"] for o in row["outputs"]])
    shutil.rmtree(work)
    return {"inputs": len(items), "generator": "--fast (bundled seq2seq)" if args.fast
            else "default (smollm2-ecare)", "single_process_seconds": round(single, 1),
            "spark_local2_seconds": round(spark, 1), "partitions": parts,
            "speedup": round(single / spark, 3),
            "inputs_per_second": {"single": round(len(items) / single, 3),
                                  "spark_local2": round(len(items) / spark, 3)},
            "single_process_one_thread_seconds": round(one, 1), **same}


def _identity(spark: list[Any], one_thread: list[Any], default: list[Any],
              texts: Any) -> dict[str, Any]:
    """Spark's records against the single process at one torch thread (what each Spark task
    runs with: spark.task.cpus = 1) and at its default threads (one per core)."""
    return {"rows": len(spark),
            "identical_to_single_process_one_thread": spark == one_thread,
            "rows_differing_from_single_process_default_threads": sum(
                a != b for a, b in zip(spark, default)),
            "rows_whose_texts_differ_from_default_threads": sum(
                texts(a) != texts(b) for a, b in zip(spark, default))}


def oversample(args: argparse.Namespace) -> dict[str, Any]:
    from tasks.datasets import read_multiple_choice
    from tasks.swag.ending_model import context_split
    from tasks.swag.oversample import read_pool

    work = Path(tempfile.mkdtemp(prefix="spark_oversample_"))
    items = [it for it in read_multiple_choice(DATA / "hellaswag" / "val_part1.jsonl")
             if context_split(it.ctx) == "pool"][:args.n]
    contexts = work / "ctx.jsonl"
    contexts.write_text("".join(json.dumps({"ind": it.ind, "ctx": it.ctx, "endings": it.endings,
                                            "label": it.label,
                                            "activity_label": it.activity_label}) + "\n"
                                for it in items), encoding="utf-8")
    base = [*DPC, "swag", "oversample", str(contexts), "--per-context", str(args.per_context),
            "--device", "cpu"]
    single = _run([*base, "--out", str(work / "single")])
    spark = _run([*base, "--out", str(work / "spark"), "--spark", "local[2]"])
    one = _run([*base, "--out", str(work / "one_thread")], threads=1)
    pool = read_pool(work / "single")
    kept = sum(len(e.endings) for e in pool)
    same = _identity(read_pool(work / "spark"), read_pool(work / "one_thread"), pool,
                     lambda entry: entry.endings)
    shutil.rmtree(work)
    return {"contexts": len(items), "per_context": args.per_context, "endings_kept": kept,
            "single_process_seconds": round(single, 1), "spark_local2_seconds": round(spark, 1),
            "speedup": round(single / spark, 3),
            "kept_per_second": {"single": round(kept / single, 3),
                                "spark_local2": round(kept / spark, 3)},
            "single_process_one_thread_seconds": round(one, 1), **same}


def _state() -> str:
    return "state"


def _echo(state: str, index: int, row: int) -> list[dict[str, Any]]:
    return [{"index": index, "row": row}]


def overhead(args: argparse.Namespace) -> dict[str, Any]:
    from dpc_spark import run_partitions, spark_session

    rows = list(range(200))
    start = time.perf_counter()
    session, _ = spark_session("local[2]", "dpc-bench")
    started = time.perf_counter() - start
    times: dict[int, float] = {}
    for partitions in (2, 2, 50, 200, 50, 200):  # the first 2 warms the workers up
        work = Path(tempfile.mkdtemp(prefix="spark_overhead_"))
        begin = time.perf_counter()
        run_partitions(rows, work, partitions, load=_state, apply=_echo, master="local[2]",
                       progress=False)
        times.setdefault(partitions, [])  # type: ignore[arg-type]
        times[partitions].append(time.perf_counter() - begin)  # type: ignore[attr-defined]
        shutil.rmtree(work)
    session.stop()
    best = {p: min(ts[1:] if p == 2 else ts) for p, ts in times.items()}  # type: ignore[index]
    slope = (best[200] - best[2]) / 198
    return {"session_start_seconds": round(started, 2),
            "wall_seconds_by_partitions": {p: round(s, 3) for p, s in best.items()},
            "seconds_per_partition": round(slope, 4)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=("generate", "oversample", "overhead"))
    parser.add_argument("--n", type=int, default=200, help="inputs or contexts")
    parser.add_argument("--fast", action="store_true", help="generate: the bundled seq2seq model")
    parser.add_argument("--per-context", type=int, default=16)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    result = {"generate": generate, "oversample": oversample, "overhead": overhead}[args.what](args)
    result = {"command": " ".join([".venv/bin/python", "benchmarks/spark/spark_bench.py",
                                   *sys.argv[1:]]), "cpu_cores": os.cpu_count(), **result}
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()

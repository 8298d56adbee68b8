"""Run a per-row function over many inputs with Spark, in committed, resumable partitions.

The inputs (a list, in order) are cut into contiguous partitions (:func:`partition_ranges`);
Spark runs one task per partition (``mapPartitions``). A task loads its expensive state (a model)
once — and once per Python worker process, since workers are reused — then maps every row of the
partition to its records and commits them as ``PARTS/part-00012.jsonl``: written to a temporary
file in ``PARTS``, then renamed. A task that fails and is retried therefore never leaves half a
part or duplicates, and a killed job run again skips the partitions already committed. The
driver shows a bar of partitions done (it watches the committed files) and, at the end, the
caller reads the parts back in input order (:func:`read_parts`).

An error the row function raises as a :class:`~dpc_errors.DpcError` (a bad row) fails the task;
Spark runs a failed task again (``spark.task.maxFailures``: 4 in the sessions made here, on a
cluster and in ``local[N,4]``; plain ``local[N]`` tries once) and, once it gives up, the job fails
and :func:`run_partitions` raises a :class:`SparkTaskError` with the row's message, one line, not
Spark's Java stack. A retried task commits its partition once: nothing is written before the
partition's last row is mapped.

A task's torch uses ``spark.task.cpus`` threads (default 1), so ``local[2]`` on two cores runs
two workers of one thread each rather than two of two; give ``--conf spark.task.cpus=4`` (and
four cores per task slot) for more, or set ``DPC_TORCH_THREADS``.

``master=None`` runs the same partitions in this process, one after another, with the same
commits: a command's local path then resumes as its Spark path does, from the same parts.

On a real cluster (``spark://host:7077``, YARN, Kubernetes) ``PARTS`` must be on storage every
executor and the driver see (NFS, a mounted bucket), and the executors need this project and its
dependencies: install dpc there, or ship an environment (``spark-submit --archives
dpc-env.tar.gz#env --conf spark.pyspark.python=./env/bin/python``).

Examples
--------
>>> partition_ranges(10, 3)
[(0, 4), (4, 7), (7, 10)]
>>> spark_python_env()["PYSPARK_PYTHON"] != ""
True
"""

from __future__ import annotations

import json
import os
import re
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from dpc_errors import DpcError
from dpc_files import (
    OutputError,
    atomic_open,
    check_output_folder,
    claim_output_folder,
    read_json,
    run_difference,
    write_json,
)

__all__ = ["SparkTaskError", "add_spark_arguments", "check_spark_arguments", "claim_parts", "commit_partition", "default_partitions",
           "part_path", "partition_ranges", "read_parts", "run_partitions", "spark_python_env",
           "spark_session", "task_device", "task_error"]

#: The record of a parts folder: the run that owns it and its partition count.
RUN_RECORD = "run.json"

#: How a task's error message is framed in the text Spark hands the driver (its stack trace).
_FRAME = ("<<dpc-task-error>>", "<</dpc-task-error>>")


class SparkTaskError(DpcError):
    """A Spark task failed on a row: the message is the row's own error."""


def add_spark_arguments(parser: Any, *, what: str, units: str, parts: str) -> None:
    """``--spark [MASTER]`` and ``--partitions N`` of a command that decodes a dataset: ``what``
    it does on Spark, the ``units`` its partitions hold (plural), where it commits them."""
    parser.add_argument("--spark", nargs="?", const="local[*]", default=None, metavar="MASTER",
                        help=f"{what} on Spark (MASTER: default local[*]; spark://host:7077 for a "
                        f"cluster), the model loaded once per executor; partitions are committed "
                        f"to {parts} as they finish, so a killed job resumes")
    parser.add_argument("--partitions", type=int, default=None, metavar="N",
                        help=f"with --spark: contiguous partitions of the {units} (default: four "
                        f"per core, at most 25 {units} each; a resumed run keeps its own)")


def check_spark_arguments(args: Any) -> None:
    """``--partitions`` only with ``--spark``: a :class:`~dpc_errors.DpcError` otherwise."""
    if getattr(args, "partitions", None) is not None and getattr(args, "spark", None) is None:
        raise DpcError("--partitions needs --spark")


def spark_python_env() -> dict[str, str]:
    """Environment so Spark's Python workers use this interpreter and find this project."""
    project_root = str(Path(__file__).resolve().parent)
    path = os.environ.get("PYTHONPATH", "")
    return {
        "PYSPARK_PYTHON": os.environ.get("PYSPARK_PYTHON", sys.executable),
        "PYSPARK_DRIVER_PYTHON": os.environ.get("PYSPARK_DRIVER_PYTHON", sys.executable),
        "PYTHONPATH": project_root if not path else f"{project_root}{os.pathsep}{path}",
    }


def spark_session(master: str, app_name: str) -> tuple[Any, bool]:
    """The active Spark session, or a new one on ``master``; and whether it was created here
    (then the caller stops it). pyspark is imported here, so the module loads without it."""
    os.environ.update(spark_python_env())
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active, False
    session = (
        SparkSession.builder.master(master)
        .appName(app_name)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.python.worker.reuse", "true")
        .config("spark.task.maxFailures", "4")
        .getOrCreate()
    )
    return session, True


def partition_ranges(count: int, partitions: int) -> list[tuple[int, int]]:
    """``partitions`` contiguous ``(start, end)`` ranges covering ``range(count)``, sizes
    differing by at most one (the first ones larger); never an empty range.

    >>> partition_ranges(5, 2)
    [(0, 3), (3, 5)]
    >>> partition_ranges(2, 8)  # no more partitions than rows
    [(0, 1), (1, 2)]
    >>> partition_ranges(0, 4)
    []
    """
    if partitions < 1:
        raise DpcError(f"--partitions (={partitions}) must be at least 1")
    parts = min(partitions, count)
    if not parts:
        return []
    base, extra = divmod(count, parts)
    starts = [i * base + min(i, extra) for i in range(parts + 1)]
    return list(zip(starts, starts[1:]))


def default_partitions(count: int, parallelism: int) -> int:
    """Partitions for ``count`` rows on ``parallelism`` cores: at least four per core, at most 25
    rows each, never more than the rows. Small partitions cost little (about 0.06 s each in
    ``local[2]``, ``benchmarks/spark/RESULTS.md``) and keep the job's last partition, which
    runs while other cores idle, short; a killed job loses at most one partition per core.

    >>> default_partitions(10, 2), default_partitions(1000, 2), default_partitions(3, 8)
    (8, 40, 3)
    """
    return max(1, min(count, max(4 * parallelism, -(-count // 25))))


def part_path(parts: Path, number: int) -> Path:
    """The committed file of partition ``number``."""
    return Path(parts) / f"part-{number:05d}.jsonl"


def commit_partition(parts: Path, number: int, records: Iterable[dict[str, Any]]) -> int:
    """Write ``records`` as the part file of partition ``number``, whole or not at all (a
    temporary file renamed); return how many were written."""
    written = 0
    with atomic_open(part_path(parts, number)) as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
            written += 1
    return written


def read_parts(parts: Path, numbers: Iterable[int]) -> Iterator[dict[str, Any]]:
    """The records of the committed partitions ``numbers``, in that order."""
    for number in numbers:
        with open(part_path(parts, number), encoding="utf-8") as handle:
            for line in handle:
                yield json.loads(line)


def claim_parts(parts: Path, run: dict[str, Any], partitions: int | None,
                default: Callable[[], int], *, command: str, overwrite: bool = False,
                option: str = "--out's parts folder") -> int:
    """Check ``parts`` as the parts folder of ``run`` (a run signature, as
    :func:`dpc_files.run_difference` reads it) and return its partition count.

    A folder a run recorded (``run.json``) keeps that run's count: the same run resumes there;
    another run, or another ``partitions``, is an :class:`~dpc_files.OutputError` naming the
    difference (``overwrite``: its parts are removed and the folder is this run's). A new folder
    is claimed for ``command`` and records ``run`` with ``partitions`` (``None``: ``default()``).
    """
    parts = Path(parts)
    check_output_folder(parts, option, command=command)
    record = parts / RUN_RECORD
    recorded = read_json(record) if record.is_file() else None
    if recorded is not None and overwrite:
        for old in [*parts.glob("part-*.jsonl"), record]:
            old.unlink()
        recorded = None
    if recorded is not None:
        difference = run_difference(run, recorded.get("run", {}))
        if difference:
            raise OutputError(f"{option} {str(parts)!r} holds parts of another run: {difference}; "
                              "pass --overwrite to replace them, or remove the folder")
        count = int(recorded["partitions"])
        if partitions is not None and partitions != count:
            raise OutputError(f"--partitions is {partitions} here and {count} in {str(parts)!r}"
                              "; leave it out to resume, or pass --overwrite")
        return count
    count = default() if partitions is None else partitions
    if count < 1:
        raise DpcError(f"--partitions (={count}) must be at least 1")
    claim_output_folder(parts, command, option)
    write_json(record, {"run": run, "partitions": count})
    return count


_STATE: dict[str, Any] = {}  # the loaded state of this worker process: {"key": ..., "value": ...}


def _loaded(load: Callable[[], Any], key: Any) -> Any:
    """``load()``, once per worker process for the same ``key`` (the last one is kept)."""
    if _STATE.get("key") != key or "value" not in _STATE:
        _STATE.clear()
        _cap_threads()
        _STATE["value"] = load()
        _STATE["key"] = key
    return _STATE["value"]


def task_device(device: str) -> str:
    """The device a Spark task runs its model on: the GPU Spark gave the task, if it gave one
    (``spark.task.resource.gpu.amount=1``: one model per GPU) and ``device`` is ``auto`` or
    ``cuda``; else ``device`` as it is.

    >>> task_device("cpu")
    'cpu'
    """
    if device in ("auto", "cuda"):
        from pyspark import TaskContext

        task = TaskContext.get()
        gpus = task.resources().get("gpu") if task is not None else None
        if gpus is not None and gpus.addresses:
            return f"cuda:{gpus.addresses[0]}"
    return device


def _cap_threads() -> None:
    """Give this Spark task's torch ``DPC_TORCH_THREADS`` threads, else ``spark.task.cpus``
    (outside a Spark task: unchanged)."""
    threads = os.environ.get("DPC_TORCH_THREADS")
    if not threads:
        try:
            from pyspark import TaskContext
        except ImportError:
            return
        task = TaskContext.get()
        if task is None:
            return
        threads = str(task.cpus())
    import torch

    torch.set_num_threads(max(1, int(threads)))


def _task(tasks: Iterator[tuple[int, list[tuple[int, Any]]]], parts: str,
          load: Callable[[], Any], key: Any,
          apply: Callable[[Any, int, Any], list[dict[str, Any]]]) -> Iterator[dict[str, Any]]:
    """One Spark partition: each of our partitions in it (one, normally) that is not committed
    yet is mapped with ``apply(state, index, row)`` and committed; yields a status per partition."""
    for number, rows in tasks:
        if part_path(Path(parts), number).exists():
            yield {"partition": number, "computed": False}
            continue
        state = _loaded(load, key)
        try:
            records = [record for index, row in rows for record in apply(state, index, row)]
        except DpcError as err:
            raise RuntimeError(f"{_FRAME[0]}{err}{_FRAME[1]}") from err
        commit_partition(Path(parts), number, records)
        yield {"partition": number, "computed": True}


def task_error(text: str) -> str | None:
    """The row's message a failed task framed in Spark's error ``text`` (``None``: none).

    >>> task_error("Py4JJavaError ... RuntimeError: <<dpc-task-error>>input 3: bad<</dpc-task-error>>")
    'input 3: bad'
    """
    found = re.findall(re.escape(_FRAME[0]) + r"(.*?)" + re.escape(_FRAME[1]), text, re.DOTALL)
    return found[-1] if found else None


def run_partitions(rows: Sequence[Any], parts: Path, partitions: int, *,
                   load: Callable[[], Any], apply: Callable[[Any, int, Any], list[dict[str, Any]]],
                   key: Any = None, master: str | None = "local[*]", app_name: str = "dpc",
                   done_before: int = 0, progress: bool = True,
                   desc: str = "partitions") -> dict[str, int]:
    """Map every row to its records with Spark and commit them partition by partition.

    Parameters
    ----------
    rows
        The inputs, in order; row ``i`` is passed to ``apply`` with index ``i``.
    parts
        The folder of the part files (created if missing); a partition already committed there
        is not run again.
    partitions
        How many contiguous partitions (:func:`partition_ranges`).
    done_before
        Rows before this index are done elsewhere: a partition ending there or before is not
        run (the caller has their records).
    load
        Builds the state ``apply`` needs (a model); called on the executors, once per Python
        worker process for the same ``key``, never per row. Must be picklable (a module-level
        function or a :func:`functools.partial` of one).
    apply
        ``apply(state, index, row) -> records`` (JSON objects). A :class:`~dpc_errors.DpcError`
        it raises fails the job as a :class:`SparkTaskError` with the same message.
    master
        The Spark master, when no session is active (an active one is reused and left running);
        ``None``: no Spark, the partitions are run here one after another (``load`` once) and
        committed the same way, and an error is raised as it is.

    Returns
    -------
    ``{"partitions": ..., "computed": ..., "skipped": ...}``
    """
    from tqdm.auto import tqdm

    parts = Path(parts)
    parts.mkdir(parents=True, exist_ok=True)
    ranges = partition_ranges(len(rows), partitions)
    missing = [n for n, (_, end) in enumerate(ranges)
               if end > done_before and not part_path(parts, n).exists()]
    summary = {"partitions": len(ranges), "computed": 0, "skipped": len(ranges) - len(missing)}
    if not missing:
        return summary
    tasks = [(n, [(i, rows[i]) for i in range(*ranges[n])]) for n in missing]
    if master is None:
        bar = tqdm(total=len(ranges), initial=summary["skipped"], unit="partition", desc=desc,
                   disable=None if progress else True)
        try:
            state = load()
            for number, part_rows in tasks:
                commit_partition(parts, number, [record for index, row in part_rows
                                                 for record in apply(state, index, row)])
                summary["computed"] += 1
                bar.update(1)
        finally:
            bar.close()
        return summary
    session, created = spark_session(master, app_name)
    try:
        context = session.sparkContext
        folder = str(parts.resolve())
        rdd = context.parallelize(tasks, numSlices=len(tasks))
        job = rdd.mapPartitions(lambda it: _task(it, folder, load, key, apply))
        outcome: dict[str, Any] = {}

        def collect() -> None:
            try:
                outcome["statuses"] = job.collect()
            except BaseException as err:  # handed to the driver's thread below
                outcome["error"] = err

        worker = threading.Thread(target=collect, daemon=True)
        bar = tqdm(total=len(ranges), initial=summary["skipped"], unit="partition", desc=desc,
                   disable=None if progress else True)  # None: shown on a terminal
        try:
            worker.start()
            while worker.is_alive():
                worker.join(0.5)
                done = sum(part_path(parts, n).exists() for n in missing)
                bar.update(summary["skipped"] + done - bar.n)
        except KeyboardInterrupt:
            context.cancelAllJobs()  # the committed parts stay: a re-run resumes
            raise
        finally:
            bar.close()
        if "error" in outcome:
            message = task_error(str(outcome["error"]))
            if message is not None:
                raise SparkTaskError(message) from None
            raise outcome["error"]
        summary["computed"] = sum(s["computed"] for s in outcome["statuses"])
        return summary
    finally:
        if created:
            session.stop()

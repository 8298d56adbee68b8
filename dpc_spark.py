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
once Spark gives up on it (``spark.task.maxFailures``: 4 on a cluster, 1 in ``local[N]``) the
job fails and :func:`run_partitions` raises a :class:`SparkTaskError` with the row's message,
one line, not Spark's Java stack.

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
from dpc_files import atomic_open

__all__ = ["SparkTaskError", "commit_partition", "default_partitions", "part_path",
           "partition_ranges", "read_parts", "run_partitions", "spark_python_env",
           "spark_session", "task_error"]

#: How a task's error message is framed in the text Spark hands the driver (its stack trace).
_FRAME = ("<<dpc-task-error>>", "<</dpc-task-error>>")


class SparkTaskError(DpcError):
    """A Spark task failed on a row: the message is the row's own error."""


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
    """Partitions for ``count`` rows on ``parallelism`` cores: at least two per core (so a slow
    partition does not hold the job), at most 100 rows each (so a killed job loses little),
    never more than the rows.

    >>> default_partitions(10, 2), default_partitions(1000, 2), default_partitions(3, 8)
    (4, 10, 3)
    """
    return max(1, min(count, max(2 * parallelism, -(-count // 100))))


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


_STATE: dict[str, Any] = {}  # the loaded state of this worker process: {"key": ..., "value": ...}


def _loaded(load: Callable[[], Any], key: Any) -> Any:
    """``load()``, once per worker process for the same ``key`` (the last one is kept)."""
    if _STATE.get("key") != key or "value" not in _STATE:
        _STATE.clear()
        _STATE["value"] = load()
        _STATE["key"] = key
    return _STATE["value"]


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
                   key: Any = None, master: str = "local[*]", app_name: str = "dpc",
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
        The Spark master, when no session is active (an active one is reused and left running).

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

"""The Spark runner: contiguous partitions, committed once, a row's error as one line."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from dpc_errors import DpcError
from dpc_files import OutputError
from dpc_spark import (
    SparkTaskError,
    claim_parts,
    commit_partition,
    part_path,
    partition_ranges,
    read_parts,
    run_partitions,
)


@pytest.mark.parametrize(
    ("count", "partitions", "expected"),
    [
        (10, 3, [(0, 4), (4, 7), (7, 10)]),  # the first ones one larger
        (6, 3, [(0, 2), (2, 4), (4, 6)]),  # even
        (2, 5, [(0, 1), (1, 2)]),  # never an empty partition
        (1, 1, [(0, 1)]),
        (0, 3, []),
    ],
)
def test_partition_ranges_are_contiguous_and_cover_the_rows(count, partitions, expected):
    ranges = partition_ranges(count, partitions)
    assert ranges == expected
    assert [i for start, end in ranges for i in range(start, end)] == list(range(count))


def test_partition_ranges_refuse_no_partitions():
    with pytest.raises(DpcError, match=r"--partitions \(=0\) must be at least 1"):
        partition_ranges(3, 0)


def _load() -> str:
    return "state"


def _double(state: str, index: int, row: int) -> list[dict[str, Any]]:
    if row < 0:
        raise DpcError(f"input {index}: {row} is negative")
    return [{"index": index, "value": 2 * row, "state": state}]


def test_runner_commits_each_partition_once(spark: Any, tmp_path: Path) -> None:
    parts = tmp_path / "parts"
    commit_partition(parts, 1, [{"index": 99}])  # a partition committed before: not run again
    summary = run_partitions([1, 2, 3, 4, 5], parts, 3, load=_load, apply=_double,
                             progress=False)
    assert summary == {"partitions": 3, "computed": 2, "skipped": 1}
    rows = list(read_parts(parts, range(3)))
    assert [r["index"] for r in rows] == [0, 1, 99, 4]
    assert rows[0] == {"index": 0, "value": 2, "state": "state"}
    assert sorted(p.name for p in parts.iterdir()) == [part_path(parts, n).name for n in range(3)]


def test_a_bad_row_fails_the_job_with_its_own_message(spark: Any, tmp_path: Path) -> None:
    parts = tmp_path / "parts"
    with pytest.raises(SparkTaskError) as raised:
        run_partitions([1, 2, -3, 4], parts, 2, load=_load, apply=_double, progress=False)
    assert str(raised.value) == "input 2: -3 is negative"
    # the good partition is committed, the bad one left no file (no half part)
    assert [json.loads(line)["index"] for line in part_path(parts, 0).read_text().splitlines()] \
        == [0, 1]
    assert not part_path(parts, 1).exists() and not list(parts.glob(".*"))


def _flaky(marks: str, state: str, index: int, row: int) -> list[dict[str, Any]]:
    """``_double``, but row 2's first try crashes its task (not a bad row: a lost worker)."""
    marker = Path(marks) / f"tried-{index}"
    first = not marker.exists()
    marker.touch()
    if index == 2 and first:
        raise RuntimeError("the executor was lost")
    return _double(state, index, row)


def _counted(marks: str, state: str, index: int, row: int) -> list[dict[str, Any]]:
    """``_double``, each try of each row leaving a file."""
    tries = len(list(Path(marks).glob(f"try-{index}-*")))
    (Path(marks) / f"try-{index}-{tries}").touch()
    return _double(state, index, row)


def test_a_failed_task_runs_again_and_commits_its_partition_once(spark: Any,
                                                                 tmp_path: Path) -> None:
    parts, marks = tmp_path / "parts", tmp_path / "marks"
    marks.mkdir()
    summary = run_partitions([1, 2, 3, 4], parts, 2, load=_load,
                             apply=partial(_flaky, str(marks)), progress=False)
    assert summary["computed"] == 2
    assert [r["index"] for r in read_parts(parts, range(2))] == [0, 1, 2, 3]  # no duplicate


def test_a_partition_that_fails_four_times_fails_the_job_with_its_rows_error(
        spark: Any, tmp_path: Path) -> None:
    assert spark.sparkContext.master == "local[2,4]"  # four tries, as spark_session asks a cluster
    parts, marks = tmp_path / "parts", tmp_path / "marks"
    marks.mkdir()
    with pytest.raises(SparkTaskError, match=r"^input 2: -3 is negative$"):
        run_partitions([1, 2, -3], parts, 1, load=_load, apply=partial(_counted, str(marks)),
                       progress=False)
    assert len(list(marks.glob("try-2-*"))) == 4
    assert not part_path(parts, 0).exists()


def test_without_spark_the_same_partitions_are_committed_here(tmp_path: Path) -> None:
    loads = []

    def load() -> str:
        loads.append(1)
        return "state"

    parts = tmp_path / "parts"
    commit_partition(parts, 0, [{"index": 0, "value": 2, "state": "state"}])
    summary = run_partitions([1, 2, 3], parts, 3, load=load, apply=_double, master=None,
                             progress=False)
    assert summary == {"partitions": 3, "computed": 2, "skipped": 1} and loads == [1]
    assert [r["value"] for r in read_parts(parts, range(3))] == [2, 4, 6]
    with pytest.raises(DpcError, match="input 3: -1 is negative"):
        run_partitions([1, 2, 3, -1], tmp_path / "bad", 2, load=load, apply=_double, master=None,
                       progress=False)
    assert part_path(tmp_path / "bad", 0).exists() and not part_path(tmp_path / "bad", 1).exists()


def test_claim_parts_keeps_a_runs_count_and_refuses_another_run(tmp_path: Path) -> None:
    parts = tmp_path / "out.parts"
    run = {"seed": 0, "the inputs": {"count": 3, "digest": "ab"}}
    assert claim_parts(parts, run, None, lambda: 5, command="dpc test") == 5
    assert claim_parts(parts, run, None, lambda: 9, command="dpc test") == 5  # resumes
    with pytest.raises(OutputError, match="--partitions is 2 here and 5 in"):
        claim_parts(parts, run, 2, lambda: 9, command="dpc test")
    with pytest.raises(OutputError, match="holds parts of another run: --seed is 1 here and 0"):
        claim_parts(parts, {**run, "seed": 1}, None, lambda: 9, command="dpc test")
    commit_partition(parts, 0, [{"index": 0}])
    assert claim_parts(parts, {**run, "seed": 1}, 2, lambda: 9, command="dpc test",
                       overwrite=True) == 2
    assert not part_path(parts, 0).exists()


class _Gpus:
    addresses = ["1"]


class _Task:
    """A TaskContext of a task Spark gave GPU 1 and 3 cores."""

    def resources(self) -> dict[str, Any]:
        return {"gpu": _Gpus()}

    def cpus(self) -> int:
        return 3


def test_a_task_runs_on_its_gpu_with_its_cores(monkeypatch) -> None:
    pyspark = pytest.importorskip("pyspark")
    import torch

    import dpc_spark

    assert dpc_spark.task_device("cuda") == "cuda"  # outside a task: as given
    monkeypatch.setattr(pyspark.TaskContext, "get", classmethod(lambda cls: _Task()))
    assert [dpc_spark.task_device(d) for d in ("auto", "cuda", "cpu")] == ["cuda:1", "cuda:1",
                                                                          "cpu"]
    threads = torch.get_num_threads()
    try:
        monkeypatch.delenv("DPC_TORCH_THREADS", raising=False)
        dpc_spark._cap_threads()
        assert torch.get_num_threads() == 3  # spark.task.cpus
        monkeypatch.setenv("DPC_TORCH_THREADS", "1")
        dpc_spark._cap_threads()
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(threads)

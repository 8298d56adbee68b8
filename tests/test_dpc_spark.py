"""The Spark runner: contiguous partitions, committed once, a row's error as one line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dpc_errors import DpcError
from dpc_spark import (
    SparkTaskError,
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

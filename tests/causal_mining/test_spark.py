"""The Spark engine gives the same bank, byte for byte, as the local engine."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from causal_mining import MineOptions, mine

from .conftest import BATCH_CHARS, bank_bytes

pyspark = pytest.importorskip("pyspark", reason="pyspark is not installed")


# ``spark``: the session-wide local[2] session of tests/conftest.py


def test_spark_output_equals_local_output(
    spark: Any, local_run: Path, gutenberg_sample: Path, tmp_path: Path
) -> None:
    out = tmp_path / "spark"
    report = mine(MineOptions(inputs=(str(gutenberg_sample),), out=str(out), engine="spark",
                              batch_chars=BATCH_CHARS, shard_pairs=500))
    assert report["engine"] == "spark"
    assert bank_bytes(out) == bank_bytes(local_run)
    local = json.loads((local_run / "report.json").read_text())
    for key in ("pairs", "pairs_per_pattern", "drops", "sentences", "text_bytes"):
        assert report[key] == local[key], key
    assert spark.sparkContext._jsc is not None  # the test's session was reused, not stopped


def test_spark_resumes_a_finished_run_without_work(
    spark: Any, local_run: Path, gutenberg_sample: Path, tmp_path: Path
) -> None:
    out = tmp_path / "copy"
    shutil.copytree(local_run, out)
    report = mine(MineOptions(inputs=(str(gutenberg_sample),), out=str(out),
                              engine="spark", batch_chars=BATCH_CHARS, shard_pairs=500))
    assert report["mined_batches"] == 0 and report["resumed_batches"] > 0
    assert bank_bytes(out) == bank_bytes(local_run)

"""`dpc inli variants --file`: chunks of premises committed as parts, resumed after a kill, and
the same file on Spark (local[2]) as here."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import cli
from dpc_spark import part_path
from tasks.datasets import read_inli
from tasks.inli import variants_file
from tasks.inli.variants_file import VariantRun, parts_folder, variants_for_file
from tests.tasks.inli.conftest import inli_rows, write_csv

DECODE = ["--max-new-tokens", "6", "--num-beams", "2", "--device", "cpu"]


@pytest.fixture
def small_chunks(monkeypatch) -> None:
    """Chunks of two premises (chunks are cut on the driver, so Spark's executors see them)."""
    monkeypatch.setattr(variants_file, "CHUNK", 2)


def variants(generator: Path, src: Path, out: Path, *extra: str) -> int:
    return cli.main(["inli", "variants", "--file", str(src), "--out", str(out), "--generator",
                     str(generator / "model"), *DECODE, *extra])


def test_spark_writes_the_local_file(spark: Any, generator: Path, tmp_path: Path, small_chunks,
                                     capsys) -> None:
    src = write_csv(tmp_path / "in.csv", inli_rows(5))
    assert variants(generator, src, tmp_path / "local.csv") == 0
    assert variants(generator, src, tmp_path / "spark.csv", "--spark", "local[2]",
                    "--partitions", "2") == 0
    assert (tmp_path / "spark.csv").read_text() == (tmp_path / "local.csv").read_text()
    assert len(read_inli(tmp_path / "spark.csv").rows) == 5
    assert not parts_folder(tmp_path / "spark.csv").exists()  # removed once the file is written
    assert variants(generator, src, tmp_path / "spark.jsonl", "--spark", "local[2]") == 0
    assert variants(generator, src, tmp_path / "local.jsonl") == 0
    assert (tmp_path / "spark.jsonl").read_text() == (tmp_path / "local.jsonl").read_text()


def test_a_killed_run_resumes_from_its_parts(generator: Path, tmp_path: Path, small_chunks,
                                             capsys) -> None:
    src = write_csv(tmp_path / "in.csv", inli_rows(5))
    out = tmp_path / "out.jsonl"
    rows = read_inli(src).rows
    items = [(r.index, r.premise, r.implied_entailment) for r in rows]
    run = VariantRun(str((generator / "model").resolve()), "cpu", None,
                     ("explicit_entailment", "neutral", "contradiction"), max_new_tokens=6,
                     num_beams=2)
    records, summary = variants_for_file(items, out, run, progress=False)
    assert summary == {"partitions": 3, "computed": 3, "skipped": 0} and len(records) == 5
    parts = parts_folder(out)
    part_path(parts, 1).unlink()  # killed before the second chunk was committed
    marked = [{**json.loads(line), "neutral": "MARK"}
              for line in part_path(parts, 0).read_text().splitlines()]
    part_path(parts, 0).write_text("".join(json.dumps(r) + "\n" for r in marked))
    assert variants(generator, src, out) == 0
    assert "note: 2 of 3 partitions were done before; resumed" in capsys.readouterr().out
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert [x["neutral"] for x in lines[:2]] == ["MARK", "MARK"]  # chunk 0 was not decoded again
    assert [x["explicit_entailment"] for x in lines] == [r["explicit_entailment"] for r in records]
    assert not parts.exists()
    # parts of another run are refused, naming the difference
    variants_for_file(items, tmp_path / "other.jsonl", run, progress=False)
    assert variants(generator, src, tmp_path / "other.jsonl", "--unconstrained") == 2
    err = capsys.readouterr().err
    assert "holds parts of another run: --constrained is False here and True" in err


@pytest.mark.parametrize(("extra", "message"), [
    (["--premise", "p", "--implied", "h", "--spark"], "--spark needs --file and --out"),
    (["--premise", "p", "--implied", "h", "--partitions", "2"], "--partitions needs --spark"),
])
def test_spark_options_need_their_companions(extra, message, capsys) -> None:
    assert cli.main(["inli", "variants", *extra]) == 2
    assert message in capsys.readouterr().err

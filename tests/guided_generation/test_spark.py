"""`dpc generate --spark` in local[2]: the local path's file, row for row, committed partitions
that a re-run does not decode again, and the local path's error for a bad row."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import cli
from dpc_spark import part_path

FAST = ["--fast", "--n", "2", "--m", "2", "--k", "2", "--max-new-tokens", "6", "--rank", "weight",
        "--rerank", "nll", "--no-plain-row", "--no-verify", "--no-verify-keywords", "--sampled", "0"]
INPUTS = ('"babies cry"\n{"input": "it rained", "direction": "effect"}\n'
          '{"input": "the man fell", "constraints": ["ice"]}\n"the glass broke"\n')


def without_timings(line: str) -> dict[str, Any]:
    """A line of the file, its timings (``*_seconds``, which move with the load) left out."""
    row = json.loads(line)
    if "stats" in row:
        row["stats"] = {k: v for k, v in row["stats"].items() if not k.endswith("_seconds")}
    return row


def rows(path: Path) -> list[dict[str, Any]]:
    return [without_timings(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def local_out(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The inputs, and the local path's ``--out`` file for them."""
    folder = tmp_path_factory.mktemp("local")
    inputs = folder / "in.jsonl"
    inputs.write_text(INPUTS, encoding="utf-8")
    out = folder / "out.jsonl"
    assert cli.main(["generate", "--input-file", str(inputs), "--out", str(out), *FAST]) == 0
    return inputs, out


def test_spark_writes_the_local_file_and_resumes_without_redoing_parts(
        spark: Any, local_out: tuple[Path, Path], tmp_path: Path, capsys,
        monkeypatch: pytest.MonkeyPatch) -> None:
    inputs, local = local_out
    out = tmp_path / "out.jsonl"
    argv = ["generate", "--input-file", str(inputs), "--out", str(out), "--spark", "local[2]",
            "--partitions", "3", *FAST]
    assert cli.main(argv) == 0
    assert "3 of 3 partitions decoded" in capsys.readouterr().err
    assert rows(out) == rows(local)  # the header (the run) and every record, in input order
    assert len(rows(out)) == 5
    parts = out.with_name("out.jsonl.parts")
    assert not parts.exists()  # removed once --out holds every row
    import dpc_spark

    def killed(*_: Any) -> Any:
        raise KeyboardInterrupt

    def kill_before_the_file_is_written() -> None:
        """A job killed after its partitions were committed, before --out was written."""
        out.unlink()
        with monkeypatch.context() as patch:
            patch.setattr(dpc_spark, "read_parts", killed)
            assert cli.main(argv) == 130
        assert "3 partitions" not in capsys.readouterr().err and not out.exists()
        assert parts.is_dir()

    kill_before_the_file_is_written()
    part_path(parts, 1).unlink()  # and one part lost: the others are not decoded again
    assert cli.main(argv[:-len(FAST) - 2] + FAST) == 0  # --partitions left out: the recorded 3
    assert "1 of 3 partitions decoded, 2 were done" in capsys.readouterr().err
    assert rows(out) == rows(local) and not parts.exists()
    # another --partitions for the same parts is refused, naming both
    kill_before_the_file_is_written()
    out.unlink(missing_ok=True)
    assert cli.main(argv[:-len(FAST) - 1] + ["2", *FAST]) == 2
    assert "--partitions is 2 here and 3 in" in capsys.readouterr().err


def test_a_bad_row_is_the_local_paths_error(spark: Any, tmp_path: Path, capsys) -> None:
    inputs = tmp_path / "in.jsonl"
    inputs.write_text('"babies cry"\n""\n', encoding="utf-8")
    argv = ["generate", "--input-file", str(inputs), *FAST]
    assert cli.main([*argv, "--out", str(tmp_path / "local.jsonl")]) == 2
    local = capsys.readouterr().err
    assert local.strip() == "dpc: error: input 1 is empty"
    assert cli.main([*argv, "--out", str(tmp_path / "spark.jsonl"), "--spark", "local[2]"]) == 2
    assert capsys.readouterr().err == local


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--spark"], "--spark needs --input-file and --out"),
        (["--partitions", "2"], "--partitions needs --spark"),
    ],
)
def test_spark_options_need_their_companions(extra, message, capsys) -> None:
    assert cli.main(["generate", "--input", "babies cry", *extra]) == 2
    assert message in capsys.readouterr().err

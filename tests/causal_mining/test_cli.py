"""The ``mine`` sub-command as the ``dpc`` CLI will call it."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from causal_mining.cli import add_mine_parser, main, to_options


def test_parser_maps_to_options() -> None:
    parser = argparse.ArgumentParser(prog="dpc")
    add_mine_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["mine", "a", "b/*.gz", "--out", "o", "--engine", "spark",
                              "--master", "spark://h:7077", "--workers", "3", "--no-tags"])
    options = to_options(args)
    assert options.inputs == ("a", "b/*.gz") and options.engine == "spark"
    assert options.spark_master == "spark://h:7077" and options.workers == 3
    assert options.extract.use_tags is False and options.progress is True
    args = parser.parse_args(["mine", "a", "--out", "o"])
    assert to_options(args).extract.use_tags and to_options(args).extract.use_parse
    args = parser.parse_args(["mine", "a", "--out", "o", "--no-parse"])
    assert to_options(args).extract.use_tags and not to_options(args).extract.use_parse


def test_run_and_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a.txt").write_text("We stayed at home because it was raining hard.\n")
    assert main(["mine", str(tmp_path / "a.txt"), "--out", str(tmp_path / "o"),
                 "--workers", "1", "--no-progress"]) == 0
    assert '"pairs": 1' in capsys.readouterr().out
    assert main(["mine", str(tmp_path / "missing*"), "--out", str(tmp_path / "o2")]) == 2
    assert "matches no file" in capsys.readouterr().err
    assert main(["mine", str(tmp_path / "a.txt"), "--out", str(tmp_path / "o3"),
                 "--workers", "0"]) == 2
    assert "`workers` (=0)" in capsys.readouterr().err

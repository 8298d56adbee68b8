"""The official CausalBank release layout (because_mode / therefore_mode)."""

from __future__ import annotations

import gzip
from collections import Counter
from pathlib import Path

import pytest

from causal_mining import BankFormatError, CausalPair, read_bank
from causal_mining.release import read_release, write_release


def test_round_trip_from_a_mined_bank(local_run: Path, tmp_path: Path) -> None:
    pairs = list(read_bank(local_run))
    counts = write_release(pairs, tmp_path / "release", lines_per_file=100)
    assert counts == {"because_mode": sum(p.cls == "EPC" for p in pairs),
                      "therefore_mode": sum(p.cls == "CPE" for p in pairs)}
    back = list(read_release(tmp_path / "release"))
    expected = [p for p in pairs if p.cls == "EPC"] + [p for p in pairs if p.cls == "CPE"]
    assert [(p.cause, p.effect, p.cls) for p in back] == [
        (p.cause, p.effect, p.cls) for p in expected]


def test_reads_compressed_files_and_counts_bad_lines(tmp_path: Path) -> None:
    (tmp_path / "because_mode").mkdir()
    (tmp_path / "therefore_mode").mkdir()
    (tmp_path / "because_mode" / "part1.txt.gz").write_bytes(
        gzip.compress(b"I am sad\tI lost my phone\nno tab here\n"))
    (tmp_path / "therefore_mode" / "x.tsv").write_text("the quake\tmany deaths\textra\n")
    skipped: Counter[str] = Counter()
    pairs = list(read_release(tmp_path, skipped))
    assert [(p.cause, p.effect, p.cls, p.pattern) for p in pairs] == [
        ("I lost my phone", "I am sad", "EPC", "unknown"),
        ("the quake", "many deaths", "CPE", "unknown"),
    ]
    assert skipped == {"no_tab": 1}


def test_errors_name_the_bad_value(tmp_path: Path) -> None:
    with pytest.raises(BankFormatError, match="neither 'because_mode/'"):
        list(read_release(tmp_path))
    bad = CausalPair("a b", "c d", "x", "XYZ", "", "-", "-")
    with pytest.raises(BankFormatError, match="'XYZ'"):
        write_release([bad], tmp_path / "r")

"""End-to-end runs of the local engine: output, report, determinism, resume after a kill."""

from __future__ import annotations

import gzip
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from causal_mining import MineOptions, ResumeError, mine, read_bank
from causal_mining.pair import COLUMNS

from .conftest import BATCH_CHARS, bank_bytes

ROOT = Path(__file__).resolve().parents[2]


def test_local_run_output_and_report(local_run: Path) -> None:
    import json

    report = json.loads((local_run / "report.json").read_text())
    pairs = list(read_bank(local_run))
    assert len(pairs) == report["pairs"] > 200
    assert sum(report["pairs_per_pattern"].values()) == len(pairs)
    assert set(report["pairs_per_class"]) == {"EPC", "CPE"}
    assert report["drops"]["boilerplate"] > 0  # the Gutenberg header of each slice
    assert report["files"] == 3 and report["skipped_input"] == {}
    assert len(report["shards"]) == -(-len(pairs) // 500)
    first = (local_run / "causalbank" / "causalbank-00000.tsv").read_text().splitlines()[0]
    assert first.split("\t") == list(COLUMNS)
    for pair in pairs:
        assert pair.cause in pair.sentence and pair.effect in pair.sentence
        assert len(pair.cause.split()) >= 2 and len(pair.effect.split()) >= 2
        assert "Gutenberg" not in pair.sentence
    keys = [(p.cause.lower(), p.effect.lower()) for p in pairs]
    assert len(keys) == len(set(keys))  # no duplicates, exact or case-normalised


def test_worker_count_does_not_change_output(
    local_run: Path, gutenberg_sample: Path, tmp_path: Path
) -> None:
    out = tmp_path / "one_worker"
    mine(MineOptions(inputs=(str(gutenberg_sample),), out=str(out), workers=1,
                     batch_chars=BATCH_CHARS, shard_pairs=500))
    assert bank_bytes(out) == bank_bytes(local_run)


def test_kill_midway_then_resume_is_byte_identical(
    local_run: Path, gutenberg_sample: Path, tmp_path: Path
) -> None:
    out = tmp_path / "killed"
    command = [sys.executable, "-m", "causal_mining.cli", "mine", str(gutenberg_sample),
               "--out", str(out), "--workers", "1", "--batch-chars", str(BATCH_CHARS),
               "--shard-pairs", "500", "--no-progress"]
    env = os.environ | {"PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None:
        if len(list(out.glob("parts/*/*.json"))) >= 6:
            break
        time.sleep(0.05)
    assert process.poll() is None, "the run finished before it could be killed"
    process.send_signal(signal.SIGKILL)
    process.wait()
    done_before = len(list(out.glob("parts/*/DONE.json")))
    assert done_before < 3 and not (out / "causalbank").exists()

    report = mine(MineOptions(inputs=(str(gutenberg_sample),), out=str(out), workers=2,
                              batch_chars=BATCH_CHARS, shard_pairs=500))
    assert report["resumed_batches"] >= 6
    assert bank_bytes(out) == bank_bytes(local_run)
    assert not list(out.glob("parts/*/.*.tmp"))  # no half-written file survives


def test_resume_with_other_options_is_refused(local_run: Path, gutenberg_sample: Path) -> None:
    with pytest.raises(ResumeError, match="batch_chars"):
        mine(MineOptions(inputs=(str(gutenberg_sample),), out=str(local_run), batch_chars=9999))


def test_bad_input_is_skipped_and_reported(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    good = "The long drought led to a terrible famine.\n\nWe stayed at home because it rained.\n"
    (corpus / "good.txt").write_text(good)
    (corpus / "binary.bin").write_bytes(bytes(range(256)) * 100)
    (corpus / "latin1.txt").write_bytes(
        "The old caf\xe9 closed because of the new r\xe9gime.\n".encode("latin-1"))
    (corpus / "empty.txt").write_bytes(b"")
    data = gzip.compress(("It rained all day, so we stayed in.\n\n" * 50000).encode())
    (corpus / "truncated.txt.gz").write_bytes(data[: len(data) // 3])
    with open(corpus / "long_line.txt", "w") as handle:
        handle.write("x" * (50 << 20) + "\n\nThe fire was caused by a stray spark.\n")
    report = mine(MineOptions(inputs=(str(corpus),), out=str(tmp_path / "out"), workers=2))
    assert report["skipped_input"] == {
        "binary_file": 1, "empty_file": 1, "invalid_utf8_file": 1,
        "invalid_utf8_sequences": 2, "long_line": 1, "truncated": 1,
    }
    patterns = sorted(p.pattern for p in read_bank(tmp_path / "out"))
    # the Latin-1 sentence is decoded with replacement characters, then dropped as garbage
    assert patterns == [", so", "because", "caused by", "lead to"]
    assert report["drops"]["garbage"] == 1
    markdown = (tmp_path / "out" / "report.md").read_text()
    assert "Skipped input" in markdown and "binary" in markdown

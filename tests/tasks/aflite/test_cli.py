"""``dpc aflite``: the outputs, a rerun, and one line + exit 2 for each kind of bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli import main
from tasks.datasets import read_swag_csv, read_winogrande


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(["aflite", *argv])
    out, err = capsys.readouterr()
    return status, out, err


def test_aflite_command_writes_kept_items_and_report(tiny_encoder: Path, winogrande_file: Path,
                                                      tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    argv = [str(winogrande_file), "--format", "winogrande", "--out", str(out), "--encoder",
            str(tiny_encoder), "--finetune", "0", "--n", "8", "--m", "12", "--k", "3",
            "--no-figure", "--device", "cpu"]
    status, stdout, _ = run(capsys, *argv)
    assert status == 0, stdout
    report = json.loads((out / "report.json").read_text())
    for key in ("kl_before", "kl_after", "probe_before", "probe_after", "kept"):
        assert key in report
    kept = read_winogrande(out / "kept.jsonl")
    assert len(kept) == report["kept"] <= 40 and report["embedded"] == 40
    # the removed items in the same format: with the kept ones, the input, each once
    removed = read_winogrande(out / "removed.jsonl")
    assert (report["kept_file"], report["removed_file"]) == ("kept.jsonl", "removed.jsonl")
    assert len(removed) == report["removed"] == 40 - report["kept"]
    assert sorted(x.qid for x in kept + removed) == sorted(x.qid for x in
                                                          read_winogrande(winogrande_file))
    assert f"{out}/kept.jsonl, {out}/removed.jsonl, {out}/report.json" in stdout
    assert report["sets"]["random"]["size"] == report["sets"]["PMI"]["size"] == report["kept"]
    assert f"kept {report['kept']} of 40" in stdout
    # the same command again: the folder is its own, the embeddings come from the cache
    status, _, _ = run(capsys, *argv)
    assert status == 0
    assert json.loads((out / "report.json").read_text())["kept"] == report["kept"]
    # stop-at-chance is on unless turned off, and the flag reaches the algorithm
    assert report["aflite"]["parameters"]["stop_at_chance"] is True
    plain = tmp_path / "plain"
    status, _, _ = run(capsys, *argv[:4], str(plain), *argv[5:], "--cache",
                       str(out / "aflite-cache"), "--no-stop-at-chance")
    assert status == 0
    assert json.loads((plain / "report.json").read_text())["aflite"]["parameters"][
        "stop_at_chance"] is False


def test_fine_tuning_on_the_cpu_and_a_dtype_with_its_own_cache(
        tiny_encoder: Path, winogrande_file: Path, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    cache = tmp_path / "cache"
    argv = [str(winogrande_file), "--format", "winogrande", "--encoder", str(tiny_encoder),
            "--finetune", "8", "--max-length", "32", "--n", "8", "--m", "12", "--k", "3",
            "--no-figure", "--cache", str(cache), "--device", "cpu"]
    status, stdout, err = run(capsys, *argv, "--out", str(tmp_path / "f32"))
    assert status == 0, err
    report = json.loads((tmp_path / "f32" / "report.json").read_text())
    assert report["finetuned_on"] == 8 and report["embedded"] == 32
    # the share fine-tuned on and discarded is among the removed items
    kept, removed = (read_winogrande(tmp_path / "f32" / f"{name}.jsonl")
                     for name in ("kept", "removed"))
    assert len(kept) == report["kept"] <= 32 and len(removed) == 40 - report["kept"]
    assert sorted(x.qid for x in kept + removed) == sorted(x.qid for x in
                                                          read_winogrande(winogrande_file))
    # bfloat16 autocast gives other embeddings: a cache entry of its own beside float32's
    status, _, err = run(capsys, *argv, "--out", str(tmp_path / "bf16"), "--dtype", "bfloat16")
    assert status == 0, err
    assert len([p for p in cache.iterdir() if p.is_dir()]) == 2


def test_swag_csv_in_and_out(tiny_encoder: Path, tmp_path: Path,
                             capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "val.csv"
    # an easy dataset (the right ending is always the same words), so that AFLite removes some
    endings = [[f"sits {i}.", "runs.", f"eats {i % 3}.", "waves."] for i in range(30)]
    for i, four in enumerate(endings):
        four[i % 4] = "wins the gold prize!"
    data.write_text(",video-id,fold-ind,startphrase,sent1,sent2,gold-source,ending0,ending1,"
                    "ending2,ending3,label\n" + "".join(
                        f'{i},v{i},{i + 7},"Person {i} walks, slowly. he",'
                        f'"Person {i} walks, slowly.",he,gold,{",".join(endings[i])},{i % 4}\n'
                        for i in range(30)))
    out = tmp_path / "out"
    status, stdout, err = run(capsys, str(data), "--format", "swag-csv", "--out", str(out),
                              "--encoder", str(tiny_encoder), "--finetune", "0", "--n", "8",
                              "--m", "10", "--k", "3", "--no-figure", "--device", "cpu")
    assert status == 0, err
    report = json.loads((out / "report.json").read_text())
    assert (report["kept_file"], report["removed_file"]) == ("kept.csv", "removed.csv")
    kept, removed = read_swag_csv(out / "kept.csv"), read_swag_csv(out / "removed.csv")
    assert len(kept) == report["kept"] and len(removed) == report["removed"] == 30 - len(kept)
    assert kept and removed
    # every row of the input in one of the two files, as it was (byte for byte), in its order
    rows = data.read_text().splitlines()
    kept_rows, removed_rows = ((out / f).read_text().splitlines() for f in ("kept.csv",
                                                                           "removed.csv"))
    assert kept_rows[0] == removed_rows[0] == rows[0]
    assert sorted(kept_rows[1:] + removed_rows[1:]) == sorted(rows[1:])
    assert kept_rows[1:] == [r for r in rows[1:] if r in kept_rows[1:]]


@pytest.mark.parametrize("extra, words", [
    (["--m", "40"], "`m` (=40) must be smaller than the number of instances (40)"),
    (["--m", "10", "--k", "0"], "`k` (=0)"),
    (["--tau", "1.5"], "`tau` (=1.5) must be in (0, 1]"),
    (["--finetune", "40"], "--finetune (=40)"),
    (["--view", "pair"], "--view 'pair' is not a view of winogrande"),
])
def test_bad_options_are_one_line_and_exit_2(extra: list[str], words: str, winogrande_file: Path,
                                             tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run(capsys, str(winogrande_file), "--format", "winogrande", "--out",
                         str(tmp_path / "o"), "--finetune", "0", *extra)
    assert status == 2
    assert err.startswith("dpc aflite: error: ") and words in err
    assert err.count("\n") == 1


def test_bad_files_are_one_line_and_exit_2(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"sentence": "A _ b.", "option1": "x", "option2": "y"}) + "\n")
    status, _, err = run(capsys, str(bad), "--format", "winogrande", "--out", str(tmp_path / "o"))
    assert status == 2 and f"{bad}:1: `answer` is missing" in err and err.count("\n") == 1
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    status, _, err = run(capsys, str(bad), "--format", "winogrande", "--out", str(foreign))
    assert status == 2 and "did not write" in err
    assert (foreign / "notes.txt").read_text() == "mine"

"""The INLI classifier: examples, premise split, report, training, eval/predict CLI, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

import cli
from dpc_errors import DpcError
from tasks.datasets import INLI_LABELS, read_inli
from tasks.inli.classifier import (
    MODEL_DIR,
    InliClassifier,
    evaluate,
    examples,
    label_index,
    report,
    split_by_premise,
    train_classifier,
)
from tests.tasks.inli.conftest import inli_rows, write_csv
from train.cross_encoder import CrossEncoderOptions

VAL = Path(__file__).resolve().parents[3] / ".." / "shared" / "data" / "inli" / "val.csv"


def test_examples_and_split_keep_premises_together(inli_csv: Path) -> None:
    rows = read_inli(inli_csv).rows
    a, b, y = examples(rows)
    assert len(a) == len(b) == len(y) == 4 * len(rows)
    assert y[:4] == [0, 1, 2, 3] and b[2] == rows[0].neutral and a[3] == rows[0].premise
    train, dev = split_by_premise(rows, 0.25, seed=1)
    assert {r.premise for r in train}.isdisjoint({r.premise for r in dev})
    assert len(train) + len(dev) == len(rows) and dev
    assert split_by_premise(rows, 0.25, seed=1) == (train, dev)  # seeded
    with pytest.raises(DpcError, match="dev-fraction"):
        split_by_premise(rows, 1.5)


def test_report_counts(tmp_path: Path) -> None:
    rows = read_inli(write_csv(tmp_path / "report.csv", inli_rows(2))).rows
    r = report(rows, [0, 1, 2, 3] * 2, [0, 1, 2, 3, 1, 1, 2, 0])
    assert r.overall == 6 / 8 and r.implied == 0.5 and r.per_label["contradiction"] == 0.5
    assert r.confusion[0] == [1, 1, 0, 0] and r.confusion[3] == [1, 0, 0, 1]
    assert r.per_dataset == {"circa": (1, 0.5), "socialchem": (1, 1.0)}
    assert label_index("contradiction") == 3


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory, tiny_encoder: Path) -> Path:
    folder = tmp_path_factory.mktemp("clf")
    csv = write_csv(folder / "train.csv", inli_rows(24))
    rows = read_inli(csv).rows
    options = CrossEncoderOptions(encoder=tiny_encoder, epochs=8, batch_size=16, lr=3e-3,
                                  max_length=24, progress=False)
    train_classifier(rows, folder / "model", options, dev_fraction=0.25)
    return folder


def test_classifier_learns_and_eval_prints_the_table(trained: Path, capsys) -> None:
    clf = InliClassifier.load(trained / "model")
    rows = read_inli(trained / "train.csv").rows
    result = evaluate(clf, rows)
    assert result.overall >= 0.6, result  # chance is 0.25; the label words are learnable
    assert cli.main(["inli", "eval", str(trained / "train.csv"), "--model",
                     str(trained / "model"), "--device", "cpu"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert out[-1] == f"overall {result.overall:.3f} implied {result.implied:.3f}"
    assert any(line.startswith("  circa") for line in out)
    assert cli.main(["inli", "eval", str(trained / "train.csv"), "--model",
                     str(trained / "model"), "--assign"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert any(line.startswith("  assigned: overall") for line in out)
    assert out[-1] == f"overall {result.overall:.3f} implied {result.implied:.3f}"


def test_predict_json_lines(trained: Path, tmp_path: Path, capsys) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps({"premise": "Tom said the house was red.",
                               "hypothesis": "Tom never saw the house.", "id": 7}) + "\n"
                   + json.dumps({"premise": "", "hypothesis": "x"}) + "\n")
    out = tmp_path / "out.jsonl"
    assert cli.main(["inli", "predict", "--model", str(trained / "model"), "--input", str(src),
                     "--out", str(out), "--device", "cpu"]) == 0
    assert "skipped 1 record" in capsys.readouterr().err
    record = json.loads(out.read_text())
    assert record["id"] == 7 and record["label"] in INLI_LABELS
    assert abs(sum(record["probabilities"].values()) - 1) < 1e-3
    # --out is never overwritten silently
    assert cli.main(["inli", "predict", "--model", str(trained / "model"), "--input", str(src),
                     "--out", str(out)]) == 2
    assert "exists" in capsys.readouterr().err


def test_train_command_on_the_cpu(tiny_encoder: Path, tmp_path: Path, capsys) -> None:
    csv = write_csv(tmp_path / "train.csv", inli_rows(8))
    out = tmp_path / "model"
    assert cli.main(["inli", "train", "--out", str(out), "--train", str(csv), "--encoder",
                     str(tiny_encoder), "--epochs", "1", "--batch-size", "16", "--max-length",
                     "24", "--dev-fraction", "0.25", "--device", "cpu"]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert f"saved {out} (premise+hypothesis)" in printed and printed[-1].startswith("steps 2,")
    clf = InliClassifier.load(out, device="cpu", dtype="bfloat16")
    assert {p.dtype for p in clf.model.parameters()} == {torch.bfloat16}  # place()d
    probs = clf.probabilities(["Tom said the house was red."], ["Tom never saw the house."])
    assert probs.dtype == np.float32 and abs(float(probs.sum()) - 1) < 1e-2


def test_bad_input(tmp_path: Path, trained: Path, capsys) -> None:
    bad = write_csv(tmp_path / "bad.csv", [["0", "circa", "p", "i"]],
                    header=["", "dataset", "premise", "implied_entailment"])
    assert cli.main(["inli", "eval", str(bad), "--model", str(trained / "model")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("dpc inli: error:")
    assert "explicit_entailment" in err[0] and "neutral" in err[0] and "contradiction" in err[0]
    rows = inli_rows(6)
    rows[1][4] = ""   # an empty hypothesis
    rows[3][2] = " "  # an empty premise
    holes = write_csv(tmp_path / "holes.csv", rows)
    assert cli.main(["inli", "eval", str(holes), "--model", str(trained / "model")]) == 0
    out = capsys.readouterr().out
    assert "skipped 2 row(s)" in out and "premises 4," in out
    # a folder that is not a classifier, and a file of another run
    assert cli.main(["inli", "eval", str(holes), "--model", str(tmp_path)]) == 2
    assert "cross_encoder.json" in capsys.readouterr().err
    (tmp_path / "foreign").mkdir()
    (tmp_path / "foreign" / "notes.txt").write_text("mine")
    assert cli.main(["inli", "train", "--out", str(tmp_path / "foreign"), "--train",
                     str(holes)]) == 2
    assert "notes.txt" in capsys.readouterr().err
    assert (tmp_path / "foreign" / "notes.txt").read_text() == "mine"


@pytest.mark.skipif(not VAL.is_file(), reason="../shared/data/inli/val.csv is absent")
def test_real_val_reads() -> None:
    data = read_inli(VAL)
    assert len(data.rows) == 1000 and not data.skipped
    a, b, y = examples(data.rows[:5], hypothesis_only=True)
    assert a[0] == data.rows[0].implied_entailment and b == [] and np.bincount(y).tolist() == [5] * 4


@pytest.mark.skipif(not (MODEL_DIR / "inli_classifier.json").is_file() or not VAL.is_file(),
                    reason="no bundled INLI classifier (tasks/inli/model) or no val.csv")
def test_bundled_classifier_beats_chance_on_val() -> None:
    clf = InliClassifier.load()  # float16 on disk, float32 in memory
    result = evaluate(clf, read_inli(VAL).rows[:15])
    assert result.overall > 0.45, result  # chance is 0.25; 0.675 on all of val

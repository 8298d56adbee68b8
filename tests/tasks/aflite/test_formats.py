"""The format adapters: instances, labels, and the kept items written back in their format."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from tasks.aflite.formats import FORMATS, SUFFIXES, VIEWS, Instances, load_instances, write_items
from tasks.datasets import read_inli, read_multiple_choice, read_swag_csv, read_winogrande
from tasks.errors import DatasetError, TaskError


def test_winogrande_twins(winogrande_file: Path, tmp_path: Path) -> None:
    inst = load_instances(winogrande_file, "winogrande")
    assert inst.mode == "choice" and len(inst) == 40
    assert inst.b[0] == ["Ian", "Dennis"] and "_" in inst.a[0]
    assert inst.labels[:4].tolist() == [1, 0, 1, 0]
    assert inst.groups[0] == inst.groups[1] == "Q0" != inst.groups[2]
    write_items(inst, [5, 0, 3], tmp_path / "kept.jsonl")
    back = read_winogrande(tmp_path / "kept.jsonl")
    assert [x.qid for x in back] == ["Q0-1", "Q1-2", "Q2-2"]
    with pytest.raises(Exception, match="already exists"):
        write_items(inst, [0], tmp_path / "kept.jsonl")


def test_inli_views_and_partial_rows(tmp_path: Path) -> None:
    path = tmp_path / "inli.csv"
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["", "dataset", "premise", "implied_entailment", "explicit_entailment",
                         "neutral", "contradiction"])
        writer.writerow(["0", "d", "P zero.", "ie0", "ee0", "n0", "c0"])
        writer.writerow(["1", "d", "P one.", "ie1", "ee1", "n1", "c1"])
    pair = load_instances(path, "inli")
    assert len(pair) == 8 and pair.labels.tolist() == [0, 1, 2, 3, 0, 1, 2, 3]
    assert (pair.a[1], pair.b[1]) == ("P zero.", "ee0")
    only = load_instances(path, "inli", "hypothesis-only")
    assert only.b is None and only.a[2] == "n0"
    write_items(only, [0, 3, 6], tmp_path / "kept.csv")
    back = read_inli(tmp_path / "kept.csv", partial=True)
    assert [(r.implied_entailment, r.explicit_entailment, r.neutral, r.contradiction)
            for r in back.rows] == [("ie0", "", "", "c0"), ("", "", "n1", "")]
    assert len(load_instances(tmp_path / "kept.csv", "inli")) == 3   # read back: 3 instances


def test_multiple_choice(tmp_path: Path) -> None:
    path = tmp_path / "mc.jsonl"
    path.write_text("".join(json.dumps({"ind": i, "ctx": f"c{i}", "endings": ["a", "b", "c", "d"],
                                        "label": i % 4}) + "\n" for i in range(6)))
    inst = load_instances(path, "multiple-choice")
    assert inst.mode == "choice" and inst.labels.tolist() == [0, 1, 2, 3, 0, 1]
    assert inst.pmi_texts is None and len(inst.b[0]) == 4
    write_items(inst.subset(np.array([1, 4])), [1, 0], tmp_path / "kept.jsonl")
    assert [x.ind for x in read_multiple_choice(tmp_path / "kept.jsonl")] == [1, 4]


@pytest.mark.parametrize("answer, words", [(None, "`answer` is missing"),
                                           ("3", "`answer` (='3') must be one of 1, 2")])
def test_labels_missing_or_outside_the_set(tmp_path: Path, answer: str | None,
                                           words: str) -> None:
    line = {"qID": "a-1", "sentence": "A _ b.", "option1": "x", "option2": "y"}
    if answer is not None:
        line["answer"] = answer
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({**line, "answer": "1"}) + "\n" + json.dumps(line) + "\n")
    with pytest.raises(DatasetError) as err:
        load_instances(path, "winogrande")
    assert f"{path}:2" in str(err.value) and words in str(err.value)


def test_unknown_format_or_view(winogrande_file: Path) -> None:
    with pytest.raises(TaskError, match="--format 'swag' is not one of .*swag-csv"):
        load_instances(winogrande_file, "swag")
    with pytest.raises(TaskError, match="--view 'hypothesis-only' is not a view of winogrande"):
        load_instances(winogrande_file, "winogrande", "hypothesis-only")


SWAG_CSV = (",video-id,fold-ind,startphrase,sent1,sent2,gold-source,ending0,ending1,ending2,"
            "ending3,label\n"
            + "".join(f'{i},v{i},{100 + i},"Ctx {i}, here. he",'
                      f'"Ctx {i}, here.",he,gold,a{i},b{i},c{i},d{i},{i % 4}\n' for i in range(6)))


def test_swag_csv(tmp_path: Path) -> None:
    path = tmp_path / "val.csv"
    path.write_text(SWAG_CSV)
    inst = load_instances(path, "swag-csv")
    assert (inst.format, inst.view, inst.mode) == ("swag-csv", "choices", "choice")
    assert inst.labels.tolist() == [0, 1, 2, 3, 0, 1]
    assert inst.a[1] == "Ctx 1, here. he" and inst.b[1] == ["a1", "b1", "c1", "d1"]
    assert inst.label_names == ("ending0", "ending1", "ending2", "ending3")
    write_items(inst, [4, 1], tmp_path / "kept.csv")
    lines = (tmp_path / "kept.csv").read_text().splitlines(keepends=True)
    assert lines == [SWAG_CSV.splitlines(keepends=True)[j] for j in (0, 2, 5)]  # header, 1, 4
    assert read_swag_csv(tmp_path / "kept.csv") == [inst.items[1], inst.items[4]]


def _inputs(tmp_path: Path, winogrande_file: Path) -> dict[str, Path]:
    """One small input file of each format."""
    inli = tmp_path / "inli.csv"
    inli.write_text(",dataset,premise,implied_entailment,explicit_entailment,neutral,"
                    "contradiction\n0,d,P zero.,ie0,ee0,n0,c0\n1,d,P one.,ie1,,n1,c1\n"
                    "2,d,P two.,ie2,ee2,n2,c2\n")
    mc = tmp_path / "mc.jsonl"
    mc.write_text("".join(json.dumps({"ind": i, "ctx": f"c{i}", "endings": ["a", "b", "c", "d"],
                                      "label": i % 4, "split": "val"}) + "\n" for i in range(7)))
    swag = tmp_path / "swag.csv"
    swag.write_text(SWAG_CSV)
    return {"winogrande": winogrande_file, "inli": inli, "multiple-choice": mc, "swag-csv": swag}


def _key(inst: Instances, i: int) -> str:
    """An instance as text: what it reads and its label."""
    return json.dumps([inst.a[i], None if inst.b is None else inst.b[i], int(inst.labels[i])])


@pytest.mark.parametrize("format", FORMATS)
def test_kept_and_removed_together_are_the_input(tmp_path: Path, winogrande_file: Path,
                                                 format: str) -> None:
    path = _inputs(tmp_path, winogrande_file)[format]
    for view in VIEWS[format]:
        inst = load_instances(path, format, view)
        kept = np.random.default_rng(len(inst)).permutation(len(inst))[:len(inst) // 3]
        removed = np.setdiff1d(np.arange(len(inst)), kept)
        files = [tmp_path / f"{name}-{view}{SUFFIXES[format]}" for name in ("kept", "removed")]
        write_items(inst, kept, files[0])
        write_items(inst, removed, files[1])
        back = [load_instances(f, format, view) for f in files]
        assert [len(b) for b in back] == [len(kept), len(removed)]
        # every instance once: the two files' instances are the input's, none lost or doubled
        assert sorted(_key(b, i) for b in back for i in range(len(b))) == \
            sorted(_key(inst, i) for i in range(len(inst)))
        assert sorted(_key(back[0], i) for i in range(len(back[0]))) == \
            sorted(_key(inst, int(i)) for i in kept)

"""The task datasets: strict readers (errors name file and line), writers that round-trip."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dpc_files import OutputError
from tasks.datasets import (
    INLI_LABELS,
    InliRow,
    read_inli,
    read_multiple_choice,
    read_winogrande,
    write_inli,
    write_multiple_choice,
    write_winogrande,
)
from tasks.errors import DatasetError

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"


def _lines(path: Path, *rows: object) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


MC = {"ind": 4, "activity_label": "Canoeing", "ctx": "Two women row. they",
      "endings": ["sink.", "row on.", "fly.", "sing."], "label": 1, "source_id": "x"}


def test_multiple_choice_round_trips_with_unknown_keys(tmp_path: Path) -> None:
    items = read_multiple_choice(_lines(tmp_path / "a.jsonl", MC, "", {**MC, "label": "2"}))
    assert [i.label for i in items] == [1, 2]
    assert items[0].gold == "row on." and items[0].negatives == ("sink.", "fly.", "sing.")
    assert items[0].extra == {"source_id": "x"}
    write_multiple_choice(items, tmp_path / "b.jsonl")
    assert read_multiple_choice(tmp_path / "b.jsonl") == items
    assert json.loads((tmp_path / "b.jsonl").read_text().splitlines()[0]) == MC


@pytest.mark.parametrize(("row", "message"), [
    ("{not json", "a.jsonl:2: not valid JSON"),
    ("[1, 2]", "a.jsonl:2: a multiple-choice line must be a JSON object"),
    ({**MC, "label": 4}, "a.jsonl:2: `label` (=4) must be one of 0, 1, 2, 3"),
    ({**MC, "endings": ["only one"]}, "a.jsonl:2: `endings` must be a list of at least 2"),
    ({k: v for k, v in MC.items() if k != "ctx"}, "a.jsonl:2: `ctx` must be a string (missing)"),
    ({k: v for k, v in MC.items() if k != "label"}, "a.jsonl:2: `label` is missing"),
])
def test_multiple_choice_errors_name_file_and_line(tmp_path: Path, row: object,
                                                   message: str) -> None:
    with pytest.raises(DatasetError, match=message.replace("(", r"\(").replace(")", r"\)")
                       .replace("[", r"\[")):
        read_multiple_choice(_lines(tmp_path / "a.jsonl", MC, row))


def test_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="nope.jsonl"):
        read_multiple_choice(tmp_path / "nope.jsonl")


def test_writers_never_replace_a_file_unless_asked(tmp_path: Path) -> None:
    items = read_multiple_choice(_lines(tmp_path / "a.jsonl", MC))
    target = tmp_path / "mine.jsonl"
    target.write_text("the user's file\n")
    with pytest.raises(OutputError, match="mine.jsonl"):
        write_multiple_choice(items, target)
    assert target.read_text() == "the user's file\n"
    write_multiple_choice(items, target, overwrite=True)
    assert read_multiple_choice(target) == items


WG = {"qID": "q-1", "sentence": "Ian ate because _ was hungry.", "option1": "Ian",
      "option2": "Dennis", "answer": "2"}


def test_winogrande_reads_fills_and_round_trips(tmp_path: Path) -> None:
    [item] = read_winogrande(_lines(tmp_path / "w.jsonl", WG))
    assert item.answer == 2 and item.filled(item.answer) == "Ian ate because Dennis was hungry."
    write_winogrande([item], tmp_path / "out.jsonl")
    assert json.loads((tmp_path / "out.jsonl").read_text()) == WG


@pytest.mark.parametrize(("row", "message"), [
    ({**WG, "answer": ""}, "w.jsonl:1: `answer` is missing"),
    ({**WG, "answer": "3"}, "w.jsonl:1: `answer` (='3') must be one of 1, 2"),
    ({**WG, "sentence": "no blank"}, "w.jsonl:1: `sentence` must hold exactly one blank"),
])
def test_winogrande_errors(tmp_path: Path, row: object, message: str) -> None:
    with pytest.raises(DatasetError) as err:
        read_winogrande(_lines(tmp_path / "w.jsonl", row))
    assert message in str(err.value)


INLI_CSV = (',dataset,premise,implied_entailment,explicit_entailment,neutral,contradiction\n'
            '0,circa,"He said ""no"", twice.",He refused.,He said no.,He is tall.,He agreed.\n'
            '1,circa,,a,b,c,d\n'
            '2,circa,P,a,,c,d\n')


def test_inli_reads_skips_empty_rows_and_round_trips(tmp_path: Path) -> None:
    (tmp_path / "i.csv").write_text(INLI_CSV)
    data = read_inli(tmp_path / "i.csv")
    assert len(data) == 1 and data.skipped == [3, 4]
    row = data.rows[0]
    assert row.premise == 'He said "no", twice.' and row.index == "0"
    assert list(row.hypotheses()) == list(INLI_LABELS)
    assert row.hypothesis("contradiction") == "He agreed."
    partial = read_inli(tmp_path / "i.csv", partial=True)
    assert partial.skipped == [3] and partial.rows[1].explicit_entailment == ""
    write_inli(partial.rows, tmp_path / "o.csv")
    assert read_inli(tmp_path / "o.csv", partial=True).rows == partial.rows


def test_inli_errors_name_missing_columns_and_labels(tmp_path: Path) -> None:
    (tmp_path / "bad.csv").write_text("premise,hypothesis,label\nP,H,neutral\n")
    with pytest.raises(DatasetError, match="missing column.*dataset, implied_entailment"):
        read_inli(tmp_path / "bad.csv")
    row = InliRow("0", "d", "P", "a", "b", "c", "d")
    with pytest.raises(DatasetError, match="unknown INLI label 'entailment'.*contradiction"):
        row.hypothesis("entailment")


@pytest.mark.skipif(not (DATA / "inli").is_dir(), reason="../shared/data/inli is absent")
def test_the_real_files_read() -> None:
    assert len(read_inli(DATA / "inli" / "val.csv")) > 900
    assert len(read_winogrande(DATA / "winogrande" / "train_xs.jsonl")) == 160
    items = read_multiple_choice(DATA / "hellaswag" / "val_part1.jsonl")
    assert len(items) == 8000 and all(len(i.endings) == 4 for i in items)

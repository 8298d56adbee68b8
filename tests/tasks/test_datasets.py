"""The task datasets: strict readers (errors name file and line), writers that round-trip."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dpc_errors import DpcError
from dpc_files import OutputError
from tasks.datasets import (
    INLI_LABELS,
    InliRow,
    MultipleChoiceItem,
    read_inli,
    read_multiple_choice,
    read_swag_csv,
    read_winogrande,
    split_context,
    write_inli,
    write_multiple_choice,
    write_swag_csv,
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
    ("{not json", "a.jsonl:2 is not JSON"),
    ("[1, 2]", "a.jsonl:2: a multiple-choice line must be a JSON object"),
    ({**MC, "label": 4}, "a.jsonl:2: `label` (=4) must be one of 0, 1, 2, 3"),
    ({**MC, "endings": ["only one"]}, "a.jsonl:2: `endings` must be a list of at least 2"),
    ({k: v for k, v in MC.items() if k != "ctx"}, "a.jsonl:2: `ctx` must be a string (missing)"),
    ({k: v for k, v in MC.items() if k != "label"}, "a.jsonl:2: `label` is missing"),
])
def test_multiple_choice_errors_name_file_and_line(tmp_path: Path, row: object,
                                                   message: str) -> None:
    with pytest.raises(DpcError, match=message.replace("(", r"\(").replace(")", r"\)")
                       .replace("[", r"\[")):
        read_multiple_choice(_lines(tmp_path / "a.jsonl", MC, row))


def test_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(DpcError, match="nope.jsonl' does not exist"):
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


# HellaSwag's release: both halves of the context and the whole, in the release's key order.
HS = {"ind": 24, "activity_label": "Roof shingle removal", "ctx_a": "A man is sitting on a roof.",
      "ctx_b": "he", "ctx": "A man is sitting on a roof. he", "split": "val",
      "split_type": "indomain", "label": 3, "endings": ["is using wrap.", "is ripping tiles.",
                                                       "is holding a cube.", "starts pulling."],
      "source_id": "activitynet~v_-JhWjGDPHMY"}
HS_WIKIHOW = {**HS, "ind": 25, "ctx_a": "[header] How to tie a tie [step] Cross it.",
              "ctx_b": "", "ctx": "[header] How to tie a tie [step] Cross it."}


def test_hellaswag_release_lines_round_trip(tmp_path: Path) -> None:
    items = read_multiple_choice(_lines(tmp_path / "hs.jsonl", HS, HS_WIKIHOW))
    assert [i.ctx for i in items] == [HS["ctx"], HS_WIKIHOW["ctx"]]
    assert items[0].extra == {k: HS[k] for k in ("ctx_a", "ctx_b", "split", "split_type",
                                                  "source_id")}
    write_multiple_choice(items, tmp_path / "out.jsonl")
    written = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert written == [HS, HS_WIKIHOW]
    assert read_multiple_choice(tmp_path / "out.jsonl") == items


def test_hellaswag_halves_without_ctx_make_the_context(tmp_path: Path) -> None:
    halves = [{k: v for k, v in line.items() if k != "ctx"} for line in (HS, HS_WIKIHOW)]
    items = read_multiple_choice(_lines(tmp_path / "hs.jsonl", *halves))
    # ctx_a + " " + ctx_b; ctx_a alone when ctx_b is empty
    assert [i.ctx for i in items] == ["A man is sitting on a roof. he",
                                      "[header] How to tie a tie [step] Cross it."]
    write_multiple_choice(items, tmp_path / "out.jsonl")
    assert read_multiple_choice(tmp_path / "out.jsonl") == items
    # written back as the release has it: the halves kept, the whole context added
    assert [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()] == \
        [HS, HS_WIKIHOW]
    with pytest.raises(DatasetError, match=r"hs2.jsonl:1: `ctx_b` must be a string \(missing\)"):
        read_multiple_choice(_lines(tmp_path / "hs2.jsonl",
                                    {k: v for k, v in halves[0].items() if k != "ctx_b"}))


# The official SWAG CSV (rowanz/swagaf data/val.csv): an unnamed index column; cells with
# commas and quotes are quoted.
SWAG_HEADER = (",video-id,fold-ind,startphrase,sent1,sent2,gold-source,ending0,ending1,ending2,"
               "ending3,label\n")
SWAG_CSV = SWAG_HEADER + (
    '0,lsmdc3001_21_JUMP_STREET-422,11783,"Students lower their eyes nervously. She, too,",'
    'Students lower their eyes nervously.,"She, too,",gold,pats her shoulder.,"says ""no"".",'
    'runs.,sits.,1\n'
    '1,anetv_dm5WXFiQZUQ,18419,He rides the bike. The man,He rides the bike.,The man,gen,'
    'falls.,waves.,stops.,jumps.,3\n')


def test_swag_csv_round_trips_byte_for_byte(tmp_path: Path) -> None:
    (tmp_path / "val.csv").write_text(SWAG_CSV)
    items = read_swag_csv(tmp_path / "val.csv")
    assert [i.ind for i in items] == [0, 1] and [i.label for i in items] == [1, 3]
    assert items[0].ctx == "Students lower their eyes nervously. She, too,"
    assert items[0].gold == 'says "no".' and items[1].gold == "jumps."
    assert items[0].extra == {"video-id": "lsmdc3001_21_JUMP_STREET-422", "fold-ind": "11783",
                              "sent1": "Students lower their eyes nervously.",
                              "sent2": "She, too,", "gold-source": "gold"}
    write_swag_csv(items, tmp_path / "copy.csv")
    assert (tmp_path / "copy.csv").read_text() == SWAG_CSV
    assert read_swag_csv(tmp_path / "copy.csv") == items
    # through the JSON-lines format and back: the same items, the same file
    write_multiple_choice(items, tmp_path / "mc.jsonl")
    write_swag_csv(read_multiple_choice(tmp_path / "mc.jsonl"), tmp_path / "again.csv")
    assert (tmp_path / "again.csv").read_text() == SWAG_CSV


def test_swag_csv_without_index_or_startphrase(tmp_path: Path) -> None:
    (tmp_path / "s.csv").write_text("fold-ind,sent1,sent2,ending0,ending1,label,note\n"
                                    "7,A man walks.,He,sits.,runs.,0,x\n"
                                    ",Rain falls.,,Puddles form.,It snows.,1,\n")
    items = read_swag_csv(tmp_path / "s.csv")
    # ind: fold-ind, else the row count; ctx: sent1 + " " + sent2 (sent1 alone if sent2 is empty)
    assert [(i.ind, i.ctx) for i in items] == [(7, "A man walks. He"), (1, "Rain falls.")]
    assert items[0].extra == {"fold-ind": "7", "sent1": "A man walks.", "sent2": "He",
                              "note": "x"}
    assert items[1].extra == {"sent1": "Rain falls.", "sent2": ""}  # an empty cell: no value
    write_swag_csv(items, tmp_path / "o.csv")
    assert (tmp_path / "o.csv").read_text().splitlines() == [
        ",video-id,fold-ind,startphrase,sent1,sent2,gold-source,ending0,ending1,label,note",
        "7,,7,A man walks. He,A man walks.,He,,sits.,runs.,0,x",
        "1,,,Rain falls.,Rain falls.,,,Puddles form.,It snows.,1,"]
    assert read_swag_csv(tmp_path / "o.csv") == items


def test_swag_csv_from_hellaswag_items(tmp_path: Path) -> None:
    items = read_multiple_choice(_lines(tmp_path / "hs.jsonl", HS, HS_WIKIHOW,
                                        {"ctx": "A dog runs. it", "endings": list("abcd"),
                                         "label": 0}))
    write_swag_csv(items, tmp_path / "hs.csv")
    lines = (tmp_path / "hs.csv").read_text().splitlines()
    assert lines[0] == (",video-id,fold-ind,startphrase,sent1,sent2,gold-source,ending0,ending1,"
                        "ending2,ending3,label,activity_label,split,split_type,source_id")
    # sent1/sent2: HellaSwag's halves (not written twice), else the context cut by split_context
    assert lines[1].startswith("24,,,A man is sitting on a roof. he,A man is sitting on a roof.,"
                               "he,,")
    assert lines[3].startswith("2,,,A dog runs. it,A dog runs.,it,,a,b,c,d,0,,,,")
    back = read_swag_csv(tmp_path / "hs.csv")
    assert [(b.ind, b.ctx, b.endings, b.label, b.activity_label) for b in back] == \
        [(i.ind, i.ctx, i.endings, i.label, i.activity_label) for i in items]
    assert back[0].extra["sent2"] == "he" and "ctx_b" not in back[0].extra


def test_swag_csv_without_labels_is_refused(tmp_path: Path) -> None:
    test_split = tmp_path / "test.csv"
    test_split.write_text(SWAG_HEADER.replace(",label", "") + "0,v,1,A b. c,A b.,c,gold,w,x,y,z\n")
    with pytest.raises(DatasetError) as err:
        read_swag_csv(test_split)
    assert str(err.value).startswith(f"{test_split}: no `label` column")
    (tmp_path / "e.csv").write_text(SWAG_CSV + "2,v,1,A b. c,A b.,c,gold,w,x,y,z,\n")
    with pytest.raises(DatasetError, match=r"e.csv:4: `label` is missing"):
        read_swag_csv(tmp_path / "e.csv")


@pytest.mark.parametrize(("text", "message"), [
    (SWAG_CSV + "2,v,1,A b. c,A b.,c,gold,w,x,y,z,4\n", "s.csv:4: `label` (='4') must be one of 0"),
    (SWAG_CSV + "2,v,1,A b. c,A b.,c,gold,w,x,y,z,0,extra\n", "s.csv:4: more cells than the"),
    (SWAG_CSV + "2,v,1,A b. c,A b.,c\n", "s.csv:4: fewer cells than the header's 12"),
    # a quoted cell over two lines: the line named is the one the row ends on
    (SWAG_CSV + '2,v,1,"A b.\nc",A b.,c,gold,w,x,y,z,one\n', "s.csv:5: `label` (='one')"),
    ("startphrase,ending0,ending1,label\nA b,c,d,0\n", "s.csv: not a SWAG CSV: missing column(s) "
                                                       "sent1, sent2"),
    ("sent1,sent2,ending0,ending1,ending3,label\n", "s.csv: ending column(s) ending3 without "
                                                    "ending2"),
    ("sent1,sent2,ending0,ending1,label,sent1\n", "s.csv: column(s) 'sent1' appear twice"),
    ("", "s.csv' is empty"),
    ("\ufeff" + SWAG_CSV.replace("label", "lbl"), "s.csv: no `label` column"),
    (SWAG_CSV + "2,v,1,A b. c,A b.,c,gold,w,x,y,z,0\x00\n", r"s.csv:4: `label` (='0\x00')"),
])
def test_swag_csv_errors_name_file_and_line(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "s.csv").write_text(text, encoding="utf-8")
    with pytest.raises(DpcError) as err:
        read_swag_csv(tmp_path / "s.csv")
    assert message in str(err.value)


def test_swag_csv_writer_checks_endings_and_existing_files(tmp_path: Path) -> None:
    two = MultipleChoiceItem(0, "A b. c", ("x", "y"), 0)
    three = MultipleChoiceItem(1, "A b. c", ("x", "y", "z"), 2)
    with pytest.raises(DatasetError, match=r"same number of endings .*found 2, 3"):
        write_swag_csv([two, three], tmp_path / "o.csv")
    assert not (tmp_path / "o.csv").exists()
    (tmp_path / "mine.csv").write_text("the user's\n")
    with pytest.raises(OutputError, match="mine.csv"):
        write_swag_csv([two], tmp_path / "mine.csv")
    assert (tmp_path / "mine.csv").read_text() == "the user's\n"


@pytest.mark.parametrize(("ctx", "halves"), [
    ("A man is sitting on a roof. he", ("A man is sitting on a roof.", "he")),  # HellaSwag
    ("A lady walks. She bends down. the lady", ("A lady walks. She bends down.", "the lady")),
    ('He shouts "Stop!" The dog', ('He shouts "Stop!"', "The dog")),  # a quote closes the end
    ("Is it raining? She", ("Is it raining?", "She")),
    ("A man is sitting on a roof.", ("A man is sitting on a roof.", "")),  # a whole sentence
    ("the man", ("", "the man")),                                           # no sentence end
    ("v2.0 is out and", ("", "v2.0 is out and")),                  # a full stop inside a word
    ("", ("", "")),
])
def test_split_context(ctx: str, halves: tuple[str, str]) -> None:
    assert split_context(ctx) == halves
    first, second = halves
    assert (f"{first} {second}" if first and second else first or second) == ctx


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

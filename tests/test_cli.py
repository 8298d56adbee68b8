"""`dpc generate` (in-process, through cli.main) on the bundled model and graph."""

from __future__ import annotations

import json
import re

import pytest

import cli
from dpc_files import read_results

FAST = ["--fast", "--n", "3", "--m", "2", "--k", "4", "--max-new-tokens", "8", "--rank", "weight",
        "--rerank", "nll", "--no-plain-row", "--no-verify", "--no-verify-keywords", "--sampled", "0"]


def table_rows(out: str) -> list[list[str]]:
    return [line.split(None, 3) for line in out.splitlines() if re.match(r"\s+\d+\s+\d", line)]


def without_timings(line: str) -> dict:
    """A row of the output with its timings left out (every ``*_seconds`` of its stats: they move
    with the machine's load, the rerank's by a millisecond under CI)."""
    row = json.loads(line)
    row["stats"] = {k: v for k, v in row["stats"].items() if not k.endswith("_seconds")}
    return row


def test_generate_prints_a_table_of_keyworded_outputs(capsys):
    rc = cli.main(["generate", "--input", "babies cry", "--direction", "cause", *FAST])
    out = capsys.readouterr().out
    assert rc == 0
    assert out.startswith("causes of 'babies cry': 3 keywords")
    rows = table_rows(out)
    assert [int(r[0]) for r in rows] == [1, 2, 3, 4]
    nlls = [float(r[1]) for r in rows]
    assert nlls == sorted(nlls)


def test_generate_json_lines_one_object_per_input(capsys):
    rc = cli.main(["generate", "--input", "babies cry", "--input", "it rained",
                   "--direction", "effect", "--json", *FAST])
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert rc == 0
    assert [(r["index"], r["input"], r["direction"]) for r in rows] == [
        (0, "babies cry", "effect"), (1, "it rained", "effect")]
    for r in rows:
        # at most K = 4 outputs, all distinct (fewer when the 3 x 2 candidates repeat a text)
        texts = [o["text"] for o in r["outputs"]]
        assert len(r["keywords"]) == 3 and 1 <= len(texts) <= 4 and len(set(texts)) == len(texts)
        for o in r["outputs"]:
            assert o["keyword"] in r["keywords"] and o["matched"] in o["text"]


def test_constraint_mode_all_is_one_conjunctive_row(capsys):
    rc = cli.main(["generate", "--input", "babies cry", "--constraint", "hungry|hunger",
                   "--constraint", "tired", "--constraint-mode", "all", "--m", "2", "--k", "2",
                   "--max-new-tokens", "10", "--json"])
    result = json.loads(capsys.readouterr().out)
    assert rc == 0 and result["keywords"] == ["hungry|hunger + tired"]
    for o in result["outputs"]:
        words = o["text"].replace(",", " ").split()
        assert ("hungry" in words or "hunger" in words) and "tired" in words


def test_input_file_and_resume_from_out(tmp_path, capsys):
    inputs = tmp_path / "in.jsonl"
    inputs.write_text('"babies cry"\n{"input": "it rained", "direction": "effect"}\n'
                      '{"input": "the man fell", "constraints": ["ice"]}\n', encoding="utf-8")
    out = tmp_path / "out.jsonl"
    argv = ["generate", "--input-file", str(inputs), "--out", str(out), *FAST]
    assert cli.main(argv) == 0
    header, rows = read_results(out)
    assert header["command"] == "dpc generate" and header["run"]["the inputs"]["count"] == 3
    assert [row["direction"] for row in rows] == ["cause", "effect", "cause"]
    assert rows[2]["keywords"][0] == "ice"  # the line's own constraint
    # an interrupted run: the header, one complete line and a torn one; the re-run completes it
    full = out.read_text(encoding="utf-8").splitlines()
    out.write_text(full[0] + "\n" + full[1] + "\n" + full[2][:20], encoding="utf-8")
    assert cli.main(argv) == 0
    assert "already holds 1 of 3 results: resuming" in capsys.readouterr().err
    assert [without_timings(line) for line in out.read_text(encoding="utf-8").splitlines()[1:]] \
        == [without_timings(line) for line in full[1:]]
    # another run into the same file is refused, naming the option, and the file is kept
    before = out.read_bytes()
    assert cli.main([*argv, "--direction", "effect"]) == 2
    assert "--direction is 'effect' here and 'cause' in the file" in capsys.readouterr().err
    assert out.read_bytes() == before


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--input", "x", "--direction", "sideways"],
         "--direction 'sideways' is not one of cause, effect"),
        (["--input", "  "], "input 0 is empty"),
        ([], "no input: give --input TEXT or --input-file PATH"),
        (["--input", "x", "--model", "/nonexistent/model"], "is not a folder"),
        (["--input", "x", "--graph", "/nonexistent/g.ceg"], "graph file '/nonexistent/g.ceg' does not exist"),
        (["--input", "x", "--rerank", "bleu"], r"`rerank` \(='bleu'\) is not one of nll, pmi, mmr"),
        (["--input", "x", "--constraint-mode", "replace"], "needs at least one --constraint"),
        (["--input", "x", "--constraint", "a||b"], "has an empty alternative"),
        (["--input", "x", "--m", "6", "--num-beams", "3"], r"`m` \(=6\) must be at most `num_beams` \(=3\)"),
        (["--input-file", "/nonexistent/in.jsonl"], "--input-file '/nonexistent/in.jsonl' does not exist"),
    ],
)
def test_bad_input_exits_2_with_a_message(argv, message, capsys):
    assert cli.main(["generate", *argv]) == 2
    err = capsys.readouterr().err
    assert "dpc: error:" in err
    assert re.search(message, err), err


def test_corrupt_graph_and_bad_json_line(tmp_path, capsys):
    graph = tmp_path / "g.ceg"
    graph.write_bytes(b"\xff\x00 not a graph")
    assert cli.main(["generate", "--input", "x", "--graph", str(graph)]) == 2
    assert "is not a Cause Effect Graph file" in capsys.readouterr().err
    bad = tmp_path / "in.jsonl"
    bad.write_text('"ok"\n{not json\n', encoding="utf-8")
    assert cli.main(["generate", "--input-file", str(bad)]) == 2
    assert f"{bad} line 2 is not JSON" in capsys.readouterr().err


def test_out_file_of_other_inputs_is_refused(tmp_path, capsys):
    out = tmp_path / "out.jsonl"
    assert cli.main(["generate", "--input", "it rained", "--out", str(out), *FAST]) == 0
    before = out.read_bytes()
    assert cli.main(["generate", "--input", "babies cry", "--out", str(out), *FAST]) == 2
    assert "the inputs differ (other texts: 1 here, as many in the file)" in capsys.readouterr().err
    assert out.read_bytes() == before


def test_corrupt_model_weights_are_a_clear_error(tmp_path, capsys):
    import shutil

    from train.models import DEFAULT_MODEL_DIR

    folder = tmp_path / "model"
    shutil.copytree(DEFAULT_MODEL_DIR, folder)
    (folder / "model.safetensors").write_bytes(b"\x00" * 1000)
    assert cli.main(["generate", "--input", "babies cry", "--model", str(folder)]) == 2
    assert f"cannot load a model from '{folder}'" in capsys.readouterr().err


@pytest.mark.parametrize(("argv", "line"), [
    (["generate", "--n", "x"], "dpc generate: error: argument --n: invalid int value: 'x'"),
    (["graph", "build"], "dpc graph build: error: the following arguments are required: bank, "
                         "--out"),
    (["generate", "--search", "astar"], "dpc generate: error: argument --search: invalid choice: "
                                        "'astar' (choose from 'dba', 'neurologic')"),
])
def test_a_bad_option_is_one_line(argv, line, capsys):
    with pytest.raises(SystemExit) as stop:
        cli.main(argv)
    assert stop.value.code == 2
    assert capsys.readouterr().err.splitlines() == [line]


def test_a_missing_sub_command_shows_the_usage(capsys):
    with pytest.raises(SystemExit):
        cli.main(["graph"])
    err = capsys.readouterr().err
    assert err.startswith("usage: dpc graph") and "build" in err

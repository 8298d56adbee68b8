from __future__ import annotations

import json
from pathlib import Path

import cli
from dpc_files import read_results


def _generate(src: Path, out: Path, model: Path, *more: str) -> int:
    return cli.main(["commongen", "generate", str(src), "--out", str(out), "--model", str(model),
                     "--num-beams", "2", "--max-new-tokens", "10", "--device", "cpu", *more])


def test_generate_resumes_and_eval_scores(commongen_model: Path, split: dict[str, Path],
                                          tmp_path: Path, capsys) -> None:
    out = tmp_path / "dpc.jsonl"
    assert _generate(split["cs_str"], out, commongen_model, "--limit", "2") == 0
    _, rows = read_results(out)
    assert [r["concepts"] for r in rows] == [["dog", "frisbee", "catch"],
                                           ["field", "look", "stand"]]
    assert all(r["satisfied"] for r in rows)
    # other inputs are another run: refused, the file kept
    assert _generate(split["cs_str"], out, commongen_model, "--limit", "3") == 2
    assert "holds another run" in capsys.readouterr().err
    assert read_results(out)[1] == rows
    full = tmp_path / "full.jsonl"
    assert _generate(split["cs_str"], full, commongen_model) == 0
    first = read_results(full)[1]
    lines = full.read_text().splitlines()
    full.write_text("\n".join(lines[:-1]) + "\n")  # as if interrupted before the last set
    assert _generate(split["cs_str"], full, commongen_model) == 0
    assert read_results(full)[1] == first and len(first) == 3
    capsys.readouterr()
    assert cli.main(["commongen", "eval", str(full), "--refs", str(split["tgt"]),
                     "--sets", str(split["cs_str"]), "--json"]) == 0
    printed = capsys.readouterr().out.strip().splitlines()
    scores = json.loads(printed[0])
    assert scores["sets"] == 3 and scores["coverage"] == 1.0
    assert printed[-1].startswith("coverage 1.000 pos ")


def test_bad_input_is_one_line(commongen_model: Path, split: dict[str, Path], tmp_path: Path,
                               capsys) -> None:
    for argv, word in (
            (["generate", str(tmp_path / "none.txt"), "--out", str(tmp_path / "o.jsonl"),
              "--model", str(commongen_model)], "none.txt' does not exist"),
            (["generate", str(split["cs_str"]), "--out", str(tmp_path / "o.jsonl"),
              "--model", str(tmp_path / "nomodel")], "is not a folder"),
            (["generate", str(split["cs_str"]), "--out", str(tmp_path / "o.jsonl"),
              "--model", str(commongen_model), "--num-beams", "0"], "num_beams"),
            (["eval", str(tmp_path / "none.jsonl"), "--refs", str(split["tgt"]),
              "--sets", str(split["cs_str"])], "results file '" + str(tmp_path / "none.jsonl")
             + "' does not exist"),
            (["eval", str(split["tgt"]), "--refs", str(split["tgt"]),
              "--sets", str(split["cs_str"])], "not a results file")):
        assert cli.main(["commongen", *argv]) == 2, argv
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and word in err[0], (argv, err)


def test_the_bundled_generator_is_the_default(split: dict[str, Path], tmp_path: Path) -> None:
    # no --model: SmolLM2-135M + the bundled CommonGen adapter writes a sentence with each concept
    out = tmp_path / "bundled.jsonl"
    assert cli.main(["commongen", "generate", str(split["cs_str"]), "--out", str(out),
                     "--limit", "1", "--num-beams", "3", "--device", "cpu"]) == 0
    _, rows = read_results(out)
    assert rows[0]["concepts"] == ["dog", "frisbee", "catch"] and rows[0]["satisfied"]
    words = rows[0]["text"].lower().replace(".", " ").split()
    assert {"dog", "dogs"} & set(words) and {"frisbee", "frisbees"} & set(words)

"""``dpc swag``: bad input is one line and exit status 2; filter writes a loadable dataset; the
ending model trains and samples with ``--device cpu``."""

from __future__ import annotations

import json

from cli import main
from tasks.datasets import read_multiple_choice, read_swag_csv, write_swag_csv
from tests.tasks.swag.test_adversarial_filter import _pool


def test_malformed_json_line_names_file_and_line(tmp_path, capsys):
    bad = tmp_path / "ctx.jsonl"
    bad.write_text('{"ctx": "a man walks", "endings": ["a", "b"], "label": 0}\n{"ctx": oops\n')
    assert main(["swag", "oversample", str(bad), "--out", str(tmp_path / "p")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"{bad}:2" in err and err.startswith("dpc swag: error")


def test_train_endings_with_an_unknown_base_is_one_line(tmp_path, capsys):
    data = tmp_path / "ctx.jsonl"
    data.write_text('{"ctx": "a man walks to the car", "endings": ["he sits", "he runs"], '
                    '"label": 0}\n')
    assert main(["swag", "train-endings", str(data), "--out", str(tmp_path / "m"),
                 "--base", "gpt-17"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "'gpt-17'" in err
    assert not (tmp_path / "m").exists()  # nothing written for a refused run


def test_filter_of_a_missing_pool_is_one_line(tmp_path, capsys):
    assert main(["swag", "filter", str(tmp_path / "none"), "--out", str(tmp_path / "o.jsonl")]) == 2
    assert "pool.jsonl" in capsys.readouterr().err


def test_filter_writes_items_report_and_curve(tmp_path, capsys):
    folder = _pool(tmp_path / "pool", n=40, short=(5,))
    out = tmp_path / "af.jsonl"
    small = ["--k", "3", "--keep-restatements"]  # a pool of 15 endings, restatements unchecked
    status = main(["swag", "filter", str(folder), "--out", str(out), "--iterations", "2",
                   "--cheap-iterations", "1", "--device", "cpu", *small])  # the torch ones too
    captured = capsys.readouterr()
    assert status == 0, captured.err
    assert "fewer than k=3" in captured.err
    items = read_multiple_choice(out)
    assert len(items) == 40 and all(it.ind == i for i, it in enumerate(items))
    report = json.loads((folder / "report.json").read_text())
    assert [r["iteration"] for r in report["iterations"]] == [0, 1]
    assert set(report["final"]["accuracy"]) == {"mlp", "bow", "cnn", "lstm", "ensemble"}
    assert (folder / "af_curve.png").stat().st_size > 10_000
    assert main(["swag", "filter", str(folder), "--out", str(out), "--iterations", "2",
                 "--cheap-iterations", "1", *small]) == 2  # the output exists: no --overwrite
    capsys.readouterr()
    # --out *.csv: the same items as the official SWAG CSV, but for the short context (4 ending
    # columns in every row)
    csv_out = tmp_path / "af.csv"
    assert main(["swag", "filter", str(folder), "--out", str(csv_out), "--iterations", "2",
                 "--cheap-iterations", "1", "--device", "cpu", *small]) == 0
    captured = capsys.readouterr()
    assert "1 context(s) with fewer than 4 endings left out of the CSV" in captured.err
    assert csv_out.read_text().splitlines()[0] == (
        ",video-id,fold-ind,startphrase,sent1,sent2,gold-source,ending0,ending1,ending2,ending3,"
        "label,activity_label,source")
    rows = read_swag_csv(csv_out)
    assert [(r.ind, r.ctx, r.endings, r.label) for r in rows] == \
        [(it.ind, it.ctx, it.endings, it.label) for it in items if it.ind != 5]
    assert (rows[0].extra["sent1"], rows[0].extra["sent2"]) == ("a man stands in room 0 .", "he")


def test_train_endings_and_oversample_on_the_cpu(tmp_path, tiny_lm, capsys):
    from safetensors.torch import load_file

    from tasks.swag.ending_model import ADAPTER_FILE, train_ending_model
    from tasks.swag.oversample import read_pool

    data = tmp_path / "ctx.jsonl"
    rows = [{"ind": i, "ctx": f"the man walks to the car number {i} and he",
             "endings": ["throws a ball far .", "opens the door ."], "label": 1}
            for i in range(12)]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    model = tmp_path / "endings"
    assert main(["swag", "train-endings", str(data), "--out", str(model), "--base", str(tiny_lm),
                 "--device", "cpu"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["steps"] >= 1
    # --device cpu trains exactly as the Python API always did (no device, no autocast)
    items = read_multiple_choice(data)
    train_ending_model(items, tmp_path / "api", base=str(tiny_lm), progress=False)
    cli_adapter, api_adapter = (load_file(folder / ADAPTER_FILE)
                                for folder in (model, tmp_path / "api"))
    assert cli_adapter.keys() == api_adapter.keys()
    assert all(cli_adapter[k].equal(api_adapter[k]) for k in cli_adapter)

    pool = tmp_path / "pool"
    assert main(["swag", "oversample", str(data), "--out", str(pool), "--model", str(model),
                 "--limit", "2", "--per-context", "2", "--max-new-tokens", "4",
                 "--max-rounds", "1", "--device", "cpu"]) == 0
    assert json.loads(capsys.readouterr().out)["contexts_in_pool"] == 2
    assert [e.ind for e in read_pool(pool)] == [0, 1]
    # the same contexts as a SWAG CSV (read by its extension): the same pool
    write_swag_csv(items, tmp_path / "ctx.csv")
    assert main(["swag", "oversample", str(tmp_path / "ctx.csv"), "--out", str(tmp_path / "p2"),
                 "--model", str(model), "--limit", "2", "--per-context", "2",
                 "--max-new-tokens", "4", "--max-rounds", "1", "--device", "cpu"]) == 0
    capsys.readouterr()
    assert read_pool(tmp_path / "p2") == read_pool(pool)


def test_a_malformed_csv_of_contexts_names_file_and_line(tmp_path, capsys):
    bad = tmp_path / "ctx.csv"
    bad.write_text("sent1,sent2,ending0,ending1,label\nA man walks.,He,sits.,runs.,0\n"
                   "A man walks.,He,sits.,runs.,2\n")
    assert main(["swag", "oversample", str(bad), "--out", str(tmp_path / "p")]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"dpc swag: error: {bad}:3: `label` (='2') must be one of 0, 1"
    test_split = tmp_path / "test.csv"
    test_split.write_text("sent1,sent2,ending0,ending1\nA man walks.,He,sits.,runs.\n")
    assert main(["swag", "train-endings", str(test_split), "--out", str(tmp_path / "m")]) == 2
    assert f"{test_split}: no `label` column" in capsys.readouterr().err
    assert not (tmp_path / "m").exists()

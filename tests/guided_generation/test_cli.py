"""`dpc eval generation` end to end on a two-item COPA file (bundled model and graph)."""

from __future__ import annotations

import json
import re

import pytest

import cli
from causal_mining.pair import CausalPair
from causal_mining.shards import write_pairs

COPA = """<?xml version="1.0" encoding="UTF-8"?>
<copa-corpus version="1.0">
<item id="1" asks-for="cause" most-plausible-alternative="1">
<p>The baby cried.</p><a1>The baby was hungry.</a1><a2>The sun rose.</a2></item>
<item id="2" asks-for="effect" most-plausible-alternative="2">
<p>It rained all day.</p><a1>The sun was hot.</a1><a2>The streets were wet.</a2></item>
</copa-corpus>
"""


@pytest.fixture()
def copa(tmp_path):
    path = tmp_path / "copa.xml"
    path.write_text(COPA, encoding="utf-8")
    bank = tmp_path / "bank"
    write_pairs(bank / "causalbank-00000.tsv", [
        CausalPair("it rained all day", "the streets were wet", "so", "CPE", "CAUSE", "t:1", "s"),
        CausalPair("the baby was tired", "the baby cried", "because", "EPC", "EXPLANATION", "t:2", "s"),
    ])
    return path, bank


def test_eval_generation_prints_the_table_and_saves_it(copa, tmp_path, capsys):
    path, bank = copa
    out = tmp_path / "res"
    rc = cli.main(["eval", "generation", str(path), "--bank", str(bank), "--n", "3", "--m", "2",
                   "--k", "3", "--max-new-tokens", "8", "--out", str(out)])
    printed = capsys.readouterr().out
    assert rc == 0
    assert [line.split("|")[1].strip() for line in printed.splitlines()[2:10]] == \
        ["guided", "guided-pmi", "guided-mmr", "guided-verifier", "nbest", "sample", "knn", "gold"]
    saved = json.loads((out / "scores.json").read_text(encoding="utf-8"))
    assert saved["items"] == 2 and [m["method"] for m in saved["methods"]][0] == "guided"
    knn = next(m for m in saved["methods"] if m["method"] == "knn")
    assert knn["gold_hit"] == 1.0  # the bank holds both gold answers
    assert (out / "table.md").read_text(encoding="utf-8").strip() == printed.strip()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--methods", "guided,beam"], "method 'beam' is not one of"),
        (["--methods", "knn"], "method knn needs --bank"),
        (["--limit", "0", "--methods", "nbest"], r"--limit \(=0\) must be an integer >= 1"),
    ],
)
def test_eval_generation_bad_input(copa, extra, message, capsys):
    path, _ = copa
    assert cli.main(["eval", "generation", str(path), *extra]) == 2
    assert re.search(message, capsys.readouterr().err)

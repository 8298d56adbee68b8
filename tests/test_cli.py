"""The `dpc` command (in-process, through cli.main)."""

from __future__ import annotations

import json
import re

import pytest

import cli


def test_generate_table_meets_every_constraint(capsys):
    rc = cli.main(["generate", "--input", "babies cry", "--direction", "cause",
                   "--constraint", "hungry|hunger", "--constraint", "tired", "--num-return", "2",
                   "--max-new-tokens", "8"])
    out = capsys.readouterr().out
    assert rc == 0
    lines = [line for line in out.splitlines() if line.strip().startswith(("1.", "2."))]
    assert len(lines) == 2
    for line in lines:
        assert "tired" in line and ("hungry" in line or "hunger" in line)
        assert "NOT met" not in line


def test_generate_json_lines(capsys):
    rc = cli.main(["generate", "--input", "babies cry", "--input", "it rained",
                   "--direction", "effect", "--constraint", "wet|soaked", "--json",
                   "--num-return", "1", "--max-new-tokens", "6"])
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert rc == 0 and [r["input"] for r in rows] == ["babies cry", "it rained"]
    for r in rows:
        assert r["satisfied"] and r["direction"] == "effect"
        assert r["matches"][0]["alternative"] in ("wet", "soaked")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["generate", "--input", "x", "--direction", "sideways"],
         "--direction 'sideways' is not one of cause, effect"),
        (["generate", "--input", "  "], "input 0 is empty"),
        (["generate", "--input", "x", "--constraint", "a||b"], "has an empty alternative"),
        (["generate", "--input", "x", "--model", "/nonexistent/model"], "is not a folder"),
        (["generate", "--input", "x", "--num-beams", "2", "--num-return", "3"],
         r"`num_return_sequences` \(=3\) must be at most `num_beams` \(=2\)"),
    ],
)
def test_bad_input_exits_2_with_a_message(argv, message, capsys):
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert "dpc: error:" in err
    assert re.search(message, err), err

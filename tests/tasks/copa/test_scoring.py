"""COPA reader and accuracy."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpc_errors import DpcError
from tasks.copa import CopaItem, LengthScorer, accuracy, decide, make_scorer, read_copa

COPA_DEV = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "copa" / "copa-dev.xml"


@pytest.mark.skipif(not COPA_DEV.is_file(), reason="../shared/data/copa is not present")
def test_reads_the_official_dev_set():
    items = read_copa(COPA_DEV)
    assert len(items) == 500
    assert items[0].premise == "My body cast a shadow over the grass."
    assert items[0].asks_for == "cause" and items[0].answer == 1
    assert {it.asks_for for it in items} == {"cause", "effect"}
    assert 0.3 < accuracy(LengthScorer(), items) < 0.7


def test_bad_files(tmp_path):
    with pytest.raises(DpcError, match="does not exist"):
        read_copa(tmp_path / "missing.xml")
    bad = tmp_path / "bad.xml"
    bad.write_text("<copa-corpus><item id='3' asks-for='why'><p>x</p></item></copa-corpus>")
    with pytest.raises(DpcError, match="item 3 lacks"):
        read_copa(bad)
    with pytest.raises(DpcError, match="unknown COPA scorer 'nope'; choices: .*length"):
        make_scorer("nope")


@pytest.mark.parametrize("alternatives, expected", [
    (("one two three", "one"), (2, False)),        # the shorter alternative wins
    (("one", "one two three"), (1, False)),
    (("one two", "three four"), (1, True)),        # equal scores: a tie, the first is taken
])
def test_decide_reports_ties(alternatives, expected):
    item = CopaItem("1", "premise", "cause", alternatives[0], alternatives[1], 1)
    assert decide(LengthScorer(), item) == expected

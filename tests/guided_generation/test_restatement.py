"""Outputs that restate the input go to the end of the ranking, never out of it."""

from __future__ import annotations

import pytest

from guided_generation.pipeline import GuidedOutput
from guided_generation.restatement import content_words, demote_restatements, restates
from tests.guided_generation.conftest import paper_options


@pytest.mark.parametrize("output, text, expected", [
    ("my body cast a shadow on the grass", "My body cast a shadow over the grass.", True),
    ("The car broke down again.", "the car broke down", True),
    ("the battery of the car died", "the car broke down", False),  # 1 of 2 content words
    ("the sun was rising", "my body cast a shadow", False),
    ("the baby is crying", "babies cry", True),  # inflections count
    ("he fell down", "the man falls", False),  # "man" is not said
    ("the man had fallen", "the man fell", True),
    ("anything at all", "it was so", False),  # an input without content words
])
def test_restates(output, text, expected):
    assert restates(output, text) is expected


def test_content_words_drop_stop_words_and_case():
    assert content_words("The man WAS tired, and he slept.") == {"man", "tired", "slept"}


def out(text: str, nll: float) -> GuidedOutput:
    return GuidedOutput(text, None, "none", None, nll, -nll * 5)


def test_demotion_keeps_every_output_and_both_orders():
    ranked = [out("the car broke down", 1.0), out("the battery died", 1.5),
              out("the car broke down on the road", 1.6), out("it ran out of gas", 2.0)]
    demoted = demote_restatements(ranked, "The car broke down.")
    assert [o.text for o in demoted] == ["the battery died", "it ran out of gas",
                                         "the car broke down", "the car broke down on the road"]
    assert demote_restatements([], "x") == []


def test_the_pipeline_rerank_puts_restatements_last(generator):
    pool = [out("babies cry a lot", 0.5), out("they are hungry", 1.0), out("they are tired", 1.2)]
    for rerank in ("nll", "mmr"):
        top = generator.rerank(pool, "babies cry", "cause", paper_options(k=3, rerank=rerank))
        assert [o.text for o in top][-1] == "babies cry a lot", rerank

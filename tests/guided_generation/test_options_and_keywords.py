"""GuidedOptions validation and keyword rows (tables: one case per row)."""

from __future__ import annotations

import pytest

from guided_generation.errors import GuidedGenerationError
from guided_generation.keywords import keyword_rows, keyword_set
from guided_generation.options import GuidedOptions, check_direction


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"n": 0}, r"`n` \(=0\) must be an integer >= 1"),
        ({"m": 2.5}, r"`m` \(=2.5\) must be an integer"),
        ({"k": -1}, r"`k` \(=-1\)"),
        ({"m": 6, "num_beams": 5}, r"`m` \(=6\) must be at most `num_beams` \(=5\)"),
        ({"rank": "pagerank"}, r"`rank` \(='pagerank'\) is not one of weight, strength"),
        ({"rerank": "bleu"}, r"`rerank` \(='bleu'\) is not one of nll, pmi, mmr"),
        ({"constraint_mode": "and"}, r"`constraint_mode` \(='and'\) is not one of combine"),
        ({"mmr_lambda": 1.5}, r"`mmr_lambda` \(=1.5\) has to be a finite number in \[0, 1\]"),
        ({"batch_rows": 0}, r"`batch_rows` \(=0\)"),
        ({"max_new_tokens": 0}, r"`max_new_tokens` \(=0\)"),  # checked by the engine's options
    ],
)
def test_bad_options_name_the_value(values, message):
    with pytest.raises(Exception, match=message):
        GuidedOptions(**values)


def test_num_beams_defaults_to_m_and_beam_options_follow():
    o = GuidedOptions(m=3, max_new_tokens=7)
    assert o.num_beams == 4  # max(m, 4)
    assert GuidedOptions(m=6).num_beams == 6
    beam = o.beam_options(10)
    assert (beam.num_beams, beam.num_return_sequences, beam.max_new_tokens) == (10, 10, 7)


def test_direction_error_lists_the_choices():
    with pytest.raises(GuidedGenerationError, match="'sideways' is not one of cause, effect"):
        check_direction("sideways")


@pytest.mark.parametrize(
    ("graph", "user", "mode", "n", "expected"),
    [
        # combine: the user's rows first, the graph's fill up to n; a repeated word decoded once
        (["hungry", "tired", "pain"], ["rain"], "combine", 3, ["rain", "hungry", "tired"]),
        (["hungry", "rain"], ["rain"], "combine", 5, ["rain", "hungry"]),
        # the user's rows are never dropped, even beyond n
        (["hungry"], ["a", "b"], "combine", 1, ["a", "b"]),
        # replace: the user's rows only
        (["hungry", "tired"], ["rain", "snow"], "replace", 5, ["rain", "snow"]),
        # require: graph rows, each carrying every user set
        (["hungry", "tired", "pain"], ["night"], "require", 2, ["hungry", "tired"]),
        # require without graph keywords: one row of the user's sets
        ([], ["night", "cold"], "require", 2, ["night + cold"]),
        # all: one row with every user set
        (["hungry"], ["night", "cold"], "all", 5, ["night + cold"]),
        # nothing at all: no row (the pipeline falls back to unconstrained N-best)
        ([], [], "combine", 5, []),
    ],
)
def test_keyword_rows_by_mode(graph, user, mode, n, expected):
    assert [r.keyword for r in keyword_rows(graph, user, mode, n)] == expected


def test_require_rows_hold_graph_set_then_user_sets():
    row = keyword_rows(["hungry"], ["night", "cold|chilly"], "require", 1)[0]
    assert row.sets == [keyword_set("hungry"), keyword_set("night"), ["cold", "chilly"]]


@pytest.mark.parametrize("mode", ["replace", "all"])
def test_modes_without_user_keywords_are_errors(mode):
    with pytest.raises(GuidedGenerationError, match=f"constraint mode '{mode}' needs at least one"):
        keyword_rows(["hungry"], [], mode)


@pytest.mark.parametrize(
    ("word", "capitalized", "expected"),
    [
        ("rain", False, ["rain", "rained", "raining", "rains"]),
        ("hungry|hunger", True, ["hungry", "hunger", "Hungry", "Hunger"]),
        ("ice cream", True, ["ice cream", "Ice cream"]),
        ("qzxv", False, ["qzxv", "qzxvs", "qzxvved", "qzxvving"]),  # lemminflect OOV rules
    ],
)
def test_keyword_set(word, capitalized, expected):
    assert keyword_set(word, capitalized) == expected


@pytest.mark.parametrize("word", ["", "  ", "a||b", "|"])
def test_empty_keywords_are_errors(word):
    with pytest.raises(GuidedGenerationError, match="empty"):
        keyword_set(word)


@pytest.mark.parametrize(
    ("word", "pos", "expected"),
    [
        ("purse", ("NOUN",), ["purse", "purses"]),           # a noun: no "pursed", "pursing"
        ("purse", (), ["purse", "pursed", "purses", "pursing"]),  # no evidence: every form
        ("purse|bag", ("NOUN",), ["purse", "bag"]),          # alternatives: as written
        ("purse strings", ("NOUN",), ["purse strings"]),     # a phrase: as written
    ],
)
def test_keyword_set_of_some_parts_of_speech(word, pos, expected):
    assert keyword_set(word, pos=pos) == expected


@pytest.mark.parametrize("mode", ["combine", "require"])
def test_graph_keywords_keep_their_parts_of_speech(mode):
    def noun(word):
        return ("NOUN",)

    user = ["cry"] if mode == "require" else []
    row = keyword_rows(["purse"], user, mode, pos_of=noun)[0]
    assert row.source == "graph" and row.sets[0] == ["purse", "purses"]
    assert not {"pursed", "pursing"} & {f for s in row.sets for f in s}
    assert keyword_rows(["purse"], user, mode)[0].sets[0] == [
        "purse", "pursed", "purses", "pursing"]                 # without pos_of: every form


@pytest.mark.parametrize("mode", ["combine", "replace", "require", "all"])
def test_user_keywords_keep_every_form(mode):
    def noun(word):
        return ("NOUN",)

    rows = keyword_rows(["rain"], ["purse"], mode, pos_of=noun)
    user_sets = [s for r in rows for s in r.sets if "purse" in s]
    assert user_sets and all(s == ["purse", "pursed", "purses", "pursing"] for s in user_sets)
    graph_sets = [s for r in rows for s in r.sets if "rain" in s]
    assert all(s == ["rain", "rains"] for s in graph_sets)   # the graph's: nouns only

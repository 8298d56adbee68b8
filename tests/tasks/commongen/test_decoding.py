from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from dpc_errors import DpcError
from tasks.commongen.dataset import parse_concept_set
from tasks.commongen.decoding import (
    DecodeSettings,
    SentenceGenerator,
    concept_forms,
    constraint_sets,
)


def test_forms_follow_the_tagged_part_of_speech() -> None:
    walk_noun, walk_verb, walk = (parse_concept_set(s)[0] for s in ("walk_N", "walk_V", "walk"))
    assert concept_forms(walk_noun, "dpc") == ["walk", "walks"]
    assert concept_forms(walk_verb, "dpc") == ["walk", "walked", "walking", "walks"]
    assert concept_forms(walk, "dpc") == ["walk", "walked", "walking", "walks"]
    # a noun concept gets no verb form: "purse" is never forced in as "pursed"
    assert "pursed" not in concept_forms(parse_concept_set("purse_N")[0], "dpc")
    assert concept_forms(walk_verb, "conjunctive") == ["walk"]
    assert constraint_sets(parse_concept_set("dog_N#run_V"), "conjunctive") == [["dog"], ["run"]]


def test_bad_settings_name_the_value() -> None:
    with pytest.raises(DpcError, match="'greedy'"):
        DecodeSettings(mode="greedy")
    with pytest.raises(DpcError, match="num_beams"):
        DecodeSettings(num_beams=0)


def test_every_mode_decodes_and_dpc_meets_every_concept(commongen_model: Path) -> None:
    generator = SentenceGenerator.load(commongen_model)
    sets = [parse_concept_set("dog_N#frisbee_N#catch_V"), parse_concept_set("ski_V#mountain_N")]
    plain = generator.generate(sets, DecodeSettings(mode="plain", num_beams=2, max_new_tokens=12))
    assert [s.satisfied for s in plain] == [None, None]
    for mode in ("conjunctive", "dpc"):
        out = generator.generate(sets, DecodeSettings(mode=mode, num_beams=2, max_new_tokens=12))
        assert all(s.satisfied for s in out), (mode, out)
        for sentence, concepts in zip(out, sets, strict=True):
            words = sentence.text.lower().replace(".", " ").split()
            assert "\n" not in sentence.text
            for concept in concepts:  # whole words, one form of each concept
                assert set(words) & set(concept_forms(concept, mode)), (mode, sentence, concept)
    assert generator.generate([], DecodeSettings()) == []


def test_candidates_keep_the_first_beam_that_uses_every_concept_in_its_part_of_speech(
        commongen_model: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tasks.commongen.decoding as decoding

    generator = SentenceGenerator.load(commongen_model)
    sets = [parse_concept_set("dog_N#frisbee_N#catch_V")]
    settings = DecodeSettings(mode="dpc", num_beams=3, max_new_tokens=12,  # all 3 beams read
                              plain_first=False)
    seen: list[str] = []  # every text tagged, in order

    def second_fits(doc, concepts):
        seen.append(doc.text)
        return len(seen) == 2

    monkeypatch.setattr(decoding, "_uses_all", second_fits)
    top = generator.generate(sets, DecodeSettings(mode="dpc", num_beams=3, max_new_tokens=12,
                                                  candidates=1, plain_first=False))
    assert seen == []  # one beam read: nothing to choose, nothing tagged
    kept = generator.generate(sets, settings)
    assert len(seen) == 3 and seen[0] == top[0].text
    assert seen[1] != seen[0]  # else keeping the second would prove nothing
    assert kept[0].text == seen[1]
    monkeypatch.setattr(decoding, "_uses_all", lambda doc, concepts: False)
    assert generator.generate(sets, settings)[0].text == top[0].text  # none fits: the top beam


def test_candidates_are_checked_against_the_beams() -> None:
    with pytest.raises(DpcError, match="candidates"):
        DecodeSettings(num_beams=2, candidates=3)
    with pytest.raises(DpcError, match="no_repeat_ngram_size"):
        DecodeSettings(no_repeat_ngram_size=-1)


def test_score_slots_and_early_stopping_reach_the_engine(
        commongen_model: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tasks.commongen.decoding as decoding

    assert DecodeSettings().slots == 5 and DecodeSettings(num_beams=3).slots == 3
    assert DecodeSettings(num_beams=4, score_slots=1).slots == 1
    with pytest.raises(DpcError, match="score_slots"):
        DecodeSettings(num_beams=4, score_slots=5)
    with pytest.raises(DpcError, match="early_stopping 'yes'"):
        DecodeSettings(early_stopping="yes")  # type: ignore[arg-type]
    generator = SentenceGenerator.load(commongen_model)
    calls: list[dict] = []
    engine = decoding.dpc_generate

    def spy(*args, **kwargs):
        calls.append(kwargs)
        return engine(*args, **kwargs)

    monkeypatch.setattr(decoding, "dpc_generate", spy)
    sets = [parse_concept_set("dog_N#frisbee_N#catch_V")]
    out = generator.generate(sets, DecodeSettings(num_beams=3, score_slots=1,
                                                  early_stopping=False, max_new_tokens=12))
    assert out[0].satisfied
    assert (calls[-1]["score_slots"], calls[-1]["early_stopping"]) == (1, False)
    generator.generate(sets, DecodeSettings(num_beams=3, max_new_tokens=12))
    assert (calls[-1]["score_slots"], calls[-1]["early_stopping"]) == (3, True)
    # the defaults the first half of dev chose (benchmarks/commongen/RESULTS.md, round 4)
    assert (calls[-1]["search"], calls[-1]["length_penalty"], calls[-1]["lookahead"]) == \
        ("neurologic", 0.75, 0)
    generator.generate(sets, DecodeSettings(num_beams=3, max_new_tokens=12, search="dba",
                                            length_penalty=1.0))
    assert (calls[-1]["search"], calls[-1]["length_penalty"]) == ("dba", 1.0)
    with pytest.raises(DpcError, match="lookahead 2 needs search 'neurologic'"):
        DecodeSettings(search="dba", lookahead=2)
    with pytest.raises(DpcError, match="search"):
        DecodeSettings(search="astar")


def test_plain_first_constrains_only_the_sets_whose_plain_beams_miss_a_concept(
        commongen_model: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tasks.commongen.decoding as decoding

    generator = SentenceGenerator.load(commongen_model)
    sets = [parse_concept_set("dog_N#frisbee_N#catch_V"), parse_concept_set("ski_V#mountain_N"),
            parse_concept_set("field_N#look_V#stand_V")]
    settings = DecodeSettings(mode="dpc", num_beams=2, max_new_tokens=12, plain_first=True)
    plain = generator.generate(sets, replace(settings, mode="plain"))
    constrained = generator._decode([sets[0], sets[2]], replace(settings, plain_first=False))
    plain_beams = generator._decode(sets[1:2], replace(settings, mode="plain"))[0]
    calls: list[list[list[str]] | None] = []
    engine = decoding.dpc_generate

    def spy(model, tokenizer, prompts, constraints, **kwargs):
        calls.append(constraints)
        return engine(model, tokenizer, prompts, constraints, **kwargs)

    # the verifier passes the second set's plain beams only (its last beam), no other beam
    def second_set_fits(doc, concepts):
        return concepts == sets[1] and calls[-1] is None and doc.text == plain_beams[-1].text

    assert plain_beams[0].text != plain_beams[-1].text  # else the last beam is not the one kept
    monkeypatch.setattr(decoding, "dpc_generate", spy)
    monkeypatch.setattr(decoding, "_uses_all", second_set_fits)
    out = generator.generate(sets, settings)
    assert calls[0] is None and calls[1] == [constraint_sets(sets[0], "dpc"),
                                             constraint_sets(sets[2], "dpc")]
    assert out[1].unconstrained and out[1].satisfied is True
    assert out[1].text == plain_beams[-1].text
    # the others are constrained, their top beams kept (the verifier passes none of them)
    assert [o.text for o in (out[0], out[2])] == [beams[0].text for beams in constrained]
    assert not out[0].unconstrained and out[0].satisfied
    assert plain[0].unconstrained and plain[0].satisfied is None
    # every set kept from the plain decode: no constrained decode at all
    calls.clear()
    monkeypatch.setattr(decoding, "_uses_all", lambda doc, concepts: True)
    assert all(s.unconstrained for s in generator.generate(sets, settings)) and calls == [None]
    with pytest.raises(DpcError, match="plain_first 1"):
        DecodeSettings(plain_first=1)  # type: ignore[arg-type]

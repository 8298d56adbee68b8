"""Pronoun agreement: which pronouns an input bans, and that the decode receives and obeys them."""

from __future__ import annotations

import pytest

from guided_generation import pipeline
from guided_generation.agreement import gender_of, pronoun_bans
from tests.guided_generation.conftest import paper_options


@pytest.mark.parametrize("text, gender", [
    ("She missed the bus.", "female"), ("the woman repaired her faucet", "female"),
    ("the man was lost", "male"), ("The boy turned the lid", "male"),
    ("the baby pulled the mother's hair", "female"),
    ("the woman gave her husband a gift", None), ("babies cry", None), ("I missed the bus", None),
    ("the shepherd's hem", None),  # words that only contain "he", "her", "men": not gendered
    ("I miss the bus", None),  # "miss" the verb, not the title
])
def test_gender_of_reads_whole_words(text, gender):
    assert gender_of(text) == gender


def test_bans_are_the_other_genders_pronouns():
    assert pronoun_bans("she cried") == ("he", "him", "his", "himself")
    assert pronoun_bans("his car broke down") == ("she", "her", "hers", "herself")
    assert pronoun_bans("it rained") == ()


def spy_on_generate(monkeypatch):
    calls = []
    real = pipeline.generate

    def spy(*args, **kwargs):
        calls.append(kwargs.get("banned"))
        return real(*args, **kwargs)

    monkeypatch.setattr(pipeline, "generate", spy)
    return calls


def test_the_decode_bans_the_word_initial_forms_and_no_output_holds_them(generator, monkeypatch):
    calls = spy_on_generate(monkeypatch)
    result = generator.generate("she cried", "cause", paper_options(n=2, m=2, k=4,
                                                                    max_new_tokens=8))
    expected = generator._word_ids(["he", "him", "his", "himself"])
    assert calls and all(banned is not None and set(map(tuple, banned)) >= set(expected)
                         for banned in calls)
    assert any("pronoun agreement" in note for note in result.notes)
    banned_ids = {ids for ids in expected if len(ids) == 1}
    for out in result.outputs:
        assert not banned_ids & {(t,) for t in out.token_ids}, out.text


def test_word_ids_are_word_initial_only(generator):
    tok = generator.tokenizer
    for ids in generator._word_ids(["he"]):
        assert tok.convert_ids_to_tokens(list(ids))[0].lower() == "he"  # not "##he"


def test_agreement_off_or_no_gender_bans_nothing(generator, monkeypatch):
    calls = spy_on_generate(monkeypatch)
    generator.generate("she cried", "cause", paper_options(n=2, m=2, k=4, max_new_tokens=8,
                                                           pronoun_agreement=False))
    generator.generate("babies cry", "cause", paper_options(n=2, m=2, k=4, max_new_tokens=8))
    assert calls and all(banned is None for banned in calls)


def test_user_banned_phrases_stay_beside_the_pronouns(generator, monkeypatch):
    calls = spy_on_generate(monkeypatch)
    generator.generate("she cried", "cause", paper_options(n=2, m=2, k=4, max_new_tokens=8),
                       banned=["rain"])
    assert calls and all(banned[0] == "rain" and len(banned) > 1 for banned in calls)

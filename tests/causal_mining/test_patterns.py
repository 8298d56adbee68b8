"""Pattern-by-pattern extraction: every pattern of the inventory, with its variants."""

from __future__ import annotations

import pytest

from causal_mining.extract import ExtractOptions, Extractor
from causal_mining.patterns import PATTERNS, PATTERNS_BY_NAME, Category, PatternClass, prescan

# (sentence, pattern, cause, effect): one or more rows per pattern; variants included.
CASES: list[tuple[str, str, str, str]] = [
    # ---- EPC
    ("Many people died as a consequence of the flood.", "as a consequence of",
     "the flood", "Many people died"),
    ("The crops failed in consequence of the long drought.", "as a consequence of",
     "the long drought", "The crops failed"),
    ("He lost his job as a result of the merger.", "as a result of", "the merger",
     "He lost his job"),
    ("As a result of the storm, the roads were closed.", "as a result of", "the storm",
     "the roads were closed"),
    ("You may use the room as long as you keep quiet.", "as long as", "you keep quiet",
     "You may use the room"),
    ("He went home early, as he had no money left.", "as", "he had no money left",
     "He went home early"),
    ("As it was very late, we went to bed.", "as", "it was very late", "we went to bed"),
    ("I am sad because I lost my phone.", "because", "I lost my phone", "I am sad"),
    ("Because he was tired, he went to bed early.", "because", "he was tired",
     "he went to bed early"),
    ("The game was cancelled because of the heavy rain.", "because of", "the heavy rain",
     "The game was cancelled"),
    ("The fire was caused by a stray spark.", "caused by", "a stray spark", "The fire"),
    ("The delay was due to a broken signal.", "due to", "a broken signal", "The delay"),
    ("The ship was late owing to the fog.", "owing to", "the fog", "The ship was late"),
    ("The council raised taxes in response to the deficit.", "in response to", "the deficit",
     "The council raised taxes"),
    ("She stayed indoors on account of her cold.", "on account of", "her cold",
     "She stayed indoors"),
    ("Most of the damage resulted from the explosion.", "result from", "the explosion",
     "Most of the damage"),
    ("Lung cancer often results from heavy smoking.", "result from", "heavy smoking",
     "Lung cancer"),
    # ---- CPE
    ("The bank failed, and accordingly the shares fell.", "accordingly", "The bank failed",
     "the shares fell"),
    ("The bridge was weak; consequently it collapsed.", "consequently", "The bridge was weak",
     "it collapsed"),
    ("The new law brought about great changes.", "bring about", "The new law",
     "great changes"),
    ("Cold weather brings on his cough.", "bring on", "Cold weather", "his cough"),
    ("He was ill, and for this reason he stayed home.", "and for this reason", "He was ill",
     "he stayed home"),
    ("The discovery gave rise to a new industry.", "give rise to", "The discovery",
     "a new industry"),
    ("Intense heat induces the chemical reaction.", "induce", "Intense heat",
     "the chemical reaction"),
    ("She saved money in order to buy a house.", "in order to", "She saved money",
     "buy a house"),
    ("The drought led to a terrible famine.", "lead to", "The drought", "a terrible famine"),
    ("Poor diet leads to many illnesses.", "lead to", "Poor diet", "many illnesses"),
    ("The earthquake resulted in many deaths.", "result in", "The earthquake", "many deaths"),
    ("The rain prevented us from going out.", "prevent from", "The rain",
     "us from going out"),
    ("The guard stopped the thief from escaping.", "prevent from", "The guard",
     "the thief from escaping"),
    ("The storm caused severe damage.", "cause", "The storm", "severe damage"),
    ("Heavy smoking causes many diseases.", "cause", "Heavy smoking", "many diseases"),
    ("The money was kept for the purpose of buying books.", "for the purpose of",
     "The money was kept", "buying books"),
    ("If you heat the ice, then it melts.", "if then", "you heat the ice", "it melts"),
    ("It rained all day, so we stayed in.", ", so", "It rained all day", "we stayed in"),
    ("She spoke loudly so that everyone could hear.", "so that", "She spoke loudly",
     "everyone could hear"),
    ("He sold the farm, thereby ending the dispute.", "thereby", "He sold the farm",
     "ending the dispute"),
    ("He was tired, and therefore he slept.", "therefore", "He was tired", "he slept"),
    ("The price fell, and thus the demand grew.", "thus", "The price fell",
     "the demand grew"),
    ("The wire was cut; hence the lights went out.", "hence", "The wire was cut",
     "the lights went out"),
]


@pytest.fixture(scope="module")
def extractor() -> Extractor:
    return Extractor(ExtractOptions())


@pytest.mark.parametrize(("sentence", "pattern", "cause", "effect"), CASES)
def test_extracts_pattern(
    extractor: Extractor, sentence: str, pattern: str, cause: str, effect: str
) -> None:
    pairs = extractor.extract([("test", sentence)])
    assert [(p.pattern, p.cause, p.effect) for p in pairs] == [(pattern, cause, effect)]
    assert pairs[0].cls == PATTERNS_BY_NAME[pattern].cls.value
    assert pairs[0].category == PATTERNS_BY_NAME[pattern].category.value


def test_every_pattern_has_a_case() -> None:
    assert {p.name for p in PATTERNS} == {case[1] for case in CASES}


def test_inventory_matches_the_paper() -> None:
    epc = {p.name for p in PATTERNS if p.cls is PatternClass.EPC}
    cpe = {p.name for p in PATTERNS if p.cls is PatternClass.CPE}
    assert epc == {"as", "as a consequence of", "as a result of", "as long as", "because",
                   "because of", "caused by", "due to", "owing to", "in response to",
                   "on account of", "result from"}
    assert cpe == {"accordingly", "consequently", "bring about", "bring on", "give rise to",
                   "induce", "in order to", "lead to", "result in", "prevent from",
                   "and for this reason", "cause", "for the purpose of", "if then", ", so",
                   "so that", "thereby", "therefore", "thus", "hence"}
    assert {p.category for p in PATTERNS} == set(Category)


@pytest.mark.parametrize(
    ("pattern", "variants"),
    [
        ("cause", ["cause", "causes", "caused", "causing"]),
        ("lead to", ["lead to", "leads to", "led to", "leading to"]),
        ("result in", ["result in", "results in", "resulted in", "resulting in"]),
        ("give rise to", ["give rise to", "gives rise to", "gave rise to", "giving rise to"]),
        ("bring about", ["bring about", "brings about", "brought about", "bringing about"]),
    ],
)
def test_morphological_variants_match(pattern: str, variants: list[str]) -> None:
    regex = PATTERNS_BY_NAME[pattern].compiled()
    for variant in variants:
        match = regex.search(f"Something {variant} something else.")
        assert match is not None and match.group("pat") == variant, variant


@pytest.mark.parametrize("sentence", [case[0] for case in CASES])
def test_prescan_is_a_superset(sentence: str) -> None:
    assert prescan(sentence)


def test_one_pair_per_sentence_first_surviving_match(extractor: Extractor) -> None:
    # the first match ("not because") is negated, the second one is kept
    pairs = extractor.extract([("t", "He left, not because of the rain; the fire went out, "
                                     "so we all went home early.")])
    assert [(p.pattern, p.cause, p.effect) for p in pairs] == [
        (", so", "the fire went out", "we all went home early")]
    assert extractor.drops["negated"] >= 1

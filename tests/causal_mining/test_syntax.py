"""The dependency-parse check of lexical pairs (causal_mining.syntax) and its use in extraction."""

from __future__ import annotations

import pytest

from causal_mining.errors import MiningConfigError
from causal_mining.extract import ExtractOptions, Extractor
from causal_mining.filters import DropReason
from causal_mining.patterns import find_matches
from causal_mining.syntax import anchors, check_syntax, dangling_end
from causal_mining.tagging import SentenceTags, Tagger
from tests.causal_mining.conftest import outcome


@pytest.fixture(scope="module")
def parsing() -> Extractor:
    return Extractor(ExtractOptions())


@pytest.fixture(scope="module")
def lexical() -> Extractor:
    return Extractor(ExtractOptions(use_parse=False))


# "I am sad because I lost my phone." parsed by hand: because -> lost (mark), lost -> am (advcl)
_SAD = "I am sad because I lost my phone."
_SAD_TAGS = SentenceTags(
    [(0, "PRP"), (2, "VBP"), (5, "JJ"), (9, "IN"), (17, "PRP"), (19, "VBD"), (24, "PRP$"),
     (27, "NN"), (32, ".")],
    heads=[1, 1, 1, 5, 5, 1, 7, 5, 1],
    deps=["nsubj", "ROOT", "acomp", "mark", "nsubj", "advcl", "poss", "dobj", "punct"],
)


def test_marker_anchors_by_hand() -> None:
    host, complement, scope = anchors(_SAD_TAGS, [3])
    assert host == {1} and complement == {5}  # "am" ... "lost"
    assert scope == {3, 4, 5, 6, 7}


def test_check_syntax_by_hand() -> None:
    match = find_matches(_SAD)[0]
    assert check_syntax(_SAD, match, (17, 32), (0, 8), _SAD_TAGS) == 32
    assert check_syntax(_SAD, match, (17, 32), (5, 8), _SAD_TAGS) is DropReason.SYNTAX  # no "am"
    assert check_syntax(_SAD, match, (24, 32), (0, 8), _SAD_TAGS) is DropReason.SYNTAX  # no "lost"


def test_check_syntax_needs_a_parse() -> None:
    unparsed = SentenceTags([(0, "PRP"), (2, "VBP")])
    with pytest.raises(ValueError, match="parsed"):
        check_syntax(_SAD, find_matches(_SAD)[0], (17, 32), (0, 8), unparsed)


def test_sentence_tags_reject_mismatched_parse() -> None:
    with pytest.raises(MiningConfigError, match="one entry per token"):
        SentenceTags([(0, "PRP"), (2, "VBP")], heads=[1], deps=["nsubj", "ROOT"])
    with pytest.raises(MiningConfigError, match="or neither"):
        SentenceTags([(0, "PRP")], heads=[0])


def test_dangling_end_by_hand() -> None:
    # "The sentence is imprisonment for": "for" (prep) has no object inside the span
    tags = SentenceTags(
        [(0, "DT"), (4, "NN"), (13, "VBZ"), (16, "NN"), (29, "IN"), (33, "NN")],
        heads=[1, 2, 2, 2, 3, 4],
        deps=["det", "nsubj", "ROOT", "attr", "prep", "pobj"],
    )
    assert dangling_end(tags, (0, 32))
    assert not dangling_end(tags, (0, 40))
    assert not dangling_end(tags, (0, 28))


def test_extractor_needs_a_parsing_tagger() -> None:
    with pytest.raises(MiningConfigError, match="parse=True"):
        Extractor(ExtractOptions(), Tagger())
    Extractor(ExtractOptions(use_parse=False), Tagger())  # fine without the parse
    Extractor(ExtractOptions(use_tags=False), Tagger())  # no spaCy at all


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("She had no family name, as she had no family.",
         ("as", "she had no family", "She had no family name")),
        ("It was very late, as it was entirely dark before he reached the inn.",
         ("as", "it was entirely dark before he reached the inn", "It was very late")),
    ],
)
def test_causal_as_kept(parsing: Extractor, sentence: str, expected: object) -> None:
    assert outcome(parsing, sentence) == expected


def test_asserted_infinitive_kept(parsing: Extractor) -> None:
    assert outcome(parsing, "The heavy rain began to cause serious floods in the valley.")[0] == (
        "cause"
    )


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        # plain pairs of every family survive the check unchanged
        ("I am sad because I lost my phone.", ("because", "I lost my phone", "I am sad")),
        ("Because he was tired, he went to bed early.",
         ("because", "he was tired", "he went to bed early")),
        ("He stayed at home because of the heavy rain.",
         ("because of", "the heavy rain", "He stayed at home")),
        ("The long delay was due to the storm.", ("due to", "the storm", "The long delay")),
        ("He worked day and night in order to feed his family.",
         ("in order to", "He worked day and night", "feed his family")),
        ("She spoke slowly so that the children could follow her.",
         ("so that", "She spoke slowly", "the children could follow her")),
        ("The great war led to a terrible famine.",
         ("lead to", "The great war", "a terrible famine")),
        ("The fire in the barn was caused by a stray spark.",
         ("caused by", "a stray spark", "The fire in the barn")),
        ("The heavy rain prevented us from going out.",
         ("prevent from", "The heavy rain", "us from going out")),
        ("It rained all day, so we stayed in the house.",
         (", so", "It rained all day", "we stayed in the house")),
        ("If you heat the ice, then it melts into water.",
         ("if then", "you heat the ice", "it melts into water")),
        ("The principal was strict, and thus gained the respect of his students.",
         ("thus", "The principal was strict", "gained the respect of his students")),
    ],
)
def test_kept(parsing: Extractor, sentence: str, expected: object) -> None:
    assert outcome(parsing, sentence) == expected


def test_run_on_complement_cut_at_a_coordination(parsing: Extractor, lexical: Extractor) -> None:
    sentence = "We stayed at home because it was raining hard, and the children played cards."
    assert outcome(lexical, sentence) == (
        "because", "it was raining hard, and the children played cards", "We stayed at home"
    )
    assert outcome(parsing, sentence) == ("because", "it was raining hard", "We stayed at home")


@pytest.mark.parametrize(
    ("sentence", "reason"),
    [
        # a fragment: the preposition's object is outside the span
        ("The sentence is imprisonment for as long as the judge chooses.",
         DropReason.DANGLING.value),
        # not asserted: inside a "whether" clause, under a hedging modal, intended
        ("The question whether the disease gives rise to the crime is still open.",
         DropReason.HYPOTHETICAL.value),
        ("He felt an icy chill similar to the sensation that might be caused by a wet towel.",
         DropReason.HYPOTHETICAL.value),
        ("The Doctor determined at any price to prevent Hatteras from attempting to proceed.",
         DropReason.HYPOTHETICAL.value),
        ("He went to her villa, ostensibly for the purpose of calming and comforting her.",
         DropReason.HYPOTHETICAL.value),
        # comparative "as": an elided predicate, a repeated predicate, no clause at all
        ("He was struck again by the man's Napoleonic chin and jaw, as he had been when they "
         "first talked of the legend.", DropReason.SENSE.value),
        ("But this is not often revealed to all, as it was revealed to Babette in her dream.",
         DropReason.SENSE.value),
        ("He speaks from long experience, as one on whom you have sat so often.",
         DropReason.SENSE.value),
        # a complement cut at a parenthesis inside its clause misses its verb
        ("The news shocked her the more because the only other person who knew of her folly "
         "(himself excepted) was now silenced forever.", DropReason.SYNTAX.value),
    ],
)
def test_dropped(parsing: Extractor, lexical: Extractor, sentence: str, reason: str) -> None:
    assert isinstance(outcome(lexical, sentence), tuple)  # the lexical stage alone keeps it
    assert outcome(parsing, sentence) == reason

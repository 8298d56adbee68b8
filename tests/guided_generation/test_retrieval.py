"""KNN retrieval: sides per direction, the require-all rule, dedupe, order, bad input, and the
index checked against scikit-learn's TfidfVectorizer (the oracle)."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from sklearn.feature_extraction.text import TfidfVectorizer

from causal_mining.pair import CausalPair
from causal_mining.shards import ShardWriter, write_pairs
from dpc_errors import DpcError
from guided_generation.retrieval import KnnRetriever, Retrieved, _SideIndex

PAIRS = [
    ("the baby was hungry", "the baby cried"),  # 0
    ("a storm came", "it rained"),  # 1
    ("it rained all day", "the streets were wet"),  # 2
    ("the dogs were hungry", "dogs bark"),  # 3
    ("a stranger came", "the hungry dogs bark at night in the yard"),  # 4
    ("THE BABY  was hungry", "the baby cried at night"),  # 5: cause of 0 up to case/space
    ("the baby was tired", "the baby cried"),  # 6: same effect as 0, other cause
]


@pytest.fixture(scope="module")
def bank() -> KnnRetriever:
    return KnnRetriever.from_pairs(PAIRS)


def texts(results: list[Retrieved]) -> list[str]:
    return [r.text for r in results]


@pytest.mark.parametrize(
    ("sentence", "direction", "text", "matched", "index"),
    [
        # causes of the input: the effect side is searched, the cause returned
        ("it rained", "cause", "a storm came", "it rained", 1),
        # effects of the input: the cause side is searched, the effect returned
        ("it rained", "effect", "the streets were wet", "it rained all day", 2),
        ("a storm came", "effect", "it rained", "a storm came", 1),
    ],
)
def test_direction_picks_the_side(bank: KnnRetriever, sentence: str, direction: str, text: str,
                                  matched: str, index: int) -> None:
    best = bank.retrieve(sentence, direction, 1)
    assert len(best) == 1
    assert (best[0].text, best[0].matched, best[0].index) == (text, matched, index)


def test_exact_match_scores_one(bank: KnnRetriever) -> None:
    assert bank.retrieve("It  RAINED", "cause", 1)[0].score == pytest.approx(1.0, abs=1e-6)


def test_require_all_keeps_pairs_with_every_content_word(bank: KnnRetriever) -> None:
    # "dogs bark" (pair 3) is nearer by cosine but lacks "hungry"; pair 4 holds all three words
    plain = bank.retrieve("hungry dogs bark", "cause", 5, require_all=False)
    assert [r.index for r in plain] == [3, 4]
    assert plain[0].score > plain[1].score
    assert [r.index for r in bank.retrieve("hungry dogs bark", "cause", 5)] == [4]


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        # "the" and "at" are stop words: only dogs, bark must be present, so both pairs qualify
        ("the dogs bark at", [3, 4]),
        # "zebras" is unknown to the index, so it does not count as a content word
        ("zebras hungry dogs", [4]),
        # no effect holds both "rained" and "dogs": plain cosine ranking over every candidate
        ("rained dogs", [1, 3, 4]),
        # only stop words: no restriction (shortest effects first; 5 repeats 0's cause)
        ("the", [0, 6, 4, 2]),
    ],
)
def test_require_all_content_words_and_fallback(bank: KnnRetriever, sentence: str,
                                               expected: list[int]) -> None:
    assert [r.index for r in bank.retrieve(sentence, "cause", 10)] == expected


@pytest.mark.parametrize("sentence", ["rained dogs", "the", "wet night"])
def test_fallback_is_the_plain_ranking(bank: KnnRetriever, sentence: str) -> None:
    plain = bank.retrieve(sentence, "cause", 10, require_all=False)
    assert plain  # something matches a term
    assert bank.retrieve(sentence, "cause", 10) == plain


def test_whole_tokens_only(bank: KnnRetriever) -> None:
    # "rain" is not "rained": nothing is known, nothing comes back
    assert bank.retrieve("rain", "cause", 3) == []


def test_dedupe_case_and_space_insensitive(bank: KnnRetriever) -> None:
    # effects holding baby + cried: pairs 0, 6 (exact) and 5; pair 5's cause repeats pair 0's
    results = bank.retrieve("the baby cried", "cause", 10)
    assert [r.index for r in results] == [0, 6]
    assert texts(results) == ["the baby was hungry", "the baby was tired"]


def test_dedupe_on_the_returned_side_only(bank: KnnRetriever) -> None:
    # pairs 0 and 6 share their effect text: as effects, the second is a duplicate
    results = bank.retrieve("the baby was", "effect", 10)
    assert texts(results) == ["the baby cried", "the baby cried at night"]
    assert [r.index for r in results] == [0, 5]


def test_ties_break_by_bank_order_and_k_counts_distinct_texts(bank: KnnRetriever) -> None:
    # pairs 0 and 6 have the same effect, so the same score; the earlier pair comes first
    first = bank.retrieve("the baby cried", "cause", 1)
    assert [r.index for r in first] == [0]
    two = bank.retrieve("the baby cried", "cause", 2)
    assert two[0].score == two[1].score
    assert [r.index for r in two] == [0, 6]


def test_scores_are_non_increasing(bank: KnnRetriever) -> None:
    results = bank.retrieve("the baby was hungry at night", "effect", 10, require_all=False)
    scores = [r.score for r in results]
    assert len(scores) >= 3
    assert scores == sorted(scores, reverse=True)
    assert all(0 < s <= 1 + 1e-6 for s in scores)


@pytest.mark.parametrize("sentence", ["", "   ", "a I !", "zebras quack", "über"])
def test_nothing_to_match_gives_empty_list(bank: KnnRetriever, sentence: str) -> None:
    assert bank.retrieve(sentence, "cause", 3) == []


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (("it rained", "sideways", 3),
         r"`direction` \(='sideways'\) is not one of 'cause', 'effect'"),
        (("it rained", "Cause", 3), r"\(='Cause'\)"),
        (("it rained", ["cause"], 3), r"\(=\['cause'\]\)"),
        (("", "sideways", 3), r"'sideways'"),  # checked even when there is nothing to match
        (("it rained", "cause", 0), r"`k` \(=0\) must be an integer >= 1"),
        (("it rained", "cause", 2.0), r"`k` \(=2.0\)"),
        ((None, "cause", 3), r"`sentence` \(=None\) has to be a string"),
    ],
)
def test_retrieve_rejects_bad_arguments(bank: KnnRetriever, args: tuple[object, ...],
                                        match: str) -> None:
    with pytest.raises(DpcError, match=match):
        bank.retrieve(*args)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("pairs", "match"),
    [
        ([], r"the bank holds no \(cause, effect\) pair"),
        ([("a cause", "an effect"), ("only one",)], r"pair 1 \(=\('only one',\)\) is not a"),
        ([("a cause", None)], r"pair 0 \(=\('a cause', None\)\)"),
    ],
)
def test_from_pairs_rejects_bad_pairs(pairs: list[tuple[str, ...]], match: str) -> None:
    with pytest.raises(DpcError, match=match):
        KnnRetriever.from_pairs(pairs)  # type: ignore[arg-type]


def test_side_without_any_term_is_an_error() -> None:
    bank = KnnRetriever.from_pairs([("a", "the effect")])
    with pytest.raises(DpcError, match=r"no pair of the bank holds a word"):
        bank.retrieve("the effect", "effect", 1)  # searches the cause side: only "a"


def test_sides_have_to_be_aligned() -> None:
    with pytest.raises(DpcError, match=r"2 causes but 1 effects"):
        KnnRetriever(["a b", "c d"], ["e f"])


def _pair(cause: str, effect: str) -> CausalPair:
    return CausalPair(cause, effect, "because", "EPC", "EXPLANATION", "t:1",
                      f"{effect} because {cause}")


def test_from_bank_folder_file_and_max_pairs(tmp_path: Path) -> None:
    with ShardWriter(tmp_path / "bank", 2) as writer:
        writer.write_all(_pair(c, e) for c, e in PAIRS)
    single = tmp_path / "one.tsv"
    write_pairs(single, [_pair("the sun came out", "the streets dried")])

    bank = KnnRetriever.from_bank([tmp_path / "bank", str(single)])
    assert len(bank) == len(PAIRS) + 1
    best = bank.retrieve("the streets dried", "cause", 1)[0]
    assert (best.text, best.index) == ("the sun came out", len(PAIRS))

    assert len(KnnRetriever.from_bank(tmp_path / "bank", max_pairs=3)) == 3
    assert len(KnnRetriever.from_bank(single, max_pairs=10)) == 1


def test_from_bank_rejects_bad_banks(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    with pytest.raises(DpcError, match=r"CausalBank path '.*nowhere' does not exist"):
        KnnRetriever.from_bank([missing])
    (tmp_path / "empty_folder").mkdir()
    with pytest.raises(DpcError, match=r"holds no causalbank-\*\.tsv shard"):
        KnnRetriever.from_bank(tmp_path / "empty_folder")
    with ShardWriter(tmp_path / "no_pairs", 10):
        pass  # a header-only shard
    with pytest.raises(DpcError, match=r"the CausalBank at '.*no_pairs' holds no pair"):
        KnnRetriever.from_bank(tmp_path / "no_pairs")
    bad = tmp_path / "bad.tsv"
    bad.write_text("cause\teffect\n", encoding="utf-8")
    with pytest.raises(DpcError, match=r"bad\.tsv.*header"):
        KnnRetriever.from_bank(bad)
    with pytest.raises(DpcError, match=r"`max_pairs` \(=0\) must be an integer >= 1"):
        KnnRetriever.from_bank(tmp_path / "no_pairs", max_pairs=0)


def test_fit_builds_only_the_side_a_direction_searches() -> None:
    bank = KnnRetriever.from_pairs(PAIRS)
    bank.fit("cause")
    assert set(bank._indexes) == {"effect"}
    bank.fit()
    assert set(bank._indexes) == {"cause", "effect"}
    with pytest.raises(DpcError, match=r"'both'"):
        bank.fit("both")


# -- the oracle: scikit-learn's TfidfVectorizer -------------------------------------------------

WORDS = ["the", "rain", "rained", "baby", "cried", "dog", "barked", "at", "night", "wet", "it", "a"]


def random_texts(seed: int, n: int) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 6))) for _ in range(n)]


def oracle(texts: list[str]) -> tuple[TfidfVectorizer, np.ndarray]:
    vectorizer = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True)
    return vectorizer, vectorizer.fit_transform(texts).toarray()  # (texts, terms)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_index_weights_equal_tfidf_vectorizer(seed: int) -> None:
    texts_ = random_texts(seed, 80)
    vectorizer, expected = oracle(texts_)
    index = _SideIndex(texts_)
    assert set(index.vocabulary) == set(vectorizer.vocabulary_)
    order = [index.vocabulary[term] for term in vectorizer.get_feature_names_out()]
    got = index.postings.T.toarray()[:, order]  # (texts, terms) in the vectoriser's order
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_plain_ranking_matches_brute_force_cosine(seed: int) -> None:
    causes = random_texts(seed, 80)
    effects = random_texts(seed + 100, 80)
    bank = KnnRetriever(causes, effects)
    vectorizer, matrix = oracle(effects)
    for query in random_texts(seed + 200, 15):
        cosine = matrix @ vectorizer.transform([query]).toarray()[0]  # (pairs,)
        results = bank.retrieve(query, "cause", len(causes), require_all=False)
        for r in results:
            assert r.score == pytest.approx(cosine[r.index], abs=1e-5)
            assert r.text == causes[r.index] and r.matched == effects[r.index]
        # every distinct cause of a pair sharing a term comes back, once
        wanted = {" ".join(causes[i].split()) for i in np.flatnonzero(cosine > 1e-9)}
        assert sorted(texts(results)) == sorted(wanted)
        # k best: no pair left out scores above the last one kept
        top = bank.retrieve(query, "cause", 3, require_all=False)
        if len(top) == 3:
            kept = {r.text for r in top}
            left_out = [cosine[i] for i, c in enumerate(causes) if c not in kept]
            assert max(left_out, default=0.0) <= top[-1].score + 1e-5

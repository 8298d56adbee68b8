"""The plausibility verifier: loading and scoring the bundled one, and the pipeline's two uses
of it (choosing keyword rows, rejecting outputs), checked with a verifier whose scores are set
by hand."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dpc_errors import DpcError
from guided_generation.pipeline import GuidedGenerator
from guided_generation.verifier import (
    BUNDLED_VERIFIER,
    THRESHOLD_FILE,
    Verifier,
    best_threshold,
    default_verifier,
    order_by_verifier,
)
from tests.guided_generation.conftest import paper_options, toy_graph, toy_lemmatizer
from train.models import placeholder_model


class HandVerifier:
    """Scores by the words an output holds: +2 for a liked word, -2 for a disliked one."""

    def __init__(self, liked=(), disliked=()) -> None:
        self.liked, self.disliked = set(liked), set(disliked)
        self.asked: list[list[str]] = []

    def scores(self, text, direction, candidates):
        self.asked.append(list(candidates))
        return np.array([2.0 * len(self.liked & set(c.lower().split()))
                         - 2.0 * len(self.disliked & set(c.lower().split())) for c in candidates])


def hand_generator(verifier) -> GuidedGenerator:
    m = placeholder_model()
    return GuidedGenerator(m.model, m.tokenizer, toy_graph(), lemmatizer=toy_lemmatizer,
                           verifier=verifier)


# ------------------------------------------------------------------ the bundled verifier

def test_the_bundled_verifier_loads_with_its_threshold():
    verifier = default_verifier()
    assert (BUNDLED_VERIFIER / THRESHOLD_FILE).is_file()
    assert isinstance(verifier.threshold, float)
    assert verifier.model.mode == "choice"


@pytest.mark.parametrize(("text", "direction", "right", "wrong"), [
    ("the baby cried", "cause", "the baby was hungry", "the sun rose over the hill"),
    ("it rained all night", "effect", "the streets were wet", "he bought a new car"),
    ("she fell on the ice", "effect", "she broke her arm", "she won the lottery"),
])
def test_the_bundled_verifier_prefers_the_plausible_answer(text, direction, right, wrong):
    right_score, wrong_score = default_verifier().scores(text, direction, [right, wrong])
    assert right_score > wrong_score


def test_scores_of_no_candidates_and_a_bad_direction():
    assert default_verifier().scores("it rained", "effect", []).shape == (0,)
    with pytest.raises(DpcError, match="'why'"):
        default_verifier().scores("it rained", "why", ["x"])


def test_a_missing_or_foreign_folder_is_named(tmp_path):
    with pytest.raises(DpcError, match="not a folder"):
        Verifier.load(tmp_path / "nothing")
    with pytest.raises(DpcError, match=str(tmp_path.name)):
        Verifier.load(tmp_path)


def test_a_bad_threshold_file_is_named(tmp_path):
    import shutil

    folder = tmp_path / "v"
    shutil.copytree(BUNDLED_VERIFIER, folder)
    (folder / THRESHOLD_FILE).write_text(json.dumps({"limit": 1}), encoding="utf-8")
    with pytest.raises(DpcError, match=THRESHOLD_FILE):
        Verifier.load(folder)


def test_best_threshold_separates_right_from_wrong():
    assert best_threshold([2.0, 3.0], [-1.0, 0.0]) == 1.0
    assert best_threshold([5.0], [1.0, 2.0, 6.0]) == 3.5
    with pytest.raises(DpcError):
        best_threshold([], [1.0])


def test_order_by_verifier_puts_unscored_last():
    from types import SimpleNamespace as O

    outs = [O(text="a", verifier=None, nll=0.1), O(text="b", verifier=-1.0, nll=2.0),
            O(text="c", verifier=3.0, nll=1.0)]
    assert [o.text for o in order_by_verifier(outs)] == ["c", "b", "a"]
    assert [o.text for o in order_by_verifier(outs[1:], nll_weight=5.0)] == ["c", "b"]


# ------------------------------------------------------------------ the pipeline's uses

def test_a_rejected_answer_never_enters_the_top_k():
    generator = hand_generator(HandVerifier(disliked={"hungry", "hungrier", "hungriest"}))
    options = paper_options(n=4, m=3, k=12, max_new_tokens=8, verify=True, rerank="verifier",
                            reject_below=0.0, verifier_pmi_weight=0.0)
    result = generator.generate("babies cry", "cause", options)
    assert result.outputs, "the other keywords' outputs pass"
    assert all(o.keyword != "hungry" for o in result.outputs)
    assert all(o.verifier is not None and o.verifier >= 0 for o in result.outputs)
    assert result.stats["rejected"] >= 1
    assert any("verifier rejected" in note for note in result.notes)
    assert all("verifier" in o.to_dict() for o in result.outputs)


def test_fewer_than_k_rather_than_nonsense():
    generator = hand_generator(HandVerifier())  # every output scores 0: rejected
    result = generator.generate("babies cry", "cause", paper_options(
        n=2, k=5, max_new_tokens=6, verify=True, reject_below=1.0, verifier_pmi_weight=0.0))
    assert result.outputs == []
    assert any("0 returned, not k=5" in note for note in result.notes)


def test_the_verifier_orders_the_top_k():
    generator = hand_generator(HandVerifier(liked={"tired"}))
    result = generator.generate("babies cry", "cause", paper_options(
        n=4, m=2, k=8, max_new_tokens=8, verify=True, rerank="verifier", reject_below=None,
        verifier_pmi_weight=0.0))
    scores = [o.verifier for o in result.outputs]
    assert scores == sorted(scores, reverse=True)
    assert result.outputs[0].keyword == "tired"


def test_the_verifier_chooses_the_keyword_rows():
    verifier = HandVerifier(liked={"pain", "love"})
    generator = hand_generator(verifier)
    result = generator.generate("babies cry", "cause", paper_options(
        n=2, k=4, max_new_tokens=6, verify_keywords=True, keyword_pool=4))
    assert result.keywords == ["love", "pain"]  # graph order hungry, tired, love, pain
    assert verifier.asked[0] == ["hungry", "tired", "love", "pain"]


def test_sampled_answer_keywords_join_as_their_own_source(monkeypatch):
    generator = hand_generator(HandVerifier(liked={"rain"}))
    monkeypatch.setattr(generator, "sample_answers",
                        lambda prompt, count, options, seed=0, banned=(): ["it rained", "rain"])
    result = generator.generate("babies cry", "cause", paper_options(
        n=2, m=2, k=4, max_new_tokens=6, verify_keywords=True, sampled=4, keyword_pool=4))
    assert result.keywords[0] == "rain"
    assert result.stats["sampled_rows"] == 1
    assert {o.source for o in result.outputs if o.keyword == "rain"} == {"sampled"}


def test_the_generator_s_pmi_joins_the_verifier_score():
    generator = hand_generator(HandVerifier())
    result = generator.generate("babies cry", "cause", paper_options(
        n=2, k=4, max_new_tokens=6, verify=True, reject_below=None, verifier_pmi_weight=2.0))
    assert result.outputs
    sums, _ = generator.pmi_sums(result.outputs, "babies cry", "cause")
    for out, total in zip(result.outputs, sums):  # the hand verifier gives 0: 2 x the PMI sum
        assert out.pmi is not None
        assert out.verifier == pytest.approx(2.0 * total, abs=1e-3)


def test_without_a_verifier_the_options_are_skipped_with_a_note():
    generator = hand_generator(None)
    result = generator.generate("babies cry", "cause", paper_options(n=2, k=3, max_new_tokens=6,
                                                                     verify=True,
                                                                     rerank="verifier"))
    assert len(result.outputs) == 3
    assert any(note.startswith("no verifier") for note in result.notes)


def test_keywords_keep_their_parts_of_speech():
    m = placeholder_model()
    generator = GuidedGenerator(m.model, m.tokenizer, toy_graph(), lemmatizer=toy_lemmatizer,
                                verifier=None, parts_of_speech=lambda w: ("NOUN",))
    result = generator.generate("babies cry", "cause", paper_options(
        n=4, m=3, k=12, max_new_tokens=8, parts_of_speech=True))
    loves = [o for o in result.outputs if o.keyword == "love"]
    assert loves and all(o.matched in ("love", "loves") for o in loves)

"""The verifier's training data: e-CARE questions, e-CARE pairs and ConceptNet edges as items,
the held-back split, and bad rows named."""

from __future__ import annotations

import json
import random

import pytest

from train.errors import TrainDataError
from train.verifier import (
    conceptnet_items,
    ecare_pair_items,
    ecare_questions,
    question,
    split_ecare,
    verifier_items,
)


def write_data(folder, questions=20):
    (folder / "ecare").mkdir(parents=True)
    (folder / "conceptnet").mkdir()
    with open(folder / "ecare" / "causal_reasoning_train.jsonl", "w", encoding="utf-8") as f:
        for i in range(questions):
            f.write(json.dumps({"premise": f"Premise {i}.", "ask-for": "cause" if i % 2 else "effect",
                                "hypothesis1": f"right {i}.", "hypothesis2": f"wrong {i}.",
                                "label": 0}) + "\n")
    with open(folder / "ecare" / "explanation_generation_train.jsonl", "w", encoding="utf-8") as f:
        for i in range(10):
            f.write(json.dumps({"cause": f"cause {i}.", "effect": f"effect {i}."}) + "\n")
        f.write(json.dumps({"cause": "right 0.", "effect": "held back."}) + "\n")
    (folder / "conceptnet" / "conceptnet_cause_sets.txt").write_text(
        'rain,["wet_street", "flood"]\nfire,["smoke"]\n', encoding="utf-8")


def test_questions_keep_their_hard_negative(tmp_path):
    write_data(tmp_path)
    items = ecare_questions(tmp_path / "ecare" / "causal_reasoning_train.jsonl")
    assert items[0].question == "Premise 0, so" and items[1].question == "Premise 1 because"
    assert (items[0].right, items[0].wrong, items[0].source) == ("right 0.", "wrong 0.", "ecare")


def test_the_held_back_tenth_is_fixed_by_the_seed(tmp_path):
    write_data(tmp_path, questions=30)
    items = ecare_questions(tmp_path / "ecare" / "causal_reasoning_train.jsonl")
    train, held = split_ecare(items, seed=0)
    assert len(held) == 3 and len(train) == 27 and not set(held) & set(train)
    assert split_ecare(items, seed=0)[1] == held


def test_pairs_are_asked_both_ways_against_another_answer(tmp_path):
    write_data(tmp_path)
    items = ecare_pair_items(tmp_path / "ecare" / "explanation_generation_train.jsonl",
                             random.Random(0), exclude={"right 0."})
    assert items and all(i.right != i.wrong for i in items)
    assert {i.question.endswith(("because", ", so")) for i in items} == {True}
    assert not any("held back" in i.question or "held back" in i.right for i in items)
    by_question = {i.question: i.right for i in items}
    assert by_question.get("effect 3 because", "cause 3.") == "cause 3."


def test_conceptnet_asks_for_a_cause_against_a_sibling_effect(tmp_path):
    write_data(tmp_path)
    items = conceptnet_items(tmp_path / "conceptnet" / "conceptnet_cause_sets.txt", random.Random(0))
    causes = [i for i in items if i.question == "wet street because"]
    assert causes and causes[0].right == "rain" and causes[0].wrong == "flood"


def test_a_bad_row_is_named(tmp_path):
    write_data(tmp_path)
    path = tmp_path / "ecare" / "causal_reasoning_train.jsonl"
    path.write_text('{"premise": "x"}\n', encoding="utf-8")
    with pytest.raises(TrainDataError, match=r"causal_reasoning_train.jsonl:1"):
        ecare_questions(path)
    with pytest.raises(TrainDataError, match="'sideways'"):
        question("x", "sideways")


def test_all_sources_together(tmp_path):
    write_data(tmp_path)
    items, held = verifier_items(tmp_path, pairs=5, conceptnet=2)
    assert {i.source for i in items} == {"ecare", "ecare-pair", "conceptnet"}
    assert len(held) == 2 and not set(held) & set(items)

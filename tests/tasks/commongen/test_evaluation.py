from __future__ import annotations

import pytest

from tasks.commongen.dataset import parse_concept_set
from tasks.commongen.evaluation import evaluate, summary_line
from tasks.errors import TaskError

REFS = [["A dog catches a frisbee.", "The dog caught the frisbee."],
        ["A man stands in the field and looks at the sky."]]
SETS = [parse_concept_set("catch_V#dog_N#frisbee_N"), parse_concept_set("field_N#look_V#stand_V")]


def test_coverage_counts_every_inflection_and_the_part_of_speech() -> None:
    scores = evaluate([("The dogs caught frisbees.", SETS[0]),
                       ("He stood in a field.", SETS[1])], REFS)
    assert scores.coverage == 0.5  # "look" is missing from the second
    assert scores.concepts == pytest.approx((1 + 2 / 3) / 2)
    assert scores.pos == 0.5
    # a verb concept used as a noun is covered, but not with its part of speech
    wrong = evaluate([("The catch of the dog was a frisbee.", SETS[0])], REFS[:1])
    assert wrong.coverage == 1.0 and wrong.pos == 0.0


def test_forms_read_what_the_lemmatiser_misses_and_keep_the_part_of_speech() -> None:
    ride = parse_concept_set("horse_N#ride_V")
    scores = evaluate([("A boy is riding a horse.", ride), ("A girl rides a horse.", ride),
                       ("The horse ride was long.", ride), ("A horse stands.", ride)],
                      [["A boy rides a horse."]] * 4)
    # en_core_web_sm reads "riding"/"rides" as *rid*: only the noun "ride" is found by lemma
    assert scores.coverage == 0.25 and scores.pos == 0.0
    # by forms too: the verbs count in their part of speech, the noun only for coverage
    assert scores.coverage_forms == 0.75 and scores.pos_forms == 0.5
    same = evaluate([("The dogs caught frisbees.", SETS[0])], REFS[:1])
    assert (same.coverage_forms, same.pos_forms) == (same.coverage, same.pos) == (1.0, 1.0)


def test_text_metrics_reward_the_references() -> None:
    same = evaluate([(REFS[0][0], SETS[0]), (REFS[1][0], SETS[1])], REFS)
    other = evaluate([("Frisbee dog catch.", SETS[0]), ("Stand look field.", SETS[1])], REFS)
    assert same.bleu4 == pytest.approx(100.0) and other.bleu4 < 10
    assert same.rougeL == pytest.approx(1.0) and other.rougeL < same.rougeL
    assert same.cider > other.cider
    untagged = evaluate([("A dog catches a frisbee.", parse_concept_set("catch dog frisbee"))],
                        REFS[:1])
    assert untagged.pos is None and summary_line(untagged).startswith("coverage 1.000 pos - ")


def test_bad_input_is_named() -> None:
    with pytest.raises(TaskError, match="nothing to evaluate"):
        evaluate([], [])
    with pytest.raises(TaskError, match="1 sentences but 2"):
        evaluate([("x", SETS[0])], REFS)
    with pytest.raises(TaskError, match="output 1 has no reference"):
        evaluate([("x", SETS[0])], [[]])

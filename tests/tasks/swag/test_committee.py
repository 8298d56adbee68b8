"""The committee members learn stylistic cues and the ensemble sums their logits."""

from __future__ import annotations

import numpy as np
import pytest

from tasks.errors import TaskError
from tasks.swag.committee import Committee, EndingTable, _correct


def _table(n: int, rng: np.random.Generator):
    """n questions of 4 endings; the gold (first) ends with 'indeed .' and is less likely."""
    texts, lps, toks = [], [], []
    fillers = ["he walks", "she runs fast", "they sit down", "the dog barks", "a man waves"]
    for _ in range(n):
        for j in range(4):
            base = fillers[rng.integers(len(fillers))]
            texts.append(base + (" indeed ." if j == 0 else " now ."))
            lps.append(-30.0 if j == 0 else -10.0 + rng.normal())
            toks.append(5)
    tags = [[(w, "NOUN" if w in ("dog", "man") else "X") for w in t.split()] for t in texts]
    table = EndingTable.build(texts, lps, toks, [8] * len(texts), tags)
    questions = np.arange(4 * n).reshape(n, 4)
    return table, questions


@pytest.mark.parametrize("member", ["mlp", "bow", "cnn", "lstm"])
def test_each_member_learns_an_easy_cue(member):
    table, q = _table(80, np.random.default_rng(0))
    committee = Committee([member], seed=0).fit(table, q[:60])
    accuracy = committee.accuracy(table, q[60:])
    assert accuracy[member] > 0.9 and accuracy["ensemble"] == accuracy[member]


@pytest.mark.parametrize("member", ["cnn", "lstm"])
def test_torch_members_on_a_device_under_autocast(member):
    import torch

    table, q = _table(80, np.random.default_rng(0))
    plain = Committee([member], seed=0).fit(table, q[:60])
    cpu = Committee([member], seed=0, device="cpu").fit(table, q[:60])
    rows = q[60:].reshape(-1)
    # device="cpu" is what the committee always did: the same scores bit for bit
    assert np.array_equal(cpu.scores(table, rows)[member], plain.scores(table, rows)[member])
    half = Committee([member], seed=0, device="cpu", dtype="bfloat16").fit(table, q[:60])
    assert {p.dtype for p in half.members[member].net.parameters()} == {torch.float32}
    scores = half.scores(table, rows)[member]
    assert scores.dtype == np.float32 and half.accuracy(table, q[60:])[member] > 0.9


def test_the_sum_rule_is_the_sum_of_logits():
    table, q = _table(40, np.random.default_rng(1))
    committee = Committee(["mlp", "bow"], seed=0, ensemble="sum").fit(table, q[:30])
    s = committee.scores(table, q[30:].reshape(-1))
    assert np.allclose(s["ensemble"], s["mlp"] + s["bow"])


def test_the_joint_ensemble_learns_what_the_features_say_together():
    """The gold is likely *and* says 'now', or unlikely *and* says 'indeed'; a negative has the
    other two combinations. Neither the likelihood nor the words alone tell them apart, so
    neither member, nor the sum of their logits, beats chance (1/4); one model over both
    features does."""
    rng = np.random.default_rng(2)
    texts, lps = [], []
    for _ in range(400):
        for j in range(4):
            likely = bool(rng.integers(2))
            word = ("now" if likely else "indeed") if j == 0 else ("indeed" if likely else "now")
            texts.append(f"he walks {word} .")
            lps.append((-8.0 if likely else -30.0) + rng.normal())
    tags = [[(w, "X") for w in t.split()] for t in texts]
    table = EndingTable.build(texts, lps, [5] * len(texts), [8] * len(texts), tags)
    q = np.arange(len(texts)).reshape(-1, 4)
    joint = Committee(["mlp", "bow"], seed=0).fit(table, q[:320]).accuracy(table, q[320:])
    summed = Committee(["mlp", "bow"], seed=0, ensemble="sum").fit(table, q[:320]) \
        .accuracy(table, q[320:])
    assert joint["ensemble"] > 0.9, joint
    assert max(summed.values()) < 0.5, summed


def test_unknown_ensemble_rules_fail():
    with pytest.raises(TaskError, match="vote"):
        Committee(["mlp"], ensemble="vote")


def test_ties_count_as_wrong_and_unknown_members_fail():
    assert _correct(np.array([[1.0, 1.0, 0.0, 0.0]])).tolist() == [False]
    with pytest.raises(TaskError, match="svm"):
        Committee(["svm"])

"""Oversampling with a tiny model: distinct endings, counts, resumption, constraints."""

from __future__ import annotations

import json

import pytest

from tasks.datasets import MultipleChoiceItem
from tasks.errors import TaskError
from tasks.swag.oversample import (
    POOL,
    OversampleOptions,
    content_set,
    names_context,
    oversample,
    read_pool,
)

OPTIONS = OversampleOptions(per_context=6, max_new_tokens=6, max_rounds=3, contexts_per_batch=2)


def _items(n: int) -> list[MultipleChoiceItem]:
    ctxs = ["the man walks to the car . he", "she opens the door and", "a woman is cooking eggs",
            "he picks up a ball then", "the man sits down . she"]
    return [MultipleChoiceItem(i, ctxs[i % len(ctxs)], ("throws it far away .", "sits down ."), 0,
                               "x") for i in range(n)] + [MultipleChoiceItem(99, "he", ("a", "b"), 0)]


def test_pool_lines_are_distinct_endings_with_log_probs(tmp_path, tiny_model):
    model, tok = tiny_model
    summary = oversample(_items(4), tmp_path / "p", model, tok, OPTIONS, progress=False)
    pool = read_pool(tmp_path / "p")
    assert summary["skipped_short_context"] == 1  # "he": under 2 words
    assert [e.ind for e in pool] == [0, 1, 2, 3]
    for e in pool:
        assert len(set(e.endings)) == len(e.endings) <= 6 and e.gold not in e.endings
        assert len(e.log_probs) == len(e.tokens) == len(e.endings)
        assert all(lp < 0 for lp in e.log_probs) and e.gold_log_prob < 0
    assert summary["contexts_short_of_endings"] == sum(len(e.endings) < 6 for e in pool)


def test_interrupted_run_resumes_without_duplicates(tmp_path, tiny_model):
    model, tok = tiny_model
    folder = tmp_path / "p"
    oversample(_items(2), folder, model, tok, OPTIONS, progress=False)
    with open(folder / POOL, "a") as handle:  # a torn line, as a kill mid-write leaves
        handle.write('{"ind": 2, "ctx": "a wom')
    summary = oversample(_items(5), folder, model, tok, OPTIONS, progress=False)
    inds = [e.ind for e in read_pool(folder)]
    assert sorted(inds) == [0, 1, 2, 3, 4] and summary["sampled_this_run"] == 3
    with pytest.raises(TaskError, match="other settings"):
        oversample(_items(5), folder, model, tok,
                   OversampleOptions(per_context=7, max_new_tokens=6), progress=False)


def test_malformed_pool_line_names_file_and_line(tmp_path):
    (tmp_path / POOL).write_text('{"ind": 1}\n{"ind": 2}\n')
    with pytest.raises(TaskError, match=r"pool.jsonl:1"):
        read_pool(tmp_path)


def test_constrained_endings_name_the_context(tmp_path, tiny_model):
    model, tok = tiny_model
    options = OversampleOptions(per_context=4, max_new_tokens=40, contexts_per_batch=2,
                                constrain_context=True)
    oversample(_items(2), tmp_path / "c", model, tok, options, progress=False)
    pool = read_pool(tmp_path / "c")
    assert pool[0].constraint == content_set(pool[0].ctx)
    kept = [(e, text) for e in pool for text in e.endings]
    assert kept and all(any(w in text.split() for w in e.constraint) for e, text in kept)
    assert json.loads((tmp_path / "c" / "oversample.json").read_text())["settings"][
        "constrain_context"] is True


def test_content_set_and_names_context():
    assert "walked" in content_set("the man walks to the car")
    assert names_context("he drives the cars .", "a car is parked")
    assert not names_context("he smiles .", "a car is parked")

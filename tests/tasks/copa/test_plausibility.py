"""COPA by generation (:mod:`tasks.copa.plausibility`)."""

from __future__ import annotations

import math

import pytest

from dpc_errors import DpcError
from tasks.copa.dataset import CopaItem
from tasks.copa.plausibility import copa_by_generation, decide, template_share

ITEMS = [CopaItem("1", "My body cast a shadow over the grass.", "cause", "The sun was rising.",
                  "The grass was cut.", 1),
         CopaItem("2", "The woman repaired her faucet.", "cause", "The faucet was leaky.",
                  "The faucet was turned off.", 1)]


def test_near_outputs_pick_their_alternative_both_ways():
    assert decide(ITEMS[0], ["the sun was shining brightly"], _enc())[0] == 1
    assert decide(ITEMS[0], ["someone mowed the lawn"], _enc())[0] == 2


def test_no_outputs_is_a_tie_counted_wrong():
    assert decide(ITEMS[0], [], _enc()) == (1, True)
    scores = copa_by_generation(ITEMS, [[], ["the faucet was dripping"]], encoder=_enc())
    assert (scores.correct, scores.ties, scores.accuracy) == (1, 1, 0.5)


def test_keywords_and_templates_are_counted():
    scores = copa_by_generation(ITEMS, [["the sun rose", "the sun set"], ["it leaked"]],
                                [["sun", "sun"], ["leak"]], encoder=_enc())
    assert scores.distinct_keywords == 1.0
    assert template_share([["a b c d", "x a b c", "a b c"], ["z"]]) == 0.75
    assert math.isnan(template_share([]))


def test_one_list_per_item():
    with pytest.raises(DpcError, match="1 output lists for 2 COPA items"):
        copa_by_generation(ITEMS, [["x"]], encoder=_enc())


_ENCODER = []


def _enc():
    from tasks.copa.plausibility import SentenceEncoder

    if not _ENCODER:
        _ENCODER.append(SentenceEncoder())
    return _ENCODER[0]


def test_lm_scorer_asks_a_causal_lm_in_plain_english():
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    from tasks.copa.generator import GeneratorScorer
    from train.prompts import CAUSAL_ZERO_SHOT

    class Tok:
        eos_token_id = 0

        def __call__(self, texts, add_special_tokens=False):
            return {"input_ids": [[3 + len(w) % 20 for w in t.split()] for t in texts]}

    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(vocab_size=30, n_embd=8, n_layer=1, n_head=2)).eval()
    scorer = GeneratorScorer(model, Tok(), "pmi", input_format=CAUSAL_ZERO_SHOT)
    forward, prior = scorer._requests("The sun rose.", "effect", "Dawn came.")[:2]
    assert forward == ("the sun rose, so", "dawn came") and prior == ("so", "dawn came")
    evidence = scorer.evidence("The sun rose.", "effect", "Dawn came.")
    assert evidence.forward < 0 and scorer.score("The sun rose.", "effect", "Dawn came.") == \
        evidence.forward - evidence.prior

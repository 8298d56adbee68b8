"""Fixtures of the SWAG tests: a tiny seq2seq ending model built from code, HellaSwag-like files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

WORDS = ["the", "man", "walks", "to", "the", "car", ".", "she", "opens", "the", "door", "and", "sits", "down", ".", "he", "picks", "up", "a", "ball", "then", "throws", "it", "far", "away", ".", "a", "woman", "is", "cooking", "eggs", "in", "a", "pan", "while", "talking"]


def build_tiny_model(folder: Path):
    """(model, tokenizer): a 1-layer T5 with a 60-piece SentencePiece vocabulary (saved in
    ``folder``) over :data:`WORDS`, untrained, with a bias towards EOS so that most samples end
    within a few tokens."""
    import torch

    from train.generator import build_generator
    from train.options import GeneratorConfig
    from train.tokenizer import train_tokenizer

    texts = [" ".join(WORDS[i:] + WORDS[:i]) for i in range(len(WORDS))] * 3
    tokenizer = train_tokenizer(texts, folder, vocab_size=60)
    torch.manual_seed(0)
    model = build_generator(GeneratorConfig(len(tokenizer), 16, 32, 1, num_heads=2)).eval()
    head = torch.nn.Linear(16, len(tokenizer), bias=True)
    head.weight = model.lm_head.weight
    with torch.no_grad():
        head.bias.zero_()
        head.bias[tokenizer.eos_token_id] = 2.5
    model.lm_head = head
    return model, tokenizer


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory):
    """:func:`build_tiny_model`, once a session."""
    return build_tiny_model(tmp_path_factory.mktemp("tok"))


def write_items(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def item(ind: int, ctx: str = "a man walks to the car . he", gold: str = "opens the door .") -> dict:
    return {"ind": ind, "activity_label": "x", "ctx": ctx,
            "endings": ["throws a ball .", gold, "cooks eggs .", "sits down ."], "label": 1}

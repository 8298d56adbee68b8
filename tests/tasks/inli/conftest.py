"""Tiny INLI files, and a tiny BERT encoder for the INLI tests (no data needed; the tiny
causal LM is tests/conftest.py's)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
import torch

HEADER = ["", "dataset", "premise", "implied_entailment", "explicit_entailment", "neutral",
          "contradiction"]
NAMES = ["Robbie", "Anna", "Myles", "Tom", "Sara", "Lee", "Kim", "Max"]


def inli_rows(n: int = 16) -> list[list[str]]:
    """``n`` INLI rows: hypotheses tell the label by a word (learnable by a tiny model)."""
    rows = []
    for i in range(n):
        name = NAMES[i % 8]
        rows.append([str(i), "circa" if i % 2 else "socialchem",
                     f"{name} said the house was red.", f"{name} likes the red house.",
                     f"{name} said red house.", f"{name} maybe bought a car.",
                     f"{name} never saw the house."])
    return rows


def write_csv(path: Path, rows: list[list[str]], header: list[str] | None = None) -> Path:
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header or HEADER)
        writer.writerows(rows)
    return path


@pytest.fixture
def inli_csv(tmp_path: Path) -> Path:
    return write_csv(tmp_path / "inli.csv", inli_rows())


@pytest.fixture(scope="session")
def tiny_encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny random BERT with all-MiniLM-L6-v2's tokenizer."""
    from transformers import AutoTokenizer, BertConfig, BertModel

    from train.models import minilm_tokenizer_path

    folder = tmp_path_factory.mktemp("tiny_encoder")
    tokenizer = AutoTokenizer.from_pretrained(str(minilm_tokenizer_path()), local_files_only=True)
    torch.manual_seed(0)
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=16, num_hidden_layers=1,
                        num_attention_heads=2, intermediate_size=32, max_position_embeddings=64)
    BertModel(config).save_pretrained(str(folder))
    tokenizer.save_pretrained(str(folder))
    return folder

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


@pytest.fixture(scope="session")
def generator(tmp_path_factory: pytest.TempPathFactory, tiny_lm: Path) -> Path:
    """A variant generator trained on 8 premises over the tiny causal LM (``FOLDER/model``);
    training it checks that a finished run is not retrained and other options are refused."""
    from dpc_errors import DpcError
    from tasks.datasets import read_inli
    from tasks.inli.hypotheses import GeneratorTrainOptions, train_generator

    folder = tmp_path_factory.mktemp("gen")
    rows = read_inli(write_csv(folder / "train.csv", inli_rows(8))).rows
    options = GeneratorTrainOptions(base=str(tiny_lm), r=2, alpha=4, batch_size=4, epochs=1,
                                    progress=False, checkpoint_every=2)
    summary = train_generator(rows, folder / "model", options)
    assert summary["steps"] == 6 and summary["final_loss"] > 0
    # a finished run is not retrained; other options in the same folder are refused
    assert train_generator(rows, folder / "model", options) == summary
    with pytest.raises(DpcError, match="other options"):
        train_generator(rows, folder / "model", GeneratorTrainOptions(
            base=str(tiny_lm), r=4, progress=False))
    return folder

"""Tiny CausalBank, tokenizer and BERT fixtures shared by the train tests (no corpus needed)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import torch

from causal_mining.pair import CausalPair
from causal_mining.shards import write_pairs
from train.tokenizer import train_tokenizer

CAUSES = ["it rained all night", "the dog barked loudly", "she lost her keys", "the road was icy",
          "he missed the bus", "the baby was hungry", "the sun came out", "the wind blew hard"]
EFFECTS = ["the ground was wet", "the neighbours woke up", "she could not get in",
           "the car slid off", "he was late for work", "the baby cried", "the snow melted",
           "the tree fell down"]


def tiny_pairs(n: int = 160) -> list[CausalPair]:
    """``n`` pairs over 8 cause/effect templates, both classes, distinct sentences."""
    pairs = []
    for i in range(n):
        c, e = CAUSES[i % 8], EFFECTS[i % 8]
        if i % 2:
            pairs.append(CausalPair(f"{c} {i}", f"{e} {i}", "because", "EPC", "EXPLANATION",
                                    f"t:{i}", f"{e} {i} because {c} {i}."))
        else:
            pairs.append(CausalPair(f"{c} {i}", f"{e} {i}", "so", "CPE", "CAUSE", f"t:{i}",
                                    f"{c} {i}, so {e} {i}."))
    return pairs


@pytest.fixture(scope="session")
def tiny_bank(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("bank")
    write_pairs(folder / "causalbank-00000.tsv", tiny_pairs())
    return folder


@pytest.fixture(scope="session")
def tiny_tokenizer(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("tok")
    texts = [t for p in tiny_pairs() for t in (p.cause, p.effect)] + ["cause: effect:"] * 20
    train_tokenizer(texts, folder, vocab_size=120)
    return folder


@pytest.fixture(scope="session")
def tiny_bert(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny random BERT with all-MiniLM-L6-v2's WordPiece tokenizer: a warm-start folder."""
    from transformers import AutoTokenizer, BertConfig, BertModel

    from train.models import minilm_tokenizer_path

    folder = tmp_path_factory.mktemp("tiny_bert")
    tokenizer = AutoTokenizer.from_pretrained(str(minilm_tokenizer_path()), local_files_only=True)
    torch.manual_seed(0)
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=16, num_hidden_layers=1,
                        num_attention_heads=2, intermediate_size=32, max_position_embeddings=64)
    BertModel(config).save_pretrained(str(folder))
    tokenizer.save_pretrained(str(folder))
    return folder


def copa_file(path: Path) -> Path:
    """A one-item COPA file at ``path`` (the man fell: he tripped, not sang)."""
    root = ET.Element("copa-corpus")
    item = ET.SubElement(root, "item", {"id": "1", "asks-for": "cause",
                                        "most-plausible-alternative": "1"})
    for tag, text in (("p", "The man fell."), ("a1", "He tripped."), ("a2", "He sang.")):
        ET.SubElement(item, tag).text = text
    ET.ElementTree(root).write(path)
    return path
